"""``refund_order`` on both harnesses, in this process: preview -> approval bound to the
call -> one idempotent write -> verification; reject, edit, replayed and conflicting
decisions; and two LangGraph pitfalls (the interrupted task re-runs on resume; budgets
must hold across resumes).

The paused run and the LangGraph checkpoint live in files under ``tmp_path``; every
resume reopens them, as a new process would (the cross-process and crash cases are in
``test_crash_points.py`` and ``test_durable_cli.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.demo import DemoRun, approve_demo, start_demo
from agent_contract.app.folder import APPROVAL_LABEL, DemoFolder
from agent_contract.approval import Approval, DecisionKind, approval_token, idempotency_key
from agent_contract.errors import ApprovalError
from agent_contract.runtime import Contract, RunResult
from agent_contract.sealing import folder_key, subkey
from agent_contract.testing import DemoModel, FakeModel, tool_call, tool_calls
from agent_contract_langchain import approvals as lc_approvals

REFUND_A1001 = {"order_id": "A-1001", "amount_cents": 12900, "reason": "customer request"}


class SimulatedCrash(Exception):
    """Raised by a checkpoint callback: the process 'dies' right after the decision is stored."""


def demo_contract(folder: Path) -> Contract:
    """The demo's contract on ``folder`` (approval tokens keyed with its key)."""
    return DemoFolder.open(folder).contract(budget=None, secrets=(), create_orders=False)


def token(folder: Path, run_id: str, call_id: str, arguments: Any) -> str:
    """The approval token the demo issues for a refund in ``folder`` (alice's run)."""
    key = subkey(folder_key(folder), APPROVAL_LABEL)
    return approval_token(run_id, call_id, "refund_order", arguments, "alice", key=key)


def pause(harness: str, folder: Path, order: str = "A-1001") -> DemoRun:
    demo = start_demo(f"refund order {order}", harness=harness, caller="alice", folder=folder)
    assert demo.result.stop_reason == "pending_approval"
    return demo


def tool_message(result: RunResult, call_id: str) -> Any:
    (message,) = [m for m in result.messages if m.role == "tool" and m.tool_call_id == call_id]
    return message


def event_types(result: RunResult) -> list[str]:
    return [e["type"] for e in result.trace.events]


# -- pause, approve ---------------------------------------------------------------------------


def test_write_pauses_with_a_preview_and_writes_nothing(
    harness: str, folder: Path, data: Any
) -> None:
    demo = pause(harness, folder)
    result = demo.result

    assert result.output is None
    (pending,) = result.pending_approvals
    assert pending.name == "refund_order"
    assert pending.arguments == REFUND_A1001
    assert pending.preview == {
        "order_id": "A-1001",
        "refund": "129.00 EUR",
        "reason": "customer request",
        "refunded_before": "0.00 EUR",
        "refunded_after": "129.00 EUR",
        "status_before": "delivered",
        "status_after": "refunded",
    }
    assert pending.token == token(folder, result.run_id, pending.tool_call_id, REFUND_A1001)
    assert data.refund_count() == 0
    assert data.order("A-1001") == {"refunded_cents": 0, "status": "delivered"}
    stored_harness, snapshot = data.runs()[demo.thread_id]
    assert stored_harness == harness
    assert snapshot["usage"]["tool_calls"] == 2


