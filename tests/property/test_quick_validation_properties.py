"""Argument validation's shortcut: a simple schema's quick check only ever says "valid"
for an instance the JSON-Schema validator accepts, and ``ToolSpec.validate`` answers
exactly what the validator alone answers (the verdict and the message)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agent_contract._quick_schema import quick_check
from agent_contract.tools import ToolSpec

# -- argument validation ------------------------------------------------------------------

SIMPLE_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array"])
NAMES = st.sampled_from(["a", "b", "text", "n"])


@st.composite
def simple_schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A schema of the subset the quick check compiles, often with an annotation."""
    schema: dict[str, Any]
    if depth >= 2 or draw(st.booleans()):
        schema = {"type": draw(SIMPLE_TYPES)}
    else:
        names = draw(st.lists(NAMES, unique=True, max_size=3))
        schema = {
            "type": "object",
            "properties": {n: draw(simple_schemas(depth + 1)) for n in names},
            "additionalProperties": draw(st.booleans()),
        }
        if names:
            schema["required"] = draw(st.lists(st.sampled_from(names), unique=True))
    if draw(st.booleans()):
        schema["description"] = "annotated"
    return schema


INSTANCES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


@given(schema=simple_schemas(), instance=INSTANCES)
@example(schema={"type": "integer"}, instance=3.0)  # valid, but not for the quick check
@example(schema={"type": "integer"}, instance=True)
@example(schema={"type": "number"}, instance=False)
@example(
    schema={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    instance={"a": "x", "b": 1},
)
def test_the_quick_check_only_says_valid_when_the_validator_does(
    schema: dict[str, Any], instance: Any
) -> None:
    quick = quick_check(schema)
    assert quick is not None
    if quick(instance):
        assert Draft202012Validator(schema).is_valid(instance)


@given(schema=simple_schemas(depth=1) | simple_schemas(), instance=INSTANCES)
def test_validate_answers_as_the_validator_alone(schema: dict[str, Any], instance: Any) -> None:
    parameters = (
        schema if schema["type"] == "object" else {"type": "object", "properties": {"v": schema}}
    )
    arguments = instance if schema["type"] == "object" else {"v": instance}
    spec = ToolSpec(name="t", description="d", parameters=parameters, handler=lambda **_: "ok")
    slow = ToolSpec(name="t", description="d", parameters=parameters, handler=lambda **_: "ok")
    object.__setattr__(slow, "_quick", None)
    assert spec.validate(arguments) == slow.validate(arguments)


def test_schemas_outside_the_subset_have_noquick_check() -> None:
    for schema in (
        {"type": ["string", "null"]},
        {"type": "string", "minLength": 1},
        {"type": "string", "enum": ["a"]},
        {"type": "string", "format": "email"},
        {"type": "integer", "minimum": 0},
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}},
        {"properties": {"a": {"type": "string"}}},
        {"anyOf": [{"type": "string"}]},
    ):
        assert quick_check(schema) is None, schema
