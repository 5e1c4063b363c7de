"""``agent-contract check``: the command that prints the contract suite as a checklist
(see :mod:`agent_contract.conformance.check` for what it measures).

For CI: ``--junit FILE`` also writes JUnit XML (one test case per harness x boundary
cell, :mod:`agent_contract.conformance.junit`); progress goes to stderr, on one
overwritten line on a terminal and as plain lines when stderr is piped (``--quiet``
silences it); a ``module:factory`` harness is imported with the working directory on
``sys.path``, so a team's own module is found without setting ``PYTHONPATH``.
``--otel console|otlp`` exports every scenario's runs as OpenTelemetry spans (see
:mod:`agent_contract.app.telemetry`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TextIO

from ..conformance.agent import AgentCheck, agent_builder, render_agent_text, run_agent_check
from ..conformance.base import Scenario
from ..conformance.boundaries.table import boundary_label
from ..conformance.check import Finished, Progress, run_check
from ..conformance.fixtures import hide_planted
from ..conformance.junit import render_check_junit
from ..conformance.report import FORMATS, to_json_data
from ..conformance.runner import ScenarioOutcome
from ..errors import ConfigurationError, DependencyMissingError
from ..harnesses import Harness
from ..registry import harness_names, harness_plugins, missing_bindings
from ..stores import STORE_ENV, Store, parse_store_url
from .telemetry import add_otel_argument, exporting

__all__ = [
    "EVERY_WIRE_COLUMN",
    "LineProgress",
    "TerminalProgress",
    "add_check_command",
    "check_report_path",
    "cmd_check",
    "default_controls",
    "default_harnesses",
    "parse_effects",
    "progress_for",
    "split_harness_names",
    "store_for_check",
    "wire_names",
    "working_directory_importable",
    "write_report_file",
]


def default_harnesses() -> tuple[list[str], list[str]]:
    """``(checked, control)``: every registered harness marked ``default``, by role, in
    registry order. ``check`` runs the checked ones when no ``--harness`` is given, and
    the control ones only with ``--control``.

    Raises:
        DependencyMissingError: a binding agent-contract declares (an extra) is not
            installed: the default check covers every binding, so one that is missing
            is named rather than skipped in silence.
    """
    missing = missing_bindings()
    if missing:
        raise DependencyMissingError(
            ", ".join(missing), "the default check runs every binding agent-contract declares"
        )
    plugins = [p for p in harness_plugins() if p.default]
    return (
        [p.name for p in plugins if p.role == "contract"],
        [p.name for p in plugins if p.role == "control"],
    )


def default_controls() -> list[str]:
    """The registered control harnesses marked ``default`` (those ``--control`` adds), in
    registry order; only installed bindings' (nothing is raised for a missing one)."""
    return [p.name for p in harness_plugins() if p.default and p.role == "control"]


def split_harness_names(values: Sequence[str] | None) -> list[str]:
    """The names given as repeatable, comma-separated option values (``--harness``,
    ``--allow-unchecked``), in order, without duplicates or blanks."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return names


class TerminalProgress:
    """Progress on one overwritten line of ``stream`` (``check`` uses stderr when it is a
    terminal); cleared when the run finishes."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, done: int, total: int, harness: str, scenario: str) -> None:
        """Show ``[done/total] harness: scenario``, or clear the line once done == total."""
        if done >= total:
            self.stream.write("\r\033[K")
        else:
            self.stream.write(f"\r\033[K[{done + 1}/{total}] {harness}: {scenario}")
        self.stream.flush()


