"""The calculator's worst case over adversarial inputs (target: under 5 ms per call).

Inputs: a fixed adversarial corpus (the most nodes the length limit allows, the
deepest nesting the limits allow, the longest literals, rejected constructs that parse
to big trees, over-limit and unparseable text) plus seeded random inputs up to the
length limit (random arithmetic over the allowed tokens, random printable text, random
Unicode). Each input is evaluated ``--repeat`` times; an input's time is the median of
its repeats (so one scheduler hiccup does not count as the input's cost), and the
table reports the max and p99 of those medians, and the single slowest call seen.

Usage: ``uv run python benchmarks/bench_calculator.py [--random 3000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time

import _common

from agent_contract.app.builtin_tools.calculator import (
    MAX_DEPTH,
    MAX_EXPRESSION_CHARS,
    evaluate,
)
from agent_contract.errors import InvalidArgumentsError

N = MAX_EXPRESSION_CHARS


def _balanced(levels: int) -> str:
    """A balanced tree of additions: many nodes at a small depth."""
    text = "7"
    for _ in range(levels):
        text = f"({text}+{text})"
    return text


CORPUS: dict[str, str] = {
    "most nodes (1+1+...)": "1" + "+1" * ((N - 1) // 2),
    "most nodes (1*1*...)": "1" + "*1" * ((N - 1) // 2),
    "most nodes, mixed ops": "".join(
        f"{d}{o}" for d, o in zip("1" * 100, "+-*/%" * 20, strict=True)
    )[: N - 1]
    + "1",
    "longest accepted chain (1+1+...)": "1" + "+1" * (MAX_DEPTH - 1),
    "balanced sums": _balanced(5),
    "deepest brackets": "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH,
    "brackets one too deep": "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1),
    "unary chain at the limit": "-" * (MAX_DEPTH - 1) + "1",
    "unary chain to the length limit": "-" * (N - 1) + "1",
    "nested -( chains": "-(" * 15 + "1" + ")" * 15,
    "longest int literal": "9" * N,
    "longest float literal": "0." + "9" * (N - 2),
    "huge exponent literal": "1e" + "9" * (N - 2),
    "float underflow chain": "1e-300" + "*1e-300" * 27,
    "division chain": "1" + "/3" * ((N - 1) // 2),
    "floor-division chain": "999999999999999" + "//7" * 60,
    "modulo chain": "999999999999999" + "%7" * 90,
    "power (refused)": "2 ** 1000000",
    "power tower (refused)": "9**9**9**9**9**9**9**9**9",
    "multiplication to the bound": "999999999999999*999999999999999*999999999999999",
    "call (refused)": "__import__('os').system('true')",
    "attribute chain (refused)": "()" + ".__class__" * 19,
    "long string (refused)": "'" + "a" * (N - 2) + "'",
    "list of many items (refused)": "[" + ",".join("1" * 99) + "]",
    "comparison chain (refused)": "1" + "<1" * 99,
    "boolean chain (refused)": "1" + " or 1" * 39,
    "lambda (refused)": "lambda: (lambda: (lambda: 1))",
    "comprehension (refused)": "[x for x in [y for y in [z for z in ()]]]",
    "unparseable": ")" * N,
    "over the length limit": "1" * (N + 1),
    "over the length limit, huge": "1+" * 100_000,
    "unicode digits (refused)": "١٢٣" * 66,
    "null bytes": "\x00" * N,
}


def random_arithmetic(rng: random.Random) -> str:
    """Random text over the allowed tokens, up to the length limit."""
    tokens = ["1", "7", "0", "999999999999999", "0.5", "1e15", "1e-9", "0x1f"]
    ops = ["+", "-", "*", "/", "//", "%"]
    parts: list[str] = []
    depth = 0
    while sum(map(len, parts)) < rng.randint(1, N):
        choice = rng.random()
        if choice < 0.15 and depth < MAX_DEPTH:
            parts.append(rng.choice(["(", "-(", "+("]))
            depth += 1
        else:
            parts.append(rng.choice(tokens))
            if depth and rng.random() < 0.3:
                parts.append(")")
                depth -= 1
            parts.append(rng.choice(ops))
    parts.append("1" + ")" * depth)
    return "".join(parts)[:N]


def random_text(rng: random.Random) -> str:
    alphabet = string.printable if rng.random() < 0.5 else "0123456789+-*/%().e "
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, N)))


def random_unicode(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(0, N)))


def time_one(expression: str, repeat: int) -> tuple[float, float, str]:
    """``(median seconds, slowest seconds, outcome)`` over ``repeat`` evaluations."""
    times = []
    outcome = ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            value = evaluate(expression)
            outcome = f"= {value!r}"[:40]
        except InvalidArgumentsError as exc:
            outcome = f"refused: {exc.message}"
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=3000, help="random inputs per kind")
    parser.add_argument("--repeat", type=int, default=5, help="evaluations per input")
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args(argv)
    print(_common.environment())
    rng = random.Random(args.seed)
    for expression in list(CORPUS.values())[:5]:  # warm-up
        time_one(expression, 3)

    corpus_rows = []
    medians: list[float] = []
    slowest_call = 0.0
    for name, expression in CORPUS.items():
        median, worst, outcome = time_one(expression, args.repeat)
        medians.append(median)
        slowest_call = max(slowest_call, worst)
        corpus_rows.append([name, f"{median * 1e3:.3f}", f"{worst * 1e3:.3f}", outcome])
    corpus_rows.sort(key=lambda row: -float(row[1]))
    print(
        f"\nadversarial corpus ({len(CORPUS)} inputs, {args.repeat} evaluations each), slowest first:"
    )
    print(_common.table(["input", "median ms", "max ms", "outcome"], corpus_rows[:12]))

    kinds = {
        "random arithmetic": random_arithmetic,
        "random printable": random_text,
        "random unicode": random_unicode,
    }
    rows = []
    for kind, make in kinds.items():
        kind_medians = []
        for _ in range(args.random):
            median, worst, _ = time_one(make(rng), args.repeat)
            kind_medians.append(median)
            slowest_call = max(slowest_call, worst)
        medians.extend(kind_medians)
        stats = _common.summary(kind_medians)
        rows.append(
            [
                kind,
                str(args.random),
                f"{stats['median'] * 1e3:.3f}",
                f"{stats['p99'] * 1e3:.3f}",
                f"{stats['max'] * 1e3:.3f}",
            ]
        )
    overall = _common.summary(medians)
    corpus_stats = _common.summary(medians[: len(CORPUS)])
    rows.insert(
        0,
        [
            "adversarial corpus",
            str(len(CORPUS)),
            f"{corpus_stats['median'] * 1e3:.3f}",
            f"{corpus_stats['p99'] * 1e3:.3f}",
            f"{corpus_stats['max'] * 1e3:.3f}",
        ],
    )
    rows.append(
        [
            "all",
            str(len(medians)),
            f"{overall['median'] * 1e3:.3f}",
            f"{overall['p99'] * 1e3:.3f}",
            f"{overall['max'] * 1e3:.3f}",
        ]
    )
    print("\nper-input time (median of repeats):")
    print(_common.table(["inputs", "count", "median ms", "p99 ms", "max ms"], rows))
    worst = overall["max"]
    print(
        f"\nworst input {worst * 1e3:.3f} ms (target < 5 ms): {'met' if worst < 0.005 else 'missed'}; "
        f"slowest single call {slowest_call * 1e3:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
