"""The window between a resumed run's end and the run store's "finished" record (issue 12
item 5). A process that dies there leaves the stored run paused while the refund is
applied (and, on LangChain, the graph's checkpoint says the run ended). A later
``approve`` must report the finished run, never leave it stuck at ``pending_approval``.
The same window with real SIGKILL/SIGINT/SIGTERM is the ``before_finish_record`` crash
point in ``test_crash_points.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_contract import runstore as store_module
from agent_contract.app.demo import start_demo


class Died(BaseException):
    """The approving process dies (nothing after this point runs)."""


def test_a_run_that_ended_before_its_finished_record_is_reconciled(
    harness: str,
    folder: Path,
    data: Any,
    invoke: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    thread = start_demo("refund order A-1001", harness=harness, caller="alice", folder=folder)

    def die(*args: Any, **kwargs: Any) -> None:
        raise Died

    with monkeypatch.context() as patch:
        patch.setattr(store_module.RunStore, "finish", die)
        with pytest.raises(Died):
            invoke("approve", thread.thread_id, "--decision", "approve")
    assert data.refund_count("A-1001") == 1
    assert data.runs()[thread.thread_id][0] == harness  # still recorded as paused

    code, out, err = invoke("approve", thread.thread_id, "--decision", "approve", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["stop_reason"] == "answered"
    assert [(c["name"], c["status"]) for c in report["tool_calls"]] == [
        ("lookup_order", "success"),
        ("refund_order", "success"),
    ]
    assert data.refund_count("A-1001") == 1  # settled by verification, not written again
    assert data.runs()[thread.thread_id][0] == f"finished:{harness}"
    code, _, err = invoke("approve", thread.thread_id, "--decision", "approve")
    assert code == 8
    assert "already finished (answered)" in err
