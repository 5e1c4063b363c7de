"""Two more controls for ``docs/MIGRATION.md``: ``create_agent`` with ``@tool``-style tools,
plain and with the stock middleware a team adds.

``tool-create-agent``: each scenario tool as LangChain's docs teach it: a function with
typed parameters (a pydantic ``args_schema`` built from the tool's JSON Schema: types,
bounds, lengths, enums, defaults; unknown fields ignored, as pydantic does), no
middleware. ``stock-create-agent``: the same, with ``ModelCallLimitMiddleware``
(``run_limit`` = the budget's model steps, ``exit_behavior="end"``),
``ToolCallLimitMiddleware`` (``run_limit`` = the budget's tool calls,
``exit_behavior="continue"``), ``ToolRetryMiddleware`` (two retries, no delay) and
``PIIMiddleware`` redacting API-key shapes in input, output and tool results. Neither
keeps a trace; both report what the graph returned (see
:func:`~agent_contract_langchain.controls.plain_create_agent.observe_agent`).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from langchain.agents import create_agent
from langchain.agents import middleware as stock
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, create_model

from agent_contract.budget import Budget
from agent_contract.harnesses import Observation, RunInput
from agent_contract.model import Model
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.controls.plain_create_agent import observe_agent

__all__ = [
    "STOCK_CONTROL",
    "STOCK_MIDDLEWARE",
    "TOOL_CONTROL",
    "args_model",
    "decorated_tool",
    "stock_agent_harness",
    "stock_middleware",
    "tool_agent_harness",
]

TOOL_CONTROL: Final = "tool-create-agent"
"""``create_agent`` with ``@tool``-style tools, no middleware."""
STOCK_CONTROL: Final = "stock-create-agent"
"""The same with the stock middleware of :data:`STOCK_MIDDLEWARE`."""
STOCK_MIDDLEWARE: Final = (
    "ModelCallLimitMiddleware(run_limit=<max_model_steps>, exit_behavior='end')",
    "ToolCallLimitMiddleware(run_limit=<max_tool_calls>, exit_behavior='continue')",
    "ToolRetryMiddleware(max_retries=2, initial_delay=0)",
    "PIIMiddleware('api_key', detector=<API-key shapes>, apply_to_input=True, "
    "apply_to_output=True, apply_to_tool_results=True)",
)
"""What ``stock-create-agent`` adds, as a team writes it."""

_API_KEY: Final = r"(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"

_TYPES: Final[dict[str, Any]] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, Any],
}


def _annotation(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        return list[_annotation(schema.get("items") or {})]  # type: ignore[misc]
    return _TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _field(schema: dict[str, Any], required: bool) -> Any:
    bounds = {
        "ge": schema.get("minimum"),
        "le": schema.get("maximum"),
        "gt": schema.get("exclusiveMinimum"),
        "lt": schema.get("exclusiveMaximum"),
        "min_length": schema.get("minLength", schema.get("minItems")),
        "max_length": schema.get("maxLength", schema.get("maxItems")),
        "pattern": schema.get("pattern"),
    }
    kept = {k: v for k, v in bounds.items() if v is not None}
    default = ... if required else schema.get("default")
    return Field(default, description=schema.get("description"), **kept)


def args_model(spec: ToolSpec) -> type[BaseModel]:
    """The pydantic model a team's typed function signature gives ``spec``'s arguments."""
    properties: dict[str, Any] = dict(spec.parameters.get("properties") or {})
    required = set(spec.parameters.get("required") or ())
    fields: dict[str, Any] = {
        name: (_annotation(schema), _field(schema, name in required))
        for name, schema in properties.items()
    }
    return create_model(f"{spec.name}_args", **fields)


def decorated_tool(spec: ToolSpec) -> StructuredTool:
    """``spec``'s handler as ``@tool`` makes it: typed arguments (pydantic validation,
    errors back to the model), LangChain's error handling, no timeout; a context-aware
    handler gets a bare ToolContext, and a write runs at once."""
    handler = spec.handler

    def call(**arguments: Any) -> Any:
        if spec.needs_context:
            return handler(ToolContext(run_id="plain", tool_call_id=""), **arguments)
        return handler(**arguments)

    async def acall(**arguments: Any) -> Any:
        if spec.needs_context:
            return await handler(ToolContext(run_id="plain", tool_call_id=""), **arguments)
        return await handler(**arguments)

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=args_model(spec),
        func=None if spec.is_async else call,
        coroutine=acall if spec.is_async else None,
    )


def stock_middleware(options: RunInput) -> list[Any]:
    """The stock middleware of :data:`STOCK_MIDDLEWARE`, with the run's budget (none:
    ``Budget()``'s limits)."""
    budget = options.budget or Budget()
    return [
        stock.ModelCallLimitMiddleware(run_limit=budget.max_model_steps, exit_behavior="end"),
        stock.ToolCallLimitMiddleware(run_limit=budget.max_tool_calls, exit_behavior="continue"),
        stock.ToolRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False),
        stock.PIIMiddleware(
            "api_key",
            detector=_API_KEY,
            strategy="redact",
            apply_to_input=True,
            apply_to_output=True,
            apply_to_tool_results=True,
        ),
    ]


def tool_agent_harness(model: Model, tools: list[ToolSpec], options: RunInput) -> Observation:
    """``create_agent`` with :func:`decorated_tool` tools and no middleware."""
    agent = create_agent(ContractChatModel(model=model), tools=[decorated_tool(t) for t in tools])
    return observe_agent(TOOL_CONTROL, agent, options)


def stock_agent_harness(model: Model, tools: list[ToolSpec], options: RunInput) -> Observation:
    """:func:`tool_agent_harness` with :func:`stock_middleware`."""
    agent = create_agent(
        ContractChatModel(model=model),
        tools=[decorated_tool(t) for t in tools],
        middleware=stock_middleware(options),
    )
    return observe_agent(STOCK_CONTROL, agent, options)


for _harness in (tool_agent_harness, stock_agent_harness):
    _harness.capabilities = ("timeouts", "write_tools")  # type: ignore[attr-defined]
