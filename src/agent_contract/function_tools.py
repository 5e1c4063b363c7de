"""A plain Python function as a :class:`~agent_contract.tools.ToolSpec`.

:func:`tool_from_function` (also
:meth:`~agent_contract.tools.ToolSpec.from_function`) reads the name, the description and the
arguments' JSON Schema from the function itself, so an existing function is adopted
unchanged. The effect is never guessed: the caller declares ``effect="read"`` or
``effect="write"``; leaving it out is a :class:`~agent_contract.errors.ConfigurationError`
(fail closed: a write tool must never be registered as a read by default).

The schema rule (:func:`schema_from_signature`), standard library only:

- every parameter is a property; one without a default is ``required``; a default that
  is JSON data is the property's ``default``;
- ``str`` -> ``string``, ``int`` -> ``integer``, ``float`` -> ``number`` (an integer is
  a number too), ``bool`` -> ``boolean``, ``None`` -> ``null``, ``list[X]`` /
  ``tuple[X, ...]`` / ``set[X]`` -> ``array`` of X, ``dict[str, X]`` -> ``object`` of
  X values, ``Literal[a, b]`` -> ``enum``, ``X | None`` / ``Optional[X]`` / ``Union``
  -> ``anyOf``, ``Annotated[X, "text"]`` -> X with the text as its ``description``,
  ``typing.Any`` or no annotation -> any value;
- a first parameter annotated :class:`~agent_contract.tools.ToolContext` is the
  runtime's context (``needs_context=True``), never part of the schema;
- ``*args``, ``**kwargs``, positional-only parameters and any other annotation are
  refused (``ConfigurationError``), as is a schema the model could not fill.

The description is the docstring's first paragraph (whitespace folded); pass
``description=`` to override it or when the function has no docstring.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any, Final, Literal, get_args, get_origin, get_type_hints

from .errors import ConfigurationError

__all__ = ["UNDECLARED", "schema_from_signature", "tool_from_function"]


class _Undeclared:
    """The marker of an effect nobody declared (see :data:`UNDECLARED`)."""

    def __repr__(self) -> str:
        return "UNDECLARED"


UNDECLARED: Final = _Undeclared()
"""Default of the ``effect`` keyword of the converters: refused, so the caller must say
``"read"`` or ``"write"``."""

_SCALARS: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _annotation_schema(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of one annotation (see the module's rule).

    Raises:
        ConfigurationError: an annotation the rule does not map.
    """
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        inner = _annotation_schema(args[0], where)
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**inner, "description": notes[0]} if notes else inner
    if origin is Literal:
        if not all(_is_json(a) for a in args):
            raise ConfigurationError(f"{where}: Literal values must be JSON data")
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_annotation_schema(a, where) for a in args]}
    if origin in (list, set, frozenset) or annotation in (list, set, frozenset):
        items = _annotation_schema(args[0], where) if args else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if origin is tuple or annotation is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _annotation_schema(args[0], where)}
        if args:
            prefix = [_annotation_schema(a, where) for a in args]
            return {
                "type": "array",
                "prefixItems": prefix,
                "minItems": len(prefix),
                "maxItems": len(prefix),
            }
        return {"type": "array"}
    if origin is dict or annotation is dict:
        if args and args[0] is not str:
            raise ConfigurationError(f"{where}: dict keys must be str (JSON object keys)")
        values = _annotation_schema(args[1], where) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": values or True}
    raise ConfigurationError(
        f"{where}: cannot map the annotation {annotation!r} to JSON Schema; use str, int, "
        "float, bool, None, list, tuple, dict, Literal, unions or Annotated, or build the "
        "ToolSpec with parameters= yourself"
    )


def schema_from_signature(fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """``(schema, needs_context)`` of ``fn``: the JSON Schema (Draft 2020-12) object of
    its parameters, and whether its first parameter is a ToolContext (module rule).

    Raises:
        ConfigurationError: ``*args``/``**kwargs``, a positional-only parameter, or an
            annotation the rule does not map.
    """
    from .tools import ToolContext  # the schema module is below tools.py

    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        signature = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ConfigurationError(f"cannot read the signature of {name!r}: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    needs_context = False
    for index, (pname, param) in enumerate(signature.parameters.items()):
        annotation = hints.get(pname, param.annotation)
        if index == 0 and annotation is ToolContext:
            needs_context = True
            continue
        where = f"{name}({pname})"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ConfigurationError(
                f"{where}: *args, **kwargs and positional-only parameters cannot be tool "
                "arguments (the model sends one JSON object of named arguments)"
            )
        prop = _annotation_schema(annotation, where)
        if param.default is param.empty:
            required.append(pname)
        elif _is_json(param.default):
            prop = {**prop, "default": param.default}
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, needs_context


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "")
    return " ".join(text.split("\n\n", 1)[0].split())


def tool_from_function(
    fn: Callable[..., Any],
    *,
    effect: Any = UNDECLARED,
    name: str | None = None,
    description: str | None = None,
    **options: Any,
) -> Any:
    """A :class:`~agent_contract.tools.ToolSpec` over ``fn``, unchanged.

    Args:
        fn: a plain or ``async def`` function (or callable object).
        effect: ``"read"`` or ``"write"``; required (no default is safe). A write also
            needs ``preview=`` and ``verify=`` (see ToolSpec); ``fn`` is then called as
            ``fn(context, **arguments)`` when its first parameter is a ToolContext,
            else ``fn(**arguments)``.
        name: the tool's name (default: ``fn.__name__``).
        description: what the tool does (default: the docstring's first paragraph).
        **options: further ToolSpec fields (``timeout_seconds``, ``max_result_chars``,
            ``check_arguments``, ``isolation``, ...); ``parameters`` overrides the
            derived schema.

    Returns:
        The ToolSpec.

    Raises:
        ConfigurationError: ``effect`` missing or not read/write, a signature the schema
            rule refuses, no description, or anything ToolSpec refuses.
    """
    from .tools import ToolSpec

    tool_name = str(name or getattr(fn, "__name__", ""))
    if effect is UNDECLARED:
        raise ConfigurationError(
            f"tool {tool_name!r}: declare its effect (effect='read' or effect='write'); "
            "an adopted tool's effect is never guessed"
        )
    if effect not in ("read", "write"):
        raise ConfigurationError(f"tool {tool_name!r}: effect must be 'read' or 'write'")
    parameters, needs_context = schema_from_signature(fn)
    text = description if description is not None else _first_paragraph(fn.__doc__)
    if not text:
        raise ConfigurationError(
            f"tool {tool_name!r}: no docstring to describe it; pass description="
        )
    handler: Callable[..., Any] = fn
    if effect == "write" and not needs_context:
        handler = _without_context(fn)
    spec_options: dict[str, Any] = {"parameters": parameters, **options}
    if effect == "read":
        spec_options.setdefault("needs_context", needs_context)
    return ToolSpec(
        name=tool_name, description=text, handler=handler, effect=effect, **spec_options
    )


def _without_context(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A handler taking the ToolContext a write gets, calling ``fn`` without it (an
    ``async def`` ``fn`` stays a coroutine function)."""
    if inspect.iscoroutinefunction(fn):

        async def acall(context: Any, /, **arguments: Any) -> Any:
            return await fn(**arguments)

        return acall

    def call(context: Any, /, **arguments: Any) -> Any:
        return fn(**arguments)

    return call
