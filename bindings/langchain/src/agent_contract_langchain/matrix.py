"""``agent-contract matrix``: ``check`` against several LangChain releases, each in its
own throwaway environment built with uv.

For each requested release (``1.0.0``, ``1.3.15``, ``latest``...) the matrix, in a
temporary directory (never the project's ``.venv``):

1. creates a virtual environment: ``uv venv <tmp>/<release> --python <python>``;
2. installs the core and the binding from this source tree plus ``langchain==<release>``
   and the companion pins that release needs (:data:`COMPANION_PINS`):
   ``uv pip install --python <env python> <core> <binding> langchain==X [pins]``;
3. checks that the resolved stack imports (``langchain.agents``, ``langgraph.prebuilt``)
   and records its versions;
4. runs ``<env python> -m agent_contract.app.cli check --harness ... --format json``.

An environment that cannot be built (step 1-3 fails) is reported as ``could not
install`` with the installer's last lines as evidence, never as a contract failure. A
release on which the binding itself does not import (``check`` exits 4) is reported as
``binding does not import`` with the ImportError. Everything else is the boundary x
release table of ``check``'s cells.

Exit codes of the command: 0 every release installed and every boundary holds; 5 a
boundary broken, or the binding not importing, on an installed release; 4 otherwise
when a release could not be installed; 2 usage.

The process runner is injectable (:class:`CommandRunner`), so the planning, parsing and
report logic are tested without a network.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from agent_contract.errors import ConfigurationError
from agent_contract.exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_DEPENDENCY_MISSING, EXIT_OK
from agent_contract.registry import harness_plugins

from .matrix_report import Column, MatrixReport

__all__ = [
    "COMPANION_PINS",
    "SMOKE",
    "CommandResult",
    "CommandRunner",
    "EnvPlan",
    "Version",
    "companions_for",
    "default_matrix_harnesses",
    "parse_releases",
    "plan_environment",
    "run_environment",
    "run_matrix",
    "source_root",
    "subprocess_runner",
]

Version = tuple[int, ...]
"""A release number as integers, e.g. ``(1, 3, 15)``."""

COMPANION_PINS: Final[tuple[tuple[Version, Version, tuple[str, ...], str], ...]] = (
    (
        (1, 0, 0),
        (1, 2, 11),
        ("langgraph-prebuilt<1.0.9",),
        "langchain 1.0.0 to 1.2.10 resolve langgraph 1.0.x, and langgraph-prebuilt 1.0.9 or "
        "newer fails to import with it (cannot import name 'ExecutionInfo')",
    ),
)
"""``(first release, first release no longer affected, pins, why)``: companion pins a
range of LangChain releases needs to install a working stack (measured with uv
0.13.9; see ``docs/MATRIX.md``)."""

_RELEASE = re.compile(r"^\d+(\.\d+){1,2}([a-z]+\d+)?$")


def default_matrix_harnesses() -> tuple[str, ...]:
    """Harnesses checked in each environment unless ``--harness`` says otherwise: every
    registered harness that must keep the contract (no control)."""
    return tuple(p.name for p in harness_plugins() if p.role == "contract")


def _version(text: str) -> Version:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def parse_releases(text: str) -> list[str]:
    """``"1.0.0, 1.3.15,latest"`` -> ``["1.0.0", "1.3.15", "latest"]`` (order kept,
    duplicates dropped).

    Raises:
        ConfigurationError: an entry that is neither ``latest`` nor a release number, or
            an empty list.
    """
    releases: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item != "latest" and not _RELEASE.match(item):
            raise ConfigurationError(f"not a LangChain release: {item!r} (e.g. 1.3.15 or latest)")
        if item not in releases:
            releases.append(item)
    if not releases:
        raise ConfigurationError("no LangChain release given (e.g. --langchain 1.3.15,latest)")
    return releases


def companions_for(release: str) -> tuple[str, ...]:
    """The companion pins :data:`COMPANION_PINS` prescribes for ``release`` (none for
    ``latest``)."""
    if release == "latest":
        return ()
    version = _version(release)
    pins: list[str] = []
    for first, stop, extra, _why in COMPANION_PINS:
        if first <= version < stop:
            pins.extend(extra)
    return tuple(pins)


@dataclass(frozen=True, kw_only=True)
class EnvPlan:
    """How to build and check one environment."""

    release: str
    """As requested: a release number or ``latest``."""
    env_dir: Path
    """Where the virtual environment goes (inside the matrix's temporary directory)."""
    requirements: tuple[str, ...]
    """What ``uv pip install`` gets besides the two local packages."""
    companions: tuple[str, ...]
    """The companion pins among :attr:`requirements`."""
    commands: tuple[tuple[str, ...], ...]
    """venv, install, import smoke test, check: argv lists, in order."""

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.env_dir / "bin" / "python"


SMOKE: Final = (
    "import json, importlib.metadata as m, langchain.agents, langgraph.prebuilt; "
    "print(json.dumps({k: m.version(k) for k in "
    "('langchain', 'langchain-core', 'langgraph', 'langgraph-prebuilt')}))"
)
"""The import smoke test: the resolved stack imports; prints its versions as JSON."""


def plan_environment(
    release: str,
    *,
    workdir: Path,
    source: Path,
    python: str,
    harnesses: Sequence[str],
    uv: Sequence[str] = ("uv",),
) -> EnvPlan:
    """The commands that build and check the environment for ``release``.

    Args:
        release: a release number or ``latest``.
        workdir: the matrix's temporary directory.
        source: the repository root (the core's ``pyproject.toml``; the binding in
            ``bindings/langchain``).
        python: the interpreter request for ``uv venv --python`` (e.g. ``3.11``).
        harnesses: passed to ``check --harness``.
        uv: how to call uv.
    """
    env_dir = workdir / f"langchain-{release}"
    companions = companions_for(release)
    langchain = "langchain" if release == "latest" else f"langchain=={release}"
    requirements = (langchain, *companions)
    env_python = str(env_dir / "bin" / "python")
    commands = (
        (*uv, "venv", "--quiet", str(env_dir), "--python", python),
        (
            *uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            env_python,
            str(source),
            str(source / "bindings" / "langchain"),
            *requirements,
        ),
        (env_python, "-c", SMOKE),
        (
            env_python,
            "-m",
            "agent_contract.app.cli",
            "check",
            "--harness",
            ",".join(harnesses),
            "--format",
            "json",
        ),
    )
    return EnvPlan(
        release=release,
        env_dir=env_dir,
        requirements=requirements,
        companions=companions,
        commands=commands,
    )


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """What one command did."""

    returncode: int
    stdout: str
    stderr: str


class CommandRunner(Protocol):
    """Runs one command (argv) and returns its result; never raises for a nonzero exit."""

    def __call__(self, argv: Sequence[str]) -> CommandResult: ...


def subprocess_runner(timeout_seconds: float = 1800.0) -> CommandRunner:
    """A runner over :func:`subprocess.run` (text mode, captured output). A command past
    ``timeout_seconds`` (wall clock) or one that cannot start is returned as exit code
    127 with the reason in ``stderr``."""

    def run(argv: Sequence[str]) -> CommandResult:
        try:
            proc = subprocess.run(  # noqa: S603 - argv lists built by plan_environment
                list(argv), capture_output=True, text=True, timeout=timeout_seconds, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return CommandResult(returncode=127, stdout="", stderr=f"{type(exc).__name__}: {exc}")
        return CommandResult(returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)

    return run


def _tail(result: CommandResult, lines: int = 6) -> str:
    text = (result.stderr.strip() or result.stdout.strip()).splitlines()
    return "\n".join(text[-lines:])


def run_environment(plan: EnvPlan, runner: CommandRunner) -> Column:
    """Build one environment and check it (see the module doc)."""
    venv, install, smoke, check = plan.commands
    for command in (venv, install):
        result = runner(command)
        if result.returncode != 0:
            return Column(
                release=plan.release,
                status="could_not_install",
                companions=plan.companions,
                evidence=_tail(result),
            )
    result = runner(smoke)
    if result.returncode != 0:
        return Column(
            release=plan.release,
            status="could_not_install",
            companions=plan.companions,
            evidence="the resolved stack does not import: " + _tail(result, 2),
        )
    try:
        versions = {str(k): str(v) for k, v in json.loads(result.stdout).items()}
    except (ValueError, AttributeError):
        versions = {}
    result = runner(check)
    if result.returncode == EXIT_DEPENDENCY_MISSING:
        return Column(
            release=plan.release,
            status="binding_does_not_import",
            companions=plan.companions,
            versions=versions,
            evidence=_tail(result, 3),
        )
    try:
        document = json.loads(result.stdout)
    except ValueError:
        document = None
    if result.returncode not in (EXIT_OK, EXIT_CONTRACT_VIOLATION) or not isinstance(
        document, dict
    ):
        return Column(
            release=plan.release,
            status="error",
            companions=plan.companions,
            versions=versions,
            evidence=f"check exited {result.returncode}: {_tail(result)}",
        )
    return Column(
        release=plan.release,
        status="checked",
        companions=plan.companions,
        versions=versions,
        check=document,
    )


def run_matrix(
    releases: Sequence[str],
    *,
    source: Path,
    python: str,
    harnesses: Sequence[str] | None = None,
    runner: CommandRunner | None = None,
    workdir: Path | None = None,
    uv: Sequence[str] = ("uv",),
    progress: Callable[[str], None] | None = None,
) -> MatrixReport:
    """Build and check one environment per release, in order.

    Args:
        releases: from :func:`parse_releases`.
        source: the repository root (see :func:`source_root`).
        python: the interpreter request for ``uv venv --python``.
        harnesses: checked in each environment (default
            :func:`default_matrix_harnesses`).
        runner: runs the commands (default :func:`subprocess_runner`).
        workdir: where environments go; default a temporary directory removed at the end.
        uv: how to call uv.
        progress: called with one line per step.
    """
    run = runner or subprocess_runner()
    harnesses = tuple(harnesses or default_matrix_harnesses())
    columns: list[Column] = []
    with tempfile.TemporaryDirectory(prefix="agent-contract-matrix-") as tmp:
        base = workdir or Path(tmp)
        for index, release in enumerate(releases, start=1):
            if progress is not None:
                progress(f"[{index}/{len(releases)}] langchain {release}: build and check")
            plan = plan_environment(
                release, workdir=base, source=source, python=python, harnesses=harnesses, uv=uv
            )
            columns.append(run_environment(plan, run))
    return MatrixReport(python=python, harnesses=tuple(harnesses), columns=tuple(columns))


def source_root() -> Path:
    """The repository root this package runs from (its ``pyproject.toml`` and
    ``bindings/langchain``).

    Raises:
        ConfigurationError: the package is not running from a source checkout.
    """
    root = Path(__file__).resolve().parents[4]
    if (root / "pyproject.toml").is_file() and (
        root / "bindings" / "langchain" / "pyproject.toml"
    ).is_file():
        return root
    raise ConfigurationError(
        f"no agent-contract source tree at {root}; pass --source <repository root>"
    )
