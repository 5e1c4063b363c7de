"""Existing tools adopted unchanged (issue 13, item 1): ``from_langchain_tool`` on ``@tool``
functions and ``BaseTool`` subclasses, ``ToolSpec.from_function`` on plain functions,
inside ``create_agent`` with a stock middleware before and after the contract, on
invoke, ainvoke and stream. The effect is declared by the caller; a write never runs
without approval."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain.tools import InjectedToolCallId, ToolRuntime, tool
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from agent_contract import ToolSpec
from agent_contract.approval import Approval
from agent_contract.errors import ConfigurationError
from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract_langchain.resuming import resume_graph
from agent_contract_langchain.tools import (
    current_tool_context,
    from_langchain_tool,
    to_langchain_tool,
)

from .conftest import Stack, budget

pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

APPLIED: list[tuple[str, str | None]] = []


@tool
def refund_order(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Refund an order."""
    context = current_tool_context.get()
    APPLIED.append((order_id, context.idempotency_key if context else None))
    return f"refunded {order_id} ({tool_call_id})"


@tool
def lookup(order_id: str, runtime: ToolRuntime) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped (thread state has {len(runtime.state['messages'])})"


class _Args(BaseModel):
    quantity: int = Field(ge=1, le=5)


class RestockTool(BaseTool):
    """A BaseTool subclass, as a team writes one."""

    name: str = "restock"
    description: str = "Restock an item."
    args_schema: type[BaseModel] = _Args

    def _run(self, quantity: int) -> str:
        return f"restocked {quantity}"


def test_the_effect_is_never_guessed() -> None:
    with pytest.raises(ConfigurationError, match="declare its effect"):
        from_langchain_tool(lookup)
    with pytest.raises(ConfigurationError, match="preview and verify"):
        from_langchain_tool(refund_order, effect="write")


def test_the_schema_is_the_model_visible_one() -> None:
    restock = from_langchain_tool(RestockTool(), effect="read")
    assert restock.name == "restock"
    assert restock.description == "Restock an item."
    assert restock.validate({"quantity": 3}) is None
    assert "maximum" in (restock.validate({"quantity": 9}) or "")
    assert "additionalProperties" in (restock.validate({"quantity": 1, "x": 1}) or "")
    assert restock.handler(quantity=2) == "restocked 2"  # the offline path invokes it
    write = from_langchain_tool(
        refund_order,
        effect="write",
        preview=lambda context, order_id: {"refund": order_id},
        verify=lambda context, order_id: None,
    )
    assert list(write.parameters["properties"]) == ["order_id"]


def _applied(context: Any, order_id: str) -> dict[str, Any] | None:
    """The team's read-back: the refund applied under this call's idempotency key."""
    found = [o for o, key in APPLIED if key == context.idempotency_key and o == order_id]
    return {"refunded": found[0]} if found else None


def _specs() -> list[ToolSpec]:
    def add(a: int, b: int = 1) -> int:
        """Add two integers."""
        return a + b

    return [
        from_langchain_tool(lookup, effect="read"),
        from_langchain_tool(RestockTool(), effect="read", timeout_seconds=5.0),
        ToolSpec.from_function(add, effect="read"),
        from_langchain_tool(
            refund_order,
            effect="write",
            preview=lambda context, order_id: {"refund": order_id},
            verify=_applied,
        ),
    ]


def test_adopted_tools_run_under_the_contract(position: str, mode: str, companion: Any) -> None:
    specs = _specs()
    add_tool = to_langchain_tool(specs[2])
    script = [
        tool_calls(
            ("lookup", {"order_id": "A-1"}, "c1"),
            ("restock", {"quantity": 2}, "c2"),
            ("add", {"a": 2}, "c3"),
            ("restock", {"quantity": 9}, "c4"),  # out of range: refused, not run
            ("restock", {"quantity": 1, "extra": True}, "c5"),  # extra field: refused
        ),
        "done",
    ]
    stack = Stack(
        FakeModel(script),
        Contract(specs, budget=budget()),
        [companion()],
        position,  # type: ignore[arg-type]
        tools=[lookup, RestockTool(), add_tool, refund_order],  # as the team wrote them
    )
    result = stack.run(mode=mode)
    assert result.stop_reason == "answered", result.stop_detail
    views = [(c.status, c.error_kind) for c in result.tool_calls]
    assert views == [("success", None)] * 3 + [("error", "invalid_arguments")] * 2
    contents = [m.content for m in result.messages if m.role == "tool"][:3]
    assert contents == ["order A-1: shipped (thread state has 2)", "restocked 2", "3"]


def test_an_adopted_write_runs_only_after_approval(
    position: str, mode: str, companion: Any
) -> None:
    APPLIED.clear()
    contract = Contract(_specs(), budget=budget())
    stack = Stack(
        FakeModel([tool_call("refund_order", {"order_id": "A-7"}, id="w1"), "done"]),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
        tools=[lookup, refund_order],
    )
    paused = stack.run(mode=mode)
    assert paused.stop_reason == "pending_approval"
    assert APPLIED == []  # not run on the model's word
    (pending,) = paused.pending_approvals
    done = resume_graph(
        stack.graph,
        contract,
        paused.snapshot or {},
        [Approval.for_pending(pending, "approve")],
        mode=mode,  # type: ignore[arg-type]
    )
    assert done.stop_reason == "answered", done.stop_detail
    assert [order for order, _ in APPLIED] == ["A-7"]
    assert APPLIED[0][1]  # the tool saw the call's idempotency key
    assert done.tool_calls[0].status == "success", done.tool_calls[0]
