"""A small crowd on one data folder (issue 12; ``benchmarks/bench_crowd.py`` runs 100):
concurrent ``run`` processes all pause (no lock-timeout exit, no lost pending approval),
then concurrent approvers, two per run for some, write exactly one refund per run.
Outcomes only, no timings."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.demo import start_demo
from agent_contract.datafolder import LOCK_TIMEOUT_ENV

CROWD = 8
RACERS = 4
EDIT = json.dumps({"order_id": "A-1001", "amount_cents": 1, "reason": "crowd"})


@pytest.mark.parametrize("harness_name", ["offline", "langchain"])
def test_a_crowd_loses_nothing_and_writes_once(
    harness_name: str,
    store_kind: str,
    folder: Path,
    data: Any,
    cli_call: Any,
    children: Callable[[Sequence[Any]], list[Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The children's lock wait is a hang guard here, not the default 30 s: on a loaded
    # machine twelve children importing LangChain at once may queue longer than that,
    # and what this test checks is that nothing is lost or written twice.
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "600")
    start_demo("look up order A-1001", harness="offline", caller="alice", folder=folder)
    request = ("run", "refund order A-1001", "--caller", "alice", "--harness", harness_name)
    runs = children([cli_call((*request, "--json"), folder) for _ in range(CROWD)])
    assert [r.returncode for r in runs] == [7] * CROWD, [r.stderr[-500:] for r in runs]
    threads = sorted(json.loads(r.stdout)["thread_id"] for r in runs)
    assert len(set(threads)) == CROWD
    stored = dict(data.query("runs", "SELECT thread_id, harness FROM runs"))
    assert {t: stored.get(t) for t in threads} == dict.fromkeys(threads, harness_name)

    decide = ("--decision", "edit", "--arguments", EDIT, "--call-id", "call_2_1")
    approvers = [cli_call(("approve", t, *decide), folder) for t in threads]
    approvers += [cli_call(("approve", t, *decide), folder) for t in threads[:RACERS]]
    done = children(approvers)
    for result in done:
        assert result.returncode in (0, 8), result.stderr[-500:]
        assert "locked" not in result.stderr
        assert "Traceback" not in result.stderr
    assert sum(r.returncode == 0 for r in done) >= CROWD
    refunds = Counter(str(r[0]) for r in data.query("orders", "SELECT run_id FROM refunds"))
    assert refunds == Counter(dict.fromkeys(threads, 1))
    if store_kind == "sqlite":
        assert list((folder / "locks").iterdir()) == []
    else:  # the folder holds the key only
        assert sorted(p.name for p in folder.iterdir()) == ["store.key"]
