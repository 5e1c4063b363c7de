"""Does a model step cost more late in a run than early? The middleware against a bare
baseline that does O(1) work per step.

One ``--steps``-step run (default 1,000) of the side-by-side workload (each step calls
the ``echo`` tool, then one answer), on ``create_agent`` bare and with the contract's
middleware (``run_graph``, invoke), both with
:class:`~bench_side_by_side.LastMessageChatModel` (it reads only the last message, so
the bare run's own growth is LangGraph's). The process CPU time is stamped at every
model call; a step's cost is the time between two stamps (the step's tool call, the
graph's bookkeeping and every hook included). Runs of the two variants alternate
(``--rounds`` of each, the order shuffled, seeded), and the figure at step *k* is the
median over the rounds of the mean of the steps in a window of ``--window`` steps
ending at *k*.

Printed (Markdown): per-step CPU (us) at steps 10, 100 and 1,000 for bare and the
middleware, the middleware's ratio to bare at each, and the ratio at the last step minus
the ratio at step 10 (the issue's target: within 0.10). The machine's load is printed
with the table: the figures are CPU time, interleaved, so they hold under load better
than wall-clock time, but a loaded machine still widens them.

Usage::

    uv run python benchmarks/bench_gate_growth.py                 # 1000 steps, 5 rounds
    uv run python benchmarks/bench_gate_growth.py --steps 300 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
from collections.abc import Callable
from typing import Any

import _common
from bench_side_by_side import Harnesses, _answered, _per_step_chat_times
from langchain.agents import create_agent

from agent_contract_langchain import build_agent
from agent_contract_langchain.controls.plain_create_agent import plain_tool
from agent_contract_langchain.harness import run_graph


def variants(
    steps: int, loop: asyncio.AbstractEventLoop
) -> dict[str, tuple[Callable[[], Any], Any]]:
    """By name: ``(run once, the per-step durations of the last run)``."""
    h = Harnesses(steps, loop=loop, chat="last")
    bare_chat, mw_chat = h.chat_model(), h.chat_model()
    bare_timer, mw_timer = _per_step_chat_times(bare_chat), _per_step_chat_times(mw_chat)
    bare_graph = create_agent(bare_chat, tools=[plain_tool(t) for t in h.specs])
    mw_graph = build_agent(mw_chat, h.contract)
    return {
        "bare": (lambda: h.expect(bare_graph.invoke(h.lc_input)), bare_timer),
        "middleware": (
            lambda: _answered(run_graph(mw_graph, h.contract.start(), h.user)),
            mw_timer,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    runs = variants(args.steps, loop)
    at = [k for k in (10, 100, 1000) if k <= args.steps] or [args.steps]
    if at[-1] != args.steps:
        at.append(args.steps)
    for fn, timer in runs.values():  # warm-up
        fn()
        timer()
    per: dict[str, dict[int, list[float]]] = {name: {k: [] for k in at} for name in runs}
    names = list(runs)
    rng = random.Random(args.seed)
    load_before = _common.load()
    for _ in range(args.rounds):
        rng.shuffle(names)
        for name in names:
            fn, timer = runs[name]
            gc.collect()
            fn()
            durations = timer()  # durations[i]: from model call i+1 to model call i+2
            for k in at:
                end = min(k, len(durations))
                window = durations[max(0, end - args.window) : end]
                per[name][k].append(statistics.fmean(window))
    print(
        f"### Per-step CPU over a {args.steps}-step run (us, median of {args.rounds} "
        f"interleaved rounds, mean of the {args.window} steps up to each; load before: "
        f"{load_before}; after: {_common.load()})\n"
    )
    rows = []
    ratios = {}
    for k in at:
        bare = statistics.median(per["bare"][k])
        mw = statistics.median(per["middleware"][k])
        ratios[k] = mw / bare
        rows.append([k, f"{bare * 1e6:,.1f}", f"{mw * 1e6:,.1f}", f"{ratios[k]:.3f}"])
    print(_common.table(["step", "bare invoke", "middleware invoke", "middleware / bare"], rows))
    print(
        f"\nratio at step {at[-1]} minus ratio at step {at[0]}: "
        f"{ratios[at[-1]] - ratios[at[0]]:+.3f} (target: within 0.10)\n"
    )


if __name__ == "__main__":
    main()
