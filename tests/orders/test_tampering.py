"""Stored state is input (issue 12): an edited run store or checkpoint is refused with
exit 8 and writes nothing, on every harness; a planted checkpoint row naming
``("os", "system", ...)`` is refused before anything is imported or called; the write
that runs is the one a human approved (the binding is recomputed, never read back), and
the decision records who decided.

Two layers are tried apart. An edit made without the data folder's key fails the seal.
An edit sealed with the key (what a bug, or the owner's own account, could do) gets past
the seal and is refused by the recomputed approval binding instead.
"""

from __future__ import annotations

import getpass
import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import ormsgpack
import pytest

from agent_contract.app.demo import DemoRun, start_demo
from agent_contract.errors import CheckpointError
from agent_contract.sealing import encrypt, folder_key, subkey
from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.sealed import CHECKPOINTS_CIPHER_LABEL, SealedSerializer, _tag

Invoke = Callable[..., tuple[int, str, str]]


def pause(harness: str, folder: Path, order: str = "A-1001", caller: str = "alice") -> DemoRun:
    demo = start_demo(f"refund order {order}", harness=harness, caller=caller, folder=folder)
    assert demo.result.stop_reason == "pending_approval"
    return demo


def edited(snapshot: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``snapshot`` with the pending refund's arguments changed everywhere they are kept
    (the stored token left as it was: only the key's holder could make a new one)."""
    copy = json.loads(json.dumps(snapshot))
    (item,) = copy["batch"]
    for arguments in (item["arguments"], item["call"]["arguments"], item["approval"]["arguments"]):
        arguments.update(changes)
    return copy


def raw_edit(data: Any, thread_id: str, snapshot: dict[str, Any]) -> None:
    """Rewrite the stored snapshot with plain SQL, as another local user could."""
    data.execute(
        data.runs_db,
        "UPDATE runs SET snapshot = ? WHERE thread_id = ?",
        json.dumps(snapshot, sort_keys=True),
        thread_id,
    )


# -- the attacks: the refund amount, another customer's order ---------------------------


ATTACKS = {
    "amount": ({"amount_cents": 100}, None),
    "other_customer": ({"order_id": "B-2001", "amount_cents": 5000}, "bob"),
}


def forged(snapshot: Any, attack: str) -> Any:
    """``snapshot`` with the paused write's arguments (and the caller) changed as
    ``attack`` says."""
    changes, caller = ATTACKS[attack]
    result = edited(snapshot, **changes)
    if caller is not None:
        result["caller"] = caller
    return result


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_edited_run_store_is_refused(
    attack: str, harness: str, store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    demo = pause(harness, folder)
    _, snapshot = data.runs()[demo.thread_id]
    raw_edit(data, demo.thread_id, forged(snapshot, attack))

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "failed authentication" in err
    assert data.refund_count() == 0
    assert data.order("A-1001") == {"refunded_cents": 0, "status": "delivered"}
    assert data.order("B-2001")["refunded_cents"] == 0


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_edit_sealed_with_the_key_is_refused_by_the_binding(
    attack: str, harness: str, store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    """Past the seal, the approval token is recomputed from the arguments and caller
    about to run, and the stored token (the one the human's approve carries) differs."""
    demo = pause(harness, folder)
    stored_harness, snapshot = data.runs()[demo.thread_id]
    resealed = json.dumps(forged(snapshot, attack), sort_keys=True)
    data.write_run(demo.thread_id, stored_harness, resealed)

    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "ApprovalError: the approval token does not match call" in err
    assert data.refund_count() == 0
    assert data.order("B-2001")["refunded_cents"] == 0


def test_an_edited_checkpoint_row_is_refused(folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause("langchain", folder)
    rows = data.query(
        data.checkpoints_db,
        "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ? "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        demo.thread_id,
    )
    ((checkpoint_id, blob),) = rows
    assert b"A-1001" not in bytes(blob)  # stored encrypted
    middle = len(blob) // 2
    changed = bytes(blob[:middle]) + bytes([blob[middle] ^ 1]) + bytes(blob[middle + 1 :])
    with closing(sqlite3.connect(data.checkpoints_db)) as conn, conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
            (changed, checkpoint_id),
        )
    code, out, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8, out + err
    assert "CheckpointError" in err
    assert data.refund_count() == 0


# -- a planted checkpoint row names os.system ---------------------------------------------------


def planted(marker: Path) -> bytes:
    """A msgpack value whose extension asks the deserializer to call
    ``os.system("touch <marker>")`` (LangGraph's constructor-with-one-argument code)."""
    call = ormsgpack.packb(("os", "system", f"touch {marker}"))
    return ormsgpack.packb({"v": 1, "channel_values": ormsgpack.Ext(0, call)})


def test_a_planted_row_is_refused_and_nothing_runs(
    folder: Path, data: Any, invoke: Invoke, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    demo = pause("langchain", folder)
    with closing(sqlite3.connect(data.checkpoints_db)) as conn, conn:
        conn.execute(
            "UPDATE checkpoints SET type = 'msgpack', checkpoint = ? WHERE thread_id = ?",
            (planted(marker), demo.thread_id),
        )
    for decision in ("reject", "approve"):
        code, out, err = invoke("approve", demo.thread_id, "--decision", decision)
        assert code == 8, out + err
        assert "CheckpointError" in err
    assert not marker.exists()
    assert data.refund_count() == 0


def test_the_allowlist_refuses_a_sealed_row_naming_another_type(tmp_path: Path) -> None:
    """Even a row that carries a valid tag (only the key's holder can make one) is
    scanned: a type outside the allowlist is a CheckpointError, and nothing is called."""
    marker = tmp_path / "pwned"
    key = folder_key(tmp_path / "data")
    serde = SealedSerializer(key)
    typ, _ = serde.dumps_typed({"ok": 1})
    assert typ == "sealed2:msgpack"
    payload = planted(marker)  # sealed the way dumps_typed seals its own values
    hidden = encrypt(subkey(key, CHECKPOINTS_CIPHER_LABEL), payload)
    sealed_blob = _tag(serde._key, typ, hidden) + hidden
    with pytest.raises(CheckpointError, match="outside the allowlist"):
        serde.loads_typed((typ, sealed_blob))
    # An authenticated row that is not encrypted (hmac1:) is scanned the same way.
    plain_blob = _tag(serde._key, "msgpack", payload) + payload
    with pytest.raises(CheckpointError, match="outside the allowlist"):
        serde.loads_typed(("hmac1:msgpack", plain_blob))
    assert not marker.exists()
    # Its own values load as they were.
    assert serde.loads_typed(serde.dumps_typed({"ok": 1})) == {"ok": 1}


def test_a_planted_row_read_through_the_checkpointer_is_refused(
    folder: Path, data: Any, tmp_path: Path
) -> None:
    """Reading the planted row through the binding's checkpointer (no paused seal in
    the way) fails as well: the row is not authenticated."""
    marker = tmp_path / "pwned"
    demo = pause("langchain", folder)
    with closing(sqlite3.connect(data.checkpoints_db)) as conn, conn:
        conn.execute(
            "UPDATE checkpoints SET type = 'msgpack', checkpoint = ? WHERE thread_id = ?",
            (planted(marker), demo.thread_id),
        )
    with (
        sqlite_checkpointer(data.checkpoints_db) as saver,
        pytest.raises(CheckpointError, match="not authenticated"),
    ):
        saver.get_tuple({"configurable": {"thread_id": demo.thread_id}})
    assert not marker.exists()


# -- an old, unauthenticated folder --------------------------------------------------------------


def test_an_old_unauthenticated_run_store_is_refused(
    store_kind: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    folder.mkdir(mode=0o700, parents=True)
    data.execute(
        "runs",
        "CREATE TABLE runs (thread_id TEXT PRIMARY KEY, harness TEXT NOT NULL, "
        "snapshot TEXT NOT NULL, updated_at REAL NOT NULL)",
    )
    data.execute("runs", "INSERT INTO runs VALUES ('run-old', 'offline', '{}', 0)")
    code, out, err = invoke("approve", "run-old", "--decision", "approve")
    assert code == 8, out + err
    assert "without authentication" in err
    assert "Traceback" not in err


# -- who decided ----------------------------------------------------------------------------------


def decided_by(trace_lines: str) -> list[str]:
    events = [json.loads(line) for line in trace_lines.splitlines() if line.startswith("{")]
    return [e.get("decided_by", "") for e in events if e.get("type") == "approval_decided"]


def test_the_decision_records_who_decided(harness: str, folder: Path, invoke: Invoke) -> None:
    first = pause(harness, folder, "A-1001")
    code, out, err = invoke("approve", first.thread_id, "--decision", "reject", "--trace")
    assert code == 0, err
    assert decided_by(out) == [getpass.getuser()]

    second = pause(harness, folder, "A-1002")
    code, out, err = invoke(
        "approve", second.thread_id, "--decision", "approve", "--as", "dana", "--trace"
    )
    assert code == 0, err
    assert decided_by(out) == ["dana"]
