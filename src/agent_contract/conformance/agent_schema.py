"""Arguments from a JSON Schema: valid ones (:func:`sample_arguments`) and ones that
break it in a named way (:func:`invalid_arguments`), for the probes of
``check --agent`` (:mod:`agent_contract.conformance.agent_scenarios`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from jsonschema import Draft202012Validator

__all__ = ["invalid_arguments", "sample_arguments"]


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return _resolve(target, root)
    return schema


def _sample(schema: Any, root: Mapping[str, Any]) -> Any:
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return "probe"
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or () if _resolve(o, root).get("type") != "null"]
        if options:
            return _sample(options[0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer" or kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = low + 1 if "exclusiveMinimum" in schema else max(low, 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if high is not None and value > high:
            value = low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [_sample(schema.get("items", {}), root) for _ in range(count)]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            name: _sample(properties.get(name, {}), root) for name in schema.get("required") or ()
        }
    text = "probe"
    low = int(schema.get("minLength", 0))
    return (text * (low // len(text) + 1))[: max(low, min(len(text), schema.get("maxLength", 5)))]


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments for ``schema`` (its required properties, each the simplest value that
    fits: an enum's first, a bound, ``"probe"``), or None when the result does not
    validate (a pattern, a format, a rule the generator does not know)."""
    value = _sample(schema, schema)
    if not isinstance(value, dict):
        return None
    return value if not list(Draft202012Validator(schema).iter_errors(value)) else None


_WRONG: Final[dict[str, Any]] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": "not a list",
    "object": "not an object",
}


def invalid_arguments(
    schema: Mapping[str, Any], arguments: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Argument sets that violate ``schema``, by probe kind (``missing_required``,
    ``wrong_type``, ``out_of_range``, ``extra_field``), each built from the valid
    ``arguments`` and checked to fail (an extra field against the schema closed, as the
    contract stores it)."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [r for r in schema.get("required") or () if r in arguments]
    found: dict[str, dict[str, Any]] = {}
    if required:
        found["missing_required"] = {k: v for k, v in arguments.items() if k != required[0]}
    order = [*required, *(p for p in properties if p not in required)]
    for name in order:
        prop = _resolve(properties.get(name, {}), schema)
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if isinstance(kind, str) and kind in _WRONG and "wrong_type" not in found:
            found["wrong_type"] = {**arguments, name: _WRONG[kind]}
        bad = _out_of_range(prop) if isinstance(prop, Mapping) else None
        if bad is not None and "out_of_range" not in found:
            found["out_of_range"] = {**arguments, name: bad[0]}
    if schema.get("additionalProperties") is not True:
        found["extra_field"] = {**arguments, "unexpected_argument": "probe"}
    validator = Draft202012Validator(
        {**schema, "additionalProperties": schema.get("additionalProperties", False)}
    )
    return {k: v for k, v in found.items() if list(validator.iter_errors(v))}


def _out_of_range(prop: Mapping[str, Any]) -> tuple[Any] | None:
    if "minimum" in prop:
        return (prop["minimum"] - 1,)
    if "exclusiveMinimum" in prop:
        return (prop["exclusiveMinimum"],)
    if "maximum" in prop:
        return (prop["maximum"] + 1,)
    if "exclusiveMaximum" in prop:
        return (prop["exclusiveMaximum"],)
    if prop.get("minLength", 0) > 0:
        return ("x" * (int(prop["minLength"]) - 1),)
    if "maxLength" in prop:
        return ("x" * (int(prop["maxLength"]) + 1),)
    if prop.get("enum"):
        return ("not-one-of-the-enum",)
    if prop.get("minItems", 0) > 0:
        return ([],)
    return None
