"""A timed-out sync tool keeps its thread (thread mode cannot stop it); the run must not
wait for that thread, on any path, and the late write still lands afterwards (the
result said so: outcome ``unknown``, side effects possible).

The tool holds its write until the test releases it, after the run has returned: a run
that waited for the thread would find the write done. (How soon the run returns is
measured in ``benchmarks/bench_timeout_precision.py``.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent_contract import Budget, RunResult, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import run_agent

TIMEOUT = 0.1
HOLD_SECONDS = 10.0
"""How long the tool holds its write if nobody releases it (a run that waits for it
would take this long, and then see the write)."""


def _run_with(mode: str | None) -> Callable[..., RunResult]:
    if mode is None:
        return run

    def go(*args: Any, **kwargs: Any) -> RunResult:
        result: RunResult = run_agent(*args, mode=mode, **kwargs)
        return result

    return go


@pytest.mark.parametrize("mode", [None, "invoke", "ainvoke", "stream"], ids=str)
def test_a_timed_out_sync_tool_does_not_hold_the_run(mode: str | None) -> None:
    release = threading.Event()
    landed = threading.Event()

    def handler(text: str) -> str:
        release.wait(timeout=HOLD_SECONDS)
        landed.set()  # the late side effect
        return "finished late"

    spec = ToolSpec(
        name="slow",
        description="Too slow.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=handler,
        timeout_seconds=TIMEOUT,
    )
    model = FakeModel([tool_call("slow", {"text": "x"}), "gave up"])
    try:
        result = _run_with(mode)(model, [spec], "go", budget=Budget(deadline_seconds=30.0))
        assert not landed.is_set(), "the run waited for the abandoned tool"
    finally:
        release.set()
    assert result.stop_reason == "answered"
    record = result.tool_calls[0]
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )
    assert landed.wait(5.0), "the abandoned handler never finished"
