"""Serializer properties: every JSON value round-trips; everything else is a structured
``ResultNotSerializableError`` (a ToolError of kind ``tool_error``), never a raw
``TypeError``, ``ValueError`` or ``RecursionError``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_contract.errors import ToolError
from agent_contract.results import ResultNotSerializableError, serialize_result, success_result
from agent_contract.trace import RedactionPolicy

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**300), max_value=10**300),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=30,
)
"""Every JSON value: None, bool, int, finite float, str, list, dict with str keys."""


def same(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (``1 != 1.0 != True`` here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_in(item)]]
    return []


@given(value=JSON_VALUES)
def test_json_values_round_trip(value: Any) -> None:
    text = serialize_result(value)
    assert isinstance(text, str)
    if isinstance(value, str):
        assert text == value  # strings go to the model as they are
        return
    assert same(json.loads(text), value)
    # Non-ASCII stays literal (only control characters are escaped by JSON).
    for string in strings_in(value):
        for char in string:
            if ord(char) > 127 and not 0xD800 <= ord(char) <= 0xDFFF:
                assert char in text


class _Thing:
    def __repr__(self) -> str:
        return "<thing>"


@dataclass
class _Point:
    x: int


def _cyclic_list() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def _cyclic_dict() -> dict[str, Any]:
    data: dict[str, Any] = {}
    data["self"] = data
    return data


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


NOT_JSON_LEAVES = st.one_of(
    st.sets(st.integers(), max_size=3),
    st.frozensets(st.integers(), max_size=3),
    st.tuples(st.integers()),
    st.binary(max_size=5),
    st.builds(bytearray, st.binary(max_size=3)),
    st.sampled_from([math.nan, math.inf, -math.inf, 10**5000, -(10**4400)]),
    st.builds(Decimal, st.integers()),
    st.builds(Fraction, st.integers(), st.integers(min_value=1)),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
    st.builds(_Thing),
    st.builds(_Point, st.integers()),
    st.just(object()),
    st.just(print),
    st.just(Ellipsis),
    st.just(int),
    st.builds(range, st.integers(0, 3)),
    st.builds(lambda: _cyclic_list()),
    st.builds(lambda: _cyclic_dict()),
    st.sampled_from([_deep(101), _deep(150)]),
    st.dictionaries(
        st.one_of(st.integers(), st.none(), st.booleans(), st.tuples(st.integers()), st.floats()),
        SCALARS,
        min_size=1,
        max_size=3,
    ),
)


@st.composite
def embedded(draw: st.DrawFn) -> Any:
    """A non-JSON value, alone or hidden somewhere inside a JSON container."""
    bad = draw(NOT_JSON_LEAVES)
    container = draw(JSON_VALUES)
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            container = [container, bad] if draw(st.booleans()) else [bad, container]
        else:
            container = {draw(st.text(max_size=3)): bad, "other": container}
        bad = container
    return bad


@given(value=embedded())
@example(value=10**5000)  # past sys.get_int_max_str_digits(): json.dumps raises ValueError
@example(value={"n": [-(10**4400)]})
@example(value=_deep(101))
@example(value=_cyclic_dict())
@example(value={1: "int key"})
@example(value=[math.nan])
def test_everything_else_is_a_structured_error(value: Any) -> None:
    with pytest.raises(ResultNotSerializableError) as caught:
        serialize_result(value)
    assert isinstance(caught.value, ToolError)
    assert caught.value.kind == "tool_error"
    assert caught.value.message


@settings(max_examples=settings.default.max_examples // 2)
@given(value=st.one_of(JSON_VALUES, embedded()))
@example(value=10**5000)
def test_success_result_never_raises(value: Any) -> None:
    """The tool-result path around the serializer turns every value into a result."""
    result = success_result(
        "call_1",
        "tool",
        value,
        max_result_chars=200,
        on_oversize="truncate",
        redaction=RedactionPolicy(),
    )
    assert result.status in ("success", "error")
    assert len(result.content) <= 200
    if result.status == "error":
        assert result.error_kind == "tool_error"
        assert json.loads(result.content)["error"] == "tool_error"


def test_very_deep_nesting_is_a_structured_error() -> None:
    """Too deep to pretty-print as a hypothesis example, so checked directly."""
    for depth in (1_000, 100_000):
        for value in (_deep(depth), {"k": _deep(depth)}):
            with pytest.raises(ResultNotSerializableError):
                serialize_result(value)
