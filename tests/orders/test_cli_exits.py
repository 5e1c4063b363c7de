"""Exit paths of ``agent-contract approve`` (issue 12): an ambiguous edit is a usage
error that changes nothing (item 4); every message on stderr goes through the redaction
policy, exit 8 included (item 8). Data folders that cannot be used (newcomer findings 3,
6, 13): a path through a file is a usage error; ``approve``, ``resume`` and ``gc`` never
create a folder; a corrupt order store leaves the run paused."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_contract import exitcodes
from agent_contract.app import demo as demo_module
from agent_contract.app.demo import start_demo
from agent_contract.testing import FakeModel, tool_calls

KEY = "sk-abcdefghijklmnopqrstuvwxyz012345"
PLAIN_SECRET = "hunter2-swordfish"


def two_refunds(folder: Path, harness: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run paused with two pending refunds of alice's (in one batch); the demo model
    is replaced by a script for the run and the resumes."""
    model = FakeModel(
        [
            tool_calls(
                ("refund_order", {"order_id": "A-1001", "amount_cents": 100, "reason": "a"}),
                ("refund_order", {"order_id": "A-1002", "amount_cents": 200, "reason": "b"}),
            ),
            "done",
        ],
        stateless=True,
    )
    monkeypatch.setattr(demo_module, "DemoModel", lambda: model)
    demo = start_demo("refund two orders", harness=harness, caller="alice", folder=folder)
    assert demo.result.stop_reason == "pending_approval"
    assert len(demo.result.pending_approvals) == 2
    return demo.thread_id


