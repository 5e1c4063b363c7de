"""Timeout precision: a 0.2 s timeout around a 1.5 s tool must hand the run back within
0.3 s (target), with the call reported as ``timeout`` (outcome ``unknown``, side
effects possible).

Each trial runs a one-call script (the slow tool, then an answer) and measures the
time from the start of the tool call (the handler's first line) to the moment the
harness returns the RunResult, and the whole run. Harnesses: the offline loop and
the LangChain harness in each mode (``run_agent``: invoke, ainvoke, stream). The slow
handlers keep sleeping in their threads after the timeout (thread mode cannot stop
them); the script waits for them between trials so that trials do not overlap.

Usage: ``uv run python benchmarks/bench_timeout_precision.py [--trials 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import _common

from agent_contract import Budget, RunResult, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import run_agent

TIMEOUT = 0.2
SLEEP = 1.5
TARGET = 0.3


class SlowTool:
    def __init__(self) -> None:
        self.started = 0.0
        self.finished = threading.Event()

    def spec(self) -> ToolSpec:
        def handler(text: str) -> str:
            self.started = time.perf_counter()
            time.sleep(SLEEP)
            self.finished.set()
            return "finished late"

        return ToolSpec(
            name="slow",
            description="Sleeps 1.5 s.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            handler=handler,
            timeout_seconds=TIMEOUT,
        )


def harnesses() -> dict[str, Callable[..., RunResult]]:
    def lc(mode: str) -> Callable[..., RunResult]:
        def go(model: Any, tools: Any, text: str, budget: Budget) -> RunResult:
            result: RunResult = run_agent(model, tools, text, budget=budget, mode=mode)  # type: ignore[arg-type]
            return result

        return go

    return {
        "offline": run,
        "langchain (invoke)": lc("invoke"),
        "langchain (ainvoke)": lc("ainvoke"),
        "langchain (stream)": lc("stream"),
    }


def trial(harness: Callable[..., RunResult]) -> tuple[float, float, str]:
    slow = SlowTool()
    model = FakeModel([tool_call("slow", {"text": "x"}), "gave up waiting"])
    start = time.perf_counter()
    result = harness(model, [slow.spec()], "go", budget=Budget(deadline_seconds=30.0))
    end = time.perf_counter()
    record = result.tool_calls[0] if result.tool_calls else None
    verdict = (
        f"{record.error_kind}/{record.outcome}/side_effects={record.side_effects_possible}"
        if record is not None
        else "no call"
    )
    slow.finished.wait(SLEEP + 1)  # let the abandoned handler end before the next trial
    return end - slow.started, end - start, verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args(argv)
    print(_common.environment())
    print(
        f"tool timeout {TIMEOUT} s around a {SLEEP} s handler; target: the run is back "
        f"within {TARGET} s of the call's start; {args.trials} trials per harness\n"
    )
    rows = []
    for name, harness in harnesses().items():
        trial(harness)  # warm-up (imports, graph compilation)
        latencies, totals, verdicts = [], [], set()
        for _ in range(args.trials):
            latency, total, verdict = trial(harness)
            latencies.append(latency)
            totals.append(total)
            verdicts.add(verdict)
        worst = max(latencies)
        rows.append(
            [
                name,
                f"{statistics.median(latencies):.3f}",
                f"{worst:.3f}",
                f"{statistics.median(totals):.3f}",
                ", ".join(sorted(verdicts)),
                "met" if worst <= TARGET else f"missed by {worst - TARGET:.3f} s",
            ]
        )
    print(
        _common.table(
            [
                "harness",
                "median s (call start -> run returned)",
                "max s",
                "median s (whole run)",
                "reported",
                f"<= {TARGET} s",
            ],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