class LineProgress:
    """One plain line per scenario on ``stream`` (``check`` uses stderr when it is not a
    terminal, e.g. in CI): ``[3/105] offline allowlist: unknown_tool ... holds``, or
    ``... broken: <the first failed expectation>``, or ``... skipped (<why>)``: ``needs
    <capabilities>``, ``no form on this wire``, ``declared not expressible: <reason>``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(
        self,
        done: int,
        total: int,
        harness: str,
        scenario: Scenario,
        outcome: ScenarioOutcome | str,
    ) -> None:
        """Write the line for one finished scenario."""
        if isinstance(outcome, str):
            verdict = f"skipped ({outcome})"
        elif outcome.problems:
            first = outcome.problems[0]
            text = hide_planted(first.message).replace("\n", " ")
            if len(text) > 160:
                text = text[:157] + "..."
            verdict = f"broken: {boundary_label(first.boundary)}: {text}"
        else:
            verdict = "holds"
        label = boundary_label(scenario.boundary)
        self.stream.write(f"[{done}/{total}] {harness} {label}: {scenario.name} ... {verdict}\n")
        self.stream.flush()


def progress_for(args: Any, err: TextIO) -> tuple[Progress | None, Finished | None]:
    """``(progress, finished)`` for ``run_check``: nothing with ``--quiet``, one
    overwritten line on a terminal, plain lines when ``err`` is piped."""
    if args.quiet:
        return None, None
    if err.isatty():
        return TerminalProgress(err), None
    return None, LineProgress(err)


def working_directory_importable(names: Sequence[str]) -> None:
    """Put the working directory first on ``sys.path`` when a harness is named as
    ``module:factory``, as ``python -m`` does: a console script's ``sys.path`` starts
    with its own ``bin`` directory, so a team's module next to their tests would need
    ``PYTHONPATH`` otherwise."""
    if any(":" in name for name in names):
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)


def check_report_path(path: Path, option: str = "--junit") -> None:
    """Refuse a report file that could not be written, before a long run starts: a
    folder, a path through a file, or a place this user cannot write. Missing parent
    folders are fine: :func:`write_report_file` creates them, as ``pytest --junitxml``
    does (a CI step may write ``reports/x.xml`` before anything made ``reports/``).

    Raises:
        ConfigurationError: as above (exit 2).
    """
    if path.is_dir():
        raise ConfigurationError(f"{option} {str(path)!r} is a folder; name a file")
    here = path.parent
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():
        raise ConfigurationError(
            f"{option} {str(path)!r} cannot be written: {str(here)!r} in its path is a file"
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigurationError(f"{option} {str(path)!r} cannot be written (permission denied)")
    if not path.exists() and not os.access(here, os.W_OK | os.X_OK):
        raise ConfigurationError(
            f"{option} {str(path)!r} cannot be written: {str(here)!r} is not writable"
        )


def write_report_file(path: Path, text: str) -> None:
    """Write a report file (e.g. ``--junit``), creating its missing parent folders
    (check it first with :func:`check_report_path`).

    Raises:
        ConfigurationError: the file cannot be written (exit 2).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot write {path}: {exc}") from exc


def _agent_only_options(args: Any) -> None:
    """Refuse the ``--agent`` options given without ``--agent`` (they would be ignored).

    Raises:
        ConfigurationError: ``--effect``, ``--agent-framework`` or ``--mode`` without
            ``--agent`` (exit 2).
    """
    given = [
        option
        for option, value in (
            ("--effect", getattr(args, "effect", None)),
            ("--agent-framework", getattr(args, "agent_framework", None)),
            ("--mode", getattr(args, "mode", None)),
        )
        if value
    ]
    if given and not getattr(args, "agent", None):
        raise ConfigurationError(f"{', '.join(given)} goes with --agent only")


@contextlib.contextmanager
def _factories_contained(what: str, err: TextIO) -> Iterator[None]:
    """While the team's code runs (importing it, its factory, the harness or agent it
    builds): what it prints to stdout goes to ``err`` (stdout carries the report only,
    so ``--format json`` stays one parsable document), and a ``sys.exit`` in it is a
    wiring error naming it, never the command's exit code.

    Raises:
        ConfigurationError: the code under check raised ``SystemExit`` (exit 2).
    """
    try:
        with contextlib.redirect_stdout(err):
            yield
    except SystemExit as exc:
        raise ConfigurationError(
            f"{what} called sys.exit({exc.code!r}) during check; the code under check must "
            "return or raise, never end the process"
        ) from None


