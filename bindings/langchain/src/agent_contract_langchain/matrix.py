"""``agent-contract matrix``: ``check`` against several LangChain releases, each in its
own throwaway environment built with uv.

For each requested release (``1.2.9``, ``1.3.15``, ``latest``, or ``floor``: every lower
bound of the metadata) the matrix, in a temporary directory (never the project's
``.venv``):

1. creates a virtual environment: ``uv venv <tmp>/<release> --python <python>``;
2. installs this project's two distributions (from ``--wheels``, ``--source``, or where
   the running ones came from: :func:`~agent_contract_langchain.matrix_env.locate_packages`),
   ``langchain==<release>``, its companions (by default as they were when the release
   was published: :func:`~agent_contract_langchain.matrix_env.plan_companions`) and the
   team's own requirements (``--with``): ``uv pip install --python <env python> ...``;
3. checks that the resolved stack imports (``langchain.agents``, ``langgraph.prebuilt``)
   and records its versions;
4. runs ``<env python> -m agent_contract.app.cli check --harness ... --format json``
   in the working directory (so a team's ``module:factory`` is found there).

An environment that cannot be built (step 1-3 fails) is reported as ``could not
install`` with the installer's last lines as evidence, never as a contract failure. A
release on which the binding itself does not import (``check`` exits 4) is reported as
``binding does not import`` with the ImportError. Everything else is the boundary x
release table of ``check``'s cells.

Exit codes of the command: 0 every release installed and every boundary holds; 5 a
boundary broken, or the binding not importing, on an installed release; 4 otherwise
when a release could not be installed; 2 usage.

The process runner is injectable (:class:`CommandRunner`), and so is the publish-time
lookup, so the planning, parsing and report logic are tested without a network.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from agent_contract.errors import ConfigurationError
from agent_contract.exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_DEPENDENCY_MISSING, EXIT_OK
from agent_contract.registry import DISTRIBUTION, HARNESS_GROUP, harness_plugins

from .matrix_env import (
    COMPANION_PINS,
    MEASURED_FLOORS,
    CompanionMode,
    Companions,
    Packages,
    PublishTime,
    Version,
    companions_for,
    metadata_floors,
    plan_companions,
    uv_publish_time,
)
from .matrix_report import Column, MatrixReport
from .matrix_runner import CommandResult, CommandRunner, subprocess_runner

__all__ = [
    "COMPANION_PINS",
    "MEASURED_FLOORS",
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

_RELEASE = re.compile(r"^\d+(\.\d+){1,2}([a-z]+\d+)?$")


def default_matrix_harnesses() -> tuple[str, ...]:
    """Harnesses checked in each environment unless ``--harness`` says otherwise: every
    harness the core and this binding register that must keep the contract (no control;
    another binding's harnesses are not installed in a LangChain environment)."""
    own = {
        ep.name
        for ep in importlib.metadata.entry_points(group=HARNESS_GROUP)
        if ep.dist is not None and ep.dist.name in (DISTRIBUTION, "agent-contract-langchain")
    }
    return tuple(p.name for p in harness_plugins() if p.role == "contract" and p.name in own)


def parse_releases(text: str) -> list[str]:
    """``"1.0.0, 1.3.15,latest"`` -> ``["1.0.0", "1.3.15", "latest"]`` (order kept,
    duplicates dropped); ``floor`` stands for the metadata's lower bounds.

    Raises:
        ConfigurationError: an entry that is neither ``latest`` nor a release number, or
            an empty list.
    """
    releases: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item not in ("latest", "floor") and not _RELEASE.match(item):
            raise ConfigurationError(
                f"not a LangChain release: {item!r} (e.g. 1.3.15, latest or floor)"
            )
        if item not in releases:
            releases.append(item)
    if not releases:
        raise ConfigurationError("no LangChain release given (e.g. --langchain 1.3.15,latest)")
    return releases


@dataclass(frozen=True, kw_only=True)
class EnvPlan:
    """How to build and check one environment."""

    release: str
    """As requested: a release number, ``latest`` or ``floor``."""
    env_dir: Path
    """Where the virtual environment goes (inside the matrix's temporary directory)."""
    requirements: tuple[str, ...]
    """What ``uv pip install`` gets besides this project's two distributions and
    ``--with``: langchain and the companion pins."""
    companions: Companions = field(default_factory=Companions)
    """How the companions were chosen."""
    commands: tuple[tuple[str, ...], ...]
    """venv, install, import smoke test, check: argv lists, in order."""

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.env_dir / "bin" / "python"


SMOKE: Final = (
    "import json, importlib.metadata as m, langchain.agents, langgraph.prebuilt; "
    "print(json.dumps({k: m.version(k) for k in "
    "('langchain', 'langchain-core', 'langgraph', 'langgraph-prebuilt', "
    "'langgraph-checkpoint', 'langgraph-checkpoint-sqlite')}))"
)
"""The import smoke test: the resolved stack imports; prints its versions as JSON."""


def plan_environment(
    release: str,
    *,
    workdir: Path,
    packages: Packages,
    python: str,
    harnesses: Sequence[str],
    companions: Companions | None = None,
    extra: Sequence[str] = (),
    floors: Mapping[str, str] | None = None,
    uv: Sequence[str] = ("uv",),
) -> EnvPlan:
    """The commands that build and check the environment for ``release``.

    Args:
        release: a release number, ``latest`` or ``floor``.
        workdir: the matrix's temporary directory.
        packages: this project's two distributions
            (:func:`~agent_contract_langchain.matrix_env.locate_packages`).
        python: the interpreter request for ``uv venv --python`` (e.g. ``3.11``).
        harnesses: passed to ``check --harness``.
        companions: how langchain's companions are chosen (default: newest, no pins).
        extra: the team's own requirements (``--with``).
        floors: for ``floor``: the lower bounds to install exactly
            (:func:`~agent_contract_langchain.matrix_env.metadata_floors`).
        uv: how to call uv.

    Raises:
        ConfigurationError: ``floor`` without ``floors``.
    """
    companions = companions or Companions()
    env_dir = workdir / f"langchain-{release}"
    if release == "floor":
        if not floors:
            raise ConfigurationError("the floor release needs the metadata's lower bounds")
        ordered = sorted(floors.items(), key=lambda item: item[0] != "langchain")
        requirements: tuple[str, ...] = tuple(f"{name}=={version}" for name, version in ordered)
        # The pins the floor's langchain release needs (COMPANION_PINS), as any team on it.
        requirements += companions_for(floors.get("langchain", "0"))
    else:
        langchain = "langchain" if release == "latest" else f"langchain=={release}"
        requirements = (langchain, *companions.pins)
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
            *packages.requirements,
            *requirements,
            *extra,
            *companions.uv_arguments(),
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
            "--quiet",
        ),
    )
    return EnvPlan(
        release=release,
        env_dir=env_dir,
        requirements=requirements,
        companions=companions,
        commands=commands,
    )


