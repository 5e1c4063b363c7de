"""``ToolSpec`` -> LangChain ``StructuredTool``, and ``ToolResult`` -> ``ToolMessage``.

The StructuredTool keeps the spec's name, description and JSON Schema (as a dict
``args_schema``). LangChain does not validate dict schemas, so the tool's function
validates with the spec itself before the handler runs, and returns
``(content, artifact)`` with the raw value in the artifact (``response_format=
"content_and_artifact"``), which lets :class:`~agent_contract_langchain.middleware.
ContractMiddleware` apply the contract's one serializer to the raw value.

Tools that need a :class:`~agent_contract.tools.ToolContext` read it from a context
variable that the middleware sets for the duration of the call; used outside the
middleware they raise ``ToolException``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, ToolException

from agent_contract.results import (
    ResultNotSerializableError,
    ToolOutput,
    ToolResult,
    serialize_result,
)
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import RedactionPolicy

__all__ = [
    "ARTIFACT_KEY",
    "RawValue",
    "current_tool_context",
    "to_langchain_tool",
    "to_langchain_tools",
    "to_tool_message",
]

ARTIFACT_KEY: Final = "agent_contract"
"""Key of the contract's summary inside a ToolMessage ``artifact`` dict."""

current_tool_context: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "agent_contract_tool_context", default=None
)
"""The ToolContext of the call being executed (set by the middleware)."""


@dataclass(frozen=True)
class RawValue:
    """A tool's raw return value, carried in a ToolMessage artifact."""

    value: Any


def to_langchain_tool(spec: ToolSpec) -> StructuredTool:
    """A StructuredTool with the spec's name, description and JSON Schema.

    Invoked directly, it validates the arguments (``ToolException`` naming the JSON
    path on failure), runs the handler, and returns ``(serialized content,
    RawValue(value))``; a :class:`ToolOutput`'s value is the content, its artifact stays
    out of it. The handler gets the caller's argument values: under
    :class:`ContractMiddleware` those are a deep copy of the validated arguments.

    Raises:
        ToolException: invalid arguments, or a context-aware tool called outside the
            middleware.
    """

    def func(**arguments: Any) -> tuple[str, RawValue]:
        problem = spec.validate(arguments)
        if problem is not None:
            raise ToolException(f"invalid arguments for {spec.name!r}: {problem}")
        if spec.needs_context:
            context = current_tool_context.get()
            if context is None:
                raise ToolException(f"tool {spec.name!r} needs a contract ToolContext")
            value = spec.handler(context, **arguments)
        else:
            value = spec.handler(**arguments)
        try:
            content = serialize_result(value.value if isinstance(value, ToolOutput) else value)
        except ResultNotSerializableError as exc:
            content = exc.message
        return content, RawValue(value)

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
        func=func,
        response_format="content_and_artifact",
    )


def to_langchain_tools(specs: Iterable[ToolSpec]) -> list[StructuredTool]:
    """:func:`to_langchain_tool` for each spec, order kept."""
    return [to_langchain_tool(spec) for spec in specs]


def to_tool_message(result: ToolResult, redaction: RedactionPolicy) -> ToolMessage:
    """The ToolMessage answering a call: content, ``tool_call_id``, ``status``, and an
    application-only ``artifact`` ``{"agent_contract": summary, "value": raw value}``
    (the value redacted, and only when it is JSON data)."""
    safe_value = redaction.redact_value(result.json_artifact())
    summary = result.summary()
    summary["error_message"] = result.error_message
    return ToolMessage(
        content=result.content,
        tool_call_id=result.tool_call_id,
        name=result.name,
        status=result.status,
        artifact={ARTIFACT_KEY: summary, "value": safe_value},
    )
