"""Issue 24 item 10: a write whose process was stopped after it ran, before the model
read its result (a SIGINT right after a refund committed, on LangChain), is handed on
by the resumed run as already applied, as a resume that verifies the write says
(offline); it never reads as a write done now, and nothing is written twice."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_contract import Approval, Budget, Contract, ToolSpec
from agent_contract.loop import resume, run
from agent_contract.messages import Message
from agent_contract.runtime.writes import EDIT_NOTE
from agent_contract.testing import FakeModel, tool_call


def _payments() -> tuple[ToolSpec, dict[str, int]]:
    applied: dict[str, int] = {}

    def pay(context: Any, amount: int) -> dict[str, Any]:
        applied[context.idempotency_key] = amount
        return {"paid": amount, "receipt": "r-1"}

    def verify(context: Any, amount: int) -> dict[str, Any] | None:
        value = applied.get(context.idempotency_key)
        return None if value is None else {"paid": value, "receipt": "r-1"}

    spec = ToolSpec(
        name="pay",
        description="Pay.",
        parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
        handler=pay,
        effect="write",
        preview=lambda context, amount: {"would_pay": amount},
        verify=verify,
    )
    return spec, applied


@pytest.mark.parametrize("decision", ["approve", "edit"])
def test_a_write_recorded_before_a_stop_resumes_as_already_applied(decision: str) -> None:
    spec, applied = _payments()
    contract = Contract([spec], budget=Budget(deadline_seconds=30.0))
    read: list[Message] = []

    def answer(messages: list[Message]) -> str:
        read.append(messages[-1])
        return "done"

    model = FakeModel([tool_call("pay", {"amount": 3}), answer])
    paused = run(model, contract, "pay")
    assert paused.snapshot is not None
    pending = paused.pending_approvals[0]
    approval = (
        Approval.for_pending(pending, "edit", arguments={"amount": 2})
        if decision == "edit"
        else Approval.for_pending(pending, "approve")
    )
    # The process that approves runs the write, then is stopped before the model reads
    # it: its stored run holds the write's result, the batch still open.
    state, transcript = contract.restore(paused.snapshot)
    for planned in state.resume([approval]):
        state.execute(planned)
    stopped = state.view.snapshot(transcript)
    assert stopped["answered"][pending.tool_call_id]["status"] == "success"
    amount = 2 if decision == "edit" else 3
    assert list(applied.values()) == [amount]

    done = resume(model, contract, stopped)
    assert done.stop_reason == "answered"
    assert list(applied.values()) == [amount]  # not written again
    (message,) = read
    assert (message.role, message.tool_call_id) == ("tool", pending.tool_call_id)
    shown = json.loads(message.content)
    if decision == "edit":
        assert (shown["note"], shown["arguments"]) == (EDIT_NOTE, {"amount": 2})
        shown = shown["result"]
    assert shown["already_applied"] is True
    assert shown["status"] == "applied"
    assert shown["record"] == {"paid": amount, "receipt": "r-1"}
    (record,) = done.tool_calls
    assert (record.status, record.outcome) == ("success", "succeeded")