def test_approve_writes_once_and_verifies(
    harness: str, store_kind: str, folder: Path, data: Any
) -> None:
    demo = pause(harness, folder)
    (pending,) = demo.result.pending_approvals
    result = approve_demo(demo.thread_id, "approve", decided_by="ops", folder=folder)

    assert result.stop_reason == "answered"
    ((row),) = data.refund_rows("A-1001")
    key = idempotency_key(demo.thread_id, pending.tool_call_id, "refund_order", REFUND_A1001)
    assert row == {
        "idempotency_key": key,
        "order_id": "A-1001",
        "amount_cents": 12900,
        "reason": "customer request",
        "caller": "alice",
        "run_id": demo.thread_id,
    }
    assert data.order("A-1001") == {"refunded_cents": 12900, "status": "refunded"}
    assert result.output == f"Refunded 12900 cents on order A-1001 (refund {key})."
    assert [(c.name, c.status) for c in result.tool_calls] == [
        ("lookup_order", "success"),
        ("refund_order", "success"),
    ]
    types = event_types(result)
    assert types.index("approval_requested") < types.index("approval_decided")
    assert types.index("approval_decided") < types.index("write_settled")
    harness_col, _ = data.runs()[demo.thread_id]
    assert harness_col == f"finished:{harness}"

    # The run is over: approving it again is refused, and nothing is written.
    with pytest.raises(ApprovalError, match="already finished"):
        approve_demo(demo.thread_id, "approve", folder=folder)
    assert data.refund_count() == 1


# -- reject, edit ------------------------------------------------------------------------------


def test_reject_never_runs_and_binds_a_rejection(
    harness: str, store_kind: str, folder: Path, data: Any
) -> None:
    demo = pause(harness, folder)
    (pending,) = demo.result.pending_approvals
    result = approve_demo(demo.thread_id, "reject", reason="not eligible", folder=folder)

    assert result.stop_reason == "answered"
    assert data.refund_count() == 0
    assert data.order("A-1001") == {"refunded_cents": 0, "status": "delivered"}
    assert [(c.name, c.error_kind, c.outcome) for c in result.tool_calls] == [
        ("lookup_order", None, "succeeded"),
        ("refund_order", "rejected", "not_run"),
    ]
    message = tool_message(result, pending.tool_call_id)
    assert message.name == "refund_order"
    assert message.status == "error"
    assert json.loads(message.content) == {
        "error": "rejected",
        "message": "a human rejected this call: not eligible",
        "outcome": "not_run",
        "side_effects_possible": False,
    }
    assert "write_settled" not in event_types(result)
    assert "(rejected)" in (result.output or "")


def test_edit_runs_once_with_the_edited_arguments(
    harness: str, store_kind: str, folder: Path, data: Any
) -> None:
    demo = pause(harness, folder)
    (pending,) = demo.result.pending_approvals
    edited = {"order_id": "A-1001", "amount_cents": 1000, "reason": "partial"}
    result = approve_demo(demo.thread_id, "edit", arguments=edited, folder=folder)

    assert result.stop_reason == "answered"
    (row,) = data.refund_rows()
    assert (row["order_id"], row["amount_cents"], row["reason"]) == ("A-1001", 1000, "partial")
    assert row["idempotency_key"] == idempotency_key(
        demo.thread_id, pending.tool_call_id, "refund_order", edited
    )
    assert data.order("A-1001") == {"refunded_cents": 1000, "status": "partially_refunded"}
    assert "Refunded 1000 cents on order A-1001" in (result.output or "")
    decided = [e for e in result.trace.events if e["type"] == "approval_decided"]
    assert [(e["decision"], e["arguments"]) for e in decided] == [("edit", edited)]


@pytest.mark.parametrize(
    "edited",
    [
        {"order_id": "A-1001", "amount_cents": 0, "reason": "zero"},
        {"order_id": "a-1001", "amount_cents": 100, "reason": "bad id"},
        {"order_id": "A-1001", "amount_cents": 100},
        {"order_id": "A-1001", "amount_cents": 100, "reason": "x", "caller": "bob"},
    ],
    ids=["zero-amount", "bad-id", "missing-reason", "extra-field"],
)
def test_edit_with_invalid_arguments_is_refused_and_stays_pending(
    harness: str, folder: Path, data: Any, edited: dict[str, Any]
) -> None:
    demo = pause(harness, folder)
    with pytest.raises(ApprovalError, match="edited arguments are invalid"):
        approve_demo(demo.thread_id, "edit", arguments=edited, folder=folder)
    assert data.refund_count() == 0
    harness_col, snapshot = data.runs()[demo.thread_id]
    assert harness_col == harness
    assert snapshot["decisions"] == {}  # nothing was recorded

    result = approve_demo(demo.thread_id, "approve", folder=folder)
    assert result.stop_reason == "answered"
    assert data.refund_count() == 1


