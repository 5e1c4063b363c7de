"""The offline policy table, lookup_policy, and the policy_lookup tool spec."""

from __future__ import annotations

from typing import Any

import pytest

from agent_contract.app.builtin_tools import POLICIES, lookup_policy, policy_lookup_tool
from agent_contract.app.builtin_tools.policies import TOPIC_PATTERN
from agent_contract.errors import InvalidArgumentsError, NotFoundError
from agent_contract.tools import ToolSpec

TOPICS = ["privacy", "refunds", "security", "retention"]


@pytest.mark.parametrize("topic", TOPICS, ids=TOPICS)
def test_each_topic_has_a_cited_policy(topic: str) -> None:
    policy = lookup_policy(topic)
    assert policy["source_id"] == f"offline-policy:{topic}:v1"
    assert policy["topic"] == topic
    assert set(policy) == {"topic", "title", "text", "source_id"}
    assert all(isinstance(value, str) and value.strip() for value in policy.values())


def test_table_is_consistent() -> None:
    assert set(TOPICS) <= set(POLICIES)
    for topic, policy in POLICIES.items():
        assert TOPIC_PATTERN.fullmatch(topic)
        assert policy["topic"] == topic
        assert policy["source_id"] == f"offline-policy:{topic}:v1"


@pytest.mark.parametrize(
    "topic",
    [" Privacy ", "PRIVACY", "\tprivacy\n"],
    ids=["padded-mixed-case", "upper", "tab-newline"],
)
def test_topic_is_normalized(topic: str) -> None:
    assert lookup_policy(topic)["source_id"] == "offline-policy:privacy:v1"


def test_lookup_returns_a_copy() -> None:
    policy = lookup_policy("privacy")
    policy["text"] = "changed"
    assert lookup_policy("privacy")["text"] != "changed"
    assert POLICIES["privacy"]["text"] != "changed"


def test_unknown_topic_is_not_found() -> None:
    with pytest.raises(NotFoundError) as info:
        lookup_policy("billing")
    error = info.value
    assert error.kind == "not_found"
    assert "billing" in error.message
    for topic in TOPICS:
        assert topic in error.message


@pytest.mark.parametrize(
    "topic",
    [
        "../etc/passwd",
        "",
        "   ",
        "A" * 50,
        "privacy/../x",
        "/etc/passwd",
        "1privacy",
        "priv acy",
        "privacy\x00",
        "\uff50rivacy",
        "a" * 33,
    ],
    ids=[
        "path-traversal",
        "empty",
        "blank",
        "too-long-upper",
        "traversal-suffix",
        "absolute-path",
        "leading-digit",
        "inner-space",
        "nul-byte",
        "fullwidth-letter",
        "33-chars",
    ],
)
def test_malformed_topic_is_invalid(topic: str) -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        lookup_policy(topic)
    error = info.value
    assert type(error) is InvalidArgumentsError
    assert error.kind == "invalid_arguments"
    assert error.message.startswith("topic must match")
    assert "passwd" not in error.message


@pytest.mark.parametrize("topic", [None, 3, ["privacy"]], ids=["none", "int", "list"])
def test_non_string_topic_is_invalid(topic: Any) -> None:
    with pytest.raises(InvalidArgumentsError, match="must be a string"):
        lookup_policy(topic)


def test_policies_cannot_be_mutated() -> None:
    table: Any = POLICIES
    with pytest.raises(TypeError):
        table["billing"] = {}
    with pytest.raises(TypeError):
        del table["privacy"]
    with pytest.raises(TypeError):
        table["privacy"]["text"] = "changed"
    with pytest.raises(AttributeError):
        table.clear()
    assert lookup_policy("privacy")["text"] == POLICIES["privacy"]["text"]


def test_tool_spec_shape() -> None:
    spec = policy_lookup_tool()
    assert isinstance(spec, ToolSpec)
    assert spec.name == "policy_lookup"
    assert spec.effect == "read"
    assert spec.timeout_seconds == 2.0
    assert spec.max_result_chars == 2000
    parameters = spec.definition()["function"]["parameters"]
    assert parameters["properties"]["topic"]["pattern"] == TOPIC_PATTERN.pattern
    assert parameters["required"] == ["topic"]


def test_tool_spec_validates_arguments() -> None:
    spec = policy_lookup_tool()
    assert spec.validate({"topic": "privacy"}) is None
    bad = spec.validate({"topic": "../etc/passwd"})
    assert bad is not None
    assert "$.topic" in bad
    wrong_type = spec.validate({"topic": 3})
    assert wrong_type is not None
    assert "$.topic" in wrong_type
    extra = spec.validate({"topic": "privacy", "extra": 1})
    assert extra is not None
    assert "extra" in extra
    assert spec.validate({}) is not None


def test_tool_handler() -> None:
    spec = policy_lookup_tool()
    assert spec.handler(topic="privacy")["source_id"] == "offline-policy:privacy:v1"
    with pytest.raises(NotFoundError):
        spec.handler(topic="billing")
