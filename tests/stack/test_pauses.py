"""Pauses (issue 10, item 5): a HITL review and ``interrupt()`` inside a tool end the run
``interrupted`` (never a tool error or an invalid response) and resume through
``resume_graph``; the contract's write approval speaks HITL's request/decision shape."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage
from langgraph.types import Command, interrupt

from agent_contract.approval import Approval
from agent_contract.errors import ApprovalError
from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolSpec
from agent_contract_langchain.approvals import APPROVAL_INTERRUPT
from agent_contract_langchain.resuming import resume_graph
from agent_contract_langchain.run_config import contract_config

from .conftest import Ran, Stack, budget, echo_spec

QUESTION = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def asking(ran: Ran) -> ToolSpec:
    def ask(q: str) -> str:
        ran.calls.append(("ask:start", {"q": q}))
        answer = interrupt({"question": q})
        ran.calls.append(("ask:answer", {"answer": answer}))
        return f"the user said {answer}"

    return ToolSpec(name="ask_human", description="Ask the user.", parameters=QUESTION, handler=ask)


def interrupts(stack: Stack, run_id: str) -> list[Any]:
    return list(stack.graph.get_state({"configurable": {"thread_id": run_id}}).interrupts)


def test_interrupt_inside_a_tool_pauses_and_resumes(
    position: str, mode: str, companion: Any, ran: Ran
) -> None:
    contract = Contract([asking(ran)], budget=budget())
    stack = Stack(
        FakeModel([tool_call("ask_human", {"q": "colour?"}), "done"], stateless=True),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
    )
    paused = stack.run(mode=mode)
    assert (paused.stop_reason, paused.output) == ("interrupted", None)
    assert paused.tool_calls == ()  # not a tool error: the call is still open
    (pending,) = interrupts(stack, paused.run_id)
    assert pending.value == {"question": "colour?"}
    assert str(pending.id) in paused.stop_detail
    done = resume_graph(
        stack.graph, contract, paused.snapshot or {}, answers={pending.id: "blue"}, mode=mode
    )
    assert (done.stop_reason, done.output) == ("answered", "done")
    assert [m.content for m in done.messages if m.role == "tool"] == ["the user said blue"]
    assert done.tool_calls[0].status == "success"


def test_a_hitl_review_pauses_and_resumes(position: str, mode: str, ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    stack = Stack(
        FakeModel([tool_call("echo", {"a": 1}), "done"], stateless=True),
        contract,
        [HumanInTheLoopMiddleware(interrupt_on={"echo": True})],
        position,  # type: ignore[arg-type]
    )
    paused = stack.run(mode=mode)
    assert paused.stop_reason == "interrupted"
    assert ran.calls == []
    (pending,) = interrupts(stack, paused.run_id)
    decision = {"decisions": [{"type": "approve"}]}
    done = resume_graph(
        stack.graph, contract, paused.snapshot or {}, answers={pending.id: decision}, mode=mode
    )
    assert (done.stop_reason, ran.calls) == ("answered", [("echo", {"a": 1})])


def test_resuming_an_interrupt_that_is_not_pending_is_refused(ran: Ran) -> None:
    from agent_contract.errors import CheckpointError

    contract = Contract([asking(ran)], budget=budget())
    stack = Stack(FakeModel([tool_call("ask_human", {"q": "?"}), "done"]), contract)
    paused = stack.run()
    with pytest.raises(CheckpointError, match="no pending interrupt"):
        resume_graph(stack.graph, contract, paused.snapshot or {}, answers={"nope": 1})


# -- the contract's write approval in HITL's shape ---------------------------------------

AMOUNT = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}


def pay_spec(writes: list[int]) -> ToolSpec:
    def pay(context: Any, amount: int) -> dict[str, Any]:
        writes.append(amount)
        return {"paid": amount}

    return ToolSpec(
        name="pay",
        description="Pay.",
        parameters=AMOUNT,
        handler=pay,
        effect="write",
        preview=lambda context, amount: {"would_pay": amount},
        verify=lambda context, amount: {"paid": amount} if amount in writes else None,
    )


def test_the_approval_interrupt_has_hitls_request_shape_and_the_contracts_binding() -> None:
    writes: list[int] = []
    contract = Contract([pay_spec(writes)], budget=budget())
    stack = Stack(FakeModel([tool_call("pay", {"amount": 5}), "done"], stateless=True), contract)
    paused = stack.run()
    assert paused.stop_reason == "pending_approval"
    (pending,) = interrupts(stack, paused.run_id)
    value = pending.value
    assert value["action_requests"] == [
        {
            "name": "pay",
            "args": {"amount": 5},
            "description": value["action_requests"][0]["description"],
        }
    ]
    assert value["review_configs"] == [
        {"action_name": "pay", "allowed_decisions": ["approve", "edit", "reject"]}
    ]
    binding = value["agent_contract"]
    assert binding["type"] == APPROVAL_INTERRUPT
    assert binding["token"] == paused.pending_approvals[0].token
    assert binding["tool_call_id"] == paused.pending_approvals[0].tool_call_id


def direct_resume(decision: dict[str, Any]) -> tuple[Any, list[int], Any]:
    """Pause on the write, then resume the graph directly with a HITL-shaped decision."""
    writes: list[int] = []
    contract = Contract([pay_spec(writes)], budget=budget())
    stack = Stack(FakeModel([tool_call("pay", {"amount": 5}), "done"], stateless=True), contract)
    state = contract.start()
    config = contract_config(state, {"configurable": {"thread_id": state.view.run_id}})
    stack.graph.invoke({"messages": [HumanMessage("pay")]}, config)
    (pending,) = stack.graph.get_state(config).interrupts
    final = stack.graph.invoke(Command(resume={pending.id: {"decisions": [decision]}}), config)
    return final, writes, state


@pytest.mark.parametrize(
    ("decision", "writes"),
    [
        ({"type": "approve"}, [5]),
        ({"type": "edit", "edited_action": {"name": "pay", "args": {"amount": 3}}}, [3]),
        ({"type": "reject", "message": "no"}, []),
    ],
)
def test_a_hitl_shaped_decision_resumes_the_write(
    decision: dict[str, Any], writes: list[int]
) -> None:
    final, written, state = direct_resume(decision)
    assert written == writes
    assert state.view.halted is not None
    assert state.view.halted.reason == "answered"
    if decision["type"] == "reject":
        assert "rejected" in final["messages"][-2].content


@pytest.mark.parametrize(
    ("decision", "error"),
    [
        ({"type": "respond", "message": "hi"}, "not a decision on a write"),
        ({"type": "edit", "edited_action": {"name": "other", "args": {}}}, "must keep the tool"),
        ({"type": "approve", "agent_contract": {"token": "forged"}}, "token"),
    ],
)
def test_a_decision_that_does_not_fit_is_refused(decision: dict[str, Any], error: str) -> None:
    with pytest.raises(ApprovalError, match=error):
        direct_resume(decision)


def test_the_contracts_own_decision_form_still_resumes() -> None:
    writes: list[int] = []
    contract = Contract([pay_spec(writes)], budget=budget())
    stack = Stack(FakeModel([tool_call("pay", {"amount": 5}), "done"], stateless=True), contract)
    paused = stack.run()
    (pending,) = paused.pending_approvals
    done = resume_graph(
        stack.graph, contract, paused.snapshot or {}, [Approval.for_pending(pending, "approve")]
    )
    assert (done.stop_reason, writes) == ("answered", [5])
