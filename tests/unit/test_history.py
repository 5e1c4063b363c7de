"""The history boundary, harness-free: :func:`agent_contract.runtime.history.check_history`
and the ``invalid_history`` stop of ``RunState.check_before_model_call``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agent_contract import Budget, Contract
from agent_contract.exitcodes import EXIT_CODES, EXIT_CONTRACT_VIOLATION
from agent_contract.messages import Message, ToolCall
from agent_contract.runtime import history as history_module
from agent_contract.runtime.history import check_history

USER = Message(role="user", content="hi")


def ask(*ids: str | None) -> Message:
    return Message(
        role="assistant", tool_calls=tuple(ToolCall(id=i, name="echo", arguments={}) for i in ids)
    )


def answer(call_id: str) -> Message:
    return Message(role="tool", content="ok", tool_call_id=call_id, name="echo", status="success")


def codes(*messages: Message) -> list[str]:
    return [p.code for p in check_history(messages)]


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param((), id="empty"),
        pytest.param((USER,), id="one-turn"),
        pytest.param((USER, ask("a"), answer("a")), id="answered"),
        pytest.param((USER, ask("a", "b"), answer("b"), answer("a")), id="any-order-in-block"),
        pytest.param((USER, ask("a"), answer("a"), ask("b"), answer("b"), USER), id="two-turns"),
        pytest.param((USER, Message(role="assistant", content="done"), USER), id="no-calls"),
    ],
)
def test_well_formed_histories(messages: tuple[Message, ...]) -> None:
    assert check_history(messages) == ()


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param((USER, answer("old_1")), ["orphan_tool_message"], id="orphan"),
        pytest.param((USER, ask("a")), ["unanswered_call"], id="unanswered-at-end"),
        pytest.param((USER, ask("a"), USER), ["unanswered_call"], id="unanswered-before-user"),
        pytest.param(
            (USER, ask("a", "b"), answer("a")), ["unanswered_call"], id="one-of-two-unanswered"
        ),
        pytest.param(
            (USER, ask("a"), answer("a"), answer("a")), ["duplicate_answer"], id="answered-twice"
        ),
        pytest.param(
            (USER, ask("a"), answer("a"), ask("a"), answer("a")),
            ["duplicate_call_id", "orphan_tool_message"],
            id="id-reused",
        ),
        pytest.param(
            (USER, ask("a"), USER, answer("a")),
            ["unanswered_call", "orphan_tool_message"],
            id="result-after-another-turn",
        ),
        pytest.param((USER, ask(None)), ["missing_call_id"], id="no-id"),
    ],
)
def test_broken_histories(messages: tuple[Message, ...], expected: list[str]) -> None:
    assert codes(*messages) == expected


def test_a_broken_history_stops_before_the_step_is_counted() -> None:
    state = Contract([]).start()
    stop = state.check_before_model_call([USER, answer("old_1")])
    assert stop is not None
    assert stop.reason == "invalid_history"
    assert "'old_1'" in stop.detail
    assert state.view.counters.model_steps == 0
    assert [e["type"] for e in state.view.trace.events][-1] == "contract_violation"


def test_a_sound_history_counts_the_step() -> None:
    state = Contract([]).start()
    assert state.check_before_model_call([USER, ask("a"), answer("a")]) is None
    assert state.view.counters.model_steps == 1


def test_invalid_history_exits_as_a_contract_violation() -> None:
    assert EXIT_CODES["invalid_history"] == EXIT_CONTRACT_VIOLATION


def test_the_model_call_event_counts_escapes_in_the_history() -> None:
    state = Contract([]).start()
    assert state.check_before_model_call([Message(role="user", content="a\udcff\ud800")]) is None
    assert state.view.trace.of_type("model_call")[-1]["escaped_chars"] == 2


# -- the history's size (issue 24 item 5) ---------------------------------------------------


class Unreadable(Sequence[Message]):
    """A history whose messages fail when read: only its length is known."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("a message was read")


def test_a_history_over_the_message_limit_is_refused_unread() -> None:
    state = Contract([], budget=Budget(max_history_messages=10)).start()
    stop = state.check_before_model_call(Unreadable(11))
    assert stop is not None
    assert (stop.reason, stop.detail) == (
        "max_history_messages",
        "max_history_messages of 10 exceeded (11 messages in the history)",
    )
    assert state.view.counters.model_steps == 0


def test_message_chars_counts_text_and_call_arguments() -> None:
    message = Message(
        role="assistant",
        content="abc",
        tool_calls=(ToolCall(id="c1", name="echo", arguments={"text": "hi"}),),
    )
    assert history_module.message_chars(message) == 3 + len('{"text":"hi"}')


