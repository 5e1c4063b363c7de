"""Tools that return a LangGraph ``Command``: the result inside, and the state update.

A tool may return ``Command(update={"messages": [ToolMessage(..., tool_call_id=<its
call>)], "<key>": value})`` to change the graph state besides answering. Under the
contract:

- the ``ToolMessage`` bound to the call is the call's result and takes the path of
  every result (bound to its id, serialized, size-limited, classified, redacted);
- the rest of the update is the team's state: it goes through only when the result
  is a success (an error, a timeout or a result refused as too large drops it: fail
  closed); the trace records the update's key names (``state_update``), never values;
- what would take control flow from the contract is refused with a classified
  ``tool_error`` naming it: ``goto``, ``graph=Command.PARENT`` (a multi-agent hand-off:
  not supported under the contract), ``resume``, an update that is not a dict, one
  that writes a key the agent loop owns (:data:`RESERVED_KEYS`), or one whose
  ``messages`` hold anything but the one bound ``ToolMessage``.
"""

from __future__ import annotations

from typing import Any, Final

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from agent_contract.errors import ToolError

from .stops import STOP_KEY

__all__ = ["RESERVED_KEYS", "CommandRefusedError", "split_command"]

RESERVED_KEYS: Final = frozenset({"jump_to", "structured_response", STOP_KEY})
"""State keys a tool's ``Command`` may not write: the agent loop's and the contract's."""


class CommandRefusedError(ToolError):
    """A tool's ``Command`` the contract refuses (kind ``tool_error``)."""


def split_command(command: Command[Any], call_id: str) -> tuple[ToolMessage, dict[str, Any]]:
    """The ToolMessage bound to ``call_id`` and the rest of ``command``'s update.

    Raises:
        CommandRefusedError: the Command does more than answer and update state (see
            the module doc).
    """
    if command.graph is not None:
        raise CommandRefusedError(
            "the tool returned a Command for another graph (a hand-off); the contract "
            "does not let a tool move control to another agent"
        )
    if command.goto:
        raise CommandRefusedError(
            "the tool returned a Command with goto; the contract owns the control flow"
        )
    if command.resume is not None:
        raise CommandRefusedError("the tool returned a Command with resume")
    update = command.update if command.update is not None else {}
    if not isinstance(update, dict):
        raise CommandRefusedError("the tool returned a Command whose update is not a dict")
    reserved = sorted(RESERVED_KEYS & update.keys())
    if reserved:
        raise CommandRefusedError(
            f"the tool returned a Command that writes reserved state keys {reserved}"
        )
    messages = list(update.get("messages") or [])
    bound = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
    if len(bound) != 1 or len(messages) != 1:
        raise CommandRefusedError(
            "the tool returned a Command whose messages are not exactly one ToolMessage "
            f"bound to {call_id!r}"
        )
    return bound[0], {k: v for k, v in update.items() if k != "messages"}
