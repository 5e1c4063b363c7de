"""Messages, tool calls and completions: closed roles, frozen, validated at construction."""

from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType
from typing import Any

import pytest

from agent_contract.errors import ConfigurationError
from agent_contract.messages import (
    ROLES,
    Completion,
    Message,
    TokenUsage,
    ToolCall,
    canonical_json,
)


def test_roles_are_a_closed_set() -> None:
    assert ROLES == ("system", "user", "assistant", "tool")


@pytest.mark.parametrize("role", ["system", "user", "assistant"], ids=str)
def test_plain_roles_construct(role: str) -> None:
    message = Message(role=role, content="hi")  # type: ignore[arg-type]
    assert message.role == role
    assert message.content == "hi"


@pytest.mark.parametrize(
    "role",
    [
        pytest.param("developer", id="developer"),
        pytest.param("function", id="function"),
        pytest.param("User", id="wrong-case"),
        pytest.param("", id="empty"),
        pytest.param(None, id="none"),
    ],
)
def test_unknown_role_is_rejected(role: Any) -> None:
    with pytest.raises(ConfigurationError, match="unknown role"):
        Message(role=role, content="x")


def test_message_is_frozen() -> None:
    message = Message(role="user", content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]


def test_tool_call_and_completion_are_frozen() -> None:
    call = ToolCall(id="c1", name="t", arguments={})
    completion = Completion(text="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        completion.text = "y"  # type: ignore[misc]


def test_messages_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Message("user", "hi")  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"status": "success"}, "tool_call_id", id="missing-id"),
        pytest.param({"tool_call_id": "", "status": "success"}, "tool_call_id", id="empty-id"),
        pytest.param({"tool_call_id": "c1"}, "status", id="missing-status"),
        pytest.param({"tool_call_id": "c1", "status": "ok"}, "status", id="bad-status"),
    ],
)
def test_tool_message_needs_id_and_status(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Message(role="tool", content="x", **kwargs)


@pytest.mark.parametrize("status", ["success", "error"], ids=str)
def test_tool_message_with_id_and_status(status: str) -> None:
    message = Message(role="tool", content="r", tool_call_id="c1", name="t", status=status)  # type: ignore[arg-type]
    assert message.tool_call_id == "c1"
    assert message.status == status


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"tool_call_id": "c1"}, id="tool_call_id"),
        pytest.param({"status": "success"}, id="status"),
    ],
)
def test_tool_fields_only_on_tool_messages(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="tool messages only"):
        Message(role="assistant", content="x", **kwargs)


@pytest.mark.parametrize("role", ["user", "system", "tool"], ids=str)
def test_only_assistant_messages_carry_tool_calls(role: str) -> None:
    extra: dict[str, Any] = {"tool_call_id": "c0", "status": "success"} if role == "tool" else {}
    with pytest.raises(ConfigurationError, match="only assistant"):
        Message(role=role, tool_calls=(ToolCall(id="c1", name="t"),), **extra)  # type: ignore[arg-type]


def test_tool_calls_list_becomes_tuple() -> None:
    message = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="t")])  # type: ignore[arg-type]
    assert isinstance(message.tool_calls, tuple)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"content": 3}, "content", id="content-not-str"),
        pytest.param({"tool_calls": ({"id": "c1"},)}, "ToolCall", id="call-not-toolcall"),
    ],
)
def test_message_type_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Message(role="assistant", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"id": 1, "name": "t"}, "id", id="id-int"),
        pytest.param({"id": "c1", "name": None}, "name", id="name-none"),
    ],
)
def test_tool_call_type_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        ToolCall(**kwargs)


def test_tool_call_holds_malformed_arguments_for_the_validator() -> None:
    # A model may emit a list or text; construction keeps it so it can be refused.
    assert ToolCall(id="c1", name="t", arguments=[1, 2]).arguments == [1, 2]
    assert ToolCall(id="c1", name="t", arguments="{bad").arguments == "{bad"
    assert ToolCall(id=None, name="t").id is None


