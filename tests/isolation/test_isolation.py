"""Killable tools: thread mode reports an unknown outcome and the late write lands;
process isolation kills the tool at its timeout and the late write never lands.

The tool holds its write until the test releases it, after the run has returned: a run
that waited for the tool instead of timing out would find the write already done. The
tests assert outcomes only (how long a timeout takes is measured in
``benchmarks/bench_isolation.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from isolated_tools import boom, held_write, quick

from agent_contract import Budget, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "release": {"type": "string"}},
    "required": ["path", "release"],
}
TIMEOUT = 0.2
HANG_GUARD_SECONDS = 120.0
"""The limit of a call expected to finish (a spawned child's start included): far above
the expected time, so a loaded machine does not turn it into a timeout."""


def writer(isolation: str) -> ToolSpec:
    return ToolSpec(
        name="held_write",
        description="Writes once released.",
        parameters=SCHEMA,
        handler=held_write,
        timeout_seconds=TIMEOUT,
        isolation=isolation,  # type: ignore[arg-type]
    )


def wait_for(path: Path, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists():
            return True
        time.sleep(0.02)
    return path.exists()


def run_once(tmp_path: Path, isolation: str) -> tuple[dict[str, object], Path, Path]:
    target, release = tmp_path / f"{isolation}.txt", tmp_path / f"{isolation}.release"
    arguments = {"path": str(target), "release": str(release)}
    model = FakeModel([tool_call("held_write", arguments), "ok"])
    result = run(model, [writer(isolation)], "go", budget=Budget(deadline_seconds=30))
    return result.tool_calls[0].to_dict(), target, release


def test_thread_mode_reports_unknown_and_the_late_write_lands(tmp_path: Path) -> None:
    record, target, release = run_once(tmp_path, "thread")
    assert record["error_kind"] == "timeout"
    assert record["outcome"] == "unknown"
    assert record["side_effects_possible"] is True
    assert not target.exists(), "the run waited for the tool instead of timing out"
    release.touch()
    assert wait_for(target, HANG_GUARD_SECONDS), "thread mode cannot stop the write: it lands"


def test_process_isolation_kills_the_tool_and_the_write_never_lands(tmp_path: Path) -> None:
    record, target, release = run_once(tmp_path, "process")
    assert record["error_kind"] == "timeout"
    assert record["outcome"] == "killed"
    assert record["side_effects_possible"] is True
    assert not target.exists(), "the run waited for the tool instead of killing it"
    release.touch()  # a live process would write within 10 ms of this
    assert not wait_for(target, 1.0), "a killed tool's write must never land"


@pytest.mark.parametrize("harness", ["offline", "langchain"])
def test_isolated_tool_returns_and_errors_are_classified(harness: str) -> None:
    echo = ToolSpec(
        name="quick",
        description="Echo.",
        handler=quick,
        isolation="process",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        timeout_seconds=HANG_GUARD_SECONDS,
    )
    fail = ToolSpec(
        name="boom",
        description="Fails.",
        handler=boom,
        isolation="process",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        timeout_seconds=HANG_GUARD_SECONDS,
    )
    model = FakeModel(
        [tool_call("quick", {"text": "héllo"}), tool_call("boom", {"text": "xyz"}), "done"]
    )
    if harness == "offline":
        result = run(model, [echo, fail], "go")
    else:
        from agent_contract_langchain import run_agent

        result = run_agent(model, [echo, fail], "go")
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert tool_messages[0].content == '{"echo": "héllo"}'
    assert [c.error_kind for c in result.tool_calls] == [None, "tool_error"]
    assert "secret detail" not in tool_messages[1].content


def test_unpicklable_handler_is_a_tool_error_not_a_crash() -> None:
    spec = ToolSpec(
        name="local",
        description="A lambda cannot cross a process boundary.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: "x",
        isolation="process",
        timeout_seconds=HANG_GUARD_SECONDS,
    )
    result = run(FakeModel([tool_call("local", {}), "done"]), [spec], "go")
    assert result.tool_calls[0].error_kind == "tool_error"
    assert result.stop_reason == "answered"
