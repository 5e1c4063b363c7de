"""The contract's middleware in a production-style agent with a durable checkpointer.

The team's ``create_agent`` call is kept as it is: their ``@tool`` tools (adopted
unchanged with ``from_langchain_tool``, effects declared), their stock middleware
inside ``ContractMiddleware(contract).around(...)``, their ``context_schema``, and a
LangGraph ``SqliteSaver`` on disk. A refund (a write) pauses the run for approval; a
second process (the approval endpoint) approves it and the run finishes from the
checkpoint, the refund applied once under its idempotency key and read back. The model
is scripted so the example needs no key (in production: ``init_chat_model(...)``).

Usage::

    python examples/production_agent.py run DIR       # pauses: prints what waits
    python examples/production_agent.py approve DIR   # another process approves

Output (``run``, then ``approve``)::

    stop: pending_approval
    waiting: refund_order {"order_id": "A-1001"} preview {"order_id": "A-1001", "refund": 42.0}
    stop: answered
    answer: Refunded order A-1001.
    tool calls: lookup_order success, refund_order success
    refunds applied: 1

Exit codes: 0 done (or paused, for ``run``); 2 usage (``DIR`` is a file, or cannot be
created); 8 a stored run or decision that does not fit, or ``approve`` on a ``DIR`` that
does not exist.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, PIIMiddleware
from langchain.tools import ToolRuntime, tool
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract import Approval, Budget, Contract
from agent_contract.errors import AgentContractError
from agent_contract.messages import Message
from agent_contract.runstore import RunStore
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import (
    ContractChatModel,
    ContractMiddleware,
    from_langchain_tool,
    resume_graph,
    run_graph,
)
from agent_contract_langchain.tools import current_tool_context

RUN_ID = "refund-A-1001"
ORDERS = {"A-1001": {"customer": "c-1", "total": 42.0}}


@dataclass
class Shop:
    """The graph's runtime context: who is asking."""

    customer_id: str


def _refunds(folder: Path) -> dict[str, Any]:
    path = folder / "refunds.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def tools_for(folder: Path) -> tuple[Any, Any]:
    """The team's tools, written as LangChain's docs teach them."""

    @tool
    def lookup_order(order_id: str, runtime: ToolRuntime[Shop]) -> str:
        """Look up one of the customer's orders."""
        order = ORDERS.get(order_id)
        if order is None or order["customer"] != runtime.context.customer_id:
            return f"no order {order_id}"
        return f"order {order_id}: total {order['total']}"

    @tool
    def refund_order(order_id: str) -> str:
        """Refund an order in full."""
        context = current_tool_context.get()  # the call's idempotency key, under the contract
        key = context.idempotency_key if context else order_id
        refunds = _refunds(folder)
        refunds.setdefault(str(key), {"order_id": order_id, "amount": ORDERS[order_id]["total"]})
        (folder / "refunds.json").write_text(json.dumps(refunds), encoding="utf-8")
        return f"refunded {order_id}"

    return lookup_order, refund_order


def build(folder: Path) -> tuple[Any, Contract]:
    """The team's agent and contract, with the checkpoints in ``folder``."""
    lookup_order, refund_order = tools_for(folder)

    def preview(context: Any, order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "refund": ORDERS[order_id]["total"]}

    def verify(context: Any, order_id: str) -> dict[str, Any] | None:
        return _refunds(folder).get(str(context.idempotency_key))

    contract = Contract(
        [
            from_langchain_tool(lookup_order, effect="read", timeout_seconds=5.0),
            from_langchain_tool(refund_order, effect="write", preview=preview, verify=verify),
        ],
        budget=Budget(max_model_steps=6, max_tool_calls=4),
    )
    model = FakeModel(
        [
            tool_call("lookup_order", {"order_id": "A-1001"}),
            tool_call("refund_order", {"order_id": "A-1001"}),
            "Refunded order A-1001.",
        ],
        stateless=True,  # a resumed run continues the script in another process
    )
    connection = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
    graph = create_agent(
        ContractChatModel(model=model),
        tools=[lookup_order, refund_order],
        system_prompt="You are the shop's refunds agent.",
        middleware=ContractMiddleware(contract).around(
            ModelCallLimitMiddleware(run_limit=10, exit_behavior="end"),
            PIIMiddleware("email", strategy="mask", apply_to_input=True),
        ),
        context_schema=Shop,
        checkpointer=SqliteSaver(connection),
    )
    return graph, contract


def report(result: Any) -> None:
    """Print how the run ended."""
    print(f"stop: {result.stop_reason}")
    for pending in result.pending_approvals:
        print(
            f"waiting: {pending.name} {json.dumps(pending.arguments, sort_keys=True)} preview "
            f"{json.dumps(pending.preview, sort_keys=True)}"
        )
    if result.stop_reason == "answered":
        print(f"answer: {result.output}")
        calls = ", ".join(f"{c.name} {c.status}" for c in result.tool_calls)
        print(f"tool calls: {calls}")


def _folder_problem(folder: Path, *, create: bool) -> tuple[int, str] | None:
    """Why ``folder`` cannot hold the run, with the exit code (``None``: it can).
    ``run`` creates it (``0700``); ``approve`` needs the one ``run`` made."""
    if folder.exists() and not folder.is_dir():
        return 2, f"{str(folder)!r} is not a folder"
    if not create:
        return (
            None if folder.is_dir() else (8, f"{str(folder)!r} does not exist: nothing to approve")
        )
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:  # a part of the path is a file, or no permission
        return 2, f"cannot create the folder {str(folder)!r}: {exc.strerror or exc}"
    return None


def main(argv: list[str]) -> int:
    """``run DIR`` or ``approve DIR``; returns the exit code."""
    if len(argv) != 2 or argv[0] not in ("run", "approve"):
        print("usage: python examples/production_agent.py run|approve DIR", file=sys.stderr)
        return 2
    folder = Path(argv[1])
    problem = _folder_problem(folder, create=argv[0] == "run")
    if problem is not None:
        print(f"error: {problem[1]}", file=sys.stderr)
        return problem[0]
    graph, contract = build(folder)
    store = RunStore(folder / "runs.sqlite3")  # the contract's snapshots (budgets, ledger)
    config = {"configurable": {"thread_id": RUN_ID}}
    try:
        if argv[0] == "run":
            result = run_graph(
                graph,
                contract.start(run_id=RUN_ID),
                [Message(role="user", content="Please refund order A-1001.")],
                config=config,
                system="You are the shop's refunds agent.",
                graph_context=Shop(customer_id="c-1"),
            )
        else:
            _, snapshot = store.load(RUN_ID)
            pending = contract.restore(snapshot)[0].view.pending_approvals()
            decisions = [Approval.for_pending(p, "approve", decided_by="ops") for p in pending]
            result = resume_graph(
                graph,
                contract,
                snapshot,
                decisions,
                system="You are the shop's refunds agent.",
                graph_context=Shop(customer_id="c-1"),
            )
    except AgentContractError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 8
    if result.snapshot is not None:
        store.save(RUN_ID, result.snapshot, harness="langchain")
    report(result)
    if result.stop_reason == "answered":
        print(f"refunds applied: {len(_refunds(folder))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
