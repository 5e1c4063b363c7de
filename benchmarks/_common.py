"""Shared helpers for the benchmark scripts: the environment banner, timing, tables.

Not a benchmark itself. The scripts put their own directory first on ``sys.path`` (as
``python benchmarks/<name>.py`` does), so ``import _common`` works.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> str:
    """One block describing where the figures came from."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    lines = [
        f"python        {platform.python_version()} ({platform.python_implementation()}), "
        f"flags: {' '.join(_flags()) or 'none'}",
        f"platform      {platform.platform()}",
        f"cpus          {os.cpu_count()}",
        f"load average  {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1/5/15 min, at start)",
        f"agent-contract {version('agent-contract')}, langchain {version('langchain')}, "
        f"langchain-core {version('langchain-core')}, langgraph {version('langgraph')}",
    ]
    return "\n".join(lines)


def load() -> str:
    """The load average now, ``"load 1.23/1.50/1.80 (1/5/15 min)"`` (printed with every
    figure: the machine may be shared)."""
    avg = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return f"load {avg[0]:.2f}/{avg[1]:.2f}/{avg[2]:.2f} (1/5/15 min)"


def _flags() -> list[str]:
    flags = []
    if sys.flags.optimize:
        flags.append("-O")
    if sys.warnoptions:
        flags.append("-W " + ",".join(sys.warnoptions))
    return flags


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds one call of ``fn`` takes: ``perf_counter`` and the
    process's CPU time (all threads), which other processes' load barely moves."""
    cpu = time.process_time()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def interleaved(
    variants: dict[str, Callable[[], Any]], *, rounds: int, warmup: int, seed: int = 0
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Time each variant ``rounds`` times, interleaved round by round in a shuffled
    (seeded) order so that drift in machine load hits every variant alike.

    Returns ``(wall, cpu)``: seconds per run, by variant.
    """
    import random

    rng = random.Random(seed)
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            w, c = timed(variants[name])
            wall[name].append(w)
            cpu[name].append(c)
        gc.collect()
    return wall, cpu


def summary(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "min": ordered[0],
        "p99": p99,
        "max": ordered[-1],
    }


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (it also reads well in a terminal)."""
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])
