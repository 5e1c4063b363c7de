"""Approvals at scale: N processes x R concurrent runs that pause for a refund approval,
each approved by another process (any process resumes any run), on one store.

Usage::

    uv run --locked python benchmarks/bench_approvals_scale.py [--processes 1 2 4 8]
        [--runs 100] [--threads 100] [--racers 10] [--store sqlite postgresql]

For each store (``sqlite``: one data folder on this machine; ``postgresql``: a new
database on a throwaway server, :mod:`devtools.postgres`) and each process count N, a
fresh data folder (and database) is made, then N worker processes (``spawn``: new
interpreters, sharing only the folder's key files and the store URL) do:

1. **start**: each worker starts ``--runs`` runs of ``"refund order A-1001"`` (caller
   alice) at once, ``--threads`` at a time, with :func:`agent_contract.app.demo.start_demo`:
   a lookup, then a refund that pauses for approval;
2. **approve**: worker ``i`` approves the runs worker ``i + 1`` (mod N) paused, with
   :func:`~agent_contract.app.demo.approve_demo` (an ``edit`` to 1 cent, so that every
   refund fits the order's total), ``--threads`` at a time; for the first ``--racers``
   of them, worker ``i + 2`` (mod N) sends the same decision at the same time (a race
   for the run's lock: one resumes the run and writes, the other waits and repeats the
   decision, applying nothing, or is refused).

It prints, per N: approvals per second (approved runs over the approve phase's wall
time), p50/p99 latency of one ``approve_demo`` call (decide, resume, write the refund,
store the finished run), the racers' outcomes, and the outcome counts read back from the
order store: **lost** approvals (an approval reported done whose run has no refund row),
**refused** ones (every approval of a paused run raised a clear error: nothing applied),
and **duplicated**
approvals (refund rows beyond the first for one run); both must be 0. A run that did not
pause (its failed tool call and answer are shown), a refused run (every approval of it
raised; a primary refused as busy because its racer resumed the run is not one), or any
lost or duplicated approval makes the exit status 1.

With PostgreSQL, the store is passed as ``$AGENT_CONTRACT_STORE`` (every process reads it
through :func:`agent_contract.stores.open_store`): it needs a build whose run and order
stores run on PostgreSQL (issue 28).

With PostgreSQL it also prints the most sessions the server held on the database at once
(`peak connections`: the workers' pools and the controller's, sampled every 20 ms).

The wall times are for orientation (the machine may be shared: the load is printed).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # devtools/ (repository-only)

from _common import environment, load, summary, table

REQUEST = "refund order A-1001"
EDIT = {"order_id": "A-1001", "amount_cents": 1, "reason": "scale"}
CALL_ID = "call_2_1"  # the refund call of the demo model's refund script
STORE_ENV = "AGENT_CONTRACT_STORE"


# -- a worker process ------------------------------------------------------------------


def _start_one(folder: str) -> tuple[str, str]:
    """Start one run; ``(thread_id, stop_reason)`` or ``("", error)``."""
    from agent_contract.app.demo import start_demo

    try:
        run = start_demo(REQUEST, caller="alice", folder=folder)
    except Exception as exc:  # noqa: BLE001 - counted and reported, not hidden
        return "", f"{type(exc).__name__}: {exc}"
    stop = str(run.result.stop_reason)
    if stop != "pending_approval":  # say why: a tool call that did not succeed
        failed = [c for c in run.result.tool_calls if c.status != "success"]
        if failed:
            stop += f" ({failed[-1].name} {failed[-1].status}: {failed[-1].error_kind})"
        if run.result.output:
            stop += f": {re.sub(r'run-[0-9a-f]+', 'RUN', run.result.output)[:120]}"
    return run.thread_id, stop


def _approve_one(folder: str, thread_id: str) -> tuple[str, float, str]:
    """Approve one run; ``(thread_id, seconds, outcome)``, the outcome being the
    resumed run's stop reason or the error's type and reason."""
    from agent_contract.app.demo import approve_demo

    started = time.perf_counter()
    try:
        result = approve_demo(thread_id, "edit", arguments=EDIT, call_id=CALL_ID, folder=folder)
        outcome = str(result.stop_reason)
        failed = [
            c for c in result.tool_calls if c.name == "refund_order" and c.status != "success"
        ]
        if failed:  # the run ended, but its refund did not run: say why
            outcome += f" (refund_order {failed[-1].status}: {failed[-1].error_kind})"
    except Exception as exc:  # noqa: BLE001 - counted and reported, not hidden
        outcome = f"{type(exc).__name__}: {re.sub(r'run-[0-9a-f]+', 'RUN', str(exc))[:80]}"
    return thread_id, time.perf_counter() - started, outcome


def worker(folder: str, threads: int, inbox: Any, outbox: Any) -> None:
    """A worker process: runs the commands it receives until ``None``.

    Commands: ``("start", count)`` answers ``[(thread_id, stop_reason), ...]``;
    ``("approve", [thread_id, ...])`` answers ``[(thread_id, seconds, outcome), ...]``;
    ``("go", ...)`` waits for the controller's go so that every worker starts together.
    """
    import agent_contract.app.demo  # noqa: F401 - imported before the clock starts

    with ThreadPoolExecutor(max_workers=threads) as pool:
        outbox.put(("ready", os.getpid()))
        while (command := inbox.get()) is not None:
            kind, payload = command
            try:
                if kind == "start":
                    answer: Any = list(pool.map(lambda _: _start_one(folder), range(payload)))
                else:
                    answer = list(pool.map(lambda t: _approve_one(folder, t), payload))
            except Exception:  # noqa: BLE001 - the controller reports it
                answer = traceback.format_exc()
            outbox.put((kind, answer))


# -- the controller --------------------------------------------------------------------


class Workers:
    """N worker processes on one data folder (and store URL, from the environment)."""

    def __init__(self, n: int, folder: Path, threads: int) -> None:
        ctx = mp.get_context("spawn")
        self.inboxes = [ctx.Queue() for _ in range(n)]
        self.outboxes = [ctx.Queue() for _ in range(n)]
        self.procs = [
            ctx.Process(target=worker, args=(str(folder), threads, i, o), daemon=True)
            for i, o in zip(self.inboxes, self.outboxes, strict=True)
        ]
        for p in self.procs:
            p.start()
        for o in self.outboxes:
            o.get(timeout=300)  # ready: imports done

    def each(self, commands: list[tuple[str, Any]]) -> list[Any]:
        """Send command ``i`` to worker ``i`` (all at once); their answers, in order."""
        for inbox, command in zip(self.inboxes, commands, strict=True):
            inbox.put(command)
        answers = []
        for outbox in self.outboxes:
            _, answer = outbox.get(timeout=3600)
            if isinstance(answer, str):
                raise SystemExit(f"a worker failed:\n{answer}")
            answers.append(answer)
        return answers

    def close(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for p in self.procs:
            p.join(timeout=60)


def refunds_by_run(folder: Path) -> Counter[str]:
    """Refund rows per run id, read from the order store (SQLite or PostgreSQL)."""
    from agent_contract.stores import open_store

    with open_store(folder).database("orders").transaction(write=False) as db:
        rows = db.execute("SELECT run_id FROM refunds").fetchall()
    return Counter(str(r[0]) for r in rows)


@contextmanager
def peak_connections() -> Iterator[list[int]]:
    """With a PostgreSQL store: the most sessions the server held on the store's
    database at once (sampled every 20 ms from a connection of its own, which is not
    counted), in the yielded list once the block ends; SQLite: the list stays empty."""
    url = os.environ.get(STORE_ENV, "")
    peak: list[int] = []
    if not url.startswith("postgres"):
        yield peak
        return
    import psycopg

    most, stop = [0], threading.Event()
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()"
    )
    with psycopg.connect(url, autocommit=True) as conn:

        def sample() -> None:
            while not stop.is_set():
                row = conn.execute(query).fetchone()
                most[0] = max(most[0], int(row[0]) if row else 0)
                stop.wait(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            yield peak
        finally:
            stop.set()
            sampler.join()
            peak.append(most[0])


def scale(n: int, folder: Path, runs: int, threads: int, racers: int) -> dict[str, Any]:
    """One measurement: N workers on a fresh ``folder`` (see the module doc)."""
    from agent_contract.app.demo import start_demo

    # The order store is made once, with its sample data, by a first (finished) run.
    start_demo("look up order A-1001", caller="alice", folder=folder)
    pool = Workers(n, folder, threads)
    with peak_connections() as peak:
        try:
            result = _measure(pool, n, folder, runs, racers)
        finally:
            pool.close()
    return result | {"peak_connections": peak[0] if peak else None}


def _measure(pool: Workers, n: int, folder: Path, runs: int, racers: int) -> dict[str, Any]:
    """The two phases of :func:`scale` on ``pool``, and their counts."""
    started = time.perf_counter()
    begun = pool.each([("start", runs)] * n)
    start_seconds = time.perf_counter() - started
    paused = [[t for t, stop in mine if t and stop == "pending_approval"] for mine in begun]
    start_errors = Counter(stop for mine in begun for t, stop in mine if not t)
    not_paused = Counter(
        stop for mine in begun for t, stop in mine if t and stop != "pending_approval"
    )
    commands = []
    for i in range(n):
        mine = list(paused[(i + 1) % n])  # runs another worker paused (itself when N=1)
        mine += paused[(i + 2) % n][:racers] if racers else []  # the racers
        commands.append(("approve", mine))
    started = time.perf_counter()
    answers = pool.each(commands)
    approve_seconds = time.perf_counter() - started
    primary: list[tuple[str, float, str]] = []
    racing: list[tuple[str, float, str]] = []
    for i, answer in enumerate(answers):
        own = len(paused[(i + 1) % n])
        primary += answer[:own]
        racing += answer[own:]
    refunds = refunds_by_run(folder)
    paused_ids = {t for mine in paused for t in mine}
    # Both approvers of a raced run count: the run is approved if either call ended it.
    approved = {t for t, _, outcome in primary + racing if outcome == "answered"}
    latencies = [s for _, s, _ in primary]
    stats = summary(latencies) if latencies else {"median": float("nan"), "p99": float("nan")}
    return {
        "processes": n,
        "runs": n * runs,
        "paused": len(paused_ids),
        "start_errors": dict(start_errors) | {f"stopped {k}": v for k, v in not_paused.items()},
        "start_seconds": start_seconds,
        "approve_seconds": approve_seconds,
        "approvals_per_second": len(approved) / approve_seconds,
        "p50_ms": stats["median"] * 1000,
        "p99_ms": stats["p99"] * 1000,
        "approve_outcomes": dict(Counter(o for _, _, o in primary)),
        "racer_outcomes": dict(Counter(o for _, _, o in racing)),
        # Lost: an approval reported done ("answered") whose run has no refund row.
        "lost": sum(1 for t in approved if refunds[t] == 0),
        # Refused: a paused run whose approvals all raised (a clear error, nothing
        # applied; e.g. a preview timeout under load): not lost, but not approved.
        "refused": sum(1 for t in paused_ids - approved if refunds[t] == 0),
        "duplicated": sum(c - 1 for t, c in refunds.items() if c > 1),
        "refund_rows_of_no_paused_run": sum(c for t, c in refunds.items() if t not in paused_ids),
        "load": load(),
    }


@contextmanager
def store_for(kind: str) -> Iterator[str | None]:
    """``None`` (SQLite, the data folder's files), or a throwaway PostgreSQL server;
    yields the server, whose ``new_database()`` gives a fresh URL."""
    if kind == "sqlite":
        yield None
        return
    from devtools.postgres import throwaway_cluster

    with throwaway_cluster() as cluster:
        yield cluster  # type: ignore[misc]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--runs", type=int, default=100, help="runs per process")
    parser.add_argument("--threads", type=int, default=100, help="concurrent calls per process")
    parser.add_argument("--racers", type=int, default=10, help="raced approvals per process")
    parser.add_argument(
        "--store", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"]
    )
    parser.add_argument("--json", action="store_true", help="also print each result as JSON")
    args = parser.parse_args()
    print(environment())
    rows, failed = [], False
    for kind in args.store:
        with store_for(kind) as server:
            for n in args.processes:
                with tempfile.TemporaryDirectory() as scratch:
                    folder = Path(scratch) / "data"
                    if server is not None:
                        os.environ[STORE_ENV] = server.new_database("bench")  # type: ignore[attr-defined]
                    try:
                        result = scale(n, folder, args.runs, args.threads, args.racers)
                    finally:
                        os.environ.pop(STORE_ENV, None)
                result["store"] = kind
                print(f"{kind} N={n}: {json.dumps(result) if args.json else result['load']}")
                # A primary refused as busy while its racer resumed the run is fine (the
                # run is approved, once); a run whose every approval raised is not.
                failed |= bool(
                    result["lost"]
                    or result["duplicated"]
                    or result["start_errors"]
                    or result["paused"] != result["runs"]
                    or result["refused"]
                )
                rows.append(result)
    print()
    print(
        table(
            [
                "store",
                "processes",
                "runs",
                "start s",
                "approve s",
                "approvals/s",
                "p50 ms",
                "p99 ms",
                "racers",
                "refused",
                "lost",
                "duplicated",
                "peak connections",
            ],
            [
                [
                    r["store"],
                    r["processes"],
                    r["runs"],
                    f"{r['start_seconds']:.1f}",
                    f"{r['approve_seconds']:.1f}",
                    f"{r['approvals_per_second']:.1f}",
                    f"{r['p50_ms']:.0f}",
                    f"{r['p99_ms']:.0f}",
                    ", ".join(f"{k}: {v}" for k, v in r["racer_outcomes"].items()) or "-",
                    r["refused"],
                    r["lost"],
                    r["duplicated"],
                    "-" if r["peak_connections"] is None else r["peak_connections"],
                ]
                for r in rows
            ],
        )
    )
    for r in rows:
        odd = {k: r[k] for k in ("start_errors", "approve_outcomes") if set(r[k]) - {"answered"}}
        if odd:
            print(f"{r['store']} N={r['processes']}: {odd}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
