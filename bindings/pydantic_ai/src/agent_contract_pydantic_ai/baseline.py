"""The negative control: a plain PydanticAI ``Agent``, built the way a team first migrates.

Stock tools (``Tool.from_schema`` over each handler with its JSON Schema), every
registered tool handed to the agent, no contract capability, default settings (retries,
``UsageLimits``, ``end_strategy``, plain ``str`` output), driven with ``run_sync``. The
contract suite runs on it to show, by name, which boundaries PydanticAI keeps by itself
and which break; the tests assert the breakage, so they fail if the suite stops detecting
it (or PydanticAI starts keeping one).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

from agent_contract.harnesses import Observation, RunInput
from agent_contract.model import Model
from agent_contract.tools import ToolContext, ToolSpec

from .driving import run_sync_on_own_loop
from .messages import ERROR_OUTCOMES, to_pydantic_messages
from .model import contract_model
from .plugin import CONTROL_CAPABILITIES, PLAIN_PYDANTIC_AI

__all__ = ["plain_agent", "plain_pydantic_ai_harness", "plain_tool"]


def plain_tool(spec: ToolSpec) -> Tool[Any]:
    """What ``Tool.from_schema`` gives a team: the handler, the JSON Schema, nothing else.

    Handlers that need a :class:`ToolContext` get a bare one (no caller, no idempotency
    key), as a team wiring its functions by hand would; write tools run straight away,
    with no preview or approval.
    """
    func = spec.handler
    if spec.needs_context:
        handler = spec.handler

        def func(**arguments: Any) -> Any:
            return handler(ToolContext(run_id="plain", tool_call_id=""), **arguments)

    return Tool.from_schema(func, spec.name, spec.description, dict(spec.parameters))


def plain_agent(model: Model, tools: list[ToolSpec]) -> Agent[None, str]:
    """An ``Agent`` with stock tools and default settings."""
    return Agent(contract_model(model), tools=[plain_tool(t) for t in tools])


def _kind(status: str, content: str) -> str | None:
    if status != "error":
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return "unclassified"
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return "unclassified"


def _tool_messages(messages: list[ModelMessage]) -> tuple[dict[str, Any], ...]:
    """Every tool result of the history as the Observation shows it (read from the parts:
    a plain agent binds a result to an empty id, which no contract message could carry)."""
    found: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                content = (
                    part.content if isinstance(part.content, str) else part.model_response_str()
                )
                error = getattr(part, "outcome", "success") in ERROR_OUTCOMES
            elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                content, error = part.model_response(), True
            else:
                continue
            status = "error" if error else "success"
            found.append(
                {
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "status": status,
                    "error_kind": _kind(status, content),
                    "side_effects_possible": False,
                    "content": content,
                }
            )
    return tuple(found)


def plain_pydantic_ai_harness(
    model: Model, tools: list[ToolSpec], options: RunInput
) -> Observation:
    """Run the plain agent and report what it showed (see the module doc).

    The stop reason is ``answered`` whenever ``run_sync`` returns (that is how an agent
    ends: with its output), or ``crashed:<ExceptionType>`` when it raised.
    """
    agent = plain_agent(model, tools)
    history = to_pydantic_messages(list(options.history))
    try:
        result = run_sync_on_own_loop(
            agent, {"user_prompt": options.user, "message_history": history or None}
        )
    except Exception as exc:  # noqa: BLE001 - the control observes crashes
        return Observation.crashed(PLAIN_PYDANTIC_AI.name, exc)
    trajectory: list[str] = []
    issued: list[str | None] = []
    new = {id(m) for m in result.new_messages()}
    for message in result.all_messages():
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    # the trajectory is this run's calls, not the history's
                    trajectory.extend([part.tool_name] if id(message) in new else [])
                    issued.append(part.tool_call_id)
    tool_messages = _tool_messages(result.all_messages())
    output = result.output if isinstance(result.output, str) else None
    return Observation.answered(PLAIN_PYDANTIC_AI.name, output, trajectory, tool_messages, issued)


plain_pydantic_ai_harness.capabilities = CONTROL_CAPABILITIES  # type: ignore[attr-defined]
"""A plain agent has none of the suite's framework extras applied."""
