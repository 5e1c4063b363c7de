"""The contract's write approval as a LangGraph interrupt, in the shape of LangChain's
human-in-the-loop middleware.

A write call waits on ``interrupt(payload)`` inside its tool task. The payload is
``HumanInTheLoopMiddleware``'s request shape, so a UI that renders a HITL review renders
this one, with the contract's binding on top::

    {
      "action_requests": [{"name": "refund_order", "args": {...}, "description": "..."}],
      "review_configs": [{"action_name": "refund_order",
                          "allowed_decisions": ["approve", "edit", "reject"]}],
      "agent_contract": {"type": "agent_contract.approval", "run_id": ..., "tool_call_id": ...,
                         "name": ..., "arguments": {...}, "preview": ..., "token": ...}
    }

It resumes with HITL's decision shape, one decision for the one action:
``{"decisions": [{"type": "approve"}]}``, ``{"type": "edit", "edited_action": {"name":
<the same tool>, "args": {...}}}`` or ``{"type": "reject", "message": "..."}``, each
optionally with ``"agent_contract": {"token": ..., "decided_by": ...}``. The interrupt's
id binds such a decision to this run and this call; a token, when given, must be the
call's. (``respond`` is not a decision on a write: it is refused.) The contract's own
form, ``{"decisions": [Approval.to_dict(), ...]}``, is accepted too, and a decision the
harness recorded before resuming (``resume_agent``) is used as it is.

HITL or the contract's approval? HITL reviews *any* call (read tools too, or answering in
a tool's place); it has no preview, no token, no idempotency key, and its counters reset
on resume. The contract's write approval is for side effects: a preview before asking, a
decision bound to run, call and arguments, an idempotency key, verification, budgets that
hold across resumes. Use both when you need both (see ``docs/MIDDLEWARE.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from agent_contract.approval import Approval, PendingApproval
from agent_contract.errors import ApprovalError
from agent_contract.messages import canonical_json
from agent_contract.runtime import PlannedCall, RunState

from .tools import to_tool_message

__all__ = [
    "APPROVAL_INTERRUPT",
    "approval_payload",
    "approvals_from",
    "is_approval_payload",
    "payload_call_id",
    "write_call",
]

APPROVAL_INTERRUPT: Final = "agent_contract.approval"
"""``agent_contract.type`` of the interrupt payload a write call waits on."""

_ALLOWED: Final = ["approve", "edit", "reject"]


def approval_payload(state: RunState, pending: PendingApproval) -> dict[str, Any]:
    """The interrupt payload for ``pending`` (see the module doc)."""
    description = (
        f"{pending.name} changes something and needs approval. Preview: "
        f"{canonical_json(pending.preview)}"
    )
    return {
        "action_requests": [
            {"name": pending.name, "args": pending.arguments, "description": description}
        ],
        "review_configs": [{"action_name": pending.name, "allowed_decisions": list(_ALLOWED)}],
        "agent_contract": {
            "type": APPROVAL_INTERRUPT,
            "run_id": state.view.run_id,
            **pending.to_dict(),
        },
    }


def is_approval_payload(value: Any) -> bool:
    """True for the payload of a contract write approval."""
    binding = value.get("agent_contract") if isinstance(value, Mapping) else None
    return isinstance(binding, Mapping) and binding.get("type") == APPROVAL_INTERRUPT


def payload_call_id(value: Any) -> str | None:
    """The call id a contract approval payload waits for, else ``None``."""
    if not is_approval_payload(value):
        return None
    return str(value["agent_contract"].get("tool_call_id"))


def _from_hitl(pending: PendingApproval, decision: Mapping[str, Any]) -> Approval:
    binding = decision.get("agent_contract")
    binding = binding if isinstance(binding, Mapping) else {}
    token = str(binding.get("token", pending.token))
    decided_by = str(binding.get("decided_by", ""))
    kind = decision.get("type")
    call_id = pending.tool_call_id
    if kind == "approve":
        return Approval(
            tool_call_id=call_id, decision="approve", token=token, decided_by=decided_by
        )
    if kind == "reject":
        return Approval(
            tool_call_id=call_id,
            decision="reject",
            token=token,
            reason=str(decision.get("message", "")),
            decided_by=decided_by,
        )
    if kind == "edit":
        action = decision.get("edited_action")
        if not isinstance(action, Mapping) or action.get("name") != pending.name:
            raise ApprovalError(
                f"an edit of {pending.name!r} must keep the tool: edited_action.name is "
                f"{action.get('name') if isinstance(action, Mapping) else None!r}",
                tool_call_id=call_id,
            )
        arguments = action.get("args")
        return Approval(
            tool_call_id=call_id,
            decision="edit",
            token=token,
            arguments=dict(arguments) if isinstance(arguments, Mapping) else None,
            decided_by=decided_by,
        )
    raise ApprovalError(
        f"decision type {kind!r} is not a decision on a write; expected one of {_ALLOWED}",
        tool_call_id=call_id,
    )


def approvals_from(pending: PendingApproval, answer: Any) -> list[Approval]:
    """The decisions on ``pending`` in a resume value (either form of the module doc).

    Raises:
        ApprovalError: a decision that is not one (the call stays pending).
    """
    decisions = answer.get("decisions", []) if isinstance(answer, Mapping) else []
    found: list[Approval] = []
    for decision in decisions if isinstance(decisions, list) else []:
        if not isinstance(decision, Mapping):
            continue
        if "tool_call_id" in decision:
            if decision.get("tool_call_id") == pending.tool_call_id:
                found.append(Approval.from_dict(decision))
        elif "type" in decision:
            found.append(_from_hitl(pending, decision))
    return found


def write_call(state: RunState, planned: PlannedCall) -> ToolMessage:
    """A write call: wait for a decision (``interrupt``), then run it once.

    Nothing with a side effect happens before ``interrupt()``: the preview ran when the
    batch was planned (in the model node, which does not re-run on resume), and on
    resume this task starts again from the top, finds the decision and writes.

    Raises:
        ApprovalError: resumed without a decision for this call, or with one that does
            not fit (nothing runs).
    """
    pending = planned.approval
    if pending is None:
        raise ApprovalError("write_call() needs a call waiting for approval")
    if state.view.decision_for(planned.call_id) is None:
        answer = interrupt(approval_payload(state, pending))
        state.resume(approvals_from(pending, answer))
    result = state.view.result_for(planned.call_id)
    if result is None:
        if state.view.decision_for(planned.call_id) is None:
            raise ApprovalError(
                f"resumed without a decision for {planned.call_id!r}",
                tool_call_id=planned.call_id,
            )
        result = state.execute(planned)  # with the decided arguments (an edit's)
    return to_tool_message(result)
