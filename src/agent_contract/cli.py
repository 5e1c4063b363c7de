"""The ``agent-contract`` command line.

Commands:

- ``run TEXT``: run the deterministic demo agent (calculator and policy lookup) on a
  request and print a short summary; ``--json`` for one JSON object, ``--trace`` for
  the redacted trace as JSONL. Raw messages are never printed.
- ``self-test``: deterministic built-in checks, one line each.
- ``lcel TEXT``: the keyless LCEL demo (needs ``langchain-core``).
- ``check [--harness NAME|module:factory ...] [--format text|markdown|json]``: run the
  contract suite in-process and print a boundary x harness checklist (see
  :mod:`agent_contract.checklist`); exits 5 when a boundary is broken on a harness
  asked about.
- ``matrix --langchain 1.0.0,1.3.15,latest``: ``check`` in an isolated environment per
  LangChain release (see :mod:`agent_contract.matrix`).
- ``approve THREAD_ID --decision approve|reject|edit``: decide a run paused for
  approval (``run 'refund order A-1001' --caller alice``) and resume it, in a new
  process; see :mod:`agent_contract.demo` for the data folder.

Exit codes (:data:`EXIT_CODES`): 0 answered; 1 a self-test or internal failure; 2 a
usage error; 3 a budget stop (``max_model_steps``, ``max_tool_calls``,
``repeated_call``, ``deadline``, ``max_trace_bytes``); 4 a missing optional dependency
(``dependency_missing``); 5 a contract violation (``invalid_response``); 6 the model
failed (``model_error``); 7 paused for approval (``pending_approval``); 8 a decision
was refused or a stored run cannot be read (``ApprovalError``, ``CheckpointError``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from . import __version__
from .budget import Budget
from .checklist import add_check_command
from .demo import (
    DATA_DIR_ENV,
    HARNESSES,
    approve_demo,
    demo_tools,
    load_binding,
    run_demo,
    start_demo,
)
from .errors import (
    AgentContractError,
    ApprovalError,
    CheckpointError,
    DependencyMissingError,
    ScriptExhaustedError,
)
from .exitcodes import (
    EXIT_APPROVAL_REFUSED,
    EXIT_BUDGET,
    EXIT_CODES,
    EXIT_CONTRACT_VIOLATION,
    EXIT_DEPENDENCY_MISSING,
    EXIT_FAILURE,
    EXIT_MODEL_ERROR,
    EXIT_OK,
    EXIT_PENDING_APPROVAL,
    EXIT_USAGE,
)
from .loop import run as run_offline
from .matrix import add_matrix_command
from .runtime import RunResult
from .testing import FakeModel, tool_call

__all__ = [
    "EXIT_APPROVAL_REFUSED",
    "EXIT_BUDGET",
    "EXIT_CODES",
    "EXIT_CONTRACT_VIOLATION",
    "EXIT_DEPENDENCY_MISSING",
    "EXIT_FAILURE",
    "EXIT_MODEL_ERROR",
    "EXIT_OK",
    "EXIT_PENDING_APPROVAL",
    "EXIT_USAGE",
    "build_parser",
    "demo_tools",
    "load_binding",
    "main",
    "run_demo",
    "self_test_checks",
]


def _summary(result: RunResult) -> str:
    lines = []
    if result.output is not None:
        lines.append(f"answer: {result.output}")
    else:
        lines.append("answer: (none: the run stopped without an answer)")
    if result.tool_calls:
        calls = ", ".join(
            f"{c.name} [{c.id}] {c.status}" + (f" ({c.error_kind})" if c.error_kind else "")
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


def _pending_text(result: RunResult, data_dir: str | None) -> str:
    lines = []
    folder = f" --data-dir {data_dir}" if data_dir else ""
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
            text += "\n" + _pending_text(result, args.data_dir)
        out.write(redact(text) + "\n")
    if args.trace:
        out.write(result.trace.to_jsonl())
    return EXIT_CODES[result.stop_reason]


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    demo = start_demo(
        args.text,
        harness=args.harness,
        budget=_budget(args),
        secrets=args.secret,
        caller=args.caller,
        folder=args.data_dir,
    )
    return _report(demo.result, args, out)


def _cmd_approve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    arguments = None
    if args.arguments is not None:
        try:
            arguments = json.loads(args.arguments)
        except (ValueError, RecursionError):
            err.write("error: --arguments must be a JSON object\n")
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
    result = approve_demo(
        args.thread_id,
        args.decision,
        arguments=arguments,
        call_id=args.call_id,
        reason=args.reason,
        decided_by=args.decided_by,
        budget=_budget(args),
        secrets=args.secret,
        folder=args.data_dir,
    )
    return _report(result, args, out)


def _check(name: str, fn: Callable[[], str | None]) -> tuple[str, bool, str]:
    try:
        problem = fn()
    except Exception as exc:  # noqa: BLE001 - a self-test reports, it does not crash
        problem = f"raised {type(exc).__name__}"
    return name, problem is None, problem or ""


def self_test_checks() -> list[tuple[str, Callable[[], str | None]]]:
    """The built-in checks: ``(name, check)``; a check returns None or a problem."""

    def matches(
        result: RunResult, stop: str, trajectory: list[str], status: str | None
    ) -> str | None:
        seen = (result.stop_reason, result.trajectory(), [c.status for c in result.tool_calls])
        wanted = (stop, trajectory, [status] if status else [])
        return None if seen == wanted else f"expected {wanted}, got {seen}"

    def calculator_60() -> str | None:
        result = run_demo("calculate 12 * (3 + 2)")
        problem = matches(result, "answered", ["calculator"], "success")
        if problem is None and "60" not in (result.output or ""):
            problem = "answer does not cite 60"
        return problem

    def policy_source() -> str | None:
        result = run_demo("look up policy privacy")
        return None if "offline-policy:privacy:v1" in (result.output or "") else "no source id"

    def dangerous(text: str) -> Callable[[], str | None]:
        def check() -> str | None:
            result = run_demo(text)
            kinds = [c.error_kind for c in result.tool_calls]
            return None if kinds == ["invalid_arguments"] else f"error kinds {kinds}"

        return check

    def dry_script() -> str | None:
        model = FakeModel([tool_call("calculator", {"expression": "1+1"})])
        try:
            run_offline(model, demo_tools(), "x")
        except ScriptExhaustedError:
            return None
        return "a dry script did not raise ScriptExhaustedError"

    def step_budget() -> str | None:
        model = FakeModel([tool_call("calculator", {"expression": f"{i}+1"}) for i in range(5)])
        result = run_offline(model, demo_tools(), "loop", budget=Budget(max_model_steps=2))
        ok = result.stop_reason == "max_model_steps" and result.output is None
        return None if ok else f"stopped with {result.stop_reason}"

    def secret_redacted() -> str | None:
        secret = "sk-selftest-0123456789abcdef"  # noqa: S105 - a fake secret, planted on purpose
        result = run_demo(f"calculate {secret}", secrets=[secret])
        dump = result.trace.to_jsonl() + json.dumps(result.to_dict())
        return "secret leaked" if secret in dump else None

    return [
        ("calculator call returns 60", calculator_60),
        ("policy lookup cites offline-policy:privacy:v1", policy_source),
        (
            "direct answer uses no tool",
            lambda: matches(run_demo("explain tool calling"), "answered", [], None),
        ),
        ("function call rejected", dangerous("calculate __import__('os').getcwd()")),
        ("exponentiation rejected", dangerous("calculate 2 ** 1000000")),
        ("dry FakeModel is loud", dry_script),
        ("step budget stops without an answer", step_budget),
        ("secrets never reach trace or output", secret_redacted),
    ]


def _cmd_self_test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    results = [_check(name, fn) for name, fn in self_test_checks()]
    for name, ok, problem in results:
        out.write(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {problem}" if problem else "") + "\n")
    failed = sum(1 for _, ok, _ in results if not ok)
    out.write(f"{len(results) - failed} passed, {failed} failed\n")
    return EXIT_FAILURE if failed else EXIT_OK


def _cmd_lcel(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        lcel = importlib.import_module("agent_contract_langchain.lcel")
    except ImportError as exc:
        missing = (
            "agent-contract-langchain"
            if (exc.name or "").startswith("agent_contract_langchain")
            else "langchain-core"
        )
        err.write(f"dependency_missing: {missing} is not installed ({exc})\n")
        return EXIT_DEPENDENCY_MISSING
    out.write(json.dumps(lcel.run_lcel(args.text), ensure_ascii=False) + "\n")
    return EXIT_OK


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="agent-contract",
        description="The tool-calling agent contract: run the demo agent, check harnesses.",
        epilog="exit codes: 0 answered, 1 failure, 2 usage, 3 budget stop, "
        "4 dependency missing, 5 contract violation, 6 model error, 7 pending approval, "
        "8 approval refused or stored run unreadable",
    )
    parser.add_argument("--version", action="version", version=f"agent-contract {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run_p = sub.add_parser("run", help="run the demo agent on a request")
    run_p.add_argument("text", help="the request, e.g. 'calculate 12 * (3 + 2)'")
    run_p.add_argument("--harness", choices=HARNESSES, default="offline")
    run_p.add_argument("--caller", default=None, help="the customer the run acts for (orders)")
    _add_common(run_p)
    run_p.set_defaults(handler=_cmd_run)

    approve_p = sub.add_parser("approve", help="decide a run paused for approval, and resume it")
    approve_p.add_argument("thread_id", help="the run id printed by `run`")
    approve_p.add_argument("--decision", choices=("approve", "reject", "edit"), required=True)
    approve_p.add_argument("--arguments", help="for edit: the arguments to run with (JSON)")
    approve_p.add_argument("--call-id", help="decide one pending call (default: all)")
    approve_p.add_argument("--reason", default="", help="recorded in the trace")
    approve_p.add_argument("--decided-by", default="", help="who decides (recorded)")
    _add_common(approve_p)
    approve_p.set_defaults(handler=_cmd_approve)

    test_p = sub.add_parser("self-test", help="run the deterministic built-in checks")
    test_p.set_defaults(handler=_cmd_self_test)

    lcel_p = sub.add_parser("lcel", help="the keyless LCEL demo (needs langchain-core)")
    lcel_p.add_argument("text")
    lcel_p.set_defaults(handler=_cmd_lcel)

    add_check_command(sub)
    add_matrix_command(sub)
    return parser


def _argument_problem(args: argparse.Namespace) -> str | None:
    """A usage problem argparse cannot see: text that is not valid UTF-8 (the shell
    passed raw bytes), an empty request, or a data folder that is not a folder."""
    for name, value in vars(args).items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                label = "the request text" if name == "text" else f"--{name.replace('_', '-')}"
                return f"{label} is not valid UTF-8 text"
    if getattr(args, "text", None) is not None and not args.text.strip():
        return "the request text is empty"
    folder = getattr(args, "data_dir", None)
    if folder is not None:
        if not folder.strip():
            return "--data-dir is empty"
        if os.path.exists(folder) and not os.path.isdir(folder):
            return f"--data-dir {folder!r} exists and is not a folder"
    return None


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Entry point; returns the exit code (see the module doc)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        problem = _argument_problem(args)
        if problem:
            parser.error(problem)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = args.handler(args, out, err)
    except DependencyMissingError as exc:
        err.write(f"{exc}\n")
        return EXIT_DEPENDENCY_MISSING
    except (ApprovalError, CheckpointError) as exc:
        err.write(f"error: {type(exc).__name__}: {exc}\n")
        return EXIT_APPROVAL_REFUSED
    except AgentContractError as exc:
        err.write(f"error: {type(exc).__name__}: {exc}\n")
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
