"""The binding's conversion memos: per message (a change in place is converted again)
and per hook (:class:`HistoryPrefix`: only what the history gained is converted)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract_langchain._memo import CheckedHistory, HistoryPrefix
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


# -- CheckedHistory: the gate's view (only what is new or changed is converted) ------------


def _checked(view: CheckedHistory, messages: list[Any], convert: Counting) -> list[Message]:
    """``view.read``, asserted to give exactly the full conversion."""
    got = view.read(messages, convert)
    assert got == from_langchain_messages(messages)
    return got


def test_checked_history_converts_only_what_was_added() -> None:
    view, convert = CheckedHistory(), Counting()
    history = _history(3)
    _checked(view, history, convert)
    _checked(view, history, convert)  # the history copied twice: taken over from now on
    before = convert.seen
    history += _history(4)[-2:]
    _checked(view, history, convert)
    assert convert.seen - before == 2


def _edit_content(history: list[Any]) -> None:
    history[2].content = "changed"


def _edit_call_id(history: list[Any]) -> None:
    history[2].tool_call_id = "call_elsewhere"


def _edit_nested_arguments(history: list[Any]) -> None:
    history[1].tool_calls[0]["args"]["text"] = "changed"


def _edit_nested_call_id(history: list[Any]) -> None:
    history[1].tool_calls[0]["id"] = "call_elsewhere"


def _edit_additional_kwargs(history: list[Any]) -> None:
    history[1].additional_kwargs["agent_contract_escaped"] = 3


def _edit_content_list(history: list[Any]) -> None:
    history[0].content.append({"type": "text", "text": " more"})


def _edit_class(history: list[Any]) -> None:
    history[0].__class__ = type("OtherHuman", (HumanMessage,), {})


@pytest.mark.parametrize(
    "edit",
    [
        _edit_content,
        _edit_call_id,
        _edit_nested_arguments,
        _edit_nested_call_id,
        _edit_additional_kwargs,
        _edit_content_list,
        _edit_class,
    ],
)
def test_checked_history_sees_an_edit_in_place(edit: Any) -> None:
    view, convert = CheckedHistory(), Counting()
    history = _history(3)
    history[0] = HumanMessage([{"type": "text", "text": "go"}])
    for _ in range(3):
        _checked(view, history, convert)
    before = convert.seen
    edit(history)
    _checked(view, history, convert)  # the same objects, one changed: all read again
    assert convert.seen - before == len(history)
    before = convert.seen
    history += _history(4)[-2:]
    _checked(view, history, convert)  # the changed message copied again: taken over
    assert convert.seen - before == 2


def _replace_with_equal(history: list[Any]) -> list[Any]:
    copy = list(history)
    copy[2] = ToolMessage(history[2].content, tool_call_id=history[2].tool_call_id)
    return copy


def _truncate(history: list[Any]) -> list[Any]:
    return history[:-2]


def _drop_first_turn(history: list[Any]) -> list[Any]:
    return [history[0], *history[3:]]


def _reorder(history: list[Any]) -> list[Any]:
    return [history[0], history[2], history[1], *history[3:]]


def _summarize(history: list[Any]) -> list[Any]:
    return [HumanMessage("summary of the run so far"), *history[-2:]]


@pytest.mark.parametrize(
    "change", [_replace_with_equal, _truncate, _drop_first_turn, _reorder, _summarize]
)
def test_checked_history_reads_everything_when_the_objects_changed(change: Any) -> None:
    view, convert = CheckedHistory(), Counting()
    history = _history(3)
    for _ in range(2):
        _checked(view, history, convert)
    changed = change(history)
    before = convert.seen
    _checked(view, changed, convert)
    assert convert.seen - before == len(changed)
    before = convert.seen
    _checked(view, changed, convert)  # the same objects twice in a row: copied
    _checked(view, changed, convert)  # taken over
    assert convert.seen - before == len(changed)


def test_checked_history_does_not_copy_a_history_rewritten_every_step() -> None:
    """A trimming middleware gives new lists whose start moves on every step: the
    history is read whole (as the memo reads it), never copied."""
    view, convert = CheckedHistory(), Counting()
    history = _history(6)
    for start in range(1, 8):
        window = [history[0], *history[start : start + 4]]
        assert view.read(window, convert) == from_langchain_messages(window)
    assert view._by_kind == {}  # nothing was copied


class _Opaque:
    """A value that cannot be copied."""

    def __deepcopy__(self, memo: Any) -> Any:
        raise TypeError("not copyable")


class _Ambiguous:
    """A value whose comparison raises (as a NumPy array's truth value does)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("ambiguous")

    __hash__ = object.__hash__


@pytest.mark.parametrize(
    "value", [_Opaque(), _Ambiguous()], ids=["uncopyable", "comparison raises"]
)
def test_checked_history_reads_everything_past_a_field_it_cannot_compare(value: Any) -> None:
    view, convert = CheckedHistory(), Counting()
    history = _history(2)
    history[1].additional_kwargs["provider_object"] = value
    for _ in range(3):
        assert view.read(history, convert) == from_langchain_messages(history)
    before = convert.seen
    history[2].tool_call_id = "call_elsewhere"
    got = view.read(history, convert)
    assert got[2].tool_call_id == "call_elsewhere"
    assert convert.seen - before == len(history)


def test_checked_history_is_left_as_it_was_when_a_conversion_raises() -> None:
    view, convert = CheckedHistory(), Counting()
    history = _history(2)
    for _ in range(2):
        _checked(view, history, convert)
    with pytest.raises(ConfigurationError):
        view.read([*history, "not a message"], convert)
    before = convert.seen
    _checked(view, history, convert)
    assert convert.seen == before


# -- exactness: an edit that keeps the value ``==`` but changes its type is a change -------

_SAME_BY_EQ = [(1, True), (0, False), (1, 1.0), (0.0, -0.0), (True, 1)]


def _numbered_call(value: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "echo", "args": {"n": value}, "id": "call_n"}])


def _argument(message: Message) -> Any:
    return message.tool_calls[0].arguments["n"]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize(("before", "after"), _SAME_BY_EQ)
def test_the_memo_sees_an_edit_that_only_changes_a_type(before: Any, after: Any) -> None:
    call = _numbered_call(before)
    assert _same(_argument(from_langchain_messages([call])[0]), before)
    call.tool_calls[0]["args"] = {"n": after}  # == the old arguments, of another type
    assert _same(_argument(from_langchain_messages([call])[0]), after)


def test_the_memo_sees_an_escaped_count_of_1_edited_to_true() -> None:
    from agent_contract_langchain.messages import ESCAPED_KEY

    message = HumanMessage("go", additional_kwargs={ESCAPED_KEY: 1})
    assert from_langchain_messages([message])[0].escaped_chars == 1
    message.additional_kwargs[ESCAPED_KEY] = True  # 1 == True; a bool is no count
    assert from_langchain_messages([message])[0].escaped_chars == 0


@pytest.mark.parametrize(("before", "after"), _SAME_BY_EQ)
def test_checked_history_sees_an_edit_that_only_changes_a_type(before: Any, after: Any) -> None:
    view, convert = CheckedHistory(), Counting()
    history = [HumanMessage("go"), _numbered_call(before), ToolMessage("ok", tool_call_id="call_n")]
    for _ in range(3):
        _checked(view, history, convert)
    history[1].tool_calls[0]["args"] = {"n": after}  # == the old arguments
    got = _checked(view, history, convert)
    assert _same(_argument(got[1]), after)
