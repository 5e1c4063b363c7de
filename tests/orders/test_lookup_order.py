"""``lookup_order`` on both harnesses: success, identity, existence leaks, malformed ids,
unknown tools, repeats, budgets, application-only fields, size limits, a locked store.

Runs go through the demo agent (``start_demo``) or a scripted FakeModel over the order
tools, each with its own data folder under ``tmp_path``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.builtin_tools.orders import OrderStore, lookup_order_tool
from agent_contract.app.demo import start_demo
from agent_contract.errors import InvalidArgumentsError, UnauthorizedError
from agent_contract.messages import ToolCall
from agent_contract.results import TRUNCATION_MARKER
from agent_contract.runtime import Contract, RunResult
from agent_contract.testing import FakeModel, Reply, tool_call
from agent_contract.tools import ToolContext
from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.harness import build_agent

VISIBLE_FIELDS = {
    "order_id",
    "status",
    "placed_on",
    "items",
    "total",
    "refunded",
    "refundable",
    "refundable_cents",
}
PRIVATE_FIELDS = {"owner", "email", "payment_ref", "note"}
# Values of A-1001's application-only fields (see SAMPLE_ORDERS); none may reach the model.
PRIVATE_VALUES = ("alice@example.com", "pay_7Q2X9", "VIP customer")


def tool_messages(result: RunResult) -> list[Any]:
    return [m for m in result.messages if m.role == "tool"]


def error_of(result: RunResult) -> dict[str, Any]:
    (message,) = tool_messages(result)
    assert message.status == "error"
    body: dict[str, Any] = json.loads(message.content)
    return body


# -- success, identity -------------------------------------------------------------------------


def test_lookup_success(harness: str, folder: Path) -> None:
    result = start_demo(
        "look up order A-1001", harness=harness, caller="alice", folder=folder
    ).result

    assert result.stop_reason == "answered"
    assert [(c.name, c.status) for c in result.tool_calls] == [("lookup_order", "success")]
    (message,) = tool_messages(result)
    assert message.tool_call_id == result.tool_calls[0].id
    order = json.loads(message.content)
    assert set(order) == VISIBLE_FIELDS
    assert order["order_id"] == "A-1001"
    assert order["total"] == "129.00 EUR"
    assert order["items"] == [{"name": "Espresso grinder", "quantity": 1}]
    assert result.output == (
        "Order A-1001 is delivered (placed 2026-10-02, total 129.00 EUR, refundable 129.00 EUR)."
    )
    assert (folder / "orders.sqlite3").is_file()  # a real SQLite store, created on first use


def test_no_caller_is_unauthorized(harness: str, folder: Path) -> None:
    """The caller comes from the run's context only; a run without one is refused as
    ``unauthorized`` (``--caller`` missing on the CLI) and no order is read."""
    result = start_demo("look up order A-1001", harness=harness, caller=None, folder=folder).result

    assert result.stop_reason == "answered"
    assert [c.error_kind for c in result.tool_calls] == ["unauthorized"]
    assert error_of(result)["error"] == "unauthorized"
    assert "order tools need one" in (result.output or "")
    assert not any(value in result.trace.to_jsonl() for value in PRIVATE_VALUES)


def test_identity_is_not_an_argument(store: OrderStore) -> None:
    """No order tool takes a user argument: a model that names one is refused by the schema."""
    problem = lookup_order_tool(store).validate({"order_id": "B-2001", "user": "bob"})
    assert problem is not None
    assert "additional" in problem.lower()


def test_foreign_order_is_indistinguishable_from_a_missing_one(harness: str, folder: Path) -> None:
    """Another user's order is ``not_found`` with the same message as a missing order.

    Existence-leak reasoning: if alice asked for bob's ``B-2001`` and got
    ``unauthorized`` while a missing ``Z-9999`` got ``not_found``, the difference would
    tell a prober which order ids exist (and so how many orders there are, which ids
    are live, where to aim next). So the two answers must be identical except for the
    id the caller typed herself: same kind, same message template, same outcome
    fields. ``unauthorized`` is kept for a run without an identity, which reveals
    nothing about any order.
    """
    foreign = start_demo("look up order B-2001", harness=harness, caller="alice", folder=folder)
    missing = start_demo("look up order Z-9999", harness=harness, caller="alice", folder=folder)
    foreign_error, missing_error = error_of(foreign.result), error_of(missing.result)

    assert foreign_error["error"] == missing_error["error"] == "not_found"
    assert foreign_error["message"] == "order B-2001 not found"
    assert foreign_error["message"].replace("B-2001", "<id>") == missing_error["message"].replace(
        "Z-9999", "<id>"
    )
    assert {k: v for k, v in foreign_error.items() if k != "message"} == {
        k: v for k, v in missing_error.items() if k != "message"
    }
    assert foreign.result.output == (missing.result.output or "").replace("Z-9999", "B-2001")

    # B-2001 does exist: its owner sees it (the test above is not comparing two misses).
    own = start_demo("look up order B-2001", harness=harness, caller="bob", folder=folder).result
    assert [c.status for c in own.tool_calls] == ["success"]
    assert "bob@example.com" not in own.trace.to_jsonl()


# -- malformed ids ------------------------------------------------------------------------------

MALFORMED_IDS = (
    "a-1001",
    "A-100",
    "A-10011",
    "AA-1001",
    "A_1001",
    "A-1001' OR '1'='1",
    "A-1001\n",
    "Ａ-1001",  # noqa: RUF001 - a fullwidth letter, on purpose
    "",
    1001,
    None,
    ["A-1001"],
)


@pytest.mark.parametrize("order_id", MALFORMED_IDS, ids=repr)
def test_malformed_id_is_refused_before_any_lookup(
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    folder: Path,
    order_id: Any,
) -> None:
    model = FakeModel([tool_call("lookup_order", {"order_id": order_id}), "done"], stateless=True)
    result = driver.run(model, order_contract(), "look up my order")

    assert result.stop_reason == "answered"
    assert [c.error_kind for c in result.tool_calls] == ["invalid_arguments"]
    body = error_of(result)
    assert body["error"] == "invalid_arguments"
    assert body["outcome"] == "not_run"
    assert store.counts["lookup"] == 0  # the handler never ran
    assert not (folder / "orders.sqlite3").exists()  # nothing was opened, let alone queried


def test_handler_checks_the_id_again(folder: Path) -> None:
    """Defence in depth: called directly, the handler refuses a bad id before touching
    the database (the file is not even created)."""
    store = OrderStore(folder / "orders.sqlite3")
    context = ToolContext(run_id="r", tool_call_id="c", caller="alice")
    with pytest.raises(InvalidArgumentsError, match="must look like A-1001"):
        store.lookup(context, "A-1001; DROP TABLE orders")
    with pytest.raises(UnauthorizedError):
        store.lookup(ToolContext(run_id="r", tool_call_id="c"), "A-1001")
    assert not (folder / "orders.sqlite3").exists()


def test_malformed_id_through_the_demo(harness: str, folder: Path) -> None:
    result = start_demo("look up order a-1001", harness=harness, caller="alice", folder=folder)
    assert [c.error_kind for c in result.result.tool_calls] == ["invalid_arguments"]
    assert not (folder / "orders.sqlite3").exists()


# -- unknown tool, repeated call, exhausted budget -------------------------------------------------


def test_unknown_tool(
    harness: str, driver: Any, store: Any, order_contract: Callable[..., Contract], folder: Path
) -> None:
    model = FakeModel([tool_call("delete_order", {"order_id": "A-1001"}), "sorry"], stateless=True)
    result = driver.run(model, order_contract(), "delete my order")

    assert result.stop_reason == "answered"
    assert [(c.name, c.error_kind) for c in result.tool_calls] == [("delete_order", "unknown_tool")]
    body = error_of(result)
    assert body["error"] == "unknown_tool"
    assert "lookup_order" in body["message"]
    assert "refund_order" in body["message"]
    assert store.counts == {"lookup": 0, "preview": 0, "refund": 0, "verify": 0}
    assert not (folder / "orders.sqlite3").exists()


def test_repeated_call(
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    budget: Callable[..., Any],
) -> None:
    same = tool_call("lookup_order", {"order_id": "A-1001"})
    model = FakeModel([same, same, same, "never"], stateless=True)
    result = driver.run(model, order_contract(budget=budget(max_identical_calls=2)), "loop")

    assert result.stop_reason == "repeated_call"
    assert result.output is None
    assert [c.error_kind for c in result.tool_calls] == [None, None, "repeated_call"]
    assert store.counts["lookup"] == 2  # the third identical call never ran
    assert tool_messages(result)[-1].tool_call_id == result.tool_calls[-1].id


def test_exhausted_budget_refuses_the_write_before_preview(
    harness: str, folder: Path, data: Any, budget: Callable[..., Any]
) -> None:
    result = start_demo(
        "refund order A-1001",
        harness=harness,
        caller="alice",
        folder=folder,
        budget=budget(max_tool_calls=1),
    ).result

    assert result.stop_reason == "max_tool_calls"
    assert result.output is None
    assert [(c.name, c.status, c.error_kind) for c in result.tool_calls] == [
        ("lookup_order", "success", None),
        ("refund_order", "error", "budget_exceeded"),
    ]
    assert result.pending_approvals == ()
    assert data.refund_count() == 0
    assert data.runs() == {}  # nothing paused, nothing to approve
    assert "approval_requested" not in {e["type"] for e in result.trace.events}


# -- application-only fields ----------------------------------------------------------------------


def test_private_fields_are_artifact_only_offline(store: OrderStore) -> None:
    contract = Contract([lookup_order_tool(store)])
    state = contract.start(caller="alice")
    plan = state.plan_tool_calls(
        [ToolCall(id="c1", name="lookup_order", arguments={"order_id": "A-1001"})]
    )
    (planned,) = plan.runnable
    result = state.execute(planned)

    assert result.ok
    assert set(json.loads(result.content)) == VISIBLE_FIELDS
    assert result.artifact == {
        "owner": "alice",
        "email": "alice@example.com",
        "payment_ref": "pay_7Q2X9",
        "note": "VIP customer",
    }
    trace = state.view.trace.to_jsonl()
    for value in PRIVATE_VALUES:
        assert value not in result.content
        assert value not in trace


def test_private_fields_stay_out_of_content_and_trace(
    harness: str, driver: Any, order_contract: Callable[..., Contract], folder: Path
) -> None:
    model = FakeModel([tool_call("lookup_order", {"order_id": "A-1001"}), "ok"], stateless=True)
    contract = order_contract()
    result = driver.run(model, contract, "look up A-1001")

    assert result.stop_reason == "answered"
    seen_by_model = "\n".join(m.content for m in model.last_messages())
    public = (
        seen_by_model
        + result.trace.to_jsonl()
        + json.dumps(result.to_dict())
        + "".join(m.content for m in result.messages)
    )
    for value in PRIVATE_VALUES:
        assert value not in public
    for name in PRIVATE_FIELDS:
        assert f'"{name}"' not in public

    # The application reads the private fields from the run's artifacts, in memory.
    ((call_id, artifact),) = result.artifacts.items()
    assert artifact["email"] == "alice@example.com"
    assert artifact["payment_ref"] == "pay_7Q2X9"
    if harness == "langchain":
        # The stored graph state holds what the model saw, never the artifact.
        with sqlite_checkpointer(folder / "checkpoints.sqlite3") as saver:
            graph = build_agent(model, contract, checkpointer=saver)
            state = graph.get_state({"configurable": {"thread_id": result.run_id}})
        (message,) = [m for m in state.values["messages"] if m.type == "tool"]
        assert message.tool_call_id == call_id
        stored = json.dumps(message.artifact, default=repr) + str(message.content)
        for value in PRIVATE_VALUES:
            assert value not in stored


# -- size limits --------------------------------------------------------------------------------


def add_big_order(path: Path, order_id: str = "A-9999", items: int = 80) -> None:
    OrderStore(path).refund_count()  # create the store with its sample data
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "INSERT INTO orders (order_id, owner, email, status, placed_on, items, total_cents, "
            "currency, payment_ref, note) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                order_id,
                "alice",
                "alice@example.com",
                "delivered",
                "2026-11-30",
                json.dumps([[f"Sample item number {n}", n] for n in range(items)]),
                99900,
                "EUR",
                "pay_BIG01",
                "bulk order",
            ),
        )


def test_result_size_limit_truncates_with_a_marker(
    harness: str, driver: Any, order_contract: Callable[..., Contract], folder: Path
) -> None:
    add_big_order(folder / "orders.sqlite3")
    model = FakeModel([tool_call("lookup_order", {"order_id": "A-9999"}), "ok"], stateless=True)
    result = driver.run(model, order_contract(), "look up A-9999")

    (message,) = tool_messages(result)
    assert message.status == "success"
    assert len(message.content) <= 1_500
    assert TRUNCATION_MARKER.split("{")[0] in message.content
    total = int(message.content.rsplit(" of ", 1)[1].split(" ")[0])
    assert total > 1_500
    events = [e for e in result.trace.events if e["type"] == "tool_result"]
    assert events[-1]["truncated"] is True
    assert "pay_BIG01" not in message.content


def test_result_size_limit_can_refuse(
    harness: str, driver: Any, store: OrderStore, folder: Path
) -> None:
    add_big_order(folder / "orders.sqlite3")
    strict = replace(lookup_order_tool(store), on_oversize="error")
    model = FakeModel([tool_call("lookup_order", {"order_id": "A-9999"}), "ok"], stateless=True)
    result = driver.run(model, Contract([strict]), "look up A-9999")

    body = error_of(result)
    assert body["error"] == "result_too_large"
    assert "exceeds max_result_chars of 1500" in body["message"]
    assert "Sample item" not in body["message"]


def test_trace_byte_limit_stops_the_run(
    harness: str,
    driver: Any,
    order_contract: Callable[..., Contract],
    budget: Callable[..., Any],
) -> None:
    script: list[Reply] = [
        tool_call("lookup_order", {"order_id": "A-1001"}),
        tool_call("lookup_order", {"order_id": "A-1002"}),
        "never reached",
    ]
    # The trace holds about 650 bytes before the lookup and about 1,300 after its result:
    # the check before the second model call stops the run.
    contract = order_contract(budget=budget(max_trace_bytes=1_000))
    result = driver.run(FakeModel(script, stateless=True), contract, "look up both")

    assert result.stop_reason == "max_trace_bytes"
    assert result.output is None
    assert "max_trace_bytes of 1000" in result.stop_detail
    assert result.trajectory() == ["lookup_order"]


# -- a locked store --------------------------------------------------------------------------------


def test_locked_order_store_is_transient(
    harness: str,
    driver: Any,
    store: Any,
    order_contract: Callable[..., Contract],
    folder: Path,
    locked: Callable[[Path], Any],
) -> None:
    store.refund_count()  # the store exists and is ready before it is locked
    model = FakeModel([tool_call("lookup_order", {"order_id": "A-1001"}), "later"], stateless=True)
    with locked(folder / "orders.sqlite3"):
        result = driver.run(model, order_contract(), "look up A-1001")

    body = error_of(result)
    assert body["error"] == "transient"
    assert "retry later" in body["message"]
    assert [c.error_kind for c in result.tool_calls] == ["transient"]
    assert result.stop_reason == "answered"


def test_locked_order_store_on_first_use_is_transient(
    harness: str, folder: Path, locked: Callable[[Path], Any]
) -> None:
    OrderStore(folder / "orders.sqlite3").refund_count()
    with locked(folder / "orders.sqlite3"):
        result = start_demo("look up order A-1001", harness=harness, caller="alice", folder=folder)
    assert [c.error_kind for c in result.result.tool_calls] == ["transient"]