def _tail(result: CommandResult, lines: int = 6) -> str:
    text = (result.stderr.strip() or result.stdout.strip()).splitlines()
    return "\n".join(text[-lines:])


def run_environment(
    plan: EnvPlan, runner: CommandRunner, say: Callable[[str], None] | None = None
) -> Column:
    """Build one environment and check it (see the module doc); ``say`` gets one line
    per step."""
    tell = say or (lambda line: None)
    venv, install, smoke, check = plan.commands
    base = Column(
        release=plan.release,
        status="error",
        companions=plan.requirements[1:],
        note=plan.companions.note,
    )
    tell("installing " + " ".join(plan.requirements))
    for command in (venv, install):
        result = runner(command)
        if result.returncode != 0:
            return replace(base, status="could_not_install", evidence=_tail(result))
    result = runner(smoke)
    if result.returncode != 0:
        evidence = "the resolved stack does not import: " + _tail(result, 2)
        return replace(base, status="could_not_install", evidence=evidence)
    try:
        versions = {str(k): str(v) for k, v in json.loads(result.stdout).items()}
    except (ValueError, AttributeError):
        versions = {}
    tell("checking (" + ", ".join(f"{k} {v}" for k, v in versions.items()) + ")")
    result = runner(check)
    if result.returncode == EXIT_DEPENDENCY_MISSING:
        return replace(
            base, status="binding_does_not_import", versions=versions, evidence=_tail(result, 3)
        )
    try:
        document = json.loads(result.stdout)
    except ValueError:
        document = None
    if result.returncode not in (EXIT_OK, EXIT_CONTRACT_VIOLATION) or not isinstance(
        document, dict
    ):
        evidence = f"check exited {result.returncode}: {_tail(result)}"
        return replace(base, status="error", versions=versions, evidence=evidence)
    return replace(base, status="checked", versions=versions, check=document)


