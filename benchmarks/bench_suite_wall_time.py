"""Wall time of the contract suite on each harness.

Runs every scenario of ``agent_contract.conformance.SCENARIOS`` through
``run_scenario(scenario, load_harness(name), name)`` for each registered harness, one
harness after another, ``--repeat`` times, and reports the total and the slowest
scenarios. Scenarios that wait on purpose (a 0.15 s tool timeout, parallel calls that
sleep) dominate the slowest list. ``plain-create-agent`` is the negative control (a
bare ``create_agent``): it breaks every scenario, and it has no timeouts, so the
timeout scenario's tool runs to its end (0.6 s) there.

Usage: ``uv run python benchmarks/bench_suite_wall_time.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import _common

from agent_contract.conformance import SCENARIOS, run_scenario
from agent_contract.registry import harness_names, load_harness


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="suite runs per harness")
    parser.add_argument(
        "--harness", action="append", help="only these harnesses (repeatable); default all"
    )
    args = parser.parse_args(argv)
    names = args.harness or list(harness_names())
    print(_common.environment())
    print(f"{len(SCENARIOS)} scenarios; {args.repeat} suite runs per harness (first is warm-up)\n")

    rows = []
    slowest: dict[str, list[tuple[float, str]]] = {}
    for name in names:
        harness = load_harness(name)
        totals = []
        holds = 0
        per_scenario: dict[str, list[float]] = {s.name: [] for s in SCENARIOS}
        for _ in range(args.repeat + 1):
            start = time.perf_counter()
            holds = 0
            for scenario in SCENARIOS:
                t0 = time.perf_counter()
                outcome = run_scenario(scenario, harness, name)
                per_scenario[scenario.name].append(time.perf_counter() - t0)
                holds += outcome.holds
            totals.append(time.perf_counter() - start)
        timed = totals[1:]  # the first run imports and compiles; it is a warm-up
        medians = {s: statistics.median(v[1:]) for s, v in per_scenario.items()}
        slowest[name] = sorted(((t, s) for s, t in medians.items()), reverse=True)[:3]
        rows.append(
            [
                name,
                f"{statistics.median(timed):.2f}",
                f"{min(timed):.2f}",
                f"{statistics.median(timed) / len(SCENARIOS) * 1e3:.1f}",
                f"{holds}/{len(SCENARIOS)}",
            ]
        )
    print(
        _common.table(
            ["harness", "median s", "min s", "ms per scenario", "scenarios that hold"], rows
        )
    )
    print("\nslowest scenarios (median s):")
    for name, items in slowest.items():
        print(f"  {name}: " + ", ".join(f"{s} {t:.2f}" for t, s in items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