def test_tool_call_mapping_arguments_become_dict() -> None:
    call = ToolCall(id="c1", name="t", arguments=MappingProxyType({"a": 1}))
    assert type(call.arguments) is dict
    assert call.to_dict() == {"id": "c1", "name": "t", "arguments": {"a": 1}}


ROUND_TRIP = [
    pytest.param(Message(role="system", content="be brief"), id="system"),
    pytest.param(Message(role="user", content="计算 1 + 2"), id="user-non-ascii"),
    pytest.param(Message(role="assistant", content="done"), id="assistant-answer"),
    pytest.param(
        Message(
            role="assistant",
            tool_calls=(
                ToolCall(id="c1", name="calculator", arguments={"expression": "1+1"}),
                ToolCall(id="c2", name="policy_lookup", arguments={"topic": "privacy"}),
            ),
        ),
        id="assistant-tool-calls",
    ),
    pytest.param(
        Message(role="tool", content='{"r": 1}', tool_call_id="c1", name="t", status="success"),
        id="tool-success",
    ),
    pytest.param(
        Message(role="tool", content="{}", tool_call_id="c2", status="error"),
        id="tool-error-no-name",
    ),
]


@pytest.mark.parametrize("message", ROUND_TRIP)
def test_to_dict_from_dict_round_trip(message: Message) -> None:
    data = message.to_dict()
    json.dumps(data)  # JSON-ready
    assert Message.from_dict(data) == message
    assert Message.from_dict(json.loads(json.dumps(data))) == message


def test_to_dict_leaves_out_empty_optional_fields() -> None:
    assert Message(role="user", content="hi").to_dict() == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"content": "x"}, id="no-role"),
        pytest.param({"role": "wizard"}, id="bad-role"),
        pytest.param({"role": "tool", "content": "x"}, id="tool-without-id"),
        pytest.param({"role": "assistant", "tool_calls": [{"id": "c1"}]}, id="call-without-name"),
        pytest.param({"role": "assistant", "tool_calls": [3]}, id="call-not-a-dict"),
    ],
)
def test_from_dict_rejects_malformed(data: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        Message.from_dict(data)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"text": None}, "text", id="text-none"),
        pytest.param({"text": b"x"}, "text", id="text-bytes"),
        pytest.param({"tool_calls": ("call",)}, "ToolCall", id="call-str"),
        pytest.param({"finish_reason": 1}, "finish_reason", id="finish-reason-int"),
        pytest.param({"usage": {"input_tokens": 1}}, "TokenUsage", id="usage-dict"),
    ],
)
def test_completion_type_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Completion(**kwargs)


def test_completion_defaults_and_wants_tools() -> None:
    final = Completion(text="answer")
    request = Completion(tool_calls=[ToolCall(id="c1", name="t")])  # type: ignore[arg-type]
    assert not final.wants_tools
    assert final.finish_reason == "stop"
    assert final.usage == TokenUsage()
    assert request.wants_tools
    assert isinstance(request.tool_calls, tuple)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"input_tokens": -1}, id="negative"),
        pytest.param({"output_tokens": 1.5}, id="float"),
        pytest.param({"input_tokens": True}, id="bool"),
    ],
)
def test_usage_validation(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="TokenUsage"):
        TokenUsage(**kwargs)


def test_canonical_json_ignores_key_order() -> None:
    a = {"b": 2, "a": {"y": [1, 2], "x": None}}
    b = {"a": {"x": None, "y": [1, 2]}, "b": 2}
    assert canonical_json(a) == canonical_json(b) == '{"a":{"x":null,"y":[1,2]},"b":2}'


def test_canonical_json_keeps_non_ascii_literal() -> None:
    text = canonical_json({"topic": "隐私", "note": "café"})
    assert text == '{"note":"café","topic":"隐私"}'
    assert "\\u" not in text


def test_canonical_json_is_the_one_definition() -> None:
    from agent_contract import canonical

    assert canonical_json is canonical.canonical_json
