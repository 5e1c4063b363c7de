"""The ``agent-contract`` command line.

Commands:

- ``run TEXT``: run the deterministic demo agent (calculator and policy lookup) on a
  request and print a short summary; ``--json`` for one JSON object, ``--trace`` for
  the redacted trace as JSONL. Raw messages are never printed. ``--harness NAME`` picks
  a registered harness that can run durably (``offline``, or a binding's). ``--otel
  console|otlp`` also exports the run as OpenTelemetry spans (see
  :mod:`agent_contract.app.telemetry`; ``check`` takes it too).
- ``approve THREAD_ID --decision approve|reject|edit``: decide a run paused for
  approval (``run 'refund order A-1001' --caller alice``) and resume it, in a new
  process; see :mod:`agent_contract.app.demo` for the data folder.
- ``run``, ``approve``, ``resume`` and ``gc`` take ``--store URL`` (default
  ``$AGENT_CONTRACT_STORE``, else the data folder's SQLite files): with
  ``postgresql://...`` every run, decision, order and checkpoint lives in that database,
  the data folder keeps only the key file, and any process with the URL and a copy of
  the key file approves or resumes any run (:mod:`agent_contract.stores`). The hints
  the commands print repeat ``--store`` without its password.
- ``resume THREAD_ID``: continue a stored run that a signal interrupted (Ctrl-C,
  SIGTERM): the run is stored paused ``interrupted`` and the command exits 130 or 143.
- ``self-test``: deterministic built-in checks, one line each.
- ``check [--harness NAME|module:factory ...] [--format text|markdown|json]``: run the
  contract suite in-process and print a boundary x harness checklist (see
  :mod:`agent_contract.app.check_command`); exits 5 when a boundary is broken on a
  harness asked about.
- ``matrix --langchain 1.2.9,latest,floor``: ``check`` in a throwaway environment per
  release of a framework whose binding registers a release-matrix target (see
  :mod:`agent_contract.app.matrix`); ``dependency_missing`` when none does.
- Commands of installed bindings, registered under the entry-point group
  ``agent_contract.commands`` (see :mod:`agent_contract.registry`); the LangChain
  binding adds ``lcel``. A command that no installed binding provides,
  while a binding agent-contract declares is missing, is ``dependency_missing``.

Exit codes (:data:`~agent_contract.exitcodes.EXIT_CODES`): 0 answered; 1 a self-test
or internal failure; 2 a usage error; 3 a budget stop (``max_model_steps``,
``max_tool_calls``, ``repeated_call``, ``deadline``, ``max_trace_bytes``,
``max_history_messages``, ``max_history_chars``); 4 a missing
optional dependency (``dependency_missing``); 5 a contract violation
(``invalid_response``); 6 the model failed (``model_error``, ``truncated_response``);
7 paused for approval (``pending_approval``, or ``interrupted`` when reported by a
resumed run); 8 a decision was refused or a stored run cannot be read
(``ApprovalError``, ``CheckpointError``); 9 a framework middleware ended the run
(``middleware_stop``); 10 the provider declined (``refused``, ``content_filtered``);
130 / 143 interrupted by SIGINT / SIGTERM (the run is stored).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import shlex
import sys
import traceback
from collections.abc import Sequence
from typing import TextIO, TypedDict, cast

from .. import __version__
from ..budget import Budget
from ..errors import (
    AgentContractError,
    ApprovalError,
    CheckpointError,
    ConfigurationError,
    DependencyMissingError,
)
from ..executor import default_executor
from ..exitcodes import (
    EXIT_APPROVAL_REFUSED,
    EXIT_CODES,
    EXIT_DEPENDENCY_MISSING,
    EXIT_FAILURE,
    EXIT_USAGE,
)
from ..registry import command_entry_points, harness_names, harness_plugin, missing_bindings
from ..runtime import RunInterrupted, RunResult
from ..stores import redacted_url
from ..trace import TraceSink
from .arguments import argument_problem, command_parser
from .check_command import add_check_command
from .demo import DATA_DIR_ENV, approve_demo, resume_demo, start_demo
from .folder import add_store_argument
from .gc_command import add_gc_command
from .matrix.command import add_matrix_command
from .matrix.target import matrix_targets, missing_target
from .model_options import add_model_arguments, model_from_arguments
from .redacting import RedactingStream, secrets_in
from .selftest import cmd_self_test
from .signals import Interrupted, exit_code, raising_signals
from .telemetry import add_otel_argument, exporting

__all__ = [
    "CORE_COMMANDS",
    "build_parser",
    "main",
]

CORE_COMMANDS = ("run", "approve", "resume", "gc", "self-test", "check", "matrix")
"""The commands of the core; the rest come from bindings."""


def _summary(result: RunResult) -> str:
    lines = []
    if result.output is not None:
        lines.append(f"answer: {result.output}")
    else:
        lines.append("answer: (none: the run stopped without an answer)")
    if result.tool_calls:
        calls = ", ".join(
            f"{c.name} [{c.id}]"
            + (f" (agent {c.scope.agent!r})" if c.scope else "")
            + f" {c.status}"
            + (f" ({c.error_kind})" if c.error_kind else "")
            for c in result.tool_calls
        )
        lines.append(f"tools called: {calls}")
    else:
        lines.append("tools called: none")
    stop = result.stop_reason + (f" ({result.stop_detail})" if result.stop_detail else "")
    lines.append(f"stop reason: {stop}")
    lines.append(f"harness: {result.harness}")
    return "\n".join(lines)


def _budget(args: argparse.Namespace) -> Budget:
    return Budget(
        max_model_steps=args.max_steps,
        max_tool_calls=args.max_tool_calls,
        max_identical_calls=args.max_repeats,
    )


class _StoredRun(TypedDict):
    """The options ``run``, ``approve`` and ``resume`` hand the demo from the flags they
    share (the limits, the secrets, the data folder and store, the ``--otel`` sink)."""

    budget: Budget
    secrets: Sequence[str]
    folder: str | None
    store: str | None
    trace_sink: TraceSink | None


def _stored_run(args: argparse.Namespace, sink: TraceSink | None) -> _StoredRun:
    """The shared options of a command on a stored run (see :class:`_StoredRun`)."""
    return _StoredRun(
        budget=_budget(args),
        secrets=args.secret,
        folder=args.data_dir,
        store=args.store,
        trace_sink=sink,
    )


def _where(args: argparse.Namespace) -> str:
    """`` --data-dir DIR --store URL`` as the command was given them (for the hints it
    prints), the URL without its password."""
    folder = f" --data-dir {shlex.quote(args.data_dir)}" if args.data_dir else ""
    if getattr(args, "store", None):
        folder += f" --store {shlex.quote(redacted_url(args.store))}"
    return folder


def _pending_text(result: RunResult, args: argparse.Namespace) -> str:
    lines = []
    folder = _where(args)
    for pending in result.pending_approvals:
        lines.append(f"pending approval: {pending.name} [{pending.tool_call_id}]")
        lines.append(f"  preview: {json.dumps(pending.preview, ensure_ascii=False)}")
    lines.append(
        f"decide with: agent-contract approve {result.run_id} --decision approve|reject|edit"
        f"{folder}  (edit takes --arguments JSON)"
    )
    return "\n".join(lines)


def _report(result: RunResult, args: argparse.Namespace, out: TextIO) -> int:
    redact = result.trace.redaction.redact
    if args.json:
        data = result.to_dict()
        data["thread_id"] = result.run_id
        out.write(redact(json.dumps(data, ensure_ascii=False)) + "\n")
    else:
        text = _summary(result)
        if result.stop_reason == "pending_approval":
            text += "\n" + _pending_text(result, args)
        out.write(redact(text) + "\n")
    if args.trace:
        out.write(result.trace.to_jsonl())
    return EXIT_CODES[result.stop_reason]


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with exporting(args.otel, stream=err) as sink:
        demo = start_demo(
            args.text,
            harness=args.harness,
            model=model_from_arguments(args),
            caller=args.caller,
            **_stored_run(args, sink),
        )
    return _report(demo.result, args, out)


def _cmd_approve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    arguments = None
    if args.arguments is not None:
        try:
            arguments = json.loads(args.arguments)
        except ValueError as exc:
            err.write(f"error: --arguments is not valid JSON: {exc}\n")
            return EXIT_USAGE
        except RecursionError:
            err.write("error: --arguments is nested too deeply to read as a JSON object\n")
            return EXIT_USAGE
        if not isinstance(arguments, dict):
            err.write("error: --arguments must be a JSON object\n")
            return EXIT_USAGE
    if args.decision == "edit" and arguments is None:
        err.write("error: --decision edit needs --arguments JSON\n")
        return EXIT_USAGE
    if args.decision != "edit" and arguments is not None:
        err.write("error: --arguments goes with --decision edit only\n")
        return EXIT_USAGE
    with exporting(args.otel, stream=err) as sink:
        result = approve_demo(
            args.thread_id,
            args.decision,
            arguments=arguments,
            call_id=args.call_id,
            reason=args.reason,
            decided_by=args.decided_by or _os_user(),
            **_stored_run(args, sink),
        )
    return _report(result, args, out)


def _cmd_resume(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with exporting(args.otel, stream=err) as sink:
        result = resume_demo(
            args.thread_id,
            **_stored_run(args, sink),
        )
    return _report(result, args, out)


def _interrupted(exc: RunInterrupted, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Report a run a signal interrupted (it is stored, paused ``interrupted``)."""
    _report(exc.result, args, out)
    folder = _where(args)
    err.write(
        f"interrupted: run {exc.result.run_id} is stored; continue it with: agent-contract "
        f"resume {exc.result.run_id}{folder}\n"
    )
    return exit_code(exc)


