"""The run store and the order store on both stores (the ``store_url`` fixture: SQLite,
then PostgreSQL): seals, encryption, the rollback refusals, epoch precision, and
exactly-once writes under 8 concurrent writers, counted in rows.

Rows are tampered with by plain SQL through the store's own
:meth:`~agent_contract.stores.Database.transaction` (``?`` placeholders on both), as
someone with write access to the database but not the key would."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.builtin_tools.orders import OrderStore
from agent_contract.errors import CheckpointError
from agent_contract.runstore import RollbackError, RunStore
from agent_contract.sealing import store_key
from agent_contract.stores import Database, Store, open_store
from agent_contract.tools import ToolContext

WRITERS = 8


def _store(tmp_path: Path, url: str | None) -> Store:
    return open_store(tmp_path / "data", url)


def _sql(db: Database, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with db.transaction() as conn:
        cursor = conn.execute(sql, params)
        return list(cursor.fetchall()) if sql.lstrip().upper().startswith("SELECT") else []


def _runs(store: Store) -> RunStore:
    return RunStore(store.database("runs"), key=store_key(store))


def test_a_run_round_trips_sealed_and_encrypted(tmp_path: Path, store_url: str | None) -> None:
    """When it fails: a store loses a run, keeps a secret in the clear, or trusts a row
    edited without the key."""
    store = _store(tmp_path, store_url)
    runs = _runs(store)
    runs.save("t-1", {"step": 1, "note": "s3cr3t-value"}, secrets=["s3cr3t-value"])
    loaded = runs.load_run("t-1")
    assert loaded.snapshot == {"step": 1, "note": "s3cr3t-value"}
    assert loaded.secrets == ("s3cr3t-value",)
    ((text,),) = _sql(store.database("runs"), "SELECT snapshot FROM runs")
    assert "s3cr3t" not in text
    _sql(store.database("runs"), "UPDATE runs SET harness = ? WHERE thread_id = ?", "x", "t-1")
    with pytest.raises(CheckpointError, match="failed authentication"):
        runs.load_run("t-1")
    if store.dialect == "postgresql":
        assert not (tmp_path / "data" / "runs.sqlite3").exists()


def test_older_copies_and_forged_records_are_refused(tmp_path: Path, store_url: str | None) -> None:
    """An older row put back (``restored``), a deleted version record (``deleted``) and
    a version record edited without the key (``forged``) are refused on both stores.

    When it fails: a rejected write can come back by restoring a row."""
    store = _store(tmp_path, store_url)
    db = store.database("runs")
    runs = _runs(store)
    runs.save("t-1", {"step": 1})
    (old,) = _sql(db, "SELECT harness, snapshot, updated_at, mac FROM runs")
    runs.save("t-1", {"step": 2})
    _sql(db, "UPDATE runs SET harness = ?, snapshot = ?, updated_at = ?, mac = ?", *old)
    with pytest.raises(RollbackError) as restored:
        runs.load_run("t-1")
    assert (restored.value.found, restored.value.row_version) == ("restored", 1)
    assert restored.value.newest_version == 2

    runs.save("t-2", {"step": 1})
    _sql(db, "DELETE FROM run_versions WHERE thread_id = ?", "t-2")
    with pytest.raises(RollbackError) as deleted:
        runs.load_run("t-2")
    assert deleted.value.found == "deleted"

    runs.save("t-3", {"step": 1})
    _sql(db, "UPDATE run_versions SET version = 7 WHERE thread_id = ?", "t-3")
    with pytest.raises(RollbackError) as forged:
        runs.load_run("t-3")
    assert forged.value.found == "forged"
    with pytest.raises(RollbackError):
        runs.save("t-3", {"step": 2})  # nothing written over a forged record


def test_epoch_seconds_keep_their_fraction(tmp_path: Path, store_url: str | None) -> None:
    """``updated_at`` is stored to the sub-second (PostgreSQL's ``REAL`` would round
    today's epoch to 128 s steps)."""
    runs = _runs(_store(tmp_path, store_url))
    before = time.time()
    runs.save("t-1", {"step": 1})
    after = time.time()
    assert before <= runs.threads()["t-1"][1] <= after


def test_a_store_without_seals_is_refused(tmp_path: Path, store_url: str | None) -> None:
    """A ``runs`` table of another shape (an older agent-contract) is refused, on
    PostgreSQL through information_schema."""
    store = _store(tmp_path, store_url)
    _sql(store.database("runs"), "CREATE TABLE runs (thread_id TEXT PRIMARY KEY, harness TEXT)")
    with pytest.raises(CheckpointError, match="older agent-contract"):
        _runs(store)


def test_concurrent_saves_each_write_one_version(tmp_path: Path, store_url: str | None) -> None:
    """8 writers saving one thread at once: every save is one version, none lost or
    written twice (the record ends at 8 x 5), and the row is the newest one.

    When it fails: two saves read the same version and one overwrote the other."""
    store = _store(tmp_path, store_url)
    _runs(store)  # the tables, before the crowd

    def save(writer: int) -> None:
        runs = _runs(store)
        for step in range(5):
            runs.save("t-1", {"writer": writer, "step": step})

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(save, range(WRITERS)))
    ((version,),) = _sql(store.database("runs"), "SELECT version FROM run_versions")
    assert version == WRITERS * 5
    assert _runs(store).load_run("t-1").snapshot["step"] == 4