def add_check_command(sub: Any) -> None:
    """Register ``check`` on the ``agent-contract`` subparsers ``sub``."""
    try:
        checked, control = default_harnesses()
        defaults = ", ".join(checked)
        if control:
            defaults += (
                f"; with --control also {', '.join(control)} as control columns (expected to "
                "break; they do not affect the exit code)"
            )
    except DependencyMissingError:
        defaults = "every default harness of every binding (one is not installed)"
    check_p = sub.add_parser(
        "check",
        help="run the contract suite and print a boundary x harness checklist",
        description="Run every contract scenario in-process on each harness and print one "
        "row per boundary, one column per harness: holds or broken, with evidence. With no "
        f"--harness: {defaults}.",
        epilog="exit codes: 0 every boundary holds on the harnesses checked; 4 a harness's "
        "binding is missing; 5 a boundary is broken, crashed or not checked (without "
        "--allow-unchecked) on a harness you asked about; 2 usage",
    )
    check_p.add_argument(
        "--store",
        metavar="URL",
        help="run the durable-store scenarios (checkpoint integrity: the run store's rows "
        "and the graph checkpoints) on this store: postgresql://... (each in a scratch "
        f"schema, dropped after); default ${STORE_ENV}; else, or with a sqlite:/// URL, a "
        "fresh SQLite folder each",
    )
    check_p.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help="a harness to check (repeatable or comma-separated): "
        f"{', '.join(harness_names())}, or module:factory",
    )
    check_p.add_argument(
        "--agent",
        metavar="module:factory|module:graph",
        help="probe your own agent instead: factory(chat_model) builds it (your "
        "create_agent calls, your tools, middleware, context_schema, checkpointer; every "
        "agent it builds is probed), or module:graph names a module-level compiled graph "
        "(the one your deployment config names; the module is executed again per probe "
        "with create_agent's model replaced by the check's); the probes are derived from the "
        "JSON Schemas of the tools the model is offered (see docs/AGENT_CHECK.md)",
    )
    check_p.add_argument(
        "--effect",
        action="append",
        metavar="TOOL=read|write",
        help="with --agent, for a stack without a ContractMiddleware: declare a tool's "
        "effect (repeatable or comma-separated); an undeclared tool is treated as a write",
    )
    check_p.add_argument(
        "--agent-framework",
        metavar="NAME",
        help="which binding builds the agent's probes (an entry point of the group "
        "agent_contract.agents; default: the first registered)",
    )
    check_p.add_argument(
        "--mode",
        choices=("invoke", "ainvoke", "stream"),
        default=None,
        help="with --agent: how the agent is driven (default invoke)",
    )
    check_p.add_argument("--format", choices=sorted(FORMATS), default="text")
    check_p.add_argument(
        "--junit",
        type=Path,
        metavar="FILE",
        help="also write JUnit XML: one test case per harness x boundary, failures carrying "
        "the evidence (missing parent folders are created; a folder or an unwritable place "
        "is refused before the run)",
    )
    check_p.add_argument(
        "--control",
        action="store_true",
        help="also run the control columns (the registered harnesses without the contract: "
        f"{', '.join(default_controls()) or 'none installed'}) beside the harnesses checked, "
        "to see what breaks without the contract; they never affect the exit code. Without "
        "it they are not run, and the report says so",
    )
    check_p.add_argument(
        "--wire",
        action="append",
        nargs="?",
        const=EVERY_WIRE_COLUMN,
        metavar="COLUMN|HARNESS|WIRE",
        help="run the scenarios through the real provider clients the installed bindings "
        "declare (OpenAI and Anthropic APIs) over a local replay server on 127.0.0.1, one "
        "column per harness and client (HARNESS@openai, HARNESS@anthropic); alone: every "
        "column the installed bindings declare, or only those named "
        "(repeatable or comma-separated: a column, a harness's columns, or a wire's). Without "
        "--harness only the wire columns are checked (compared with offline). A scenario "
        "whose reply has no form on a wire is not checked there, with the reason; a client "
        "not installed leaves its column not checked, naming the install (see docs/CHECK.md)",
    )
    check_p.add_argument(
        "--quiet", action="store_true", help="no progress on stderr (piped or terminal)"
    )
    add_otel_argument(check_p)
    check_p.add_argument(
        "--allow-unchecked",
        action="append",
        metavar="BOUNDARY[,BOUNDARY...]",
        help="accept these boundaries being not checked on a harness (a scenario needs a "
        "capability the harness does not declare); without it a not-checked cell fails the "
        "run like a broken one. Shown in the report as allowed.",
    )
    check_p.set_defaults(handler=cmd_check)


