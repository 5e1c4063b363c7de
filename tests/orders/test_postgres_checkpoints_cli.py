"""``agent-contract run`` / ``approve --harness langchain`` on a PostgreSQL store (issue
28): LangGraph's checkpoints (``PostgresSaver``, sealed) live in the database with the
runs and the orders, so a run paused in one data folder is approved from another that
holds only a copy of the key file, in another process; and a crash of the approving
process at each crash point (SIGKILL) is recovered by a fresh ``approve`` with exactly
one refund, on the offline harness too (its crash points on SQLite, with every signal:
``test_crash_points.py``).

The refunds are counted wherever the order store keeps them (the data folder's
``orders.sqlite3`` or the database's ``refunds`` table).
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_contract.app.demo import start_demo
from agent_contract.faults import CRASH_POINTS
from agent_contract.sealing import KEY_FILE
from agent_contract.stores import STORE_ENV

Invoke = Callable[..., tuple[int, str, str]]


def refunds(url: str, *folders: Path) -> int:
    """The refund rows of order A-1001 in the database and the folders' order files."""
    count = 0
    for folder in folders:
        if (folder / "orders.sqlite3").exists():
            with closing(sqlite3.connect(folder / "orders.sqlite3")) as conn:
                count += conn.execute(
                    "SELECT COUNT(*) FROM refunds WHERE order_id = 'A-1001'"
                ).fetchone()[0]
    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('refunds') IS NOT NULL").fetchone()[0]:
            count += conn.execute(
                "SELECT COUNT(*) FROM refunds WHERE order_id = 'A-1001'"
            ).fetchone()[0]
    return count


def sqlite_files(*folders: Path) -> list[str]:
    return sorted(str(p) for folder in folders for p in folder.rglob("*.sqlite3*"))


def test_a_run_paused_in_one_folder_is_approved_from_another(
    postgres_url: str,
    tmp_path: Path,
    invoke: Invoke,
    cli_call: Any,
    children: Callable[[Sequence[Any]], list[Any]],
) -> None:
    first, second = tmp_path / "A", tmp_path / "B"
    store = ("--store", postgres_url)
    code, out, err = invoke(
        "run", "refund order A-1001", "--caller", "alice", "--harness", "langchain",
        *store, "--data-dir", str(first), "--json",
    )  # fmt: skip
    assert code == 7, out + err  # paused for the refund's approval
    thread = json.loads(out)["thread_id"]
    with psycopg.connect(postgres_url) as conn:
        held = conn.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", (thread,)
        ).fetchone()[0]
    assert held > 0  # the graph's checkpoints are in the database
    second.mkdir(mode=0o700)
    shutil.copy2(first / KEY_FILE, second / KEY_FILE)  # the key file, nothing else
    approve = ("approve", thread, "--decision", "approve", *store, "--json")
    (approved,) = children([cli_call(approve, second)])  # another process, another folder
    assert approved.returncode == 0, approved.stderr[-2000:]
    assert json.loads(approved.stdout)["stop_reason"] == "answered"
    assert refunds(postgres_url, first, second) == 1
    (again,) = children([cli_call(approve, second)])
    assert again.returncode != 0 or "already" in again.stdout + again.stderr
    assert refunds(postgres_url, first, second) == 1  # a second approve applies nothing
    assert sqlite_files(first, second) == []  # no SQLite file written anywhere
    assert sorted(p.name for p in second.iterdir()) == [KEY_FILE]


@pytest.mark.parametrize("harness", ["offline", "langchain"])
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_crash_of_the_approving_process_is_recovered_once(
    point: str,
    harness: str,
    postgres_url: str,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    invoke: Invoke,
    cli_call: Any,
    children: Callable[[Sequence[Any]], list[Any]],
) -> None:
    monkeypatch.setenv(STORE_ENV, postgres_url)  # this process and its children
    demo = start_demo("refund order A-1001", harness=harness, caller="alice", folder=folder)
    assert demo.result.stop_reason == "pending_approval"
    approve = ("approve", demo.thread_id, "--decision", "approve", "--json")
    (killed,) = children([cli_call(approve, folder, point)])
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    expected = {"after_approval": 0, "after_write": 1, "before_finish_record": 1}[point]
    assert refunds(postgres_url, folder) == expected
    code, _out, err = invoke(
        "approve", demo.thread_id, "--decision", "reject", "--data-dir", str(folder)
    )
    assert code == 8, err  # the stored decision binds the call
    assert "already decided (approve)" in err
    code, out, err = invoke(*approve, "--data-dir", str(folder))
    assert code == 0, err
    report = json.loads(out)
    assert report["stop_reason"] == "answered"
    assert [(c["name"], c["status"]) for c in report["tool_calls"]] == [
        ("lookup_order", "success"),
        ("refund_order", "success"),
    ]
    assert refunds(postgres_url, folder) == 1
    if harness == "langchain":
        with psycopg.connect(postgres_url) as conn:  # the finished run's checkpoints are gone
            left = conn.execute(
                "SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", (demo.thread_id,)
            ).fetchone()[0]
        assert left == 0
    assert sqlite_files(folder) == []  # runs, orders and checkpoints all in the database