def _context(key: str) -> ToolContext:
    return ToolContext(
        run_id="run-1", tool_call_id=f"call-{key}", caller="alice", idempotency_key=key
    )


def test_concurrent_refunds_apply_each_key_once(tmp_path: Path, store_url: str | None) -> None:
    """8 writers refunding with one idempotency key apply it once (one row, the order
    refunded once; the others replay it); 8 writers with 8 keys apply 8 refunds.

    When it fails: a duplicate key refunds twice, or a concurrent refund is lost."""
    store = _store(tmp_path, store_url)
    orders = OrderStore(store.database("orders"))
    orders.ensure()

    def same(_: int) -> dict[str, Any]:
        return OrderStore(store.database("orders")).refund(_context("k-same"), "A-1001", 100, "r")

    with ThreadPoolExecutor(WRITERS) as pool:
        results = list(pool.map(same, range(WRITERS)))
    assert orders.refund_count() == 1
    assert sorted(r["replayed"] for r in results) == [False] + [True] * (WRITERS - 1)

    def distinct(writer: int) -> dict[str, Any]:
        store_ = OrderStore(store.database("orders"))
        return store_.refund(_context(f"k-{writer}"), "A-1002", 100, "r")

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(distinct, range(WRITERS)))
    assert orders.refund_count("A-1002") == WRITERS
    ((refunded,),) = _sql(
        store.database("orders"), "SELECT refunded_cents FROM orders WHERE order_id = ?", "A-1002"
    )
    assert refunded == WRITERS * 100


def test_one_key_on_two_orders_at_once_refunds_once(tmp_path: Path, store_url: str | None) -> None:
    """8 writers with one idempotency key on two orders: on PostgreSQL they hold two
    different advisory locks (``order:A-1001``, ``order:A-1002``), so only the primary
    key stops a second insert, whose unique violation is answered with the refund
    applied. One row, one order refunded once, every writer answered with that refund.

    When it fails: the violation surfaces as a store failure, or a key refunds twice."""
    store = _store(tmp_path, store_url)
    OrderStore(store.database("orders")).ensure()

    def refund(writer: int) -> dict[str, Any]:
        order = ("A-1001", "A-1002")[writer % 2]
        return OrderStore(store.database("orders")).refund(_context("k-1"), order, 100, "r")

    with ThreadPoolExecutor(WRITERS) as pool:
        results = list(pool.map(refund, range(WRITERS)))
    rows = _sql(store.database("orders"), "SELECT order_id, amount_cents FROM refunds")
    assert len(rows) == 1
    assert {r["order_id"] for r in results} == {rows[0][0]}
    assert [r["replayed"] for r in results].count(False) == 1
    ((total,),) = _sql(store.database("orders"), "SELECT SUM(refunded_cents) FROM orders")
    assert total == 100
