"""The LangChain message mapping: every role round-trips, calls keep their order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import invalid_tool_call

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Completion, Message, TokenUsage, ToolCall
from agent_contract_langchain.messages import (
    CALL_ORDER_KEY,
    ai_message_to_completion,
    completion_to_ai_message,
    from_langchain,
    from_langchain_messages,
    is_well_formed,
    to_langchain,
    to_langchain_messages,
)

VALID_A = ToolCall(id="call_a", name="add", arguments={"a": 1, "b": 2})
VALID_B = ToolCall(id="call_b", name="lookup", arguments={"q": "Zürich ☃"})
NO_ID = ToolCall(id=None, name="add", arguments={"a": 1})
EMPTY_ID = ToolCall(id="", name="add", arguments={"a": 1})
EMPTY_NAME = ToolCall(id="call_n", name="", arguments={})
RAW_TEXT = ToolCall(id="call_r", name="add", arguments='{"a": 1,')
JSON_OBJECT_TEXT = ToolCall(id="call_s", name="add", arguments='{"a": 1}')
JSON_LIST_TEXT = ToolCall(id="call_t", name="add", arguments="[1, 2]")
LIST_ARGS = ToolCall(id="call_l", name="add", arguments=[1, 2])
NULL_ARGS = ToolCall(id="call_0", name="add", arguments=None)


def roundtrip(message: Message) -> Message:
    return from_langchain(to_langchain(message))


@pytest.mark.parametrize(
    ("message", "lc_type"),
    [
        pytest.param(Message(role="system", content="be brief"), SystemMessage, id="system"),
        pytest.param(Message(role="user", content="what is 2+2?"), HumanMessage, id="user"),
        pytest.param(Message(role="assistant", content="4"), AIMessage, id="assistant-answer"),
        pytest.param(
            Message(
                role="tool", content='{"sum": 4}', tool_call_id="c1", name="add", status="success"
            ),
            ToolMessage,
            id="tool-success",
        ),
        pytest.param(
            Message(role="tool", content="division by zero", tool_call_id="c2", status="error"),
            ToolMessage,
            id="tool-error-no-name",
        ),
        pytest.param(
            Message(role="user", content="grüße, 東京, emoji 🚀", name="ana"),
            HumanMessage,
            id="user-non-ascii-named",
        ),
        pytest.param(
            Message(role="assistant", content="naïve café ☕"), AIMessage, id="assistant-non-ascii"
        ),
    ],
)
def test_every_role_round_trips(message: Message, lc_type: type) -> None:
    converted = to_langchain(message)
    assert type(converted) is lc_type
    assert from_langchain(converted) == message


def test_tool_message_fields_reach_langchain() -> None:
    converted = to_langchain(
        Message(role="tool", content="boom", tool_call_id="c9", name="div", status="error")
    )
    assert isinstance(converted, ToolMessage)
    assert (converted.content, converted.tool_call_id, converted.name, converted.status) == (
        "boom",
        "c9",
        "div",
        "error",
    )


def test_valid_calls_go_to_tool_calls_in_order() -> None:
    message = Message(role="assistant", tool_calls=(VALID_A, VALID_B))
    converted = to_langchain(message)
    assert isinstance(converted, AIMessage)
    assert [tc["id"] for tc in converted.tool_calls] == ["call_a", "call_b"]
    assert converted.tool_calls[1]["args"] == {"q": "Zürich ☃"}
    assert converted.invalid_tool_calls == []
    assert CALL_ORDER_KEY not in converted.additional_kwargs
    assert from_langchain(converted) == message


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(NO_ID, id="no-id"),
        pytest.param(EMPTY_ID, id="empty-id"),
        pytest.param(EMPTY_NAME, id="empty-name"),
        pytest.param(RAW_TEXT, id="unparseable-text"),
        pytest.param(JSON_OBJECT_TEXT, id="object-as-text"),
        pytest.param(JSON_LIST_TEXT, id="list-as-text"),
        pytest.param(LIST_ARGS, id="list"),
        pytest.param(NULL_ARGS, id="null"),
    ],
)
def test_malformed_call_goes_to_invalid_tool_calls_and_round_trips(call: ToolCall) -> None:
    assert not is_well_formed(call)
    message = Message(role="assistant", tool_calls=(call,))
    converted = to_langchain(message)
    assert isinstance(converted, AIMessage)
    assert converted.tool_calls == []
    [invalid] = converted.invalid_tool_calls
    assert invalid["id"] == call.id
    assert isinstance(invalid["args"], str)
    assert invalid["error"]
    assert roundtrip(message) == message


def test_invalid_call_args_and_reasons() -> None:
    converted = to_langchain(
        Message(role="assistant", tool_calls=(RAW_TEXT, LIST_ARGS, NO_ID, EMPTY_NAME))
    )
    assert isinstance(converted, AIMessage)
    raw, listed, no_id, no_name = converted.invalid_tool_calls
    assert raw["args"] == '{"a": 1,'
    assert "str" in (raw["error"] or "")
    assert listed["args"] == "[1, 2]"
    assert "list" in (listed["error"] or "")
    assert no_id["error"] == "missing id"
    assert no_name["error"] == "empty name"


def test_mixed_calls_keep_the_model_order() -> None:
    calls = (RAW_TEXT, VALID_A, NO_ID, LIST_ARGS, VALID_B, JSON_OBJECT_TEXT)
    message = Message(role="assistant", tool_calls=calls)
    converted = to_langchain(message)
    assert isinstance(converted, AIMessage)
    assert [tc["id"] for tc in converted.tool_calls] == ["call_a", "call_b"]
    assert len(converted.invalid_tool_calls) == 4
    assert converted.additional_kwargs[CALL_ORDER_KEY] == [
        "invalid_tool_call:str",
        "tool_call",
        "invalid_tool_call:json",
        "invalid_tool_call:json",
        "tool_call",
        "invalid_tool_call:str",
    ]
    back = from_langchain(converted)
    assert back == message
    assert [c.id for c in back.tool_calls] == [c.id for c in calls]


def test_content_and_calls_are_both_kept() -> None:
    message = Message(role="assistant", content="let me check", tool_calls=(VALID_A, NO_ID))
    converted = to_langchain(message)
    assert converted.content == "let me check"
    assert roundtrip(message) == message


def test_order_marker_survives_langchain_serialization() -> None:
    message = Message(role="assistant", tool_calls=(NO_ID, VALID_A))
    converted = to_langchain(message)
    copied = AIMessage.model_validate(converted.model_dump())
    assert from_langchain(copied) == message


def test_foreign_ai_message_puts_valid_calls_first() -> None:
    foreign = AIMessage(
        content="",
        invalid_tool_calls=[
            invalid_tool_call(id="i1", name="add", args="{oops"),
            invalid_tool_call(id="i2", name=None, args="[1]"),
            invalid_tool_call(id=None, name="x", args='{"k": 1}'),
            invalid_tool_call(id="i4", name="y", args=None),
        ],
        tool_calls=[{"type": "tool_call", "id": "v1", "name": "add", "args": {"a": 1}}],
    )
    back = from_langchain(foreign)
    assert back.tool_calls == (
        ToolCall(id="v1", name="add", arguments={"a": 1}),
        ToolCall(id="i1", name="add", arguments="{oops"),
        ToolCall(id="i2", name="", arguments=[1]),
        ToolCall(id=None, name="x", arguments={"k": 1}),
        ToolCall(id="i4", name="y", arguments=""),
    )


def test_stale_order_marker_is_ignored() -> None:
    converted = to_langchain(Message(role="assistant", tool_calls=(NO_ID, VALID_A)))
    assert isinstance(converted, AIMessage)
    edited = converted.model_copy(update={"tool_calls": []})
    back = from_langchain(edited)
    assert [c.id for c in back.tool_calls] == [None]


def test_list_content_blocks_become_their_text() -> None:
    message = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "hidden"},
            {"type": "text", "text": "Hello, "},
            "wörld",
            {"type": "image", "url": "https://example.invalid/x.png"},
            {"type": "tool_use", "id": "t", "name": "add", "input": {}},
            {"type": "text", "text": "!"},
        ]
    )
    assert from_langchain(message).content == "Hello, wörld!"
    human = HumanMessage(content=[{"type": "text", "text": "hi"}, {"type": "text", "text": "!"}])
    assert from_langchain(human) == Message(role="user", content="hi!")
    tool = ToolMessage(content=[{"type": "text", "text": "42"}], tool_call_id="c")
    assert from_langchain(tool) == Message(
        role="tool", content="42", tool_call_id="c", status="success"
    )


def test_ai_message_chunk_maps_like_ai_message() -> None:
    chunk = AIMessageChunk(content="partial")
    assert from_langchain(chunk) == Message(role="assistant", content="partial")


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(ChatMessage(role="critic", content="hm"), id="chat-message"),
        pytest.param(RemoveMessage(id="m1"), id="remove-message"),
    ],
)
def test_unknown_message_types_are_configuration_errors(message: Any) -> None:
    with pytest.raises(ConfigurationError, match="no agent_contract role"):
        from_langchain(message)


def test_non_messages_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError):
        from_langchain({"role": "user", "content": "hi"})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        to_langchain(HumanMessage(content="hi"))  # type: ignore[arg-type]


def test_arguments_json_cannot_write_are_configuration_errors() -> None:
    message = Message(role="assistant", tool_calls=(ToolCall(id="c", name="x", arguments={1, 2}),))
    with pytest.raises(ConfigurationError, match="set"):
        to_langchain(message)


def test_tool_message_without_call_id_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        from_langchain(ToolMessage(content="x", tool_call_id=""))


def test_list_versions_keep_order() -> None:
    transcript = [
        Message(role="system", content="s"),
        Message(role="user", content="u"),
        Message(role="assistant", tool_calls=(VALID_A, RAW_TEXT)),
        Message(role="tool", content="3", tool_call_id="call_a", name="add", status="success"),
        Message(role="tool", content="bad", tool_call_id="call_r", name="add", status="error"),
        Message(role="assistant", content="3"),
    ]
    converted = to_langchain_messages(transcript)
    assert [m.type for m in converted] == ["system", "human", "ai", "tool", "tool", "ai"]
    assert from_langchain_messages(converted) == transcript
    assert to_langchain_messages([]) == []


def test_completion_to_ai_message_and_back() -> None:
    completion = Completion(
        tool_calls=(VALID_A, LIST_ARGS, VALID_B),
        finish_reason="tool_calls",
        usage=TokenUsage(input_tokens=120, output_tokens=7),
    )
    message = completion_to_ai_message(completion, message_id="ac-3-abc")
    assert message.id == "ac-3-abc"
    assert message.usage_metadata == {"input_tokens": 120, "output_tokens": 7, "total_tokens": 127}
    assert message.response_metadata["finish_reason"] == "tool_calls"
    assert all(tc["id"] is not None for tc in message.tool_calls)
    assert ai_message_to_completion(message) == completion


def test_completion_answer_round_trips_with_non_ascii() -> None:
    completion = Completion(text="Ergebnis: 4 ✓", usage=TokenUsage(input_tokens=3, output_tokens=2))
    message = completion_to_ai_message(completion, message_id="m")
    assert ai_message_to_completion(message) == completion


def test_foreign_ai_message_to_completion_defaults() -> None:
    plain = ai_message_to_completion(AIMessage(content="hi"))
    assert plain == Completion(text="hi", finish_reason="stop", usage=TokenUsage())
    calling = ai_message_to_completion(
        AIMessage(content="", tool_calls=[{"id": "c", "name": "add", "args": {}}])
    )
    assert calling.finish_reason == "tool_calls"
    assert calling.tool_calls == (ToolCall(id="c", name="add", arguments={}),)


def test_completion_to_ai_message_checks_its_inputs() -> None:
    with pytest.raises(ConfigurationError, match="message_id"):
        completion_to_ai_message(Completion(text="x"), message_id="")
    with pytest.raises(ConfigurationError, match="Completion"):
        completion_to_ai_message("x", message_id="m")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="AIMessage"):
        ai_message_to_completion(HumanMessage(content="x"))  # type: ignore[arg-type]


def test_invalid_args_text_is_json_for_non_strings() -> None:
    converted = to_langchain(
        Message(
            role="assistant",
            tool_calls=(ToolCall(id="c", name="x", arguments=["é", {"k": None}]),),
        )
    )
    assert isinstance(converted, AIMessage)
    args = converted.invalid_tool_calls[0]["args"]
    assert args is not None
    assert json.loads(args) == ["é", {"k": None}]
    assert "é" in args
