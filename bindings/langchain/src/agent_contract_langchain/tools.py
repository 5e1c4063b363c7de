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
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from agent_contract.errors import ConfigurationError, ToolError
from agent_contract.executor import run_awaitable
from agent_contract.function_tools import UNDECLARED
from agent_contract.results import (
    ResultNotSerializableError,
    ToolOutput,
    ToolResult,
    serialize_result,
)
from agent_contract.tools import ToolContext, ToolSpec

__all__ = [
    "ARTIFACT_KEY",
    "RawValue",
    "current_tool_context",
    "framework_runner",
    "from_langchain_tool",
    "graph_tool",
    "graph_tools",
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

framework_runner: contextvars.ContextVar[tuple[str, Callable[[dict[str, Any]], Any]] | None] = (
    contextvars.ContextVar("agent_contract_framework_runner", default=None)
)
"""``(tool name, run(arguments) -> raw value)``: how an approved write runs the
LangChain tool through the graph's tool node (injected arguments included); set by the
middleware around a write call, read by :func:`from_langchain_tool`'s handler."""


@dataclass(frozen=True)
class RawValue:
    """A tool's raw return value, carried in a ToolMessage artifact."""

    value: Any


def to_langchain_tool(spec: ToolSpec) -> StructuredTool:
    """A StructuredTool with the spec's name, description and JSON Schema.

    Invoked directly, it validates the arguments (``ToolException`` naming the JSON
    path on failure), runs the handler (an ``async def`` one natively under
    ``ainvoke``, on the contract's event loop under ``invoke``), and returns
    ``(serialized content, RawValue(value))``; a :class:`ToolOutput`'s value is the content, its artifact stays
    out of it. The handler gets the caller's argument values: under
    :class:`ContractMiddleware` those are a deep copy of the validated arguments.

    Raises:
        ToolException: invalid arguments, or a context-aware tool called outside the
            middleware.
    """

    def func(**arguments: Any) -> tuple[str, RawValue]:
        context = current_tool_context.get()
        if context is not None:
            # Under the contract: the arguments were validated when the batch was
            # planned (or rewritten), and the timed region is the handler alone; the
            # contract serializes, redacts and size-limits the raw value once, after it.
            # (An async handler's coroutine goes back as it is: the contract's executor
            # awaits it on its own loop, cancelled at the timeout.)
            handler_args = (context,) if spec.needs_context else ()
            return "", RawValue(spec.handler(*handler_args, **arguments))
        _check_direct(spec, arguments)
        value = spec.handler(**arguments)
        if inspect.isawaitable(value):
            value = run_awaitable(value)
        return _direct(value)

    async def afunc(**arguments: Any) -> tuple[str, RawValue]:
        context = current_tool_context.get()
        if context is not None:  # under the contract: awaited natively, cancellable
            handler_args = (context,) if spec.needs_context else ()
            return "", RawValue(await spec.handler(*handler_args, **arguments))
        _check_direct(spec, arguments)
        return _direct(await spec.handler(**arguments))

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
        func=func,
        coroutine=afunc if spec.is_async else None,
        response_format="content_and_artifact",
    )


def _check_direct(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """Outside the contract: validate, and refuse a tool that needs a ToolContext.

    Raises:
        ToolException: invalid arguments, or a context-aware tool.
    """
    problem = spec.validate(arguments)
    if problem is not None:
        raise ToolException(f"invalid arguments for {spec.name!r}: {problem}")
    if spec.needs_context:
        raise ToolException(f"tool {spec.name!r} needs a contract ToolContext")


def _direct(value: Any) -> tuple[str, RawValue]:
    """Outside the contract: the serialized content and the raw value."""
    try:
        content = serialize_result(value.value if isinstance(value, ToolOutput) else value)
    except ResultNotSerializableError as exc:
        content = exc.message
    return content, RawValue(value)


def graph_tools(graph: Any) -> dict[str, BaseTool]:
    """The tools of a compiled ``create_agent`` graph's tool node, by name: the ones
    given to ``create_agent`` and the ones its middleware adds (deepagents'
    ``task``, ``ls``, ``write_file``, ... are made by its middleware, so this is how
    to get those tool objects to register with a Contract; no deepagents import is
    needed).

    Build the graph once without the contract (same tools and sub-agent specs), take
    its tools, then build the graph you run with the contract (see
    docs/MULTI_AGENT.md)::

        probe = create_deep_agent(model, tools=[], subagents=[{**spec, "middleware": []}])
        task_tool = graph_tool(probe, "task")

    Args:
        graph: a compiled graph (``create_agent``, ``create_deep_agent``): its node
            ``"tools"`` (LangGraph's ``ToolNode``), else its only node that holds
            tools by name.

    Returns:
        ``{tool name: BaseTool}``, in the tool node's order (a new dict).

    Raises:
        ConfigurationError: ``graph`` has no tool node (not a compiled graph, or a
            ``create_agent`` given no tools and no middleware tools), or several tool
            nodes and none named ``"tools"``.
    """
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, Mapping):
        raise ConfigurationError(
            f"graph_tools needs a compiled graph (create_agent's), got {type(graph).__name__}"
        )
    found: dict[str, Mapping[str, Any]] = {}
    for key, node in nodes.items():
        by_name = getattr(getattr(node, "bound", None), "tools_by_name", None)
        if isinstance(by_name, Mapping):
            found[str(key)] = by_name
    if "tools" in found:
        return dict(found["tools"])
    if len(found) == 1:
        return dict(next(iter(found.values())))
    if not found:
        raise ConfigurationError(
            f"the graph has no tool node (its nodes: {sorted(map(str, nodes))}): "
            "create_agent builds one only when it is given tools or its middleware adds some"
        )
    raise ConfigurationError(
        f"the graph has several tool nodes and none named 'tools': {sorted(found)}"
    )


