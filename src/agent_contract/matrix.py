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
4. runs ``<env python> -m agent_contract.cli check --harness ... --format json``.

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
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TextIO

from .checklist import boundary_label
from .errors import ConfigurationError
from .exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_DEPENDENCY_MISSING, EXIT_OK
from .scenarios import CONTROL_HARNESS, HARNESS_NAMES

__all__ = [
    "COMPANION_PINS",
    "DEFAULT_MATRIX_HARNESSES",
    "MATRIX_FORMAT_VERSION",
    "Column",
    "CommandResult",
    "CommandRunner",
    "EnvPlan",
    "MatrixReport",
    "add_matrix_command",
    "cmd_matrix",
    "companions_for",
    "load_matrix_json",
    "parse_releases",
    "plan_environment",
    "render_matrix_json",
    "render_matrix_markdown",
    "render_matrix_text",
    "run_matrix",
    "source_root",
    "subprocess_runner",
]

MATRIX_FORMAT_VERSION: Final = 1
"""Version of the JSON document :func:`render_matrix_json` writes."""

DEFAULT_MATRIX_HARNESSES: Final[tuple[str, ...]] = tuple(
    name for name in HARNESS_NAMES if name != CONTROL_HARNESS
)
"""Harnesses checked in each environment unless ``--harness`` says otherwise."""

Version = tuple[int, ...]

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

ColumnStatus = Literal["checked", "could_not_install", "binding_does_not_import", "error"]


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
            "agent_contract.cli",
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


@dataclass(frozen=True, kw_only=True)
class Column:
    """One release's result."""

    release: str
    status: ColumnStatus
    """``checked`` (``check`` ran; see :attr:`check`), ``could_not_install``,
    ``binding_does_not_import`` (``check`` exited 4), or ``error`` (``check`` failed
    otherwise)."""
    companions: tuple[str, ...] = ()
    versions: dict[str, str] = field(default_factory=dict)
    """The installed stack (``langchain``, ``langchain-core``, ``langgraph``,
    ``langgraph-prebuilt``); empty when it could not be installed."""
    evidence: str = ""
    """For anything but ``checked``: the last lines of the failing command's output."""
    check: dict[str, Any] | None = None
    """``check --format json``'s document (``docs/CHECK_FORMAT.md``)."""

    @property
    def label(self) -> str:
        """``1.3.15``, or ``latest (1.5.2)`` once resolved."""
        resolved = self.versions.get("langchain")
        if self.release == "latest" and resolved:
            return f"latest ({resolved})"
        return self.release

    def cell(self, boundary: str) -> str:
        """This column's cell text for ``boundary``."""
        if self.status == "could_not_install":
            return "could not install"
        if self.status == "binding_does_not_import":
            return "binding does not import"
        if self.status == "error" or self.check is None:
            return "error"
        cells = [c for c in self.check.get("cells", ()) if c.get("boundary") == boundary]
        if not cells:
            return "no scenario"
        broken = [c["harness"] for c in cells if c.get("status") == "broken"]
        if broken:
            return f"broken ({', '.join(broken)})"
        if all(c.get("status") == "not_checked" for c in cells):
            return "not checked"
        return "holds"


