"""The command line across processes and its failure modes: ``run`` pauses a refund
(exit 7) and prints how to decide; ``approve`` resumes it in a new process; stores that
cannot be read (corrupt, locked, missing) give ``CheckpointError`` and exit 8 and never
a fresh start; a finished run cannot be approved again (exit 8).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.demo import DemoRun, start_demo

HARNESSES = ("offline", "langchain", "pydantic-ai")
EDIT = {"order_id": "A-1002", "amount_cents": 1000, "reason": "partial"}
Invoke = Callable[..., tuple[int, str, str]]


# -- two processes: run in one, approve in another ------------------------------------------------


@pytest.mark.parametrize("harness_name", HARNESSES)
def test_run_then_edit_in_two_processes(child_runs: Any, harness_name: str) -> None:
    """``run`` in one child process (exit 7), ``approve --decision edit`` in another
    (started by the ``child_runs`` session fixture in conftest)."""
    flow = child_runs.flows[harness_name]
    run, report = flow.run, flow.report
    assert run.returncode == 7, run.stderr[-2000:]
    assert report["stop_reason"] == "pending_approval"
    assert report["harness"].startswith(harness_name)
    (pending,) = report["pending_approvals"]
    assert pending["name"] == "refund_order"
    assert pending["preview"]["refund"] == "44.97 EUR"
    assert "arguments" not in pending  # the summary leaves raw arguments out
    assert flow.rows_after_run == 0

    approve = flow.approve
    assert approve.returncode == 0, approve.stderr[-2000:]
    assert "answer: Refunded 1000 cents on order A-1002" in approve.stdout
    assert "stop reason: answered" in approve.stdout
    (row,) = flow.rows
    assert (row["order_id"], row["amount_cents"], row["reason"]) == ("A-1002", 1000, "partial")
    assert row["run_id"] == report["thread_id"]


# -- in this process: output, decisions, exit codes ------------------------------------------------


def test_run_prints_how_to_decide(harness: str, folder: Path, invoke: Invoke) -> None:
    code, out, _ = invoke(
        "run",
        "refund order A-1001",
        "--caller",
        "alice",
        "--harness",
        harness,
        "--data-dir",
        str(folder),
    )
    assert code == 7
    assert "stop reason: pending_approval" in out
    assert "pending approval: refund_order [call_2_1]" in out
    assert '"refund": "129.00 EUR"' in out
    assert (
        " --decision approve|reject|edit --data-dir "
        + str(folder)
        + "  (edit takes --arguments JSON)"
    ) in out
    assert "decide with: agent-contract approve run-" in out


def pause(harness: str, folder: Path) -> DemoRun:
    demo = start_demo("refund order A-1001", harness=harness, caller="alice", folder=folder)
    calls = [(c.name, c.error_kind, c.outcome) for c in demo.result.tool_calls]
    assert demo.result.stop_reason == "pending_approval", (demo.result.output, calls)
    return demo


def test_reject_through_the_cli(harness: str, folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause(harness, folder)
    code, out, _ = invoke(
        "approve", demo.thread_id, "--decision", "reject", "--reason", "not eligible"
    )
    assert code == 0
    assert "refund_order [call_2_1] error (rejected)" in out
    assert "a human rejected this call: not eligible" in out
    assert data.refund_count() == 0


def test_approve_a_finished_run_is_refused(
    harness: str, folder: Path, data: Any, invoke: Invoke
) -> None:
    demo = pause(harness, folder)
    assert invoke("approve", demo.thread_id, "--decision", "approve")[0] == 0
    for decision in ("approve", "reject"):
        code, _, err = invoke("approve", demo.thread_id, "--decision", decision)
        assert code == 8
        assert "ApprovalError" in err
        assert "already finished (answered)" in err
    assert data.refund_count() == 1


def test_approve_an_unknown_thread(invoke: Invoke, data: Any) -> None:
    assert invoke("run", "calculate 1+1")[0] == 0  # the data folder exists
    code, _, err = invoke("approve", "run-000000000000", "--decision", "approve")
    assert code == 8
    assert "CheckpointError: no paused run 'run-000000000000'" in err
    assert data.refund_count() == 0


def test_usage_errors(harness: str, folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause(harness, folder)
    assert invoke("approve", demo.thread_id, "--decision", "edit")[0] == 2
    assert invoke("approve", demo.thread_id, "--decision", "edit", "--arguments", "[1]")[0] == 2
    assert invoke("approve", demo.thread_id, "--decision", "edit", "--arguments", "{")[0] == 2
    assert invoke("approve", demo.thread_id, "--decision", "maybe")[0] == 2
    assert data.refund_count() == 0
    assert data.runs()[demo.thread_id][0] == harness  # still paused


def test_cli_without_caller_is_unauthorized(harness: str, invoke: Invoke, data: Any) -> None:
    code, out, _ = invoke("run", "refund order A-1001", "--harness", harness)
    assert code == 0
    assert "lookup_order [call_1_1] error (unauthorized)" in out
    assert data.runs() == {}
    assert data.refund_count() == 0


def test_cli_exhausted_budget(harness: str, invoke: Invoke, data: Any) -> None:
    code, out, _ = invoke(
        "run",
        "refund order A-1001",
        "--caller",
        "alice",
        "--harness",
        harness,
        "--max-tool-calls",
        "1",
    )
    assert code == 3
    assert "refund_order [call_2_1] error (budget_exceeded)" in out
    assert "stop reason: max_tool_calls" in out
    assert data.runs() == {}
    assert data.refund_count() == 0


# -- stores that cannot be read ----------------------------------------------------------------


def corrupt(path: Path) -> None:
    path.write_bytes(b"this is not a SQLite database\x00" * 64)


def assert_nothing_happened(data: Any, thread_id: str | None, harness: str) -> None:
    assert data.refund_count() == 0
    if thread_id is not None:
        runs = data.runs()
        assert list(runs) == [thread_id]  # no new run was started
        assert runs[thread_id][0] == harness  # and the paused one is still paused


def test_corrupt_run_store(harness: str, folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause(harness, folder)
    corrupt(data.runs_db)
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert "error: CheckpointError: run store is corrupt" in err
    assert data.refund_count() == 0


def test_corrupt_snapshot_row(harness: str, folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause(harness, folder)
    with closing(sqlite3.connect(data.runs_db)) as conn, conn:
        conn.execute(
            "UPDATE runs SET snapshot = '{not json' WHERE thread_id = ?", (demo.thread_id,)
        )
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert f"CheckpointError: the stored run {demo.thread_id!r} failed authentication" in err
    assert data.refund_count() == 0
    # The same text sealed with the folder's key (a bug, not an attacker) is read, and
    # refused as corrupt.
    data.write_run(demo.thread_id, harness, "{not json")
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert f"CheckpointError: snapshot of {demo.thread_id!r} is corrupt" in err
    assert data.refund_count() == 0


def test_snapshot_of_another_version(harness: str, folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause(harness, folder)
    _, snapshot = data.runs()[demo.thread_id]
    snapshot["version"] = 99
    data.write_run(demo.thread_id, harness, json.dumps(snapshot))  # sealed with the key
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert "CheckpointError: cannot restore a run snapshot of version 99" in err
    assert_nothing_happened(data, demo.thread_id, harness)


def test_locked_run_store_is_not_a_fresh_start(
    harness: str, folder: Path, data: Any, invoke: Invoke, locked: Callable[[Path], Any]
) -> None:
    demo = pause(harness, folder)
    with locked(data.runs_db):
        code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert "Error: run store is locked or unreadable" in err
    assert_nothing_happened(data, demo.thread_id, harness)

    # Once the lock is gone the paused run is still there and completes once.
    assert invoke("approve", demo.thread_id, "--decision", "approve")[0] == 0
    assert data.refund_count() == 1


def test_corrupt_langgraph_checkpoint(folder: Path, data: Any, invoke: Invoke) -> None:
    demo = pause("langchain", folder)
    corrupt(data.checkpoints_db)
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert "error: CheckpointError: checkpoint file is corrupt or locked" in err
    assert_nothing_happened(data, demo.thread_id, "langchain")

    code, _, err = invoke(
        "run", "refund order A-1002", "--caller", "alice", "--harness", "langchain"
    )
    assert code == 8
    assert "CheckpointError" in err
    assert_nothing_happened(data, demo.thread_id, "langchain")


def test_locked_langgraph_checkpoint(
    folder: Path, data: Any, invoke: Invoke, locked: Callable[[Path], Any]
) -> None:
    demo = pause("langchain", folder)
    with locked(data.checkpoints_db):
        code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert "error: CheckpointError:" in err
    assert "locked" in err
    assert_nothing_happened(data, demo.thread_id, "langchain")

    assert invoke("approve", demo.thread_id, "--decision", "approve")[0] == 0
    assert data.refund_count() == 1


def test_missing_langgraph_checkpoint_is_not_a_fresh_start(
    folder: Path, data: Any, invoke: Invoke
) -> None:
    """The graph's checkpoint file is gone: LangGraph would happily start the thread from
    scratch (and redo the lookup and the preview); the resume refuses instead."""
    demo = pause("langchain", folder)
    data.checkpoints_db.unlink()
    code, _, err = invoke("approve", demo.thread_id, "--decision", "approve")
    assert code == 8
    assert f"CheckpointError: the paused checkpoint of run {demo.thread_id!r} is gone" in err
    assert_nothing_happened(data, demo.thread_id, "langchain")


def test_corrupt_store_in_another_process(
    folder: Path,
    data: Any,
    children: Callable[[Sequence[Any]], list[subprocess.CompletedProcess[str]]],
    cli_call: Any,
    locked: Callable[[Path], Any],
) -> None:
    """The same refusals when ``approve`` runs in its own process (offline: cheap): the
    lock held here is seen across processes, and a corrupt file is a typed error."""
    demo = pause("offline", folder)
    approve = cli_call(("approve", demo.thread_id, "--decision", "approve"), folder)
    with locked(data.runs_db):
        (held,) = children([approve])
    assert held.returncode == 8
    assert "Error: run store is locked or unreadable" in held.stderr
    assert_nothing_happened(data, demo.thread_id, "offline")

    corrupt(data.runs_db)
    (broken,) = children([approve])
    assert broken.returncode == 8
    assert "CheckpointError: run store is corrupt" in broken.stderr
    assert data.refund_count() == 0


def test_cli_budget_holds_across_approve(harness: str, invoke: Invoke, data: Any) -> None:
    """The run's limits are stored with it: ``approve`` (whose own budget flags default
    to looser limits) cannot lift them. The approved write still happens once; the model
    step after it is refused."""
    code, out, _ = invoke(
        "run",
        "refund order A-1001",
        "--caller",
        "alice",
        "--harness",
        harness,
        "--max-steps",
        "2",
        "--json",
    )
    assert code == 7
    thread_id = json.loads(out)["thread_id"]
    code, out, _ = invoke("approve", thread_id, "--decision", "approve", "--max-steps", "20")
    assert code == 3
    assert "stop reason: max_model_steps (max_model_steps of 2 reached" in out
    assert "refund_order [call_2_1] success" in out
    assert data.refund_count() == 1


def test_cli_approve_can_tighten_a_budget(harness: str, invoke: Invoke, data: Any) -> None:
    code, out, _ = invoke(
        "run", "refund order A-1001", "--caller", "alice", "--harness", harness, "--json"
    )
    assert code == 7
    thread_id = json.loads(out)["thread_id"]
    code, out, _ = invoke("approve", thread_id, "--decision", "approve", "--max-steps", "2")
    assert code == 3
    assert "max_model_steps of 2 reached" in out
    assert data.refund_count() == 1
