"""ToolSpec validation, closed object schemas, argument messages, and the registry."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_contract.errors import ConfigurationError
from agent_contract.tools import MAX_VALIDATION_ERRORS, ToolRegistry, ToolSpec

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
        "colour": {"enum": ["red", "green"]},
        "items": {"type": "array", "items": {"type": "integer"}},
        "nested": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
    "required": ["code"],
}


def _noop(**kwargs: Any) -> Any:
    return kwargs


def make(name: str = "tool", parameters: Any = None, **kwargs: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=kwargs.pop("description", "a test tool"),
        parameters=copy.deepcopy(SCHEMA) if parameters is None else parameters,
        handler=kwargs.pop("handler", _noop),
        **kwargs,
    )


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("", id="empty"),
        pytest.param("has space", id="space"),
        pytest.param("dotted.name", id="dot"),
        pytest.param("x" * 65, id="65-chars"),
        pytest.param("naïve", id="non-ascii"),
        pytest.param(42, id="not-a-str"),
    ],
)
def test_bad_tool_name(name: Any) -> None:
    with pytest.raises(ConfigurationError, match="tool name"):
        make(name=name)


@pytest.mark.parametrize("name", ["a", "calc_v2", "lookup-order", "x" * 64], ids=str)
def test_good_tool_names(name: str) -> None:
    assert make(name=name).name == name


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"handler": "not callable"}, "handler is not callable", id="handler-str"),
        pytest.param({"handler": None}, "handler is not callable", id="handler-none"),
        pytest.param({"description": "   "}, "description", id="blank-description"),
        pytest.param({"effect": "delete"}, "effect", id="bad-effect"),
        pytest.param({"on_oversize": "drop"}, "on_oversize", id="bad-on-oversize"),
        pytest.param({"timeout_seconds": 0}, "timeout_seconds", id="timeout-zero"),
        pytest.param({"timeout_seconds": -1.0}, "timeout_seconds", id="timeout-negative"),
        pytest.param({"timeout_seconds": True}, "timeout_seconds", id="timeout-bool"),
        pytest.param({"timeout_seconds": "1"}, "timeout_seconds", id="timeout-str"),
        pytest.param({"max_result_chars": 63}, "max_result_chars", id="max-chars-63"),
        pytest.param({"max_result_chars": 100.0}, "max_result_chars", id="max-chars-float"),
        pytest.param({"max_result_chars": True}, "max_result_chars", id="max-chars-bool"),
    ],
)
def test_spec_field_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        make(**kwargs)


@pytest.mark.parametrize(
    "parameters",
    [
        pytest.param({"type": "array"}, id="array-schema"),
        pytest.param({"properties": {}}, id="no-type"),
        pytest.param([], id="list"),
        pytest.param("object", id="str"),
    ],
)
def test_parameters_must_be_an_object_schema(parameters: Any) -> None:
    with pytest.raises(ConfigurationError, match="parameters must be an object schema"):
        make(parameters=parameters)


@pytest.mark.parametrize(
    ("parameters", "path"),
    [
        pytest.param(
            {"type": "object", "properties": {"x": {"type": "strng"}}},
            "$.properties.x.type",
            id="unknown-type",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"type": "string", "minLength": -1}}},
            "$.properties.x.minLength",
            id="negative-minLength",
        ),
        pytest.param(
            {"type": "object", "required": "x"},
            "$.required",
            id="required-not-a-list",
        ),
    ],
)
def test_invalid_schema_names_the_json_path(parameters: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid JSON Schema") as info:
        make(parameters=parameters)
    assert f"at {path}:" in str(info.value)


def test_schema_is_closed_and_caller_dict_untouched() -> None:
    original = copy.deepcopy(SCHEMA)
    spec = make(parameters=original)
    assert original == SCHEMA  # the caller's dict is not mutated
    assert spec.parameters["additionalProperties"] is False
    nested = spec.parameters["properties"]["nested"]
    assert nested["additionalProperties"] is False


@pytest.mark.parametrize(
    ("parameters", "arguments", "valid"),
    [
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"a": 1, "b": 2},
            False,
            id="default-closed",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "integer"}}},
            {"a": 1},
            True,
            id="default-closed-exact",
        ),
        pytest.param(
            {"type": "object", "properties": {"o": {"type": "object"}}},
            {"o": {"x": 1}},
            False,
            id="nested-object-closed",
        ),
        pytest.param(
            {"type": "object", "properties": {}, "additionalProperties": True},
            {"anything": 1},
            True,
            id="additionalProperties-true",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "string"}},
            {"x": "ok"},
            True,
            id="additionalProperties-schema",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "string"}},
            {"x": 1},
            False,
            id="additionalProperties-schema-violated",
        ),
        pytest.param(
            {"type": "object", "patternProperties": {"^x_": {"type": "integer"}}},
            {"x_1": 1},
            True,
            id="patternProperties",
        ),
        pytest.param(
            {
                "type": "object",
                "patternProperties": {"^x_": {"type": "integer"}},
                "additionalProperties": False,
            },
            {"y": 1},
            False,
            id="patternProperties-explicitly-closed",
        ),
    ],
)
def test_closed_objects(parameters: dict[str, Any], arguments: dict[str, Any], valid: bool) -> None:
    problem = make(parameters=parameters).validate(arguments)
    assert (problem is None) is valid


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param({}, "$: 'code' is a required property (required)", id="missing"),
        pytest.param({"code": 3}, "$.code: 3 is not of type 'string' (type)", id="wrong-type"),
        pytest.param(
            {"code": "ab", "extra": 1},
            "$: Additional properties are not allowed ('extra' was unexpected) "
            "(additionalProperties)",
            id="extra-property",
        ),
        pytest.param({"code": "a"}, "$.code: 'a' is too short (minLength)", id="minLength"),
        pytest.param(
            {"code": "AB"}, "$.code: 'AB' does not match '^[a-z]+$' (pattern)", id="pattern"
        ),
        pytest.param(
            {"code": "ab", "colour": "blue"},
            "$.colour: 'blue' is not one of ['red', 'green'] (enum)",
            id="enum",
        ),
        pytest.param(
            {"code": "ab", "items": [1, "z"]},
            "$.items[1]: 'z' is not of type 'integer' (type)",
            id="array-item",
        ),
        pytest.param(
            {"code": "ab", "nested": {"n": "x"}},
            "$.nested.n: 'x' is not of type 'integer' (type)",
            id="nested",
        ),
        pytest.param([], "$: [] is not of type 'object' (type)", id="not-an-object"),
    ],
)
def test_validation_message_names_path_and_constraint(arguments: Any, expected: str) -> None:
    assert make().validate(arguments) == expected


def test_valid_arguments_give_none() -> None:
    arguments = {"code": "ab", "colour": "red", "items": [1, 2], "nested": {"n": 1}}
    assert make().validate(arguments) is None


def test_validation_lists_at_most_a_few_errors() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(9)}}
    problem = make(parameters=schema).validate({f"p{i}": "x" for i in range(9)})
    assert problem is not None
    parts = problem.split("; ")
    assert len(parts) == MAX_VALIDATION_ERRORS + 1
    assert parts[-1] == f"... and {9 - MAX_VALIDATION_ERRORS} more"
    assert all(part.endswith("(type)") for part in parts[:-1])


def test_definition_shape_and_copy() -> None:
    spec = make(name="lookup", description="Look things up.")
    definition = spec.definition()
    assert definition == {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look things up.",
            "parameters": dict(spec.parameters),
        },
    }
    definition["function"]["parameters"]["properties"].clear()
    assert spec.parameters["properties"]  # the spec is not changed through a definition


def test_spec_defaults() -> None:
    spec = make()
    assert (spec.effect, spec.timeout_seconds, spec.max_result_chars) == ("read", 10.0, 8_000)
    assert (spec.on_oversize, spec.needs_context) == ("truncate", False)


# -- registry ---------------------------------------------------------------------------


def test_registry_register_get_list_unregister() -> None:
    a, b, c = make("a"), make("b"), make("c")
    registry = ToolRegistry([a, b])
    registry.register(c)
    assert registry.names() == ["a", "b", "c"]
    assert len(registry) == 3
    assert "b" in registry
    assert "zzz" not in registry
    assert registry.get("a") is a
    assert registry.get("zzz") is None
    assert list(registry) == [a, b, c]
    assert [t["function"]["name"] for t in registry.list_tools()] == ["a", "b", "c"]
    assert registry.unregister("b") is b
    assert registry.names() == ["a", "c"]
    assert registry.get("b") is None


def test_registry_duplicate_name_is_rejected() -> None:
    registry = ToolRegistry([make("a")])
    with pytest.raises(ConfigurationError, match="already registered"):
        registry.register(make("a"))
    with pytest.raises(ConfigurationError, match="already registered"):
        ToolRegistry([make("x"), make("x")])


def test_registry_rejects_non_specs() -> None:
    with pytest.raises(ConfigurationError, match="ToolSpec"):
        ToolRegistry().register({"name": "a"})  # type: ignore[arg-type]


def test_unregister_unknown_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match="not registered"):
        ToolRegistry().unregister("ghost")


@pytest.mark.parametrize(
    ("allowlist", "expected"),
    [
        pytest.param(None, ["a", "b", "c"], id="none-lists-all"),
        pytest.param(["c", "a"], ["a", "c"], id="registration-order-kept"),
        pytest.param([], [], id="empty"),
        pytest.param(["ghost"], [], id="unknown-name-ignored"),
    ],
)
def test_list_tools_allowlist(allowlist: list[str] | None, expected: list[str]) -> None:
    registry = ToolRegistry([make("a"), make("b"), make("c")])
    names = [t["function"]["name"] for t in registry.list_tools(allowlist)]
    assert names == expected


def test_iterating_a_registry_is_a_snapshot() -> None:
    registry = ToolRegistry([make("a"), make("b")])
    for spec in registry:
        registry.unregister(spec.name)
    assert len(registry) == 0


# -- check_arguments and return_direct ---------------------------------------------------

_RANGE = {
    "type": "object",
    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
    "required": ["start", "end"],
}


def _range(check: Any) -> ToolSpec:
    return ToolSpec(
        name="r", description="R.", parameters=_RANGE, handler=lambda **a: a, check_arguments=check
    )


def test_check_arguments_runs_after_the_schema_with_a_copy() -> None:
    seen: list[dict[str, Any]] = []

    def check(arguments: dict[str, Any]) -> str | None:
        seen.append(arguments)
        arguments["start"] = 0  # a copy: the caller's arguments stay as they are
        return None

    spec = _range(check)
    given = {"start": 1, "end": 2}
    assert spec.validate(given) is None
    assert given == {"start": 1, "end": 2}
    assert spec.validate({"start": "x", "end": 2}) is not None
    assert len(seen) == 1  # not called when the schema fails


def test_check_arguments_problem_texts() -> None:
    from agent_contract.errors import InvalidArgumentsError

    def refuse(arguments: dict[str, Any]) -> str | None:
        raise InvalidArgumentsError("start must not be after end")

    def crash(arguments: dict[str, Any]) -> str | None:
        raise KeyError("secret detail")

    ok = {"start": 1, "end": 2}
    assert _range(lambda a: "nope").validate(ok) == "nope"
    assert _range(refuse).validate(ok) == "start must not be after end"
    assert _range(crash).validate(ok) == "check_arguments of 'r' raised KeyError"


def test_check_arguments_must_be_a_plain_callable() -> None:
    async def later(arguments: dict[str, Any]) -> None:
        return None

    with pytest.raises(ConfigurationError, match="check_arguments"):
        _range(later)
    with pytest.raises(ConfigurationError, match="check_arguments"):
        _range("not callable")


def test_return_direct_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="return_direct"):
        ToolSpec(
            name="t",
            description="T.",
            parameters={"type": "object"},
            handler=lambda: None,
            return_direct="yes",  # type: ignore[arg-type]
        )
