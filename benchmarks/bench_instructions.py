"""Instructions per model step of the offline loop, counted by valgrind's callgrind.

A loaded machine moves wall-clock and even process-CPU figures a lot; an instruction
count does not move with the load (callgrind runs the threads one at a time and counts
what the process executes, not what the kernel does for it: a worker-thread hop's
context switches are not in it, see ``--inline``). The script runs itself under
``valgrind --tool=callgrind`` twice, with 0 and with ``--runs`` runs of the workload
(20 ``echo`` steps and an answer: 21 model steps, as ``bench_side_by_side.py``), and
prints the difference per model step, with the load average beside it.

```bash
uv run python benchmarks/bench_instructions.py                # the shipped executor
uv run python benchmarks/bench_instructions.py --inline       # handlers inline (no hop)
uv run python benchmarks/bench_instructions.py --steps 200    # a longer run: the growth
uv run python benchmarks/bench_instructions.py --workload pydantic       # the binding
uv run python benchmarks/bench_instructions.py --workload pydantic-bare  # bare PydanticAI
```

``--workload pydantic`` runs the same script through the PydanticAI binding
(``build_agent`` + ``drive_agent``, ``run_sync``), ``pydantic-bare`` through a plain
PydanticAI ``Agent`` over the same tool (``bench_pydantic_ai_step.py``'s ``bare``).

Needs ``valgrind`` on ``PATH``; about a minute per count (callgrind is ~50x slower).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, load

WORKLOADS = ("offline", "pydantic", "pydantic-bare")


def _pydantic(runs: int, steps: int, *, bare: bool) -> None:
    """``runs`` runs of the script through PydanticAI (the binding, or bare), after 3
    warm-up runs."""
    from bench_pydantic_ai_step import variants

    once = variants(steps)["bare" if bare else "binding"]
    for _ in range(3 + runs):
        once()


def workload(runs: int, *, inline: bool, steps: int = 20, kind: str = "offline") -> None:
    """Run the workload ``runs`` times after 3 warm-up runs (the warm-up is in both
    counts, so it cancels): ``steps`` echo calls and an answer."""
    if kind != "offline":
        _pydantic(runs, steps, bare=kind == "pydantic-bare")
        return
    from agent_contract import Budget, Contract, ToolSpec, run
    from agent_contract.testing import FakeModel, tool_call

    def echo(text: str) -> str:
        return text

    spec = ToolSpec(
        name="echo",
        description="Echo the text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=echo,
    )
    budget = Budget(
        max_model_steps=steps + 1,
        max_tool_calls=steps,
        deadline_seconds=None,
        max_trace_bytes=10**12,
        max_identical_calls=steps + 1,
    )
    executor: Any = None
    if inline:
        from bench_side_by_side import InlineExecutor

        executor = InlineExecutor(max_workers=1)
    contract = Contract([spec], budget=budget, executor=executor)
    model = FakeModel(
        [tool_call("echo", {"text": f"step {i}"}) for i in range(steps)] + ["done"],
        stateless=True,
    )
    for _ in range(3 + runs):
        result = run(model, contract, "go")
        if result.stop_reason != "answered":
            raise SystemExit(f"the workload did not end in an answer: {result.stop_reason}")


def count(runs: int, *, inline: bool, steps: int, kind: str) -> int:
    """Instructions callgrind counts for the whole process with ``runs`` runs."""
    with tempfile.TemporaryDirectory() as folder:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder}/callgrind.out",
            sys.executable,
            __file__,
            "--child",
            str(runs),
            *(["--inline"] if inline else []),
            f"--steps={steps}",
            f"--workload={kind}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)  # noqa: S603 - our own command line
    found = re.search(r"Collected\s*:\s*([\d,]+)", done.stderr) or re.search(
        r"refs:\s*([\d,]+)", done.stderr
    )
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="counted runs (21 model steps each)")
    parser.add_argument("--inline", action="store_true", help="handlers inline (no thread hop)")
    parser.add_argument("--steps", type=int, default=20, help="echo steps per run")
    parser.add_argument("--workload", choices=WORKLOADS, default="offline")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        workload(args.child, inline=args.inline, steps=args.steps, kind=args.workload)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    print(environment())
    options = {"inline": args.inline, "steps": args.steps, "kind": args.workload}
    base = count(0, **options)
    total = count(args.runs, **options)
    per_step = (total - base) / (args.runs * (args.steps + 1))
    mode = "handlers inline" if args.inline else "sync tool, worker-thread hop"
    print(
        f"{args.workload} ({mode}, {args.steps} steps + 1 answer): {per_step:,.0f} "
        f"instructions per model step; {load()}"
    )


if __name__ == "__main__":
    main()
