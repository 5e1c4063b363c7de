"""Stored state cannot go back in time (issue 24, items 3 and 4).

A seal proves who wrote a row, not that it is the newest. A copy of a paused run's rows
taken before a human rejected its write, put back afterwards, carries valid seals; so
does another run's sealed checkpoint grafted under the paused one. Each is refused with
exit 8 and a message naming what was found, before anything runs; a refused resume does
not use up the decision.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agent_contract import tampering
from agent_contract.app.demo import DemoRun, start_demo
from agent_contract.runstore import RollbackError, RunStore
from agent_contract.sealing import folder_key
from agent_contract.stores import open_store
from agent_contract.tampering import Rows

Invoke = Callable[..., tuple[int, str, str]]

THREAD_TABLES = {
    **tampering.RUN_TABLES,
    "checkpoints.sqlite3": ("checkpoints", "writes"),
}
"""Where a run's own rows live (the run store; LangChain's checkpointer too)."""


def pause(harness: str, folder: Path, order: str = "A-1001") -> DemoRun:
    demo = start_demo(f"refund order {order}", harness=harness, caller="alice", folder=folder)
    assert demo.result.stop_reason == "pending_approval"
    return demo


def copy_rows(folder: Path, thread_id: str) -> Rows:
    """Every row of ``thread_id`` in the run's own tables (:data:`THREAD_TABLES`), in
    the folder's store (``$AGENT_CONTRACT_STORE``: see ``store_kind``)."""
    return tampering.copy_rows(open_store(folder), thread_id, THREAD_TABLES)


def put_back(folder: Path, thread_id: str, saved: Rows) -> None:
    """:func:`agent_contract.tampering.put_back` in the folder's store."""
    tampering.put_back(open_store(folder), thread_id, saved)


def stored(folder: Path, thread_id: str) -> tuple[str, dict[str, Any]]:
    store = open_store(folder)
    run = RunStore(store.database("runs"), key=folder_key(folder)).load_run(thread_id)
    return run.harness, run.snapshot


# -- item 3: a restored older row, a deleted newer row -------------------------------------------


