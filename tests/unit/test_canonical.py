"""Canonical arguments (RFC 8785): one form per JSON value, used by the repeated-call
key, the approval token and the idempotency key alike."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_contract import Budget, ToolSpec, run
from agent_contract.approval import approval_token, idempotency_key
from agent_contract.canonical import MAX_EXACT_INT, TAGGED_PREFIX, canonical_bytes, canonical_json
from agent_contract.runtime import call_key
from agent_contract.testing import FakeModel, tool_call


def same(a: Any, b: Any) -> bool:
    return canonical_bytes(a) == canonical_bytes(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"days": 3}, {"days": 3.0}, id="int-and-float"),
        pytest.param({"days": 3}, json.loads('{"days": 3e0}'), id="exponent"),
        pytest.param({"x": 0}, {"x": -0.0}, id="minus-zero"),
        pytest.param({"x": -0}, {"x": 0.0}, id="minus-zero-int"),
        pytest.param({"x": 100}, json.loads('{"x": 1E2}'), id="1e2"),
        pytest.param({"x": 2**53}, {"x": float(2**53)}, id="2**53-exact"),
        pytest.param({"x": 2**60}, {"x": float(2**60)}, id="2**60-exact"),
        pytest.param({"a": 1, "b": 2}, {"b": 2, "a": 1}, id="key-order"),
        pytest.param({"a": [1, {"y": 2, "x": 1}]}, {"a": [1, {"x": 1, "y": 2}]}, id="nested"),
        pytest.param({"k": (1, 2)}, {"k": [1, 2]}, id="tuple-is-array"),
    ],
)
def test_one_json_value_has_one_form(a: Any, b: Any) -> None:
    assert same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"x": 1}, {"x": 2}, id="values"),
        pytest.param({"x": 1}, {"x": "1"}, id="number-and-string"),
        pytest.param({"x": 2**53 + 1}, {"x": float(2**53 + 1)}, id="2**53+1-and-its-double"),
        pytest.param({"x": 2**53 + 1}, {"x": 2**53 + 3}, id="big-ints"),
        pytest.param({"x": 2**53 + 1}, {"x": str(2**53 + 1)}, id="big-int-and-its-digits"),
        pytest.param(
            {"x": 2**53 + 1, "y": {"$int": "5"}}, {"x": 2**53 + 1, "y": 5}, id="tag-lookalike"
        ),
        pytest.param({"x": 2**64 + 1}, {"x": {"$int": str(2**64 + 1)}}, id="tag-object"),
        pytest.param({"t": "\ud800"}, {"t": "\\ud800"}, id="surrogate-and-its-escape"),
        pytest.param({"t": "\ud800"}, {"t": "?"}, id="surrogate-and-question-mark"),
        pytest.param({"x": math.nan}, {"x": "nan"}, id="nan-and-text"),
        pytest.param({"x": math.inf}, {"x": -math.inf}, id="infinities"),
    ],
)
def test_different_values_have_different_forms(a: Any, b: Any) -> None:
    assert not same(a, b)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param({"b": 3.0, "a": -0.0}, '{"a":0,"b":3}', id="numbers"),
        pytest.param({"x": 1e21, "y": 1e-7}, '{"x":1e+21,"y":1e-7}', id="exponents"),
        pytest.param({"x": 0.1 + 0.2}, '{"x":0.30000000000000004}', id="shortest-double"),
        pytest.param({"x": MAX_EXACT_INT}, '{"x":9007199254740991}', id="2**53-1"),
        pytest.param({"x": 2**60}, '{"x":1152921504606847000}', id="2**60"),
        pytest.param({"😀": 1, "｡": 2}, '{"😀":1,"｡":2}', id="utf16-key-order"),
        pytest.param(
            {"topic": "隐私", "note": "café"}, '{"note":"café","topic":"隐私"}', id="nonascii"
        ),
        pytest.param({"t": "line\nbreak\u0001"}, '{"t":"line\\nbreak\\u0001"}', id="escapes"),
    ],
)
def test_rfc8785_text(value: Any, text: str) -> None:
    assert canonical_json(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param({"x": 2**53 + 1}, '{"x":{"$int":"9007199254740993"}}', id="big-int"),
        pytest.param({"x": -(2**70) - 1}, '{"x":{"$int":"-1180591620717411303425"}}', id="neg"),
        pytest.param({"x": math.nan}, '{"x":{"$float":"nan"}}', id="nan"),
        pytest.param({"x": -math.inf}, '{"x":{"$float":"-inf"}}', id="-inf"),
        pytest.param({"t": "a\udcff"}, '{"t":{"$utf16":[97,56575]}}', id="surrogate"),
        pytest.param({"\ud800": 1}, '{"$u:d800":1}', id="surrogate-key"),
        pytest.param({"$x": 1, "y": math.nan}, '{"$$x":1,"y":{"$float":"nan"}}', id="dollar-key"),
        pytest.param({"s": {1, 2}}, '{"s":{"$repr":"set: {1, 2}"}}', id="set"),
    ],
)
def test_values_rfc8785_refuses_get_a_tagged_form(value: Any, text: str) -> None:
    assert canonical_json(value) == TAGGED_PREFIX + text


def test_an_int_past_the_str_digit_limit_has_a_form() -> None:
    assert canonical_json({"x": 10**5000}).startswith(TAGGED_PREFIX + '{"x":{"$int":"')


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON)
def test_every_value_has_a_form_and_it_is_stable(value: Any) -> None:
    first = canonical_bytes(value)
    assert first == canonical_bytes(value)
    first.decode("utf-8")  # always valid UTF-8, surrogates included


@given(st.dictionaries(st.text(max_size=5), st.integers(min_value=-(2**64), max_value=2**64)))
def test_ints_and_their_float_twins_agree_exactly_when_the_double_is_exact(
    value: dict[str, int],
) -> None:
    as_floats = {k: float(v) for k, v in value.items()}
    exact = all(int(float(v)) == v for v in value.values())
    assert same(value, as_floats) == exact


def test_repeat_key_approval_token_and_idempotency_key_share_the_form() -> None:
    three, three_float = {"days": 3}, {"days": 3.0}
    assert call_key("forecast", three) == call_key("forecast", three_float)
    assert approval_token("r", "c", "t", three) == approval_token("r", "c", "t", three_float)
    assert idempotency_key("r", "c", "t", three) == idempotency_key("r", "c", "t", three_float)
    assert call_key("forecast", {"days": 2**60 + 1}) != call_key("forecast", {"days": 2**60})


def test_the_issue_input_3_and_3_0_count_as_one_call() -> None:
    """Issue 11, input 2: alternating ``3`` and ``3.0`` let four identical calls through
    with ``max_identical_calls=2``."""
    ran: list[Any] = []
    spec = ToolSpec(
        name="forecast",
        description="Forecast.",
        parameters={"type": "object", "properties": {"days": {"type": "integer"}}},
        handler=lambda days: ran.append(days) or "sunny",
    )
    script = [tool_call("forecast", {"days": d}) for d in (3, 3.0, 3, 3.0)] + ["done"]
    result = run(
        FakeModel(script),
        [spec],
        "go",
        budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
    )
    assert ran == [3, 3.0]
    assert result.stop_reason == "repeated_call"