def test_edit_cannot_reach_another_users_order(harness: str, folder: Path, data: Any) -> None:
    """An approver's edit still runs as the run's caller: bob's order is ``not_found``
    at the edit's preview, so the edit is refused and the call stays pending."""
    demo = pause(harness, folder)
    edited = {"order_id": "B-2001", "amount_cents": 100, "reason": "wrong order"}
    with pytest.raises(ApprovalError, match="not_found"):
        approve_demo(demo.thread_id, "edit", arguments=edited, folder=folder)
    assert data.refund_count() == 0
    assert data.order("B-2001") == {"refunded_cents": 0, "status": "delivered"}
    result = approve_demo(demo.thread_id, "reject", folder=folder)
    assert [c.error_kind for c in result.tool_calls] == [None, "rejected"]


def test_edit_above_the_refundable_amount_is_refused_and_stays_pending(
    harness: str, folder: Path, data: Any
) -> None:
    demo = pause(harness, folder)
    edited = {"order_id": "A-1001", "amount_cents": 20000, "reason": "too much"}
    with pytest.raises(ApprovalError, match="exceeds the refundable"):
        approve_demo(demo.thread_id, "edit", arguments=edited, folder=folder)
    assert data.refund_count() == 0
    fixed = {"order_id": "A-1001", "amount_cents": 2000, "reason": "fixed"}
    result = approve_demo(demo.thread_id, "edit", arguments=fixed, folder=folder)
    assert result.stop_reason == "answered"
    assert data.refund_count() == 1


# -- replayed and conflicting decisions (Python API) ---------------------------------------------


def resume_demo(driver: Any, folder: Path, snapshot: Any, approvals: list[Approval]) -> RunResult:
    result: RunResult = driver.resume(DemoModel(), demo_contract(folder), snapshot, approvals)
    return result


def test_approval_from_another_run_is_refused(
    harness: str, driver: Any, folder: Path, data: Any
) -> None:
    first = pause(harness, folder, "A-1001").result
    second = pause(harness, folder, "A-1002").result
    (p1,), (p2,) = first.pending_approvals, second.pending_approvals
    assert p1.tool_call_id == p2.tool_call_id  # same call id in both runs: only the token differs
    assert second.snapshot is not None

    replayed = Approval.for_pending(p1, "approve")
    with pytest.raises(ApprovalError, match="token does not match"):
        resume_demo(driver, folder, second.snapshot, [replayed])
    assert data.refund_count() == 0

    # The refused decision changed nothing: the right one still works, on its run only.
    result = resume_demo(driver, folder, second.snapshot, [Approval.for_pending(p2, "approve")])
    assert result.stop_reason == "answered"
    assert data.refund_count("A-1002") == 1
    assert data.refund_count("A-1001") == 0


def test_approval_for_other_arguments_is_refused(
    harness: str, driver: Any, folder: Path, data: Any
) -> None:
    result = pause(harness, folder).result
    (pending,) = result.pending_approvals
    assert result.snapshot is not None
    other_args = {**pending.arguments, "amount_cents": 1}
    forged = Approval(
        tool_call_id=pending.tool_call_id,
        decision="approve",
        token=token(folder, result.run_id, pending.tool_call_id, other_args),
    )
    with pytest.raises(ApprovalError, match="issued for other arguments"):
        resume_demo(driver, folder, result.snapshot, [forged])

    other_call = Approval(tool_call_id="call_9_9", decision="approve", token=pending.token)
    with pytest.raises(ApprovalError, match="no pending approval for call 'call_9_9'"):
        resume_demo(driver, folder, result.snapshot, [other_call])
    assert data.refund_count() == 0


