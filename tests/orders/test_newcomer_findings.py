"""Regression tests for defects a fresh-clone review found in the approval flow and CLI."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from agent_contract import exitcodes
from agent_contract.app import cli
from agent_contract.app.demo import approve_demo, start_demo
from agent_contract.errors import ApprovalError, CheckpointError
from agent_contract.results import MAX_ERROR_CHARS, error_result
from agent_contract.runstore import RunStore
from agent_contract.trace import RedactionPolicy

SECRET = "sk-abcdefghijklmnopqrstuvwxyz"


def main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def refunds(folder: Path) -> int:
    with sqlite3.connect(folder / "orders.sqlite3") as db:
        return int(db.execute("SELECT COUNT(*) FROM refunds").fetchone()[0])


@pytest.mark.parametrize("harness", ["offline", "langchain"])
def test_a_concurrent_approve_is_refused_while_another_holds_the_run(
    tmp_path: Path, harness: str
) -> None:
    """Two approvers at once must not both decide (two edits wrote two refunds)."""
    run = start_demo("refund order A-1001", caller="alice", harness=harness, folder=tmp_path)
    store = RunStore(tmp_path / "runs.sqlite3")
    with store.exclusive(run.thread_id), pytest.raises(CheckpointError, match="another process"):
        approve_demo(run.thread_id, "approve", folder=tmp_path)
    assert refunds(tmp_path) == 0
    result = approve_demo(run.thread_id, "approve", folder=tmp_path)
    assert result.stop_reason == "answered"
    assert refunds(tmp_path) == 1


@pytest.mark.parametrize("harness", ["offline", "langchain"])
@pytest.mark.parametrize(
    "edit",
    [
        {"order_id": "A-1001", "amount_cents": 20000, "reason": "more than refundable"},
        {"order_id": "B-2001", "amount_cents": 100, "reason": "someone else's order"},
        {"order_id": "Z-9999", "amount_cents": 100, "reason": "no such order"},
    ],
    ids=["above-refundable", "foreign-order", "missing-order"],
)
def test_an_edit_the_tool_would_refuse_is_refused_and_stays_pending(
    tmp_path: Path, harness: str, edit: dict[str, object]
) -> None:
    run = start_demo("refund order A-1001", caller="alice", harness=harness, folder=tmp_path)
    with pytest.raises(ApprovalError, match="edited arguments are invalid"):
        approve_demo(run.thread_id, "edit", arguments=edit, folder=tmp_path)
    assert refunds(tmp_path) == 0
    result = approve_demo(run.thread_id, "reject", folder=tmp_path)
    assert [c.error_kind for c in result.tool_calls][-1] == "rejected"


def test_arguments_without_edit_is_a_usage_error(tmp_path: Path) -> None:
    run = start_demo("refund order A-1002", caller="alice", folder=tmp_path)
    code, _, err = main(
        "approve",
        run.thread_id,
        "--decision",
        "approve",
        "--data-dir",
        str(tmp_path),
        "--arguments",
        '{"order_id": "A-1002", "amount_cents": 1, "reason": "x"}',
    )
    assert code == exitcodes.EXIT_USAGE
    assert "--decision edit only" in err
    assert refunds(tmp_path) == 0


def test_deeply_nested_edit_arguments_are_a_usage_error(tmp_path: Path) -> None:
    run = start_demo("refund order A-1002", caller="alice", folder=tmp_path)
    nested = "[" * 50_000 + "]" * 50_000
    code, _, err = main(
        "approve",
        run.thread_id,
        "--decision",
        "edit",
        "--data-dir",
        str(tmp_path),
        "--arguments",
        f'{{"reason": {nested}}}',
    )
    assert code == exitcodes.EXIT_USAGE
    assert "JSON object" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "calculate 1+1\udcff"],
        ["run", "   "],
        ["run", "calculate 1+1", "--data-dir", ""],
    ],
    ids=["not-utf8", "empty-text", "empty-data-dir"],
)
def test_bad_text_is_a_usage_error_not_a_traceback(argv: list[str]) -> None:
    assert main(*argv)[0] == exitcodes.EXIT_USAGE


def test_a_data_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for harness in ("offline", "langchain"):
        code, out, _ = main("run", "calculate 1+1", "--harness", harness, "--data-dir", str(afile))
        assert code == exitcodes.EXIT_USAGE
        assert out == ""


def test_error_messages_are_capped() -> None:
    result = error_result("c1", "t", "invalid_arguments", "x" * 50_000, redaction=RedactionPolicy())
    assert result.error_message is not None
    assert len(result.error_message) < MAX_ERROR_CHARS + 100
    assert "more chars cut" in result.error_message


def test_a_durable_langchain_run_does_not_store_the_secret(tmp_path: Path) -> None:
    code, out, _ = main(
        "run",
        f"look up order A-1001 {SECRET}",
        "--caller",
        "alice",
        "--harness",
        "langchain",
        "--secret",
        SECRET,
        "--data-dir",
        str(tmp_path),
    )
    assert code in (0, 7)
    assert SECRET not in out
    for path in tmp_path.glob("*.sqlite3*"):
        assert SECRET.encode() not in path.read_bytes(), path.name
