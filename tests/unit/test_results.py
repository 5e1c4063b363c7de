"""The one result serializer, the size limit with its marker, and error classification."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agent_contract.errors import (
    ERROR_KINDS,
    InvalidArgumentsError,
    NotFoundError,
    ToolError,
    TransientError,
    UnauthorizedError,
)
from agent_contract.results import (
    TRUNCATION_MARKER,
    ResultNotSerializableError,
    classify_exception,
    error_content,
    error_result,
    serialize_result,
    success_result,
)
from agent_contract.trace import REDACTED, RedactionPolicy

SECRET = "sk-live-0123456789abcdefXYZ"
NO_REDACTION = RedactionPolicy(patterns=())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("plain text", "plain text", id="str-as-is"),
        pytest.param('{"already": "json"}', '{"already": "json"}', id="json-str-not-reencoded"),
        pytest.param("中文 café", "中文 café", id="str-non-ascii"),
        pytest.param("", "", id="empty-str"),
        pytest.param(60, "60", id="int"),
        pytest.param(3.5, "3.5", id="float"),
        pytest.param(True, "true", id="bool"),
        pytest.param(None, "null", id="none"),
        pytest.param([1, "a", None], '[1, "a", null]', id="list"),
        pytest.param({"b": 1, "a": [2]}, '{"b": 1, "a": [2]}', id="dict-order-kept"),
        pytest.param({"topic": "隐私"}, '{"topic": "隐私"}', id="dict-non-ascii-literal"),
    ],
)
def test_serializer_accepts_json_values(value: Any, expected: str) -> None:
    assert serialize_result(value) == expected


def _cycle() -> list[Any]:
    items: list[Any] = []
    items.append(items)
    return items


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "match"),
    [
        pytest.param((1, 2), "tuple", id="tuple"),
        pytest.param({1, 2}, "set", id="set"),
        pytest.param(frozenset(), "frozenset", id="frozenset"),
        pytest.param(b"bytes", "bytes", id="bytes"),
        pytest.param(object(), "object", id="object"),
        pytest.param({1: "a"}, "non-string key of type int", id="int-key"),
        pytest.param({("a",): 1}, "non-string key of type tuple", id="tuple-key"),
        pytest.param(float("nan"), "non-finite", id="nan"),
        pytest.param(float("inf"), "non-finite", id="inf"),
        pytest.param({"x": [float("-inf")]}, "non-finite", id="nested-minus-inf"),
        pytest.param(_cycle(), "nested more than 100 levels", id="cycle"),
        pytest.param(_deep(150), "nested more than 100 levels", id="too-deep"),
        pytest.param({"ok": [1, {"bad": {2, 3}}]}, "set", id="nested-set"),
    ],
)
def test_serializer_refuses_everything_else(value: Any, match: str) -> None:
    with pytest.raises(ResultNotSerializableError, match=match) as info:
        serialize_result(value)
    assert info.value.kind == "tool_error"


def test_serializer_accepts_depth_100() -> None:
    assert serialize_result(_deep(99)).count("[") == 99


def test_error_content_shape() -> None:
    text = error_content("timeout", "took too long", outcome="unknown", side_effects_possible=True)
    assert json.loads(text) == {
        "error": "timeout",
        "message": "took too long",
        "outcome": "unknown",
        "side_effects_possible": True,
    }
    assert list(json.loads(text)) == ["error", "message", "outcome", "side_effects_possible"]


def test_error_content_keeps_non_ascii_literal() -> None:
    text = error_content("not_found", "未找到", outcome="failed", side_effects_possible=False)
    assert "未找到" in text


def test_error_result_redacts_and_binds() -> None:
    policy = RedactionPolicy(secrets=(SECRET,))
    result = error_result("c1", "tool", "unauthorized", f"bad token {SECRET}", redaction=policy)
    assert result.tool_call_id == "c1"
    assert result.status == "error"
    assert not result.ok
    assert result.error_kind == "unauthorized"
    assert result.error_message == f"bad token {REDACTED}"
    assert result.outcome == "not_run"
    assert SECRET not in result.content
    assert json.loads(result.content)["message"] == f"bad token {REDACTED}"


def test_error_result_never_has_a_blank_message() -> None:
    result = error_result("c1", "tool", "transient", "", redaction=NO_REDACTION)
    assert result.error_message == "transient: no details"


def test_tool_result_message_and_summary() -> None:
    result = success_result(
        "c7",
        "calc",
        {"result": 60},
        max_result_chars=100,
        on_oversize="truncate",
        redaction=NO_REDACTION,
        artifact={"raw": 1},
    )
    message = result.to_message()
    assert (message.role, message.tool_call_id, message.name, message.status) == (
        "tool",
        "c7",
        "calc",
        "success",
    )
    assert message.content == '{"result": 60}'
    assert result.summary() == {
        "id": "c7",
        "name": "calc",
        "status": "success",
        "error_kind": None,
        "outcome": "succeeded",
        "side_effects_possible": False,
        "chars": len('{"result": 60}'),
        "truncated": False,
    }
    assert "artifact" not in result.summary()


# -- classification -----------------------------------------------------------------------


def test_generic_exception_text_is_hidden_by_default() -> None:
    kind, message = classify_exception(RuntimeError(f"db password {SECRET}"), "lookup")
    assert kind == "tool_error"
    assert message == "tool 'lookup' failed (RuntimeError)"
    assert SECRET not in message


def test_exception_text_only_when_opted_in() -> None:
    kind, message = classify_exception(
        KeyError("missing-row"), "lookup", expose_exception_text=True
    )
    assert kind == "tool_error"
    assert message == "tool 'lookup' failed (KeyError): 'missing-row'"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        pytest.param(UnauthorizedError("not your order"), "unauthorized", id="unauthorized"),
        pytest.param(NotFoundError("no order 42"), "not_found", id="not_found"),
        pytest.param(TransientError("try again"), "transient", id="transient"),
        pytest.param(InvalidArgumentsError("bad id"), "invalid_arguments", id="invalid_arguments"),
        pytest.param(ToolError("plain tool error"), "tool_error", id="tool_error"),
    ],
)
def test_tool_errors_keep_kind_and_public_message(exc: ToolError, kind: str) -> None:
    assert kind in ERROR_KINDS
    assert classify_exception(exc, "t") == (kind, exc.message)


def test_tool_error_without_message_gets_a_generic_one() -> None:
    assert classify_exception(NotFoundError(""), "t") == (
        "not_found",
        "tool 't' failed (not_found)",
    )


def test_tool_error_details_are_kept_apart() -> None:
    exc = UnauthorizedError("no", details={"owner": "alice"})
    assert exc.details == {"owner": "alice"}
    assert "alice" not in classify_exception(exc, "t")[1]


# -- size limit ---------------------------------------------------------------------------


def _marker_numbers(content: str) -> tuple[int, int]:
    match = re.search(r"\[truncated by agent-contract: (\d+) of (\d+) chars shown\]$", content)
    assert match is not None, content
    return int(match[1]), int(match[2])


@pytest.mark.parametrize("limit", [64, 100, 999, 1000], ids=str)
@pytest.mark.parametrize("total", [1001, 12_345, 200_000], ids=str)
def test_truncation_marker_and_exact_size(limit: int, total: int) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(total))
    result = success_result(
        "c1", "t", text, max_result_chars=limit, on_oversize="truncate", redaction=NO_REDACTION
    )
    assert result.ok
    assert result.truncated
    assert result.original_chars == total
    assert len(result.content) <= limit
    shown, reported_total = _marker_numbers(result.content)
    assert reported_total == total
    assert result.content == text[:shown] + TRUNCATION_MARKER.format(shown=shown, total=total)
    assert len(result.content) >= limit - 2  # cut to fit, not far below the limit


def test_result_at_limit_is_not_truncated() -> None:
    result = success_result(
        "c1", "t", "x" * 64, max_result_chars=64, on_oversize="truncate", redaction=NO_REDACTION
    )
    assert result.content == "x" * 64
    assert not result.truncated


def test_truncation_counts_characters_not_bytes() -> None:
    result = success_result(
        "c1", "t", "中" * 64, max_result_chars=64, on_oversize="truncate", redaction=NO_REDACTION
    )
    assert not result.truncated


def test_oversize_error_mode() -> None:
    result = success_result(
        "c1", "t", "x" * 500, max_result_chars=100, on_oversize="error", redaction=NO_REDACTION
    )
    assert result.status == "error"
    assert result.error_kind == "result_too_large"
    assert result.error_message == "result of 500 chars exceeds max_result_chars of 100"
    assert result.original_chars == 500
    assert result.outcome == "succeeded"
    assert "x" * 100 not in result.content


def test_unserializable_result_becomes_tool_error() -> None:
    result = success_result(
        "c1",
        "t",
        {"when": object()},
        max_result_chars=100,
        on_oversize="truncate",
        redaction=NO_REDACTION,
    )
    assert result.status == "error"
    assert result.error_kind == "tool_error"
    assert result.error_message == "result of type object is not JSON-serializable"
    assert result.outcome == "succeeded"  # the handler ran; only its value was refused


def test_redaction_happens_before_truncation() -> None:
    policy = RedactionPolicy(secrets=(SECRET,))
    # The secret straddles the cut point: redacting first means no fragment leaks.
    value = "a" * 40 + SECRET + "b" * 500
    result = success_result(
        "c1", "t", value, max_result_chars=64, on_oversize="truncate", redaction=policy
    )
    assert result.truncated
    assert SECRET[:10] not in result.content
    assert result.original_chars == len(policy.redact(value))


def test_secret_in_json_result_is_redacted() -> None:
    policy = RedactionPolicy(secrets=('to"ken-1234',))
    result = success_result(
        "c1",
        "t",
        {"token": 'to"ken-1234'},
        max_result_chars=1000,
        on_oversize="truncate",
        redaction=policy,
    )
    assert result.content == json.dumps({"token": REDACTED})