def graph_tool(graph: Any, name: str) -> BaseTool:
    """The tool ``name`` of a compiled ``create_agent`` graph's tool node (see
    :func:`graph_tools`): e.g. ``graph_tool(probe, "task")`` for deepagents' ``task``.

    Raises:
        ConfigurationError: as :func:`graph_tools`, or the tool node has no tool
            ``name`` (the message lists the names it has).
    """
    tools = graph_tools(graph)
    found = tools.get(name)
    if found is None:
        raise ConfigurationError(
            f"the graph's tool node has no tool {name!r}; it has {list(tools)}"
        )
    return found


def to_langchain_tools(specs: Iterable[ToolSpec]) -> list[StructuredTool]:
    """:func:`to_langchain_tool` for each spec, order kept."""
    return [to_langchain_tool(spec) for spec in specs]


def to_tool_message(result: ToolResult) -> ToolMessage:
    """The ToolMessage answering a call: content, ``tool_call_id``, ``status``, and an
    ``artifact`` ``{"agent_contract": summary}`` (the result's summary and its public
    error message).

    The call's own artifact (a ``ToolOutput``'s, or the raw value) is not in it: the
    graph state, which a checkpointer stores, keeps only the content the model saw
    (capped, redacted). The application reads the artifact from
    ``RunResult.artifacts[tool_call_id]``, in the process that ran the call (artifacts
    are not stored, so they do not survive a resume in another process). The result's
    summary is already redacted.
    """
    summary = result.summary()
    summary["error_message"] = result.error_message
    return ToolMessage(
        content=result.content,
        tool_call_id=result.tool_call_id,
        name=result.name,
        status=result.status,
        artifact={ARTIFACT_KEY: summary},
    )


def _visible_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of the arguments the model sees (injected ones left out)."""
    schema: Any = tool.tool_call_schema
    if isinstance(schema, dict):
        return dict(schema)
    if hasattr(schema, "model_json_schema"):
        return dict(schema.model_json_schema())
    return dict(schema.schema())  # a pydantic v1 model


def from_langchain_tool(tool: BaseTool, *, effect: Any = UNDECLARED, **options: Any) -> ToolSpec:
    """Adopt a LangChain tool (``@tool`` functions, ``StructuredTool``, any ``BaseTool``)
    unchanged as a :class:`ToolSpec`, so the contract can allowlist, validate and budget
    it. This is the API behind the issue's ``ToolSpec.from_langchain_tool``: the core
    names no framework, so the converter lives in the binding.

    The name and description are the tool's; the parameters are the model-visible schema
    (``tool.tool_call_schema``): arguments LangChain injects (``ToolRuntime``,
    ``InjectedToolCallId``, ``InjectedState``, ``InjectedStore``) never reach the
    contract's validator or trace. Under the contract in ``create_agent`` the tool runs
    through LangChain's tool node, injection included; the spec's own handler (used
    when the contract runs it directly: the offline loop, a tool another middleware
    added at run time) invokes the tool, and refuses a tool that needs injected
    arguments.

    The effect is never guessed (fail closed): ``effect="read"`` or ``effect="write"``
    is required. A write also needs ``preview=`` and ``verify=`` (``preview(context,
    **arguments)`` and ``verify(context, **arguments)``, see :class:`ToolSpec`), and then
    never runs before a human approved the exact call; the tool itself can read the
    call's idempotency key from :data:`current_tool_context`.

    Args:
        tool: the LangChain tool.
        effect: ``"read"`` or ``"write"`` (required).
        **options: further :class:`ToolSpec` fields (``timeout_seconds``,
            ``max_result_chars``, ``preview``, ``verify``, ``check_arguments``, ...).

    Raises:
        ConfigurationError: no or an unknown ``effect``, a write without preview and
            verify, or a spec that is not valid (see :class:`ToolSpec`).
    """
    if effect is UNDECLARED:
        raise ConfigurationError(
            f"tool {tool.name!r}: declare its effect (effect='read' or effect='write'); "
            "an adopted tool's effect is never guessed"
        )
    parameters = _visible_schema(tool)
    injected = _injected_names(tool, parameters)

    def handler(*context: Any, **arguments: Any) -> Any:
        runner = framework_runner.get()
        if runner is not None and runner[0] == tool.name:  # an approved write, in the graph
            if context and isinstance(context[0], ToolContext):
                current_tool_context.set(context[0])  # its idempotency key, for the tool
            return runner[1](arguments)
        if injected:
            raise ToolError(
                f"tool {tool.name!r} needs arguments LangChain injects; it runs only inside "
                "create_agent"
            )
        return tool.invoke(arguments)

    return ToolSpec(
        name=tool.name,
        description=tool.description or tool.name,
        parameters=parameters,
        handler=handler,
        effect=effect,
        **options,
    )


def _injected_names(tool: BaseTool, parameters: dict[str, Any]) -> set[str]:
    """Parameters of the tool's function the model does not see (LangChain injects them)."""
    visible = set((parameters.get("properties") or {}).keys())
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    try:
        declared = set(inspect.signature(func).parameters) if func is not None else set()
    except (TypeError, ValueError):
        declared = set()
    if func is None:
        schema = getattr(tool, "args_schema", None)
        fields = getattr(schema, "model_fields", None)
        declared = set(fields) if isinstance(fields, dict) else set()
    return declared - visible
