"""The LangChain pieces the contract suite's scenarios name in ``Scenario.extras`` (see
:data:`agent_contract.conformance.base.EXTRAS`), and the capabilities they give the
LangChain harnesses.

- ``middleware``: stock or user middleware, placed inside the contract (between
  ``ContractMiddleware`` and its gate);
- ``command_tools``: the tool returns ``Command(update={"messages": [its ToolMessage]})``
  (any create_agent graph has that key; ``tests/stack`` covers updates of other keys);
- ``pausing_tools``: the tool calls ``interrupt()`` before its handler runs;
- ``earlier_turns``: the harness runs these user turns first on the same thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from langchain.agents import middleware as stock
from langchain.agents.middleware.types import AgentMiddleware
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command, interrupt

from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import CORE_CAPABILITIES
from agent_contract.results import serialize_result
from agent_contract.runtime import Contract
from agent_contract.tools import ToolSpec

from .tools import current_tool_context, to_langchain_tool

__all__ = ["CAPABILITIES", "EXTRA_MIDDLEWARE", "extra_middleware", "suite_tools"]

CAPABILITIES: Final = (
    *CORE_CAPABILITIES,
    "crash_restart",
    "durable_store",
    "middleware",
    "graph_commands",
    "pauses",
    "threads",
    "sub_agents",
)
"""What the LangChain harnesses can express (scenarios requiring others are skipped):
the contract's own features, the crash/restart hook, the checkpoint-integrity hook
(a paused run's store reopened after a tampering), and the framework's pieces."""


class _NoopAfterModel(AgentMiddleware):
    """A user middleware whose ``after_model`` does nothing (it once cancelled stops)."""

    @property
    def name(self) -> str:
        return "NoopAfterModel"

    def after_model(self, state: Any, runtime: Any) -> None:
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> None:
        return None


EXTRA_MIDDLEWARE: Final[dict[str, Callable[[], Any]]] = {
    "noop_after_model": _NoopAfterModel,
    "tool_call_limit": lambda: stock.ToolCallLimitMiddleware(run_limit=50),
    "model_call_limit_end": lambda: stock.ModelCallLimitMiddleware(
        run_limit=1, exit_behavior="end"
    ),
    "tool_retry": lambda: stock.ToolRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False),
}
"""The middleware a scenario may name, by name."""


def extra_middleware(extras: Mapping[str, tuple[str, ...]]) -> list[Any]:
    """The middleware ``extras`` names.

    Raises:
        ConfigurationError: an unknown middleware name.
    """
    found = []
    for name in extras.get("middleware", ()):
        if name not in EXTRA_MIDDLEWARE:
            raise ConfigurationError(f"no suite middleware named {name!r}")
        found.append(EXTRA_MIDDLEWARE[name]())
    return found


def _command_tool(spec: ToolSpec) -> BaseTool:
    def func(**arguments: Any) -> Command[Any]:
        context = current_tool_context.get()
        if context is None:
            raise ConfigurationError(f"command tool {spec.name!r} runs under the contract")
        handler_args = (context,) if spec.needs_context else ()
        content = serialize_result(spec.handler(*handler_args, **arguments))
        message = ToolMessage(content=content, tool_call_id=context.tool_call_id, name=spec.name)
        return Command(update={"messages": [message]})

    return StructuredTool(
        name=spec.name, description=spec.description, args_schema=dict(spec.parameters), func=func
    )


def _pausing_tool(spec: ToolSpec) -> BaseTool:
    base = to_langchain_tool(spec)

    def func(**arguments: Any) -> Any:
        interrupt({"tool": spec.name, "arguments": arguments})
        return base.func(**arguments)  # type: ignore[misc]

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
        func=func,
        response_format="content_and_artifact",
    )


def suite_tools(contract: Contract, extras: Mapping[str, tuple[str, ...]]) -> list[BaseTool]:
    """The contract's tools as LangChain tools, the ones ``extras`` names changed."""
    commands = set(extras.get("command_tools", ()))
    pausing = set(extras.get("pausing_tools", ()))
    tools: list[BaseTool] = []
    for spec in contract.registry:
        if spec.name in commands:
            tools.append(_command_tool(spec))
        elif spec.name in pausing:
            tools.append(_pausing_tool(spec))
        else:
            tools.append(to_langchain_tool(spec))
    return tools