def test_each_step_counts_only_the_messages_added_since(monkeypatch: pytest.MonkeyPatch) -> None:
    """The running count: a step whose history extends the one checked last measures only
    the new messages, not the whole history again."""
    measured: list[Message] = []
    original = history_module.message_chars

    def counting(message: Message) -> int:
        measured.append(message)
        return original(message)

    monkeypatch.setattr(history_module, "message_chars", counting)
    state = Contract([], budget=Budget(max_history_chars=40)).start()
    history = [Message(role="user", content=f"turn {n}") for n in range(5)]  # 6 chars each
    assert state.check_before_model_call(history) is None
    assert len(measured) == 5
    measured.clear()
    history.append(Message(role="assistant", content="x" * 9))  # 30 + 9 = 39 chars
    assert state.check_before_model_call(history) is None
    assert measured == [history[-1]]
    measured.clear()
    history.append(Message(role="user", content="yy"))  # 41 chars: over
    stop = state.check_before_model_call(history)
    assert stop is not None
    assert (stop.reason, stop.detail) == (
        "max_history_chars",
        "max_history_chars of 40 exceeded (at least 41 chars in the history)",
    )
    assert measured == [history[-1]]


def test_a_changed_history_is_counted_afresh() -> None:
    """A history that does not extend the one checked last (a middleware trimmed it) is
    counted from its start."""
    state = Contract([], budget=Budget(max_history_chars=10)).start()
    assert state.check_before_model_call([Message(role="user", content="a" * 10)]) is None
    assert state.check_before_model_call([Message(role="user", content="b" * 10)]) is None
    stop = state.check_before_model_call([Message(role="user", content="c" * 11)])
    assert stop is not None
    assert stop.reason == "max_history_chars"


@pytest.mark.parametrize(("before", "after"), [(1, True), (0, False), (1, 1.0)])
def test_a_prefix_equal_by_eq_but_of_another_size_is_counted_afresh(
    before: Any, after: Any
) -> None:
    """``{"n": 1} == {"n": True}`` while their sizes differ (1 and 4 chars): a history
    whose earlier call is replaced by such an equal one is not taken for the prefix
    checked last."""

    def history(value: Any) -> list[Message]:
        call = ToolCall(id="c1", name="echo", arguments={"n": value})
        return [
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", content="ok", tool_call_id="c1", status="success"),
        ]

    first = history(before)
    limit = sum(map(history_module.message_chars, first))
    state = Contract([], budget=Budget(max_history_chars=limit)).start()
    assert state.check_before_model_call(first) is None
    edited = history(after)
    assert edited == first  # what == cannot tell apart
    stop = state.check_before_model_call([*edited, Message(role="user", content="")])
    assert stop is not None
    assert stop.reason == "max_history_chars"


def test_a_refused_history_leaves_the_checked_prefix_as_it_was() -> None:
    """The scan of the clean prefix is resumed in place: a longer history refused for a
    reused call id takes the ids it added back, so the clean history checks again."""
    call = ToolCall(id="c1", name="echo", arguments={})
    clean = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="ok", tool_call_id="c1", status="success"),
    ]
    state = Contract([], budget=Budget()).start()
    assert state.check_before_model_call(clean) is None
    fresh = ToolCall(id="c2", name="echo", arguments={})
    broken = [
        *clean,
        Message(role="assistant", tool_calls=(fresh, ToolCall(id="c1", name="echo"))),
    ]
    stop = state.check_before_model_call(broken)
    assert stop is not None
    assert stop.reason == "invalid_history"
    assert "c2" not in state._run.history.ids
    assert state.check_before_model_call(clean) is None
    again = [*clean, Message(role="assistant", tool_calls=(fresh,))]
    again.append(Message(role="tool", content="ok", tool_call_id="c2", status="success"))
    assert state.check_before_model_call(again) is None  # c2 was not left as seen
    assert {"c1", "c2"} <= state._run.history.ids


def test_arguments_edited_in_place_under_a_shared_message_are_counted_afresh() -> None:
    """A call's arguments dict can be shared with the framework: edited in place, the
    message checked before now reads as the edited one. A binding that sees the edit
    hands a new message; the prefix is compared with the facts recorded when it was
    checked, so the new size is counted."""
    arguments: dict[str, Any] = {"text": "a"}
    call = ToolCall(id="c1", name="echo", arguments=arguments)
    first = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="ok", tool_call_id="c1", status="success"),
    ]
    limit = sum(map(history_module.message_chars, first)) + 1
    state = Contract([], budget=Budget(max_history_chars=limit)).start()
    assert state.check_before_model_call(first) is None
    arguments["text"] = "a" * 10  # in place: the checked message shares the dict
    edited = [first[0], Message(role="assistant", tool_calls=(call,)), first[2]]
    stop = state.check_before_model_call(edited)
    assert stop is not None
    assert stop.reason == "max_history_chars"
