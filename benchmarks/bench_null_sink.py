"""Per-step cost of a trace sink: no sink, ``NullSink`` and ``MemorySink``, on the
offline loop and on LangChain (``create_agent`` with ContractMiddleware, ``invoke``).

The script is :mod:`bench_step_overhead`'s: ``--steps`` model steps that each call a
trivial ``echo`` tool, then one answer (a run has steps + 1 model steps). Each variant
has its own Contract (built once) with the sink under test; a ``MemorySink`` keeps
every event of every run, as a test's collecting sink does.

To read "within noise" off the figures, every harness also runs a second no-sink
variant, ``none (A/A)``: identical to ``none``, so the gap between the two is what
noise alone produces on this machine. The null sink is within noise when its gap to
``none`` is no larger than the A/A gap.

``--repeats`` independent blocks are run; inside a block all variants are interleaved
round by round in a shuffled order (so drift in machine load hits them alike) and each
block's figure is the median over its rounds. The table shows, per variant, the median
of the block medians and their spread (min to max), per model step, wall-clock and
CPU time; then each variant's gap to ``none`` per block; then the cost of one
``Trace.record`` per sink, in microseconds (the part of a step a sink can change).

Usage: ``uv run python benchmarks/bench_null_sink.py [--steps 10] [--rounds 60] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import _common
from bench_step_overhead import echo_tool, expect_answer, script

from agent_contract import Budget, Contract, Message, run
from agent_contract.testing import FakeModel
from agent_contract.trace import MemorySink, NullSink, Trace, TraceSink
from agent_contract_langchain import build_agent
from agent_contract_langchain.harness import run_graph

SINKS: dict[str, Callable[[], TraceSink | None]] = {
    "none": lambda: None,
    "none (A/A)": lambda: None,
    "NullSink": NullSink,
    "MemorySink": MemorySink,
}
"""The sink variants, by label: a factory for each (called once per variant)."""


HARNESSES = ("offline", "langchain")


def variants(steps: int, harnesses: tuple[str, ...] = HARNESSES) -> dict[str, Callable[[], Any]]:
    """``"<harness> / <sink>"`` -> one run of the script under that sink, for each of
    ``harnesses``."""
    replies = script(steps)
    budget = Budget(max_model_steps=steps + 1, max_tool_calls=steps, deadline_seconds=None)
    user = [Message(role="user", content="go")]
    found: dict[str, Callable[[], Any]] = {}
    for label, make in SINKS.items():
        contract = Contract([echo_tool()], budget=budget, trace_sink=make())

        def offline(contract: Contract = contract) -> Any:
            return expect_answer(run(FakeModel(replies, stateless=True), contract, "go"))

        graph = build_agent(FakeModel(replies, stateless=True), contract)

        def langchain(graph: Any = graph, contract: Contract = contract) -> Any:
            return expect_answer(run_graph(graph, contract.start(), user))

        if "offline" in harnesses:
            found[f"offline / {label}"] = offline
        if "langchain" in harnesses:
            found[f"langchain / {label}"] = langchain
    return found


def per_event(count: int, repeats: int) -> None:
    """Print the cost of one ``Trace.record`` (a ``tool_result``-like event) with no
    sink, a NullSink and a MemorySink: ``repeats`` interleaved blocks of ``count``
    events each, per event in microseconds (median of blocks, spread)."""
    fields = {"id": "call_1", "name": "echo", "status": "ok", "preview": "step 3", "ms": 0.1}
    timings: dict[str, list[float]] = {label: [] for label in SINKS}
    for block in range(repeats):
        labels = list(SINKS)
        if block % 2:
            labels.reverse()
        for label in labels:
            trace = Trace(run_id="bench", sink=SINKS[label]())
            record = trace.record
            start = time.perf_counter()
            for _ in range(count):
                record("tool_result", **fields)
            timings[label].append((time.perf_counter() - start) / count)
    rows = [
        [
            label,
            f"{statistics.median(values) * 1e6:.3f}",
            f"{min(values) * 1e6:.3f} .. {max(values) * 1e6:.3f}",
        ]
        for label, values in timings.items()
    ]
    print(f"one Trace.record, {repeats} blocks of {count} events ({_common.load()}):")
    print(_common.table(["sink", "us/event (median of blocks)", "spread"], rows))


def _gaps(samples: dict[str, list[float]], harness: str, label: str) -> list[float]:
    """Per block, the relative gap of ``<harness> / <label>`` to ``<harness> / none``."""
    base = samples[f"{harness} / none"]
    values = samples[f"{harness} / {label}"]
    return [(v - b) / b for v, b in zip(values, base, strict=True)]


def _ms(value: float) -> str:
    return f"{value * 1e3:.4f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="tool-call steps per run")
    parser.add_argument("--rounds", type=int, default=60, help="timed runs per variant per block")
    parser.add_argument("--repeats", type=int, default=5, help="independent blocks")
    parser.add_argument(
        "--events", type=int, default=20000, help="events per block of the per-event figure"
    )
    parser.add_argument(
        "--harness",
        choices=(*HARNESSES, "both"),
        default="both",
        help="which harnesses to time (default both)",
    )
    parser.add_argument("--warmup", type=int, default=10, help="untimed runs per variant")
    args = parser.parse_args(argv)
    if min(args.steps, args.rounds, args.repeats, args.events) < 1 or args.warmup < 0:
        parser.error("--steps, --rounds, --repeats and --events must be >= 1, --warmup >= 0")
    print(_common.environment())
    model_steps = args.steps + 1
    print(
        f"script: {args.steps} echo steps + 1 answer = {model_steps} model steps per run; "
        f"{args.repeats} blocks of {args.rounds} interleaved runs per variant "
        f"(after {args.warmup} warm-up runs each)\n"
    )
    harnesses = HARNESSES if args.harness == "both" else (args.harness,)
    runs = variants(args.steps, harnesses)
    # block medians, per model step: {variant: [median of block 1, ...]}
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for block in range(args.repeats):
        w, c = _common.interleaved(
            runs, rounds=args.rounds, warmup=args.warmup if block == 0 else 0, seed=block
        )
        for name in runs:
            wall[name].append(statistics.median(w[name]) / model_steps)
            cpu[name].append(statistics.median(c[name]) / model_steps)
        print(f"block {block + 1}/{args.repeats} done, {_common.load()}")
    print()
    rows = [
        [
            name,
            _ms(statistics.median(wall[name])),
            f"{_ms(min(wall[name]))} .. {_ms(max(wall[name]))}",
            _ms(statistics.median(cpu[name])),
            f"{_ms(min(cpu[name]))} .. {_ms(max(cpu[name]))}",
        ]
        for name in runs
    ]
    print(
        _common.table(
            [
                "harness / sink",
                "wall ms/step (median of blocks)",
                "wall spread",
                "CPU ms/step (median of blocks)",
                "CPU spread",
            ],
            rows,
        )
    )
    print()
    gap_rows = []
    for harness in harnesses:
        base = f"{harness} / none"
        for label in SINKS:
            name = f"{harness} / {label}"
            if name == base:
                continue
            gaps = [(v - b) / b * 100 for v, b in zip(wall[name], wall[base], strict=True)]
            cpu_gaps = [(v - b) / b * 100 for v, b in zip(cpu[name], cpu[base], strict=True)]
            gap_rows.append(
                [
                    name,
                    f"{statistics.median(gaps):+.2f}%",
                    " ".join(f"{g:+.1f}" for g in gaps),
                    f"{statistics.median(cpu_gaps):+.2f}%",
                    " ".join(f"{g:+.1f}" for g in cpu_gaps),
                ]
            )
    print(
        _common.table(
            [
                "vs <harness> / none",
                "wall gap (median)",
                "wall gap per block (%)",
                "CPU gap (median)",
                "CPU gap per block (%)",
            ],
            gap_rows,
        )
    )
    print()
    for harness in harnesses:
        for clock, samples in (("wall", wall), ("CPU", cpu)):
            noise = max(abs(g) for g in _gaps(samples, harness, "none (A/A)"))
            null = statistics.median(_gaps(samples, harness, "NullSink"))
            verdict = "within noise" if abs(null) <= noise else "above noise"
            print(
                f"{harness} ({clock}): NullSink vs none {null * 100:+.2f}% per step "
                f"(median of blocks); noise (largest A/A gap of a block) {noise * 100:.2f}%: "
                f"{verdict}; MemorySink vs none "
                f"{statistics.median(_gaps(samples, harness, 'MemorySink')) * 100:+.2f}%"
            )
    print()
    per_event(args.events, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
