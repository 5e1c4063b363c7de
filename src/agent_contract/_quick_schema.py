"""A quick, sound check of simple JSON Schemas, for argument validation's hot path
(:meth:`agent_contract.tools.ToolSpec.validate`): it answers "valid" without running
``jsonschema``'s interpreter, and leaves every other answer to the validator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["quick_check"]

_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples", "$comment"})
"""Schema keywords that never make an instance invalid (annotations)."""

_SIMPLE_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
}


def quick_check(schema: Any) -> Callable[[Any], bool] | None:
    """A fast, sound check for a simple schema, or ``None`` for any other.

    Simple: one ``type`` (a string) and, for an object, ``properties`` (each simple),
    ``required`` and ``additionalProperties`` ``true`` or ``false``; annotations
    (``description``, ``title``, ...) are allowed, any other keyword makes it not
    simple. The check answers ``True`` only for an instance the schema accepts, and is
    stricter than it (``3.0`` for an integer, a subclass of ``str``): ``False`` means
    "let the validator decide", and the validator is then the only judge, so the
    verdict and its message are exactly the validator's.
    """
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    kind = schema["type"]
    extra = schema.keys() - _ANNOTATIONS - {"type"}
    if kind != "object":
        test = _SIMPLE_TYPES.get(kind)
        return test if test is not None and not extra else None
    if extra - {"properties", "required", "additionalProperties"}:
        return None
    closed = schema.get("additionalProperties", True)
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if (
        not isinstance(closed, bool)
        or not isinstance(properties, dict)
        or not isinstance(required, list)
        or not all(isinstance(name, str) for name in required)
    ):
        return None
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, sub in properties.items():
        check = quick_check(sub)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)

    def check_object(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            check = checks.get(name)
            if check is None:
                if closed is False:
                    return False
            elif not check(item):
                return False
        return True

    return check_object
