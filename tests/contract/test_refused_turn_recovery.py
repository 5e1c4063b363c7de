"""A refused turn never locks the conversation (issue 24, item 2): after the contract
refuses a model turn whose calls break the history (a missing, duplicated or reused
call id; a call with no name), the refusal is in the result and the trace, the refused
turn is kept out of the messages handed forward, and the next turn on that history
runs, on every contract harness."""

from __future__ import annotations

import pytest

from agent_contract import ToolSpec
from agent_contract.conformance.fixtures import EARLIER_QUESTION, earlier_call, earlier_result
from agent_contract.messages import Completion, ToolCall
from agent_contract.registry import harness_plugins, load_harness
from agent_contract.runtime import RunInput, RunResult
from agent_contract.testing import FakeModel, tool_call, tool_calls

HARNESSES = tuple(p.name for p in harness_plugins() if p.role == "contract")

ECHOED: list[str] = []


def _echo(text: str) -> str:
    ECHOED.append(text)
    return f"echo: {text}"


def _tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            name="echo",
            description="Echo the text back.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
            handler=_echo,
        )
    ]


REFUSED: dict[str, Completion] = {
    "duplicate_ids": tool_calls(("echo", {"text": "one"}, "dup"), ("echo", {"text": "two"}, "dup")),
    "missing_id": tool_call("echo", {"text": "hi"}, id=None),
    "no_name": Completion(tool_calls=(ToolCall(id="nameless", name="", arguments={}),)),
    "reused_id": tool_call("echo", {"text": "b"}, id="old_1"),
}
EARLIER: dict[str, tuple] = {
    "reused_id": (EARLIER_QUESTION, earlier_call("old_1"), earlier_result("old_1")),
}


def _run(harness: str, model: FakeModel, user: str, history: tuple = ()) -> RunResult:
    result = load_harness(harness)(model, _tools(), RunInput(user=user, history=history))
    assert isinstance(result, RunResult)
    return result


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("refused", sorted(REFUSED))
def test_the_next_turn_runs_after_a_refused_turn(harness: str, refused: str) -> None:
    """When it fails: the refused assistant turn (calls a provider would reject) stayed
    in the messages, so every later turn stops ``invalid_history`` before the model is
    called."""
    declared = getattr(load_harness(harness), "not_expressible", None) or {}
    if refused == "missing_id" and "missing_call_id" in declared:
        pytest.skip(f"declared by the harness: {declared['missing_call_id']}")
    first = _run(harness, FakeModel([REFUSED[refused]]), "echo twice", EARLIER.get(refused, ()))
    assert first.stop_reason == "invalid_response"
    assert "contract_violation" in [e["type"] for e in first.trace.events]
    ECHOED.clear()
    model = FakeModel([tool_call("echo", {"text": "again"}, id="call_ok"), "done"])
    second = _run(harness, model, "try again", tuple(first.messages))
    assert second.stop_reason == "answered", second.stop_detail
    assert second.output == "done"
    assert ECHOED == ["again"]  # the tool ran once, on the new turn
