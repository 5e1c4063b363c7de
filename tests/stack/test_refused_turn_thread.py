"""A refused turn on a LangGraph checkpointer thread (issue 24, item 2): the refused
assistant turn is kept out of the saved thread, and the next turn on the same thread
runs, on invoke, ainvoke and stream."""

from __future__ import annotations

import pytest

from agent_contract.messages import Completion, ToolCall
from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call, tool_calls

from .conftest import MODES, Ran, Stack, budget, echo_spec

REFUSED: dict[str, Completion] = {
    "duplicate_ids": tool_calls(("echo", {"a": 1}, "dup"), ("echo", {"a": 2}, "dup")),
    "missing_id": tool_call("echo", {"a": 1}, id=None),
    "no_name": Completion(tool_calls=(ToolCall(id="nameless", name="", arguments={}),)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("refused", sorted(REFUSED))
def test_the_thread_goes_on_after_a_refused_turn(refused: str, mode: str) -> None:
    """When it fails: the refused turn was saved in the thread, and the next turn on it
    stops ``invalid_history`` before the model is called."""
    ran = Ran()
    model = FakeModel([REFUSED[refused], tool_call("echo", {"a": 3}, id="call_ok"), "done"])
    stack = Stack(model, Contract([echo_spec(ran)], budget=budget()))
    first = stack.run("echo twice", mode=mode, thread="customer-1")
    assert first.stop_reason == "invalid_response"
    assert "contract_violation" in [e["type"] for e in first.trace.events]
    assert ran.count("echo") == 0
    second = stack.run("try again", mode=mode, thread="customer-1")
    assert second.stop_reason == "answered", second.stop_detail
    assert second.output == "done"
    assert ran.count("echo") == 1  # once, on the new turn
