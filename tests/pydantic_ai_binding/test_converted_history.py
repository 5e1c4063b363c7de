"""The PydanticAI binding converts only the messages that are new or changed since the
last model request (:class:`ConvertedHistory`): what it returns is always the full
conversion, and an edit in place, even one ``==`` cannot see, is converted again."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agent_contract.messages import Message
from agent_contract_pydantic_ai import messages as messages_module
from agent_contract_pydantic_ai.messages import ConvertedHistory, from_pydantic_messages


def _history(turns: int) -> list[ModelMessage]:
    out: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("go")])]
    for i in range(turns):
        out.append(ModelResponse(parts=[ToolCallPart("echo", {"n": i}, f"call_{i}")]))
        out.append(ModelRequest(parts=[ToolReturnPart("echo", f"r{i}", f"call_{i}")]))
    return out


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[ModelMessage]:
    """Every message :func:`from_pydantic` converts, in order."""
    seen: list[ModelMessage] = []
    original = messages_module.from_pydantic

    def counting(message: ModelMessage) -> list[Message]:
        seen.append(message)
        return original(message)

    monkeypatch.setattr(messages_module, "from_pydantic", counting)
    return seen


def _exact(a: list[Message], b: list[Message]) -> bool:
    """Equal, and every call's arguments of the same types (``==`` says 1 == True)."""
    return a == b and [repr(m.tool_calls) for m in a] == [repr(m.tool_calls) for m in b]


def _convert(view: ConvertedHistory, history: list[ModelMessage]) -> list[Message]:
    got = view.convert(history)
    assert _exact(got, from_pydantic_messages(history))
    return got


def test_only_the_new_messages_are_converted(conversions: list[ModelMessage]) -> None:
    view, history = ConvertedHistory(), _history(3)
    first = _convert(view, history)
    conversions.clear()
    history += _history(4)[-2:]
    again = view.convert(history)
    assert conversions == history[-2:]
    assert all(a is b for a, b in zip(first, again, strict=False))  # the same objects


def _edit_argument_type(history: list[ModelMessage]) -> None:
    part = history[1].parts[0]
    assert isinstance(part, ToolCallPart)
    part.args = {"n": False}  # == {"n": 0}, the arguments it had


def _edit_nested_argument(history: list[ModelMessage]) -> None:
    part = history[3].parts[0]
    assert isinstance(part, ToolCallPart)
    assert isinstance(part.args, dict)
    part.args["n"] = True  # was 1: equal by ==


def _edit_content(history: list[ModelMessage]) -> None:
    part = history[2].parts[0]
    assert isinstance(part, ToolReturnPart)
    part.content = "changed"


def _replace_part(history: list[ModelMessage]) -> None:
    history[1].parts[0] = TextPart("no call")


def _add_part(history: list[ModelMessage]) -> None:
    history[0].parts.append(UserPromptPart("more"))


@pytest.mark.parametrize(
    "edit",
    [_edit_argument_type, _edit_nested_argument, _edit_content, _replace_part, _add_part],
)
def test_a_message_changed_in_place_is_converted_again(
    edit: Any, conversions: list[ModelMessage]
) -> None:
    view, history = ConvertedHistory(), _history(2)
    _convert(view, history)
    _convert(view, history)
    conversions.clear()
    edit(history)
    got = view.convert(history)
    assert len(conversions) == 1  # the edited message, converted again
    assert _exact(got, from_pydantic_messages(history))  # types included


def test_a_replaced_message_is_converted(conversions: list[ModelMessage]) -> None:
    view, history = ConvertedHistory(), _history(2)
    _convert(view, history)
    history[3] = ModelResponse(parts=[ToolCallPart("echo", {"n": True}, "call_1")])
    conversions.clear()
    view.convert(history)
    assert conversions[0] is history[3]
