"""A crowd on one data folder: N concurrent ``agent-contract run`` processes, then N
concurrent ``approve`` processes (and a race of two approvers on some runs).

Usage::

    uv run --locked python benchmarks/bench_crowd.py [--runs 100] [--harness offline]
        [--racers 10] [--folder DIR]

Phase 1 starts ``--runs`` processes at once, each ``run "refund order A-1001" --caller
alice`` (a lookup, then a refund that pauses for approval: exit 7). Phase 2 starts one
``approve --decision edit`` (1 cent, so every refund fits the order) per stored run, and
for the first ``--racers`` runs a second, identical one at the same moment (the two
race for the run's lock: one decides and writes, the other is refused or repeats the
same decision). It prints:

- runs: processes started, and their exit codes;
- lock-timeout exits: processes that exited 8 because a store stayed locked;
- lost pending approvals: runs that should have paused (exit 7) but whose paused run is
  not in ``runs.sqlite3`` (the lookup had run, the approval is gone);
- duplicate writes: refund rows beyond the first for one run;
- approvals without a write: stored runs that no approver refunded.

All counts are outcomes; the wall times are for orientation only (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

from _common import environment

EDIT = json.dumps({"order_id": "A-1001", "amount_cents": 1, "reason": "crowd"})


def cli(folder: Path, *argv: str) -> list[str]:
    """The command line of one ``agent-contract`` child on ``folder``."""
    return [sys.executable, "-m", "agent_contract.app.cli", *argv, "--data-dir", str(folder)]


def run_all(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once; wait for all."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    started = [
        subprocess.Popen(  # noqa: S603 - our own command line, built above
            c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for c in commands
    ]
    done = []
    for command, child in zip(commands, started, strict=True):
        out, err = child.communicate()
        done.append(subprocess.CompletedProcess(command, child.returncode, out, err))
    return done


def locked(result: subprocess.CompletedProcess[str]) -> bool:
    """Whether a child exited 8 because a store stayed locked."""
    return result.returncode == 8 and "locked" in result.stderr


def stored_pending(folder: Path) -> set[str]:
    """Thread ids stored as paused (not finished) in ``runs.sqlite3``."""
    with closing(sqlite3.connect(folder / "runs.sqlite3")) as db:
        rows = db.execute("SELECT thread_id, harness FROM runs").fetchall()
    return {str(t) for t, h in rows if not str(h).startswith("finished:")}


def refunds_by_run(folder: Path) -> Counter[str]:
    """Refund rows per run id."""
    with closing(sqlite3.connect(folder / "orders.sqlite3")) as db:
        rows = db.execute("SELECT run_id FROM refunds").fetchall()
    return Counter(str(r[0]) for r in rows)


def crowd(folder: Path, harness: str, runs: int, racers: int) -> dict[str, object]:
    """Run the two phases on ``folder``; returns the counts (see the module doc)."""
    # The order store is made once, as a first `run` would (sample data only then).
    first = run_all([cli(folder, "run", "look up order A-1001", "--caller", "alice")])[0]
    if first.returncode != 0:
        raise SystemExit(f"setup failed: {first.stderr}")

    started = time.perf_counter()
    request = ["run", "refund order A-1001", "--caller", "alice", "--harness", harness, "--json"]
    phase1 = run_all([cli(folder, *request) for _ in range(runs)])
    run_seconds = time.perf_counter() - started
    paused = {
        json.loads(r.stdout)["thread_id"]
        for r in phase1
        if r.returncode == 7 and r.stdout.strip().startswith("{")
    }
    pending = stored_pending(folder)
    lost = (runs - len(paused)) + len(paused - pending)

    threads = sorted(pending)
    approve = ["--decision", "edit", "--arguments", EDIT, "--call-id", "call_2_1"]
    commands = [cli(folder, "approve", t, *approve) for t in threads]
    commands += [cli(folder, "approve", t, *approve) for t in threads[:racers]]
    started = time.perf_counter()
    phase2 = run_all(commands)
    approve_seconds = time.perf_counter() - started
    refunds = refunds_by_run(folder)
    return {
        "harness": harness,
        "runs": runs,
        "run_exit_codes": dict(sorted(Counter(r.returncode for r in phase1).items())),
        "run_lock_timeout_exits": sum(locked(r) for r in phase1),
        "lost_pending_approvals": lost,
        "approvers": len(commands),
        "approve_exit_codes": dict(sorted(Counter(r.returncode for r in phase2).items())),
        "approve_lock_timeout_exits": sum(locked(r) for r in phase2),
        "duplicate_writes": sum(n - 1 for n in refunds.values() if n > 1),
        "approvals_without_a_write": sum(1 for t in threads if refunds[t] == 0),
        "unexpected_run_exits": [
            f"exit {r.returncode}: {(r.stderr.strip() or r.stdout.strip())[-1500:]}"
            for r in phase1
            if r.returncode != 7
        ],
        "approve_refusals": dict(
            Counter(r.stderr.strip().split(":")[1].strip() for r in phase2 if r.returncode == 8)
        ),
        "run_phase_seconds": round(run_seconds, 1),
        "approve_phase_seconds": round(approve_seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--racers", type=int, default=10)
    parser.add_argument("--harness", default="offline")
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    print(environment())
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch) / "data"
        counts = crowd(folder, args.harness, args.runs, args.racers)
    for name, value in counts.items():
        print(f"{name:28} {value}")


if __name__ == "__main__":
    main()
