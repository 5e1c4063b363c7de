"""The demo model on adversarial requests: a 1 MB prompt must be answered or refused in
well under a second (target: 50 ms), whatever its shape.

The demo model reads at most ``MAX_REQUEST_CHARS`` characters with possessive, anchored
patterns; a longer request gets a plain refusal. This script times ``DemoModel.complete``
and a whole offline ``run`` on prompts of 1 KB, 100 KB and 1 MB in several shapes (long
runs of spaces or newlines after a keyword, a keyword then a colon-and-space run, no
keyword at all, CJK text). Before the fix a 100 KB prompt with a run of spaces cost about
60 s (quadratic backtracking).

Usage: ``uv run python benchmarks/bench_demo_model.py [--repeat 5]``
"""

# A fullwidth colon on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common

from agent_contract import run
from agent_contract.app.demo import demo_tools
from agent_contract.messages import Message
from agent_contract.testing import MAX_REQUEST_CHARS, DemoModel

TARGET_SECONDS = 0.05
OFFERED = [
    {"type": "function", "function": {"name": n}}
    for n in ("calculator", "policy_lookup", "lookup_order")
]


def shapes(size: int) -> dict[str, str]:
    return {
        "calculate + spaces + x": "calculate 1" + " " * size + "+1",
        "look up order + spaces + words": "look up order" + " " * size + "A-1001 x",
        "keyword + ' :' runs": "计算" + " ：" * (size // 2),
        "newlines": "refund order\n" + "\n" * size + "A-1001",
        "no keyword": "x" * size,
        "CJK text": "查询订单" * (size // 4),
    }


def time_it(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        begun = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - begun)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(_common.environment())
    print()
    print("| prompt | size | model.complete median ms | offline run median ms | reply |")
    print("|---|---|---|---|---|")
    worst = 0.0
    with tempfile.TemporaryDirectory() as folder:
        tools = demo_tools(Path(folder))
        for size in (1_000, 100_000, 1_000_000):
            for name, text in shapes(size).items():
                model = DemoModel()
                messages = [Message(role="user", content=text)]
                reply = model.complete(messages, tools=OFFERED)
                shown = (
                    "tool call"
                    if reply.tool_calls
                    else "refused (too long)"
                    if len(text) > MAX_REQUEST_CHARS
                    else "answer"
                )
                complete = time_it(
                    lambda m=model, ms=messages: m.complete(ms, tools=OFFERED), args.repeat
                )
                whole = time_it(
                    lambda t=text: run(DemoModel(), tools, t, caller="alice"), args.repeat
                )
                worst = max(worst, whole)
                print(
                    f"| {name} | {len(text):,} | {complete * 1000:.3f} | {whole * 1000:.2f} | {shown} |"
                )
    verdict = "met" if worst < TARGET_SECONDS else "MISSED"
    print(
        f"\nslowest whole run: {worst * 1000:.2f} ms (target {TARGET_SECONDS * 1000:.0f} ms: {verdict})"
    )


if __name__ == "__main__":
    main()
