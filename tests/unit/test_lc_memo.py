"""The binding's conversion memos: per message (a change in place is converted again)
and per hook (:class:`HistoryPrefix`: only what the history gained is converted)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract_langchain._memo import HistoryPrefix
from agent_contract_langchain.messages import from_langchain, from_langchain_messages
from agent_contract_langchain.stops import without_stops


def _history(turns: int) -> list[Any]:
    messages: list[Any] = [HumanMessage("go")]
    for i in range(turns):
        call = {"name": "echo", "args": {"text": f"t{i}"}, "id": f"call_{i}"}
        messages += [
            AIMessage("", tool_calls=[call]),
            ToolMessage(f"t{i}", tool_call_id=f"call_{i}"),
        ]
    return messages


class Counting:
    """``from_langchain_messages`` that counts the messages it is given."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, messages: list[Any]) -> list[Message]:
        self.seen += len(messages)
        return from_langchain_messages(messages)


def test_a_message_changed_in_place_is_converted_again() -> None:
    message = ToolMessage("old", tool_call_id="call_1")
    assert from_langchain_messages([message])[0].content == "old"
    message.content = "new"
    message.tool_call_id = "call_2"
    converted = from_langchain_messages([message])[0]
    assert (converted.content, converted.tool_call_id) == ("new", "call_2")
    call = AIMessage("", tool_calls=[{"name": "echo", "args": {"text": "a"}, "id": "c"}])
    assert from_langchain(call).tool_calls[0].arguments == {"text": "a"}
    call.tool_calls[0]["args"]["text"] = "b"  # a nested value, changed in place
    assert from_langchain_messages([call])[0].tool_calls[0].arguments == {"text": "b"}


def test_a_value_that_is_not_a_message_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="BaseMessage"):
        from_langchain_messages([HumanMessage("go"), "not a message"])


def test_history_prefix_converts_only_what_was_added() -> None:
    view, convert = HistoryPrefix(), Counting()
    history = _history(3)
    kept, converted = view.read(history, without_stops, convert)
    assert converted == from_langchain_messages(history)
    assert kept == history
    assert convert.seen == 7
    grown = [*history, *_history(4)[7:]]  # the same objects, and one more turn
    kept, converted = view.read(grown, without_stops, convert)
    assert convert.seen == 9  # only the two new messages
    assert converted == from_langchain_messages(grown)
    assert kept == grown
    kept.append("a caller's change")  # new lists each call: the view is not touched
    assert view.read(grown, without_stops, convert)[0] == grown


@pytest.mark.parametrize("change", ["replaced", "shorter", "reordered"])
def test_history_prefix_reads_everything_when_the_prefix_changed(change: str) -> None:
    view, convert = HistoryPrefix(), Counting()
    history = _history(2)
    view.read(history, without_stops, convert)
    if change == "replaced":
        other = [*history]
        other[2] = ToolMessage("x", tool_call_id="call_0")
    elif change == "shorter":
        other = history[:3]
    else:
        other = [history[0], history[2], history[1], *history[3:]]
    before = convert.seen
    kept, converted = view.read(other, without_stops, convert)
    assert convert.seen - before == len(other)
    assert converted == from_langchain_messages(other)
    assert kept == other


def test_history_prefix_is_left_as_it_was_when_a_conversion_raises() -> None:
    view = HistoryPrefix()
    history = _history(1)
    view.read(history, without_stops, from_langchain_messages)

    def broken(messages: list[Any]) -> list[Message]:
        raise ConfigurationError("cannot convert")

    with pytest.raises(ConfigurationError):
        view.read([*history, HumanMessage("more")], without_stops, broken)
    convert = Counting()
    kept, _ = view.read([*history, HumanMessage("more")], without_stops, convert)
    assert convert.seen == 1  # the prefix read before the failure is still taken over
    assert len(kept) == 4
