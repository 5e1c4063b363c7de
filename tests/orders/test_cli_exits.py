"""Exit paths of ``agent-contract approve`` (issue 12): an ambiguous edit is a usage
error that changes nothing (item 4); every message on stderr goes through the redaction
policy, exit 8 included (item 8)."""

from __future__ import annotations

import json
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
