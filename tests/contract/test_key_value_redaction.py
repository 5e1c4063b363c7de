"""A tool result holding ``key=value`` secrets with punctuation inside the value: on every
harness the model, the answer and the trace see the whole value hidden, and the answer
(a text already redacted once, echoed by the model and redacted again) gains no stray
characters (redaction is idempotent)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_contract import Budget, ToolSpec
from agent_contract.harnesses import RunInput
from agent_contract.messages import Message
from agent_contract.registry import load_harness
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call

RESULT = 'password=ab]cdefg api_key=sk-Qabcdefghijklmnopqrst), token: x;y}z"w&v done'
SHOWN = "password=[REDACTED] api_key=[REDACTED] token: [REDACTED] done"
HIDDEN = ("cdefg", "Qabc", "y}z", "w&v")


def _echo(messages: Sequence[Message]) -> str:
    """The model's answer: what it saw in the tool message."""
    return f"model saw: {messages[-1].content}"


def test_a_key_value_secret_is_hidden_whole_on_every_harness(harness_name: str) -> None:
    spec = ToolSpec(
        name="config",
        description="Read the config.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: RESULT,
    )
    model = FakeModel([tool_call("config", {}), _echo])
    result = load_harness(harness_name)(
        model, [spec], RunInput(user="go", budget=Budget(deadline_seconds=30.0))
    )
    assert isinstance(result, RunResult)
    assert result.stop_reason == "answered"
    seen = model.calls[-1]["messages"][-1]
    assert (seen.role, seen.content) == ("tool", SHOWN)
    assert result.output == f"model saw: {SHOWN}"
    emitted = "\n".join(
        [result.trace.to_jsonl(), *(m.content for m in result.messages), result.output or ""]
    )
    for piece in HIDDEN:
        assert piece not in emitted, piece
    assert "[REDACTED]]" not in emitted