def test_conflicting_second_decision_is_refused(
    harness: str, driver: Any, folder: Path, data: Any
) -> None:
    """The decision is stored before the write; a crash there leaves it recorded. The
    same decision then completes the write once; a different one is refused."""
    result = pause(harness, folder).result
    (pending,) = result.pending_approvals
    assert result.snapshot is not None

    def crash(_: dict[str, Any]) -> None:
        raise SimulatedCrash

    approve = Approval.for_pending(pending, "approve")
    with pytest.raises(SimulatedCrash):
        driver.resume(
            DemoModel(), demo_contract(folder), result.snapshot, [approve], checkpoint=crash
        )
    stored = driver.saved[-1]
    assert stored["decisions"][pending.tool_call_id]["decision"] == "approve"
    assert data.refund_count() == 0

    for other in (
        Approval.for_pending(pending, "reject"),
        Approval.for_pending(pending, "edit", arguments={**pending.arguments, "amount_cents": 5}),
    ):
        with pytest.raises(ApprovalError, match="already decided"):
            resume_demo(driver, folder, stored, [other])
    assert data.refund_count() == 0

    done = resume_demo(driver, folder, stored, [approve])
    assert done.stop_reason == "answered"
    assert data.refund_count("A-1001") == 1


def test_conflicting_decision_in_one_state(folder: Path) -> None:
    result = pause("offline", folder).result
    assert result.snapshot is not None
    state, _ = demo_contract(folder).restore(result.snapshot)
    (pending,) = state.view.pending_approvals()
    assert len(state.resume([Approval.for_pending(pending, "approve")])) == 1
    assert len(state.resume([Approval.for_pending(pending, "approve")])) == 1
    with pytest.raises(ApprovalError, match="already decided"):
        state.resume([Approval.for_pending(pending, "reject")])


# -- pitfall: the interrupted task re-runs from its start ------------------------------------------