def _verdict(column: Column, rows: Sequence[str]) -> str:
    if column.status != "checked":
        return column.status.replace("_", " ") + (
            f": {column.evidence.splitlines()[-1]}" if column.evidence else ""
        )
    broken = [b for b in rows if column.cell(b).startswith("broken")]
    return f"broken: {', '.join(broken)}" if broken else "every boundary holds"


def run_matrix(
    releases: Sequence[str],
    *,
    packages: Packages,
    python: str,
    harnesses: Sequence[str] | None = None,
    runner: CommandRunner | None = None,
    workdir: Path | None = None,
    uv: Sequence[str] = ("uv",),
    progress: Callable[[str], None] | None = None,
    mode: CompanionMode = "dated",
    core: str | None = None,
    langgraph: str | None = None,
    extra: Sequence[str] = (),
    publish_time: PublishTime | None = None,
    floors: Mapping[str, str] | None = None,
) -> MatrixReport:
    """Build and check one environment per release, in order.

    Args:
        releases: from :func:`parse_releases`.
        packages: this project's two distributions
            (:func:`~agent_contract_langchain.matrix_env.locate_packages`).
        python: the interpreter request for ``uv venv --python``.
        harnesses: checked in each environment (default
            :func:`default_matrix_harnesses`).
        runner: runs the commands (default :func:`subprocess_runner`).
        workdir: where environments go; default a temporary directory removed at the end.
        uv: how to call uv.
        progress: called with one line per step (``[1/3] langchain 1.2.9: ...``).
        mode: ``dated`` (companions as of each release's publish time) or ``newest``.
        core: pin langchain-core in every environment (``--core``).
        langgraph: pin langgraph in every environment (``--langgraph``).
        extra: the team's own requirements, installed in every environment (``--with``).
        publish_time: looks up a release's publish time (default: the registry, through
            uv: :func:`~agent_contract_langchain.matrix_env.uv_publish_time`).
        floors: the lower bounds ``floor`` installs (default: this installation's
            metadata, :func:`~agent_contract_langchain.matrix_env.metadata_floors`).
    """
    run = runner or subprocess_runner()
    harnesses = tuple(harnesses or default_matrix_harnesses())
    lookup = publish_time or uv_publish_time(uv, run)
    columns: list[Column] = []
    with tempfile.TemporaryDirectory(prefix="agent-contract-matrix-") as tmp:
        base = workdir or Path(tmp)
        for index, release in enumerate(releases, start=1):

            def say(line: str, release: str = release, index: int = index) -> None:
                if progress is not None:
                    progress(f"[{index}/{len(releases)}] langchain {release}: {line}")

            try:
                companions = (
                    Companions(note="the metadata's lower bounds, each installed exactly")
                    if release == "floor"
                    else plan_companions(
                        release,
                        mode=mode,
                        publish_time=lookup,
                        core=core,
                        langgraph=langgraph,
                        newest_pins=companions_for,
                    )
                )
            except LookupError as exc:
                columns.append(
                    Column(release=release, status="could_not_install", evidence=str(exc))
                )
                say(_verdict(columns[-1], ()))
                continue
            say(companions.note)
            plan = plan_environment(
                release,
                workdir=base,
                packages=packages,
                python=python,
                harnesses=harnesses,
                companions=companions,
                extra=extra,
                floors=(floors if floors is not None else metadata_floors())
                if release == "floor"
                else None,
                uv=uv,
            )
            columns.append(run_environment(plan, run, say))
            checked = columns[-1].check or {}
            say(_verdict(columns[-1], [b["key"] for b in checked.get("boundaries", ())]))
    return MatrixReport(
        python=python, harnesses=harnesses, columns=tuple(columns), origin=packages.origin
    )


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
