"""Checkpoint size of a LangChain run whose tool returns a 5 MB artifact.

The tool's application-only data reaches the application as ``RunResult.artifacts`` and
never enters the graph state; the checkpoint holds what the model saw. Measured on one
machine (the PR's figures): before, 15.8 MB for each case; after, 0.03-0.05 MB. The
test ``tests/contract/test_issue_inputs.py::test_input_6_a_checkpoint_never_stores_the_artifact``
holds the bound (under 1 MB).

Usage: ``uv run python benchmarks/bench_artifact_checkpoint.py``
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract import Budget, ToolSpec
from agent_contract.results import ToolOutput
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import run_agent

FIVE_MB = 5 * 1024 * 1024

CASES: dict[str, Callable[[], Any]] = {
    "ToolOutput, 5 MB str artifact": lambda: ToolOutput(value="summary", artifact="x" * FIVE_MB),
    "ToolOutput, 5 MB dict artifact": lambda: ToolOutput(
        value="summary", artifact={"rows": ["y" * 1024] * 5120}
    ),
    "raw 5 MB str (content truncated)": lambda: "z" * FIVE_MB,
}


def measure(make: Callable[[], Any]) -> tuple[float, int]:
    """``(checkpoint megabytes, artifacts kept on the RunResult)``."""
    spec = ToolSpec(
        name="export",
        description="Export.",
        parameters={"type": "object", "properties": {}},
        handler=make,
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "checkpoints.sqlite3"
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            result = run_agent(
                FakeModel([tool_call("export", {}), "done"]),
                [spec],
                "go",
                budget=Budget(deadline_seconds=60.0),
                checkpointer=SqliteSaver(conn),
            )
            conn.commit()
        finally:
            conn.close()
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
    return size / 1e6, len(result.artifacts)


def main() -> None:
    print(_common.environment())
    print("| case | checkpoint (MB) | artifacts on RunResult |")
    print("| --- | --- | --- |")
    for name, make in CASES.items():
        megabytes, kept = measure(make)
        print(f"| {name} | {megabytes:.2f} | {kept} |")


if __name__ == "__main__":
    main()
