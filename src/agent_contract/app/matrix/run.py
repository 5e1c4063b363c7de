"""``agent-contract matrix``: ``check`` against several releases of a framework (the
registered :class:`~agent_contract.app.matrix.target.MatrixTarget`: LangChain's binding
registers one), each in its own throwaway environment built with uv.

For each requested release (``1.2.9``, ``1.3.15``, ``latest``, or ``floor``: every lower
bound of the metadata) the matrix, in a temporary directory (never the project's
``.venv``):

1. creates a virtual environment: ``uv venv <tmp>/<release> --python <python>``;
2. installs this project's two distributions (from ``--wheels``, ``--source``, or where
   the running ones came from: :func:`~agent_contract.app.matrix.packages.locate_packages`),
   ``<framework>==<release>``, its companions (by default as they were when the release
   was published: the target's ``plan_companions``) and the team's own requirements
   (``--with``): ``uv pip install --python <env python> ...``;
3. checks that the resolved stack imports (the target's smoke test) and records its
   versions;
4. runs ``<env python> -m agent_contract.app.cli check --harness ... --format json``
   (or, for a team's own agent, ``check --agent module:factory --format json``) in the
   working directory (so a team's ``module:factory`` is found there).

An environment that cannot be built (step 1-3 fails) is reported as ``could not
install`` with the installer's last lines as evidence, never as a contract failure. A
release on which the binding itself does not import (``check`` exits 4) is reported as
``binding does not import`` with the ImportError. A ``check`` that gives no verdict
(it exits 2, e.g. a factory that does not load on that release, or crashes) is ``check
failed`` (status ``error``) with its exit code and last lines. Everything else is the
boundary x release table of ``check``'s cells; each broken cell keeps ``check``'s
evidence, and the report prints it.

Exit codes of the command: 0 every release installed and every boundary holds; 5 a
boundary broken, or the binding not importing, on an installed release; otherwise 1
when ``check`` failed in an installed environment; otherwise 4 when a release could not
be installed; 2 usage (4 too when no uv is found).

The process runner is injectable (:class:`CommandRunner`), and so is the publish-time
lookup, so the planning, parsing and report logic are tested without a network. No
framework is imported here: only the environments import it.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ...errors import ConfigurationError
from ...exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_DEPENDENCY_MISSING, EXIT_OK
from ...registry import DISTRIBUTION, HARNESS_GROUP, harness_plugins
from .packages import Packages, metadata_floors
from .publish import uv_publish_time
from .report import Column, MatrixReport
from .runner import CommandResult, CommandRunner, subprocess_runner
from .target import CompanionMode, Companions, MatrixTarget, PublishTime, matrix_target

__all__ = [
    "CommandResult",
    "CommandRunner",
    "EnvPlan",
    "default_matrix_harnesses",
    "parse_releases",
    "plan_environment",
    "run_environment",
    "run_matrix",
    "source_root",
    "subprocess_runner",
]

_RELEASE = re.compile(r"^\d+(\.\d+){1,2}([a-z]+\d+)?$")


def default_matrix_harnesses(target: MatrixTarget | None = None) -> tuple[str, ...]:
    """Harnesses checked in each environment unless ``--harness`` says otherwise: every
    harness the core and ``target``'s binding (default: the registered target's) register
    that must keep the contract (no control; another binding's harnesses are not
    installed in the framework's environments).

    Raises:
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    binding = (target or matrix_target()).binding
    own = {
        ep.name
        for ep in importlib.metadata.entry_points(group=HARNESS_GROUP)
        if ep.dist is not None and ep.dist.name in (DISTRIBUTION, binding)
    }
    return tuple(p.name for p in harness_plugins() if p.role == "contract" and p.name in own)


def parse_releases(text: str, target: MatrixTarget | None = None) -> list[str]:
    """``"1.0.0, 1.3.15,latest"`` -> ``["1.0.0", "1.3.15", "latest"]`` (order kept,
    duplicates dropped); ``floor`` stands for the metadata's lower bounds. ``target``
    (default: the registered one) names the framework in the errors.

    Raises:
        ConfigurationError: an entry that is neither ``latest`` nor a release number, or
            an empty list.
    """
    target = target or matrix_target()
    releases: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item not in ("latest", "floor") and not _RELEASE.match(item):
            raise ConfigurationError(
                f"not a {target.label} release: {item!r} (e.g. 1.3.15, latest or floor)"
            )
        if item not in releases:
            releases.append(item)
    if not releases:
        raise ConfigurationError(
            f"no {target.label} release given (e.g. --{target.name} 1.3.15,latest)"
        )
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
    ``--with``: the framework and the companion pins."""
    companions: Companions = field(default_factory=Companions)
    """How the companions were chosen."""
    commands: tuple[tuple[str, ...], ...]
    """venv, install, import smoke test, check: argv lists, in order."""

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.env_dir / "bin" / "python"


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
    target: MatrixTarget | None = None,
    agent: str | None = None,
) -> EnvPlan:
    """The commands that build and check the environment for ``release``.

    Args:
        release: a release number, ``latest`` or ``floor``.
        workdir: the matrix's temporary directory.
        packages: this project's two distributions
            (:func:`~agent_contract.app.matrix.packages.locate_packages`).
        python: the interpreter request for ``uv venv --python`` (e.g. ``3.11``).
        harnesses: passed to ``check --harness``.
        companions: how the framework's companions are chosen (default: newest, no pins).
        extra: the team's own requirements (``--with``).
        floors: for ``floor``: the lower bounds to install exactly
            (:func:`~agent_contract.app.matrix.packages.metadata_floors`).
        uv: how to call uv.
        target: the framework (default: the registered target).
        agent: a team's agent factory (``module:factory``): ``check --agent`` on it
            instead of ``check --harness``.

    Raises:
        ConfigurationError: ``floor`` without ``floors``.
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    target = target or matrix_target()
    framework = target.name
    companions = companions or Companions()
    env_dir = workdir / f"{framework}-{release}"
    if release == "floor":
        if not floors:
            raise ConfigurationError("the floor release needs the metadata's lower bounds")
        ordered = sorted(floors.items(), key=lambda item: item[0] != framework)
        requirements: tuple[str, ...] = tuple(f"{name}=={version}" for name, version in ordered)
        # The pins the floor's framework release needs, as any team on it.
        requirements += target.companions_for(floors.get(framework, "0"))
    else:
        pinned = framework if release == "latest" else f"{framework}=={release}"
        requirements = (pinned, *companions.pins)
    env_python = str(env_dir / "bin" / "python")
    checked = ("--agent", agent) if agent else ("--harness", ",".join(harnesses))
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
        (env_python, "-c", target.smoke),
        (
            env_python,
            "-m",
            "agent_contract.app.cli",
            "check",
            *checked,
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


def _stderr_tail(result: CommandResult, lines: int = 6) -> str:
    return "\n".join(result.stderr.strip().splitlines()[-lines:])


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
    return replace(
        base,
        status="checked",
        versions=versions,
        check=document,
        output=_stderr_tail(result) if result.returncode != EXIT_OK else "",
    )


def _verdict(column: Column, rows: Sequence[str]) -> str:
    if column.status != "checked":
        return column.status_text + (
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
    pins: Mapping[str, str | None] | None = None,
    extra: Sequence[str] = (),
    publish_time: PublishTime | None = None,
    floors: Mapping[str, str] | None = None,
    target: MatrixTarget | None = None,
    agent: str | None = None,
) -> MatrixReport:
    """Build and check one environment per release, in order.

    Args:
        releases: from :func:`parse_releases`.
        packages: this project's two distributions
            (:func:`~agent_contract.app.matrix.packages.locate_packages`).
        python: the interpreter request for ``uv venv --python``.
        harnesses: checked in each environment (default
            :func:`default_matrix_harnesses`).
        runner: runs the commands (default :func:`subprocess_runner`).
        workdir: where environments go; default a temporary directory removed at the end.
        uv: how to call uv.
        progress: called with one line per step (``[1/3] langchain 1.2.9: ...``).
        mode: ``dated`` (companions as of each release's publish time) or ``newest``.
        pins: companion pins in every environment, by the target's pin option
            (``{"core": "1.2.18"}`` for ``--core 1.2.18``).
        extra: the team's own requirements, installed in every environment (``--with``).
        publish_time: looks up a release's publish time (default: the registry, through
            uv: :func:`~agent_contract.app.matrix.publish.uv_publish_time`).
        floors: the lower bounds ``floor`` installs (default: this installation's
            metadata, :func:`~agent_contract.app.matrix.packages.metadata_floors`).
        target: the framework (default: the registered target).
        agent: a team's agent factory (``module:factory``): each environment runs
            ``check --agent`` on it (``harnesses`` are then not checked).

    Raises:
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    target = target or matrix_target()
    run = runner or subprocess_runner()
    harnesses = tuple(harnesses or default_matrix_harnesses(target))
    lookup = publish_time or uv_publish_time(uv, run)
    columns: list[Column] = []
    with tempfile.TemporaryDirectory(prefix="agent-contract-matrix-") as tmp:
        base = workdir or Path(tmp)
        for index, release in enumerate(releases, start=1):

            def say(line: str, release: str = release, index: int = index) -> None:
                if progress is not None:
                    progress(f"[{index}/{len(releases)}] {target.name} {release}: {line}")

            try:
                companions = (
                    Companions(note="the metadata's lower bounds, each installed exactly")
                    if release == "floor"
                    else target.plan_companions(
                        release, mode=mode, publish_time=lookup, **dict(pins or {})
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
                floors=(floors if floors is not None else metadata_floors(target=target))
                if release == "floor"
                else None,
                uv=uv,
                target=target,
                agent=agent,
            )
            columns.append(run_environment(plan, run, say))
            checked = columns[-1].check or {}
            say(_verdict(columns[-1], [b["key"] for b in checked.get("boundaries", ())]))
    return MatrixReport(
        python=python,
        harnesses=() if agent else harnesses,
        columns=tuple(columns),
        origin=packages.origin,
        framework=target.name,
        agent=agent,
    )


def source_root(target: MatrixTarget | None = None) -> Path:
    """The repository root this package runs from (its ``pyproject.toml`` and the
    folder of ``target``'s binding; default: the registered target's).

    Raises:
        ConfigurationError: the package is not running from a source checkout.
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    folder = PurePosixPath((target or matrix_target()).source_folder)
    root = Path(__file__).resolve().parents[4]
    if (root / "pyproject.toml").is_file() and root.joinpath(
        *folder.parts, "pyproject.toml"
    ).is_file():
        return root
    raise ConfigurationError(
        f"no agent-contract source tree at {root}; pass --source <repository root>"
    )