EVERY_WIRE_COLUMN: Final = "*"
"""What a bare ``--wire`` stands for: every column the installed bindings declare."""


def wire_names(values: Sequence[str]) -> list[str]:
    """The wire columns asked for by ``--wire`` values (repeatable, comma-separated);
    ``[]`` (every column) when only a bare ``--wire`` was given.

    Raises:
        ConfigurationError: an empty name (``--wire=``, ``--wire 'openai,,anthropic'``):
            refused rather than read as "every column".
    """
    names: list[str] = []
    for value in values:
        if value == EVERY_WIRE_COLUMN:
            continue
        pieces = [piece.strip() for piece in value.split(",")]
        if not all(pieces):
            raise ConfigurationError(
                f"--wire {value!r} holds an empty name; name a column, a harness or a wire, "
                "or give --wire alone for every column"
            )
        names += [piece for piece in pieces if piece not in names]
    return names


@contextlib.contextmanager
def _no_columns() -> Iterator[Mapping[str, Harness]]:
    """No wire columns (``check`` without ``--wire``)."""
    yield {}


@contextlib.contextmanager
def store_for_check(url: str | None) -> Iterator[None]:
    """``check --store URL``: the URL in ``$AGENT_CONTRACT_STORE`` while the suite runs
    (the durable-store scenarios' stores follow it,
    :func:`~agent_contract.tampering.scenario_store`: every harness keeps a tampered
    scenario's run-store rows, and a LangChain harness its checkpoints, in scratch
    schemas of that database), restored after; a
    PostgreSQL server that cannot be reached is refused before any scenario runs.

    Raises:
        ConfigurationError: not a store URL.
        DataFolderError: the PostgreSQL server cannot be reached or refused the login.
    """
    if not url:
        yield
        return
    if parse_store_url(url)[0] == "postgresql":
        with Store(Path.cwd(), url).database("checkpoints").transaction(write=False) as conn:
            conn.execute("SELECT 1").fetchone()
    before = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = url
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(STORE_ENV, None)
        else:
            os.environ[STORE_ENV] = before


