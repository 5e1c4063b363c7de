"""The tool-call budget boundary: a batch crossing the tool-call budget is refused
before it runs, and the budget counts across resumes.
"""

from __future__ import annotations

from typing import Final

from ...budget import Budget
from ...testing import tool_call, tool_calls
from ..base import Boundary, BoundaryDefinition, Scenario
from ..checks import check_writes
from ..fixtures import basic_tools, tools_with, transfer_tool

__all__ = ["DEFINITION"]


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="tool_call_budget",
        label="tool-call budget",
        rule="a batch crossing the tool-call budget is refused before it runs",
        keep_it=(
            "`Budget(max_tool_calls=N)`: planning refuses a batch that would cross it whole, "
            "before any of it runs, and the budget counts across resumes."
        ),
    ),
    scenarios=(
        Scenario(
            name="tool_call_budget_parallel_batch",
            boundary="tool_call_budget",
            description="a batch of 3 under a budget of 2 is refused whole, before any runs",
            script=(
                tool_calls(
                    ("echo", {"text": "a"}), ("echo", {"text": "b"}), ("echo", {"text": "c"})
                ),
            ),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            stop_reason="max_tool_calls",
            trajectory=("echo",) * 3,
            results=(("error", "budget_exceeded"),) * 3,
            must_not_run=("echo",),
        ),
        Scenario(
            name="write_budget_across_resumes",
            boundary="tool_call_budget",
            description="the tool-call budget counts across resumes (a framework's own counters may reset)",
            script=(
                tool_call("transfer", {"to": "bob", "amount": 1}),
                tool_call("transfer", {"to": "bob", "amount": 2}),
                tool_call("transfer", {"to": "bob", "amount": 3}),
            ),
            tools=tools_with(transfer_tool),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            decisions=("approve", "approve", "approve"),
            stop_reason="max_tool_calls",
            trajectory=("transfer",) * 3,
            results=(("success", None), ("success", None), ("error", "budget_exceeded")),
            requires=("write_tools",),
            extra=(check_writes([1, 2], previews=2, boundary="tool_call_budget"),),
        ),
    ),
)
"""The tool-call budget boundary: its row and its scenarios."""
