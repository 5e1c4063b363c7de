"""One timed region on every harness (issue 10, item 11): only the tool's own code runs
under its timeout; serialization, redaction and the size limit happen after it, once, in
the core; the graph state never holds an oversized result's uncut value."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

import agent_contract.results as core_results
import agent_contract_langchain.tools as lc_tools
from agent_contract.loop import run
from agent_contract.runtime import Contract, RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolSpec

from .conftest import MODES, Stack, budget

BIG = {"rows": [{"id": i, "name": f"row {i}", "tags": ["a", "b"]} for i in range(60_000)]}
"""About 2.5 MB of JSON, returned at once."""

POOLS = ("agent-contract-tool", "agent-contract-ainvoke")
"""Thread name prefixes of the timed region (the tool pool, the ainvoke pool)."""


def big_spec() -> ToolSpec:
    return ToolSpec(
        name="export",
        description="Export everything.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: BIG,
        timeout_seconds=0.5,
        max_result_chars=2_000,
    )


def run_on(harness: str) -> tuple[RunResult, Any]:
    contract = Contract([big_spec()], budget=budget())
    model = FakeModel([tool_call("export", {}), "done"])
    if harness == "offline":
        return run(model, contract, "export"), None
    stack = Stack(model, contract)
    return stack.run(mode=harness), stack


@pytest.mark.parametrize("harness", ["offline", *MODES])
def test_serialization_happens_after_the_timed_region(
    harness: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []

    def spy(value: Any) -> str:
        threads.append(threading.current_thread().name)
        return original(value)

    original = core_results.serialize_result
    monkeypatch.setattr(core_results, "serialize_result", spy)
    monkeypatch.setattr(lc_tools, "serialize_result", spy)
    result, _ = run_on(harness)
    assert result.stop_reason == "answered"
    assert threads, "the result was serialized"
    assert [t for t in threads if t.startswith(POOLS)] == []


@pytest.mark.parametrize("harness", ["offline", *MODES])
def test_a_large_result_returned_at_once_gets_the_same_verdict_everywhere(harness: str) -> None:
    result, stack = run_on(harness)
    (record,) = result.tool_calls
    assert (record.status, record.error_kind) == ("success", None)
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert "[truncated by agent-contract" in message.content
    if stack is not None:  # the graph state holds the content the model saw, not the value
        state = stack.graph.get_state({"configurable": {"thread_id": result.run_id}}).values
        (stored,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        assert "value" not in stored.artifact
        assert stored.artifact["agent_contract"]["truncated"] is True