def cmd_check(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``check`` command: run, print in ``args.format``, return the exit code. With
    ``--wire``, the wire columns (:mod:`agent_contract.conformance.wire_check`) are
    checked beside the harnesses named (none by default).

    Raises:
        DependencyMissingError: a harness whose binding is not installed (exit 4).
        ConfigurationError: an unknown harness or wire column, an ``--agent`` option without
            ``--agent``, a ``--junit`` file that cannot be written (refused before the
            run), a ``--store`` that is not a store URL, or code under check that calls
            ``sys.exit`` (exit 2).
        DataFolderError: the ``--store`` PostgreSQL server cannot be reached (refused
            before the run).
    """
    _agent_only_options(args)
    if args.junit is not None:
        check_report_path(args.junit)
    if getattr(args, "agent", None):
        return _cmd_check_agent(args, out, err)
    named = split_harness_names(args.harness)
    wire = getattr(args, "wire", None)
    # With --wire and no --harness, only the wire columns are checked.
    if named or wire is not None:
        checked, controls = named, default_controls()
    else:
        checked, controls = default_harnesses()
    controls = [name for name in controls if name not in checked]
    working_directory_importable(checked)
    progress, finished = progress_for(args, err)
    what = f"harness {', '.join(n for n in checked if ':' in n) or ', '.join(checked)}"
    wire_columns: contextlib.AbstractContextManager[Mapping[str, Harness]] = _no_columns()
    if wire is not None:
        from ..conformance.wire_check import wire_harnesses  # http.server: only for --wire

        wire_columns = wire_harnesses(wire_names(wire))
    with (
        store_for_check(getattr(args, "store", None)),
        exporting(getattr(args, "otel", None), stream=err) as sink,
        _factories_contained(what, err),
        wire_columns as columns,
    ):
        report = run_check(
            [*checked, *columns],
            control=controls if args.control else [],
            progress=progress,
            finished=finished,
            allow_unchecked=split_harness_names(args.allow_unchecked),
            harnesses=columns,
            trace_sink=sink,
        )
    if not args.control and controls:
        report = replace(report, controls_not_run=tuple(controls))
    out.write(FORMATS[args.format](report))
    if args.junit is not None:
        write_report_file(args.junit, render_check_junit(report))
    return report.exit_code


def parse_effects(values: Sequence[str] | None) -> dict[str, str]:
    """``--effect`` values (``name=read``, repeatable or comma-separated) as a dict.

    Raises:
        ConfigurationError: an item that is not ``name=read`` or ``name=write``.
    """
    found: dict[str, str] = {}
    for value in values or ():
        for item in value.split(","):
            name, equals, effect = item.strip().partition("=")
            if not item.strip():
                continue
            if not equals or not name or effect not in ("read", "write"):
                raise ConfigurationError(f"--effect takes TOOL=read or TOOL=write, got {item!r}")
            found[name] = effect
    return found


def _agent_data(check: AgentCheck, *, nested: bool = False) -> dict[str, Any]:
    """The ``agent`` object of ``check --agent --format json`` (see
    ``docs/CHECK_FORMAT.md``): the factory, the agent's name among several, its tools
    probed (with their effects), the probes, the tools not probed with the reason, the
    ones not checked, the findings, and each other agent the factory built (with its
    own report, ``report``)."""
    probes = check.probes
    data: dict[str, Any] = {
        "factory": probes.agent,
        "name": probes.name or None,
        "tools": [{"name": n, "effect": probes.effects.get(n)} for n in probes.tools],
        "probes": {
            name: {"tool": info.tool or None, "kind": info.kind}
            for name, info in probes.probes.items()
        },
        "not_probed": dict(probes.not_probed),
        "unchecked": list(probes.unchecked),
        "findings": list(probes.findings),
    }
    if nested:
        data["report"] = to_json_data(check.report)
    data["agents"] = [_agent_data(child, nested=True) for child in check.agents]
    return data


def _cmd_check_agent(args: Any, out: TextIO, err: TextIO) -> int:
    """``check --agent module:factory``: probes derived from the team's own agent.

    Raises:
        DependencyMissingError: no binding that probes agents is installed (exit 4).
        ConfigurationError: the factory cannot be loaded (a missing module, a syntax
            error, an exception or ``sys.exit`` while it runs) or does not build an agent,
            a ``--harness`` or ``--wire`` given too, or a ``--junit`` file that cannot be written
            (exit 2).
    """
    if args.harness:
        raise ConfigurationError("check takes --agent or --harness, not both")
    if getattr(args, "wire", None) is not None:
        raise ConfigurationError("check takes --agent or --wire, not both")
    working_directory_importable([args.agent])
    effects = parse_effects(args.effect)
    _, build = agent_builder(args.agent_framework)
    progress, finished = progress_for(args, err)
    with (
        exporting(getattr(args, "otel", None), stream=err) as sink,
        _factories_contained(f"the agent factory {args.agent!r}", err),
    ):
        probes = build(args.agent, mode=args.mode or "invoke", effects=effects)
        check = run_agent_check(probes, progress=progress, finished=finished, trace_sink=sink)
    if args.format == "text":
        out.write(render_agent_text(check))
    elif args.format == "json":
        data = to_json_data(check.report)
        data["agent"] = _agent_data(check)
        data["exit_code"] = check.exit_code
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(FORMATS[args.format](check.report))
    if args.junit is not None:
        write_report_file(args.junit, render_check_junit(check.report))
    return check.exit_code
