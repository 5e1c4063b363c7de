"""A timed-out sync tool keeps its thread (thread mode cannot stop it); the run must not
wait for that thread, on any path, and the late write still lands afterwards (the
result said so: outcome ``unknown``, side effects possible)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from agent_contract import Budget, RunResult, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import run_agent

TIMEOUT = 0.1
SLEEP = 0.45
BOUND = 0.3
"""From the tool call's start to the run's return. Generous: the point is that the run
returns at the timeout (0.1 s), not after the tool (0.45 s)."""


def _run_with(mode: str | None) -> Callable[..., RunResult]:
    if mode is None:
        return run

    def go(*args: Any, **kwargs: Any) -> RunResult:
        result: RunResult = run_agent(*args, mode=mode, **kwargs)
        return result

    return go


@pytest.mark.parametrize("mode", [None, "invoke", "ainvoke", "stream"], ids=str)
def test_a_timed_out_sync_tool_does_not_hold_the_run(mode: str | None) -> None:
    landed = threading.Event()
    started: list[float] = []

    def handler(text: str) -> str:
        started.append(time.perf_counter())
        time.sleep(SLEEP)
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
    result = _run_with(mode)(model, [spec], "go", budget=Budget(deadline_seconds=30.0))
    elapsed = time.perf_counter() - started[0]
    assert elapsed < BOUND, f"the run waited {elapsed:.2f} s for an abandoned tool"
    assert result.stop_reason == "answered"
    record = result.tool_calls[0]
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )
    assert not landed.is_set()
    assert landed.wait(SLEEP + 2), "the abandoned handler never finished"