def test_an_edit_without_call_id_among_several_pending_is_a_usage_error(
    harness: str,
    folder: Path,
    data: Any,
    invoke: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    thread = two_refunds(folder, harness, monkeypatch)
    before = data.runs()[thread]
    edit = {"order_id": "A-1001", "amount_cents": 50, "reason": "edited"}
    code, out, err = invoke(
        "approve", thread, "--decision", "edit", "--arguments", json.dumps(edit)
    )
    assert code == exitcodes.EXIT_USAGE, err
    assert out == ""
    assert "--call-id" in err
    assert data.refund_count() == 0
    assert data.runs()[thread] == before  # nothing recorded
    # With --call-id the edit decides that one call; the other still waits.
    (first, second) = (p["tool_call_id"] for p in _pending(before[1]))
    code, out, err = invoke(
        "approve",
        thread,
        "--decision",
        "edit",
        "--call-id",
        first,
        "--arguments",
        json.dumps(edit),
        "--json",
    )
    assert code == exitcodes.EXIT_PENDING_APPROVAL, err
    assert [p["tool_call_id"] for p in json.loads(out)["pending_approvals"]] == [second]
    assert [r["amount_cents"] for r in data.refund_rows()] == [50]


def _pending(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [item["approval"] for item in snapshot["batch"] if item.get("approval")]


@pytest.mark.parametrize(
    "edit",
    [
        {"order_id": KEY, "amount_cents": 1, "reason": "x"},
        {"order_id": "A-1001", "amount_cents": 1, "reason": PLAIN_SECRET * 20},
        {"order_id": PLAIN_SECRET, "amount_cents": 1, "reason": "x"},
    ],
    ids=["key-shaped", "secret-too-long", "secret-bad-id"],
)
def test_exit_8_messages_are_redacted(
    harness: str,
    folder: Path,
    invoke: Callable[..., tuple[int, str, str]],
    edit: dict[str, Any],
) -> None:
    thread = start_demo(
        "refund order A-1001", harness=harness, caller="alice", folder=folder
    ).thread_id
    code, _out, err = invoke(
        "approve",
        thread,
        "--decision",
        "edit",
        "--arguments",
        json.dumps(edit),
        "--secret",
        PLAIN_SECRET,
    )
    assert code == exitcodes.EXIT_APPROVAL_REFUSED, err
    assert "edited arguments are invalid" in err
    assert KEY not in err
    assert PLAIN_SECRET not in err
    assert "[REDACTED]" in err


def test_usage_errors_are_redacted_too(invoke: Callable[..., tuple[int, str, str]]) -> None:
    """argparse echoes a bad value: the message goes through the same policy."""
    code, _, err = invoke("run", "calculate 1+1", "--max-steps", KEY)
    assert code == exitcodes.EXIT_USAGE
    assert KEY not in err
    assert "[REDACTED]" in err
    code, _, err = invoke(
        "run", "calculate 1+1", "--secret", PLAIN_SECRET, "--max-steps", PLAIN_SECRET
    )
    assert code == exitcodes.EXIT_USAGE
    assert PLAIN_SECRET not in err


# -- data folders that cannot be used --------------------------------------------------------------

READERS = (
    ("approve", "run-000000000000", "--decision", "approve"),
    ("resume", "run-000000000000"),
    ("gc",),
)


@pytest.mark.parametrize("command", [("run", "calculate 1+1"), *READERS], ids=lambda c: c[0])
def test_a_data_folder_path_through_a_file_is_a_usage_error(
    tmp_path: Path,
    invoke: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    through = afile / "sub"
    code, out, err = invoke(*command, "--data-dir", str(through))
    assert code == exitcodes.EXIT_USAGE, err
    assert out == ""
    assert f"{str(afile)!r} in its path is a file" in err
    assert "Traceback" not in err
    monkeypatch.setenv(demo_module.DATA_DIR_ENV, str(through))
    code, out, err = invoke(*command)
    assert code == exitcodes.EXIT_USAGE, err
    assert "$AGENT_CONTRACT_DATA_DIR" in err
    assert "in its path is a file" in err
    assert "Traceback" not in err
    assert afile.read_text() == "not a folder"


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[0])
def test_approve_resume_and_gc_never_create_a_data_folder(
    tmp_path: Path, invoke: Callable[..., tuple[int, str, str]], command: tuple[str, ...]
) -> None:
    typo = tmp_path / "typo" / "data"
    code, out, err = invoke(*command, "--data-dir", str(typo))
    assert code == exitcodes.EXIT_APPROVAL_REFUSED, err
    assert out == ""
    assert "does not exist" in err
    assert "mistyped" in err
    assert not (tmp_path / "typo").exists()
    # An existing folder that holds no stored runs (not a data folder) is left as it was.
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o700)
    code, _, err = invoke(*command, "--data-dir", str(empty))
    assert code == exitcodes.EXIT_APPROVAL_REFUSED, err
    assert "holds no stored runs" in err
    assert list(empty.iterdir()) == []


def test_run_creates_missing_parent_folders_private(
    tmp_path: Path, invoke: Callable[..., tuple[int, str, str]]
) -> None:
    previous = os.umask(0o022)
    try:
        code, _, err = invoke(
            "run", "calculate 1+1", "--data-dir", str(tmp_path / "a" / "b" / "data")
        )
    finally:
        os.umask(previous)
    assert code == exitcodes.EXIT_OK, err
    for made in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "data"):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made


def test_a_corrupt_order_store_at_approve_leaves_the_run_paused(
    harness: str, folder: Path, data: Any, invoke: Callable[..., tuple[int, str, str]]
) -> None:
    """Finding 6: nothing is decided or written, the run stays paused (exit 8, the
    store named as corrupt, not ``transient``); once the store is back, the same
    ``approve`` carries it out."""
    thread = start_demo(
        "refund order A-1001", harness=harness, caller="alice", folder=folder
    ).thread_id
    saved = folder.parent / "orders.saved"
    shutil.copyfile(data.orders_db, saved)
    before = data.runs()[thread]
    with data.orders_db.open("r+b") as handle:
        handle.write(b"this is not a database" * 10)
    code, out, err = invoke("approve", thread, "--decision", "approve")
    assert code == exitcodes.EXIT_APPROVAL_REFUSED, out + err
    assert "the order store cannot be used" in err
    assert "corrupt" in err
    assert "the run stays paused" in err
    assert "transient" not in err
    assert "Traceback" not in err
    assert data.runs()[thread] == before  # nothing recorded
    shutil.copyfile(saved, data.orders_db)
    code, out, err = invoke("approve", thread, "--decision", "approve")
    assert code == exitcodes.EXIT_OK, out + err
    assert data.refund_count() == 1
