"""``agent-contract self-test``: deterministic built-in checks, one line each."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TextIO

from ..budget import Budget
from ..errors import ScriptExhaustedError
from ..exitcodes import EXIT_FAILURE, EXIT_OK
from ..loop import run as run_offline
from ..runtime import RunResult
from ..testing import FakeModel, tool_call
from .demo import demo_tools, start_demo

__all__ = ["cmd_self_test", "self_test_checks"]


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
        result = start_demo("calculate 12 * (3 + 2)").result
        problem = matches(result, "answered", ["calculator"], "success")
        if problem is None and "60" not in (result.output or ""):
            problem = "answer does not cite 60"
        return problem

    def policy_source() -> str | None:
        result = start_demo("look up policy privacy").result
        return None if "offline-policy:privacy:v1" in (result.output or "") else "no source id"

    def dangerous(text: str) -> Callable[[], str | None]:
        def check() -> str | None:
            result = start_demo(text).result
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
        result = start_demo(f"calculate {secret}", secrets=[secret]).result
        dump = result.trace.to_jsonl() + json.dumps(result.to_dict())
        return "secret leaked" if secret in dump else None

    return [
        ("calculator call returns 60", calculator_60),
        ("policy lookup cites offline-policy:privacy:v1", policy_source),
        (
            "direct answer uses no tool",
            lambda: matches(start_demo("explain tool calling").result, "answered", [], None),
        ),
        ("function call rejected", dangerous("calculate __import__('os').getcwd()")),
        ("exponentiation rejected", dangerous("calculate 2 ** 1000000")),
        ("dry FakeModel is loud", dry_script),
        ("step budget stops without an answer", step_budget),
        ("secrets never reach trace or output", secret_redacted),
    ]


def cmd_self_test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run :func:`self_test_checks`, print one line each and a total; exit 0 or 1."""
    results = [_check(name, fn) for name, fn in self_test_checks()]
    for name, ok, problem in results:
        out.write(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {problem}" if problem else "") + "\n")
    failed = sum(1 for _, ok, _ in results if not ok)
    out.write(f"{len(results) - failed} passed, {failed} failed\n")
    return EXIT_FAILURE if failed else EXIT_OK