@dataclass(frozen=True, kw_only=True)
class MatrixReport:
    """The result of :func:`run_matrix`."""

    python: str
    harnesses: tuple[str, ...]
    columns: tuple[Column, ...]

    @property
    def rows(self) -> tuple[str, ...]:
        """Boundary keys, in the order the checked columns report them (union)."""
        rows: dict[str, None] = {}
        for column in self.columns:
            for boundary in (column.check or {}).get("boundaries", ()):
                rows[boundary["key"]] = None
        return tuple(rows)

    @property
    def exit_code(self) -> int:
        """5 broken or not importing somewhere installed; else 4 if a release could not
        be installed (or ``check`` failed); else 0."""
        if any(c.status == "binding_does_not_import" for c in self.columns):
            return EXIT_CONTRACT_VIOLATION
        if any(c.cell(b).startswith("broken") for c in self.columns for b in self.rows):
            return EXIT_CONTRACT_VIOLATION
        if any(c.status in ("could_not_install", "error") for c in self.columns):
            return EXIT_DEPENDENCY_MISSING
        return EXIT_OK


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
    harnesses: Sequence[str] = DEFAULT_MATRIX_HARNESSES,
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
        harnesses: checked in each environment.
        runner: runs the commands (default :func:`subprocess_runner`).
        workdir: where environments go; default a temporary directory removed at the end.
        uv: how to call uv.
        progress: called with one line per step.
    """
    run = runner or subprocess_runner()
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


# -- rendering ----------------------------------------------------------------------------


def _notes(report: MatrixReport) -> list[str]:
    notes = []
    for column in report.columns:
        stack = ", ".join(f"{k} {v}" for k, v in column.versions.items()) or "not installed"
        pins = f"; companion pins: {', '.join(column.companions)}" if column.companions else ""
        notes.append(f"{column.label}: {column.status.replace('_', ' ')} ({stack}{pins})")
        if column.evidence:
            notes += [f"    {line}" for line in column.evidence.splitlines()]
    return notes


def _table(report: MatrixReport) -> list[list[str]]:
    rows = [["boundary", *(c.label for c in report.columns)]]
    for boundary in report.rows or ("(no boundary checked)",):
        rows.append([boundary_label(boundary), *(c.cell(boundary) for c in report.columns)])
    return rows


def render_matrix_text(report: MatrixReport) -> str:
    """A plain-text boundary x release table, then one note per release."""
    table = _table(report)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [
        f"agent-contract matrix: python {report.python}; harnesses {', '.join(report.harnesses)}",
        "",
    ]
    for index, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", *_notes(report), "", f"exit {report.exit_code}"]
    return "\n".join(lines) + "\n"


def render_matrix_markdown(report: MatrixReport) -> str:
    """A Markdown boundary x release table, then one note per release."""
    table = _table(report)
    lines = [
        f"python {report.python}; harnesses {', '.join(report.harnesses)}",
        "",
        "| " + " | ".join(table[0]) + " |",
        "| --- |" + " --- |" * (len(table[0]) - 1),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
    lines += [""]
    for column in report.columns:
        stack = ", ".join(f"{k} {v}" for k, v in column.versions.items()) or "not installed"
        pins = f"; companion pins: `{', '.join(column.companions)}`" if column.companions else ""
        lines.append(f"- **{column.label}**: {column.status.replace('_', ' ')} ({stack}{pins})")
        if column.evidence:
            lines.append("  ```text")
            lines += [f"  {line}" for line in column.evidence.splitlines()]
            lines.append("  ```")
    return "\n".join(lines) + "\n"


def render_matrix_json(report: MatrixReport) -> str:
    """The report as JSON: ``{"format": "agent-contract-matrix", "version": 1, "python",
    "harnesses", "rows", "columns": [{"release", "label", "status", "companions",
    "versions", "evidence", "cells": {boundary: text}, "check": <check JSON or null>}],
    "exit_code"}``."""
    data = {
        "format": "agent-contract-matrix",
        "version": MATRIX_FORMAT_VERSION,
        "python": report.python,
        "harnesses": list(report.harnesses),
        "rows": list(report.rows),
        "columns": [
            {
                "release": c.release,
                "label": c.label,
                "status": c.status,
                "companions": list(c.companions),
                "versions": dict(c.versions),
                "evidence": c.evidence,
                "cells": {b: c.cell(b) for b in report.rows},
                "check": c.check,
            }
            for c in report.columns
        ],
        "exit_code": report.exit_code,
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def load_matrix_json(text: str) -> MatrixReport:
    """The :class:`MatrixReport` back from :func:`render_matrix_json`'s output (to render a
    recorded run again, e.g. as Markdown).

    Raises:
        ConfigurationError: not a version-1 matrix document.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (
        "agent-contract-matrix",
        MATRIX_FORMAT_VERSION,
    ):
        raise ConfigurationError("not an agent-contract-matrix document of version 1")
    columns = tuple(
        Column(
            release=c["release"],
            status=c["status"],
            companions=tuple(c["companions"]),
            versions=dict(c["versions"]),
            evidence=c["evidence"],
            check=c["check"],
        )
        for c in data["columns"]
    )
    return MatrixReport(python=data["python"], harnesses=tuple(data["harnesses"]), columns=columns)


MATRIX_FORMATS: Final[dict[str, Callable[[MatrixReport], str]]] = {
    "text": render_matrix_text,
    "markdown": render_matrix_markdown,
    "json": render_matrix_json,
}


# -- the command ----------------------------------------------------------------------------


def source_root() -> Path:
    """The repository root this package runs from (its ``pyproject.toml`` and
    ``bindings/langchain``).

    Raises:
        ConfigurationError: the package is not running from a source checkout.
    """
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (
        root / "bindings" / "langchain" / "pyproject.toml"
    ).is_file():
        return root
    raise ConfigurationError(
        f"no agent-contract source tree at {root}; pass --source <repository root>"
    )


def _uv_command(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def add_matrix_command(sub: Any) -> None:
    """Register ``matrix`` on the ``agent-contract`` subparsers ``sub``."""
    matrix_p = sub.add_parser(
        "matrix",
        help="run check against several LangChain releases, each in a uv environment",
        description="For each LangChain release, build a throwaway environment with uv "
        "(never the project's .venv), install this source tree and that release (plus "
        "the companion pins it needs), run `check --format json` there, and print a "
        "boundary x release table.",
        epilog="exit codes: 0 all hold; 5 a boundary broken or the binding not importing on "
        "an installed release; 4 a release could not be installed; 2 usage",
    )
    matrix_p.add_argument(
        "--langchain",
        required=True,
        help="comma-separated releases, e.g. 1.0.0,1.3.15,latest",
    )
    matrix_p.add_argument(
        "--python",
        default=f"{sys.version_info.major}.{sys.version_info.minor}",
        help="interpreter for the environments (default: this one's version)",
    )
    matrix_p.add_argument(
        "--harness",
        action="append",
        help=f"harnesses to check in each environment (default {','.join(DEFAULT_MATRIX_HARNESSES)})",
    )
    matrix_p.add_argument("--format", choices=sorted(MATRIX_FORMATS), default="text")
    matrix_p.add_argument("--source", type=Path, help="repository root (default: detected)")
    matrix_p.add_argument("--uv", help="the uv executable (default: uv on PATH, or python -m uv)")
    matrix_p.set_defaults(handler=cmd_matrix)


def cmd_matrix(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``matrix`` command (see the module doc for exit codes).

    Raises:
        ConfigurationError: bad ``--langchain`` value or no source tree (exit 2).
    """
    from .checklist import harness_names

    releases = parse_releases(args.langchain)
    harnesses = harness_names(args.harness) or list(DEFAULT_MATRIX_HARNESSES)
    source = args.source.resolve() if args.source else source_root()

    def progress(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    report = run_matrix(
        releases,
        source=source,
        python=args.python,
        harnesses=harnesses,
        uv=_uv_command(args.uv),
        progress=progress if err.isatty() else None,
    )
    out.write(MATRIX_FORMATS[args.format](report))
    return report.exit_code