@pytest.mark.parametrize("decision", ["approve", "edit"])
def test_no_side_effect_before_the_interrupt(
    decision: DecisionKind,
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    data: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LangGraph re-runs an interrupted task from its start on resume. The write's task
    is entered twice (pause, resume), yet the preview ran once at planning (in the
    model node, which does not re-run; an edit is previewed once more when the decision
    is checked, before anything is recorded) and the write once."""
    entered: list[str] = []
    original = lc_approvals.write_call

    def counting(state: Any, planned: Any) -> Any:
        entered.append(planned.call_id)
        return original(state, planned)

    monkeypatch.setattr(lc_approvals, "write_call", counting)  # where the middleware calls it
    args = {"order_id": "A-1001", "amount_cents": 500, "reason": "damaged"}
    model = FakeModel([tool_call("refund_order", args), "done"], stateless=True)
    contract = order_contract()

    paused = driver.run(model, contract, "refund 5 EUR")
    assert paused.stop_reason == "pending_approval"
    assert store.counts == {"lookup": 0, "preview": 1, "refund": 0, "verify": 0}
    assert len(model.calls) == 1
    assert paused.snapshot is not None

    edited = {**args, "amount_cents": 250} if decision == "edit" else None
    approvals = [
        Approval.for_pending(p, decision, arguments=edited) for p in paused.pending_approvals
    ]
    result = driver.resume(model, contract, paused.snapshot, approvals)
    assert result.stop_reason == "answered"
    previews = 2 if decision == "edit" else 1
    assert store.counts == {"lookup": 0, "preview": previews, "refund": 1, "verify": 2}
    assert len(model.calls) == 2  # the model step that asked for the write did not re-run
    (row,) = data.refund_rows()
    assert row["amount_cents"] == (250 if decision == "edit" else 500)
    assert entered == (["call_1_1", "call_1_1"] if harness == "langchain" else [])


# -- pitfall: budgets hold across resumes ----------------------------------------------------------


def test_budgets_hold_across_resumes(
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    data: Any,
    budget: Callable[..., Any],
    approve_every: Callable[[RunResult], list[Approval]],
) -> None:
    """A model that keeps asking for 1-cent refunds, each approved through a resume.

    LangChain's own run-scoped counters (``ToolCallLimitMiddleware``,
    ``ModelCallLimitMiddleware``) start from zero on every ``invoke``, and every resume
    is a new invoke. The contract restores its usage from the snapshot instead, so the
    run stops with ``max_tool_calls`` at the same call on both harnesses.
    """
    script: list[Any] = [
        tool_call("refund_order", {"order_id": "A-1001", "amount_cents": 1, "reason": f"r{i}"})
        for i in range(8)
    ]
    model = FakeModel([*script, "never answered"], stateless=True)
    contract = order_contract(budget=budget(max_tool_calls=3, max_model_steps=20))

    first = driver.run(model, contract, "refund in cents")
    result, resumes = driver.settle(model, contract, first, approve_every)

    assert resumes == 3
    assert result.stop_reason == "max_tool_calls"
    assert result.stop_detail == (
        "max_tool_calls of 3 exceeded (4 requested: 3 earlier + 1 in this batch)"
    )
    assert result.output is None
    assert [(c.status, c.error_kind) for c in result.tool_calls] == [
        ("success", None),
        ("success", None),
        ("success", None),
        ("error", "budget_exceeded"),
    ]
    assert result.usage.tool_calls == 3
    assert result.usage.model_steps == 4
    assert store.counts["refund"] == 3
    assert [r["reason"] for r in data.refund_rows()] == ["r0", "r1", "r2"]
    assert data.order("A-1001")["refunded_cents"] == 3


def test_locked_order_store_at_approval_writes_nothing(
    harness: str, folder: Path, data: Any, locked: Callable[[Path], Any]
) -> None:
    """``verify`` cannot tell whether the write happened: nothing is written, the outcome
    is reported unknown (``transient``), never guessed."""
    demo = pause(harness, folder)
    with locked(data.orders_db):
        result = approve_demo(demo.thread_id, "approve", folder=folder)

    record = result.tool_calls[-1]
    assert (record.name, record.error_kind, record.outcome, record.side_effects_possible) == (
        "refund_order",
        "transient",
        "unknown",
        True,
    )
    assert data.refund_count() == 0
    assert data.order("A-1001") == {"refunded_cents": 0, "status": "delivered"}


def test_deciding_one_of_two_writes_leaves_the_other_waiting(
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    data: Any,
) -> None:
    """Two writes in one batch: a resume with a decision for one runs that one and keeps
    waiting for the other (on LangChain the undecided call's interrupt is not resumed);
    a resume with no decision changes nothing."""
    batch = tool_calls(
        ("refund_order", {"order_id": "A-1001", "amount_cents": 100, "reason": "first"}),
        ("refund_order", {"order_id": "A-1002", "amount_cents": 200, "reason": "second"}),
    )
    model = FakeModel([batch, "done"], stateless=True)
    contract = order_contract()
    paused = driver.run(model, contract, "two refunds")
    first, second = paused.pending_approvals
    assert paused.snapshot is not None

    idle = driver.resume(model, contract, paused.snapshot, [])
    assert idle.stop_reason == "pending_approval"
    assert [p.tool_call_id for p in idle.pending_approvals] == [
        first.tool_call_id,
        second.tool_call_id,
    ]
    assert data.refund_count() == 0
    assert idle.snapshot is not None

    half = driver.resume(model, contract, idle.snapshot, [Approval.for_pending(first, "approve")])
    assert half.stop_reason == "pending_approval"
    assert [p.tool_call_id for p in half.pending_approvals] == [second.tool_call_id]
    assert [r["order_id"] for r in data.refund_rows()] == ["A-1001"]
    assert half.snapshot is not None

    done = driver.resume(model, contract, half.snapshot, [Approval.for_pending(second, "reject")])
    assert done.stop_reason == "answered"
    assert [(c.status, c.error_kind) for c in done.tool_calls] == [
        ("success", None),
        ("error", "rejected"),
    ]
    assert [r["order_id"] for r in data.refund_rows()] == ["A-1001"]
    assert store.counts["refund"] == 1
    assert len(model.calls) == 2
