"""The negative control: a plain ``create_agent``, built the way a team first migrates.

Stock tools (a ``StructuredTool`` over each handler, the JSON Schema as a dict
``args_schema``), every registered tool handed to ``create_agent``, no contract
middleware, default settings. The contract suite runs on it to show, by name, which
boundaries break when a hand-rolled loop is swapped for ``create_agent`` without
keeping them; the tests assert the breakage, so they fail if the suite stops
detecting it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import StructuredTool

from agent_contract.harnesses import Observation, RunInput
from agent_contract.model import Model
from agent_contract.tools import ToolContext, ToolSpec

from ..chat_model import ContractChatModel
from ..messages import to_langchain_messages
from . import PLAIN_CREATE_AGENT_NAME

__all__ = ["observe_agent", "observed", "plain_agent", "plain_create_agent_harness", "plain_tool"]


def plain_tool(spec: ToolSpec) -> StructuredTool:
    """What ``@tool`` gives a team: the handler, the schema as a dict, nothing else.

    Handlers that need a :class:`ToolContext` get a bare one (no caller, no
    idempotency key), as a team wiring its functions by hand would; write tools run
    straight away, with no preview or approval.
    """
    func = spec.handler
    if spec.needs_context:
        handler = spec.handler

        def func(**arguments: Any) -> Any:
            return handler(ToolContext(run_id="plain", tool_call_id=""), **arguments)

    if spec.is_async:  # what @tool makes of an async def: a coroutine-only tool
        return StructuredTool(
            name=spec.name,
            description=spec.description,
            args_schema=dict(spec.parameters),
            coroutine=func,
        )
    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
        func=func,
    )


def plain_agent(model: Model, tools: list[ToolSpec]) -> Any:
    """``create_agent`` with stock tools and no middleware."""
    return create_agent(ContractChatModel(model=model), tools=[plain_tool(t) for t in tools])


def _content(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _kind(message: ToolMessage) -> str | None:
    if message.status != "error":
        return None
    try:
        data = json.loads(_content(message))
    except ValueError:
        return "unclassified"
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return "unclassified"


def observe_agent(name: str, agent: Any, options: RunInput) -> Observation:
    """Invoke a ``create_agent`` graph without the contract on ``options``' turns and
    report what it showed (:func:`observed`), or ``crashed:<Type>`` when ``invoke``
    raised."""
    turns = options.turns()
    try:
        final = agent.invoke({"messages": to_langchain_messages(turns)})
    except Exception as exc:  # noqa: BLE001 - the control observes crashes
        return Observation.crashed(name, exc)
    return observed(name, len(turns), final["messages"])


def observed(name: str, turns: int, messages: Sequence[BaseMessage]) -> Observation:
    """What the final ``messages`` of a graph run without the contract showed, its first
    ``turns`` messages being the input: stop ``answered`` (that is how ``create_agent``
    ends: the last AIMessage has no tool calls), the calls of this run as the trajectory,
    error kinds read from JSON error content, else ``unclassified``."""
    trajectory: list[str] = []
    issued: list[str | None] = []
    for position, message in enumerate(messages):
        if isinstance(message, AIMessage):
            new = position >= turns  # the trajectory is this run's calls, not the history's
            for call in message.tool_calls:
                trajectory.extend([call["name"]] if new else [])
                issued.append(call["id"])
            for bad in message.invalid_tool_calls:
                trajectory.extend([bad.get("name") or ""] if new else [])
                issued.append(bad.get("id"))
    tool_messages = tuple(
        {
            "id": m.tool_call_id,
            "name": m.name,
            "status": m.status,
            "error_kind": _kind(m),
            "side_effects_possible": False,
            "content": _content(m),
        }
        for m in messages
        if isinstance(m, ToolMessage)
    )
    last = messages[-1] if messages else None
    output = _content(last) if isinstance(last, AIMessage) else None
    return Observation.answered(name, output, trajectory, tool_messages, issued)


def plain_create_agent_harness(
    model: Model, tools: list[ToolSpec], options: RunInput
) -> Observation:
    """Run the plain agent and report what it showed (see module doc and
    :func:`observe_agent`)."""
    return observe_agent(PLAIN_CREATE_AGENT_NAME, plain_agent(model, tools), options)


plain_create_agent_harness.capabilities = ("timeouts", "write_tools")  # type: ignore[attr-defined]
"""A bare ``create_agent`` has none of the suite's framework extras applied: the
scenarios that need them are not run on the control."""
