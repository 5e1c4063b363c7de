"""Killable tools: how soon a run returns after a tool's timeout, in thread mode and with
process isolation, and whether the tool's late write lands (target: back within 0.3 s
of the 0.2 s timeout; thread mode's write lands, a killed process's never does).

These are the timings ``tests/isolation`` used to assert; the tests now assert only the
outcomes (killed, not landed). Each trial runs a one-call script (a tool that sleeps
0.6 s, then writes a file, under a 0.2 s timeout, then an answer) through the offline
loop, and measures the whole run; then it waits 1 s more for the late write.

Usage: ``uv run python benchmarks/bench_isolation.py [--trials 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _common

from agent_contract import Budget, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "isolation"))

from isolated_tools import held_write

TIMEOUT = 0.2
DELAY = 0.6
TARGET = 0.3
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "release": {"type": "string"}},
    "required": ["path", "release"],
}


def trial(isolation: str, folder: Path, index: int) -> tuple[float, str, bool]:
    """``(seconds the run took, reported outcome, whether the late write landed)``."""
    target, release = folder / f"{isolation}-{index}.txt", folder / f"{isolation}-{index}.go"
    spec = ToolSpec(
        name="held_write",
        description="Writes once released.",
        parameters=SCHEMA,
        handler=held_write,
        timeout_seconds=TIMEOUT,
        isolation=isolation,  # type: ignore[arg-type]
    )
    model = FakeModel(
        [tool_call("held_write", {"path": str(target), "release": str(release)}), "ok"]
    )
    start = time.perf_counter()
    result = run(model, [spec], "go", budget=Budget(deadline_seconds=30))
    took = time.perf_counter() - start
    time.sleep(max(0.0, DELAY - took))
    release.touch()  # the tool's 0.6 s are up: a live tool writes now
    end = time.monotonic() + 1.0
    while not target.exists() and time.monotonic() < end:
        time.sleep(0.01)
    return took, str(result.tool_calls[0].outcome), target.exists()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args(argv)
    print(_common.environment())
    print(
        f"tool timeout {TIMEOUT} s around a {DELAY} s write; target: the run returns within "
        f"{TARGET} s; {args.trials} trials per mode\n"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for isolation in ("thread", "process"):
            trial(isolation, Path(tmp), -1)  # warm-up (the forkserver starts once)
            runs = [trial(isolation, Path(tmp), i) for i in range(args.trials)]
            seconds = [r[0] for r in runs]
            rows.append(
                [
                    isolation,
                    f"{statistics.median(seconds):.3f}",
                    f"{max(seconds):.3f}",
                    ", ".join(sorted({r[1] for r in runs})),
                    f"{sum(r[2] for r in runs)}/{len(runs)}",
                    "met" if max(seconds) <= TARGET else "missed",
                ]
            )
    print(
        _common.table(
            ["mode", "median s (run)", "max s", "outcome", "late write landed", f"<= {TARGET} s"],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