def _os_user() -> str:
    """The OS user running the command (who decides, unless ``--as NAME``)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry for the uid
        return f"uid:{os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be >= 1")
    return number


def _add_common(run_p: argparse.ArgumentParser) -> None:
    run_p.add_argument("--json", action="store_true", help="print one JSON object")
    run_p.add_argument("--trace", action="store_true", help="also print the redacted trace (JSONL)")
    run_p.add_argument(
        "--data-dir",
        default=None,
        help=f"orders and paused runs (default: ${DATA_DIR_ENV}, else "
        "$XDG_DATA_HOME/agent-contract or ~/.local/share/agent-contract)",
    )
    add_store_argument(run_p)
    run_p.add_argument("--max-steps", type=_positive, default=8, help="model steps (default 8)")
    run_p.add_argument("--max-tool-calls", type=_positive, default=8, help="tool calls (default 8)")
    run_p.add_argument(
        "--max-repeats",
        type=_positive,
        default=2,
        help="times one identical tool call may be requested (default 2)",
    )
    run_p.add_argument(
        "--secret", action="append", default=[], help="a value to redact everywhere (repeatable)"
    )


def _durable_harnesses() -> list[str]:
    """Registered harnesses with a durable runner (``run --harness`` choices)."""
    names = []
    for name in harness_names():
        try:
            if harness_plugin(name).durable is not None:
                names.append(name)
        except (DependencyMissingError, ConfigurationError):
            continue
    return names


def _unavailable_command(argv: Sequence[str]) -> DependencyMissingError | None:
    """The error for a command that no installed binding registers while a binding
    agent-contract declares is missing (it may provide it); ``None`` otherwise."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command == "matrix" and not matrix_targets():
        return missing_target()
    if command is None or command in CORE_COMMANDS:
        return None
    registered = {ep.name: ep for ep in command_entry_points()}
    if command in registered:
        try:
            registered[command].load()
        except ImportError as exc:
            dist = registered[command].dist
            package = dist.name if dist is not None else registered[command].module
            return DependencyMissingError(package, f"cannot import {exc.name or exc}")
        return None
    missing = missing_bindings()
    if not missing:
        return None
    return DependencyMissingError(
        ", ".join(missing),
        f"no command {command!r} is registered; a binding that is not installed may provide it",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="agent-contract",
        description="The tool-calling agent contract: run the demo agent, check harnesses.",
        epilog="exit codes: 0 answered, 1 failure, 2 usage, 3 budget stop, "
        "4 dependency missing, 5 contract violation, 6 model error, 7 pending approval, "
        "8 approval refused or stored run unreadable, 9 middleware stop, "
        "10 refused or content filtered, 130/143 interrupted (run stored)",
    )
    parser.add_argument("--version", action="version", version=f"agent-contract {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run_p = sub.add_parser("run", help="run the demo agent on a request")
    run_p.add_argument("text", help="the request, e.g. 'calculate 12 * (3 + 2)'")
    run_p.add_argument(
        "--harness",
        default="offline",
        metavar="{" + ",".join(_durable_harnesses()) + "}",
        help="a registered harness that can run durably (default: offline)",
    )
    run_p.add_argument("--caller", default=None, help="the customer the run acts for (orders)")
    add_model_arguments(run_p)
    add_otel_argument(run_p)
    _add_common(run_p)
    run_p.set_defaults(handler=_cmd_run)

    approve_p = sub.add_parser("approve", help="decide a run paused for approval, and resume it")
    approve_p.add_argument("thread_id", metavar="RUN_ID", help="the run id printed by `run`")
    approve_p.add_argument("--decision", choices=("approve", "reject", "edit"), required=True)
    approve_p.add_argument("--arguments", help="for edit: the arguments to run with (JSON)")
    approve_p.add_argument(
        "--call-id",
        help="decide one pending call (default: all; an edit with several pending needs it)",
    )
    approve_p.add_argument("--reason", default="", help="recorded in the trace")
    approve_p.add_argument(
        "--as",
        "--decided-by",
        dest="decided_by",
        metavar="NAME",
        default=None,
        help="who decides, recorded in the trace (default: the OS user)",
    )
    _add_common(approve_p)
    add_otel_argument(approve_p)
    approve_p.set_defaults(handler=_cmd_approve)

    resume_p = sub.add_parser(
        "resume", help="continue a stored run that was interrupted (Ctrl-C, SIGTERM)"
    )
    resume_p.add_argument(
        "thread_id", metavar="RUN_ID", help="the run id printed by `run` or `approve`"
    )
    _add_common(resume_p)
    add_otel_argument(resume_p)
    resume_p.set_defaults(handler=_cmd_resume)

    add_gc_command(sub)

    test_p = sub.add_parser("self-test", help="run the deterministic built-in checks")
    test_p.set_defaults(handler=cmd_self_test)

    add_check_command(sub)
    add_matrix_command(sub)
    for ep in command_entry_points():
        if ep.name in CORE_COMMANDS:
            continue
        try:
            add = ep.load()
        except ImportError:  # main() reports the command as dependency_missing
            continue
        add(sub)
    return parser


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Entry point; returns the exit code (see the module doc).

    Everything written to ``err`` (and to ``sys.stderr`` meanwhile) is redacted with
    the default secret patterns and the ``--secret`` values.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stream = RedactingStream(err or sys.stderr, secrets_in(args))
    try:
        with contextlib.redirect_stderr(cast(TextIO, stream)):
            return _main(args, out or sys.stdout, stream)
    finally:
        stream.close()


def _main(argv: list[str], out: TextIO, err: RedactingStream) -> int:
    unavailable = _unavailable_command(argv)
    if unavailable is not None:
        err.write(f"{unavailable}\n")
        return EXIT_DEPENDENCY_MISSING
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        problem = argument_problem(args, _durable_harnesses)
        if problem:
            command_parser(parser, getattr(args, "command", None)).error(problem)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    err.add_secrets(getattr(args, "secret", ()))
    try:
        with raising_signals():
            code: int = args.handler(args, out, cast(TextIO, err))
    except RunInterrupted as exc:
        default_executor().shutdown()  # idle tool threads end; the process can exit
        return _interrupted(exc, args, out, cast(TextIO, err))
    except (KeyboardInterrupt, Interrupted) as exc:
        default_executor().shutdown()
        err.write("interrupted\n")
        return exit_code(exc)
    except DependencyMissingError as exc:
        err.write(f"{exc}\n")
        return EXIT_DEPENDENCY_MISSING
    except (ApprovalError, CheckpointError) as exc:
        err.write(f"error: {type(exc).__name__}: {exc}\n")
        return EXIT_APPROVAL_REFUSED
    except AgentContractError as exc:
        err.write(f"error: {type(exc).__name__}: {exc}\n")
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    except Exception:  # noqa: BLE001 - a bug: reported (redacted), never a raw traceback
        err.write("error: internal error (a bug; please report it):\n")
        err.write(traceback.format_exc())
        return EXIT_FAILURE
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
