"""Wall time of ``agent-contract check --agent`` on a deepagents agent.

Runs ``agent-contract check --agent tests.agents.deep:build_deep_agent`` (a
``create_deep_agent`` with the team's tool, ``TodoListMiddleware`` and one sub-agent of
its own: three agents, ten tools on the main one, eight on each sub-agent) with the
tools' effects declared, in a fresh process each time (import, factory calls, every
probe on every column of every agent, the report), ``--repeat`` times from the
repository root, and prints each wall time, the median wall and CPU time, the exit code (5: the agent as
built breaks the contract, which is the verdict) and how many probes ran. Add
``--supervisor`` for the langgraph-supervisor team (two workers) as well.

The issue's target is under 60 s on a 2-CPU machine; this prints a figure, it is not a
timed test.

Usage: ``uv run python benchmarks/bench_check_agent.py [--repeat 3] [--supervisor]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
DEEP = (
    "tests.agents.deep:build_deep_agent",
    "lookup_order=read,ls=read,read_file=read,glob=read,grep=read,"
    "write_file=write,edit_file=write,delete=write,task=write,write_todos=write",
)
SUPERVISOR = ("tests.agents.supervisor:build_team", "add=read,lookup_order=read")


def _probes(agent: dict[str, object]) -> int:
    """The probes of an agent's ``--format json`` object and of its sub-agents'."""
    children = agent.get("agents") or []
    own = len(agent.get("probes") or {})  # type: ignore[arg-type]
    return own + sum(_probes(child) for child in children)  # type: ignore[union-attr]


def _once(spec: str, effects: str) -> tuple[float, float, int, int, int]:
    """``(wall seconds, CPU seconds, exit code, agents, probes)`` of one check in a fresh
    process (CPU: user + system of the child, the figure a loaded machine does not
    inflate)."""
    command = [
        sys.executable,
        "-m",
        "agent_contract.app.cli",
        "check",
        "--agent",
        spec,
        "--effect",
        effects,
        "--format",
        "json",
        "--quiet",
    ]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own command line, no shell
        command, cwd=ROOT, capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 5):
        sys.stderr.write(done.stderr[-2000:])
        raise SystemExit(f"check --agent {spec} exited {done.returncode}")
    agent = json.loads(done.stdout)["agent"]
    return wall, cpu, done.returncode, 1 + len(agent["agents"]), _probes(agent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh-process runs per agent")
    parser.add_argument(
        "--supervisor", action="store_true", help="also the langgraph-supervisor team"
    )
    args = parser.parse_args(argv)
    print(_common.environment())
    print(
        f"deepagents {_common.version('deepagents')}, "
        f"langgraph-supervisor {_common.version('langgraph-supervisor')}\n"
    )
    targets = [DEEP, *([SUPERVISOR] if args.supervisor else [])]
    rows = []
    for spec, effects in targets:
        runs = [_once(spec, effects) for _ in range(args.repeat)]
        walls = [r[0] for r in runs]
        _, _, code, agents, probes = runs[-1]
        rows.append(
            [
                spec,
                " ".join(f"{w:.1f}" for w in walls),
                f"{statistics.median(walls):.1f}",
                f"{statistics.median(r[1] for r in runs):.1f}",
                str(code),
                str(agents),
                str(probes),
            ]
        )
    print(
        _common.table(
            [
                "--agent",
                "wall s (each run)",
                "median wall s",
                "median cpu s",
                "exit",
                "agents",
                "probes",
            ],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
