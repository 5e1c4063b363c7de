"""The contract's stop as a LangChain message: a marked ``AIMessage`` with no tool calls.

When the contract stops a run, the model node's result ends with one
:func:`stop_message`. ``create_agent``'s own routing ends the loop on an ``AIMessage``
without tool calls, whatever ``after_model`` hooks of other middleware run in between,
so the stop cannot be lost (a ``jump_to`` written by a wrap hook is dropped by the first
``after_model`` node; see ``docs/MIDDLEWARE.md``). The run's state also refuses every
later model and tool call (:meth:`~agent_contract.runtime.state.RunState.halt`), the second
line of defence, and the harness gives every run a recursion limit derived from the
budget, the third.

Shape::

    AIMessage(
        content="[agent-contract] run stopped: <reason>",
        name="agent_contract",
        id="agent-contract-stop-<12 hex>",
        response_metadata={"agent_contract_stop": {"reason", "detail", "run_id"}},
    )

The detail is redacted (the message lands in the graph state, which a checkpointer
stores). A caller who invokes the graph directly tells a stop from an answer with
:func:`stop_of`; the contract removes stop messages from what the model is shown on a
later turn of the thread, and the harness removes them from ``RunResult.messages``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Final

from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent_contract.errors import STOP_REASONS
from agent_contract.results import ToolResult
from agent_contract.runtime import RunState, Stop

from .tools import to_tool_message

__all__ = [
    "STOP_KEY",
    "STOP_NAME",
    "STOP_PREFIX",
    "is_stop_message",
    "stop_message",
    "stop_of",
    "stop_response",
    "without_stops",
]

STOP_KEY: Final = "agent_contract_stop"
"""Key of the stop record in the stop message's ``response_metadata``."""
STOP_NAME: Final = "agent_contract"
"""``AIMessage.name`` of a stop message."""
STOP_PREFIX: Final = "[agent-contract] run stopped: "
"""The stop message's content, before the reason."""


def stop_message(state: RunState, stop: Stop) -> AIMessage:
    """The marked AIMessage that ends a run the contract stopped (see the module doc)."""
    detail = state.view.contract.redaction.redact(stop.detail)
    return AIMessage(
        content=f"{STOP_PREFIX}{stop.reason}",
        name=STOP_NAME,
        id=f"agent-contract-stop-{uuid.uuid4().hex[:12]}",
        response_metadata={
            STOP_KEY: {"reason": stop.reason, "detail": detail, "run_id": state.view.run_id}
        },
    )


def stop_response(
    state: RunState,
    stop: Stop,
    head: Sequence[Any] = (),
    refusals: Sequence[ToolResult] = (),
) -> ModelResponse[Any]:
    """Halt the run with ``stop`` and give the model node's result that ends it:
    ``head`` (the response's messages) without its tool messages (the contract answers
    those), a ToolMessage for each of ``refusals``, and the :func:`stop_message` of the
    stop the run holds (the first one, when it was halted before)."""
    state.halt(stop)
    messages = [to_tool_message(r) for r in refusals]
    halted = state.view.halted or stop
    kept = [m for m in head if not isinstance(m, ToolMessage)]
    return ModelResponse(result=[*kept, *messages, stop_message(state, halted)])


def is_stop_message(message: Any) -> bool:
    """True for a message :func:`stop_message` made."""
    return isinstance(message, AIMessage) and isinstance(
        (message.response_metadata or {}).get(STOP_KEY), dict
    )


def stop_of(messages: Sequence[BaseMessage]) -> Stop | None:
    """Why the contract stopped a run, read from the graph's messages.

    Args:
        messages: ``graph.invoke(...)["messages"]`` (or any run's messages).

    Returns:
        The :class:`~agent_contract.runtime.Stop` (reason and redacted detail) when the
        last ``AIMessage`` is a contract stop message; ``None`` when it is anything else
        (an answer, or no AIMessage at all). ``None`` does not prove the run answered:
        another middleware may have ended it; the harness
        (:func:`agent_contract_langchain.run_graph`) names every end.
    """
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            if not is_stop_message(message):
                return None
            record = message.response_metadata[STOP_KEY]
            reason = record.get("reason")
            if reason not in STOP_REASONS:
                return None
            return Stop(reason=reason, detail=str(record.get("detail", "")))
    return None


def without_stops(messages: Iterable[Any]) -> list[Any]:
    """``messages`` without the contract's stop messages (order kept)."""
    return [m for m in messages if not is_stop_message(m)]