def test_rows_put_back_after_a_reject_are_refused(
    harness: str, store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    """Save the paused run's rows, reject, put the rows back: ``approve`` is refused
    (exit 8, naming the older copy) and the rejected refund never runs."""
    demo = pause(harness, folder)
    saved = copy_rows(folder, demo.thread_id)
    code, out, err = invoke("approve", demo.thread_id, "--decision", "reject")
    assert code == 0, out + err
    put_back(folder, demo.thread_id, saved)

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "RollbackError" in err
    assert "older copy put back" in err
    assert ": finished, written" in err  # what the store recorded since
    assert "finished:" not in err  # the harness named plainly, not the stored column
    assert "Traceback" not in err
    assert data.refund_count() == 0
    assert data.order("A-1001") == {"refunded_cents": 0, "status": "delivered"}
    with pytest.raises(RollbackError) as caught:
        stored(folder, demo.thread_id)
    assert caught.value.found == "restored"
    assert caught.value.row_version < caught.value.newest_version
    code, out, err = invoke("resume", demo.thread_id)  # the same refusal on resume
    assert code == 8, out + err
    assert "older copy put back" in err
    assert data.refund_count() == 0


def test_a_deleted_version_record_is_refused(
    harness: str, store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    """The same, with the newer record deleted as well (the run store's record of the
    thread's newest version: the one that holds the reject): still refused."""
    demo = pause(harness, folder)
    saved = copy_rows(folder, demo.thread_id)
    code, out, err = invoke("approve", demo.thread_id, "--decision", "reject")
    assert code == 0, out + err
    put_back(folder, demo.thread_id, saved)
    if data.has_table(data.runs_db, "run_versions"):
        data.execute(data.runs_db, "DELETE FROM run_versions WHERE thread_id = ?", demo.thread_id)

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "a newer record was deleted or rolled back" in err
    assert data.refund_count() == 0


def test_a_decision_row_deleted_after_a_crash_is_refused(
    store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    """An approve that recorded a reject and stopped before the run went on leaves a
    newer row (the decision); putting the paused row back in its place is refused, and
    the rejected refund never runs."""
    demo = pause("offline", folder)
    saved = copy_rows(folder, demo.thread_id)
    store = RunStore(data.store.database("runs"), key=folder_key(folder))
    _, snapshot = store.load(demo.thread_id)
    (call_id,) = (item["call"]["id"] for item in snapshot["batch"])
    decided = {**snapshot, "decisions": {call_id: {"decision": "reject", "reason": ""}}}
    store.save(demo.thread_id, decided, harness="offline")  # what the approve recorded
    put_back(folder, demo.thread_id, saved)

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "older copy put back" in err
    assert "paused or in progress" in err
    assert data.refund_count() == 0


def test_a_stored_run_goes_on_after_every_save(tmp_path: Path) -> None:
    """The counter never refuses the newest row: each save is read back, and a row
    without a version (written before versions existed) is read while its thread has
    no version record."""
    store = RunStore(tmp_path / "runs.sqlite3")
    for n in range(3):
        store.save("t1", {"n": n})
        assert store.load("t1") == ("offline", {"n": n})
    store.finish("t1", {"stop_reason": "answered"}, harness="offline")
    assert store.load("t1")[0] == "finished:offline"
    assert store.forget(["t1"]) == 1

    store.save("t2", {"n": 0})
    with closing(sqlite3.connect(tmp_path / "runs.sqlite3")) as conn, conn:
        conn.execute("DELETE FROM run_versions")
    with pytest.raises(RollbackError, match="no version record"):
        store.load("t2")


def test_a_forged_version_record_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    store.save("t1", {"n": 0})
    store.save("t1", {"n": 1})
    with closing(sqlite3.connect(tmp_path / "runs.sqlite3")) as conn, conn:
        conn.execute("UPDATE run_versions SET version = 1 WHERE thread_id = 't1'")
    with pytest.raises(RollbackError, match=r"version record .* failed authentication"):
        store.load("t1")
    with pytest.raises(RollbackError):
        store.save("t1", {"n": 2})  # nothing is written on top of it


# -- item 4: another run's sealed checkpoint grafted under the paused one ------------------------


def newest_checkpoint(data: Any, thread_id: str) -> tuple[Any, ...]:
    ((row),) = data.query(
        data.checkpoints_db,
        "SELECT * FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        thread_id,
    )
    return tuple(row)


def graft(data: Any, paused: str, other: str, what: str) -> None:
    """Copy ``other``'s newest sealed checkpoint (``what="checkpoint"``: under
    ``paused``'s newest) or its pending writes (``what="writes"``: onto ``paused``'s
    newest checkpoint) into thread ``paused``."""
    mine = newest_checkpoint(data, paused)
    theirs = newest_checkpoint(data, other)
    writes = data.query(
        data.checkpoints_db,
        "SELECT * FROM writes WHERE thread_id = ? AND checkpoint_id = ?",
        other,
        theirs[2],
    )
    assert writes
    with closing(sqlite3.connect(data.checkpoints_db)) as conn, conn:
        if what == "checkpoint":
            # thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, ...
            row = (paused, theirs[1], theirs[2], mine[2], *theirs[4:])
            conn.execute(f"INSERT INTO checkpoints VALUES ({','.join('?' * len(row))})", row)  # noqa: S608
            for write in writes:
                conn.execute(
                    f"INSERT INTO writes VALUES ({','.join('?' * len(write))})",  # noqa: S608
                    (paused, *write[1:]),
                )
        else:
            for write in writes:
                task = f"{write[3]}-grafted"
                conn.execute(
                    f"INSERT INTO writes VALUES ({','.join('?' * len(write))})",  # noqa: S608
                    (paused, write[1], mine[2], task, *write[4:]),
                )


def ungraft(data: Any, paused: str, original: Rows) -> None:
    put_back(data.path, paused, {k: v for k, v in original.items() if "checkpoints" in k})


@pytest.mark.parametrize("what", ["checkpoint", "writes"])
def test_a_grafted_checkpoint_is_refused_and_the_decision_is_kept(
    what: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    """Refused before anything runs (exit 8, naming the graft); the run stays paused
    with no decision recorded, and once the grafted rows are gone the same approve
    goes through and refunds the paused order once."""
    demo = pause("langchain", folder, "A-1001")
    original = copy_rows(folder, demo.thread_id)
    other = pause("langchain", folder, "A-1002")
    graft(data, demo.thread_id, other.thread_id, what)

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "CheckpointError" in err
    assert ("newer than the one it paused on" if what == "checkpoint" else "pending write") in err
    assert "nothing was decided or run" in err
    assert data.refund_count() == 0
    harness, snapshot = stored(folder, demo.thread_id)
    assert harness == "langchain"  # still paused, the approval not used up
    assert snapshot["decisions"] == {}
    assert [p["call"]["id"] for p in snapshot["batch"]]

    ungraft(data, demo.thread_id, original)
    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 0, out + err
    assert [r["order_id"] for r in data.refund_rows()] == ["A-1001"]
