"""The run-deadline boundary: the run's wall-clock deadline cuts a tool short and stops
the run with a named reason.
"""

from __future__ import annotations

import time
from typing import Final

from ...budget import Budget
from ...testing import tool_call
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, call_then_answer
from ..fixtures import Probe, tools_with

__all__ = ["DEFINITION", "stall_tool"]


def stall_tool(probe: Probe) -> ToolSpec:
    """``stall(text)``: takes 2 s (its own timeout is 5 s): only the run deadline stops
    it earlier."""

    def handler(text: str) -> str:
        time.sleep(2.0)
        probe.late_writes.append(text)
        return f"stalled: {text}"

    return ToolSpec(
        name="stall",
        description="A tool that takes its time.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=handler,
        timeout_seconds=5.0,
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="deadline",
        label="run deadline",
        rule="the run's wall-clock deadline cuts a tool short and stops the run with a named reason",
        keep_it=(
            "`Budget(deadline_seconds=S)`: a call in flight gets at most the time left "
            "(past it: `timeout`, outcome unknown) and the run stops with `deadline` before "
            "the next model call; never switch it off in a driver or adapter."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="run_deadline",
            boundary="deadline",
            description=(
                "the run deadline cuts a slow tool short (timeout, outcome unknown) and stops "
                "the run with 'deadline' before the model is called again"
            ),
            call=tool_call("stall", {"text": "wait"}),
            answer="this answer must never be produced",
            result=("error", "timeout"),
            stop_reason="deadline",
            tools=tools_with(stall_tool),
            budget=Budget(deadline_seconds=0.8),
            model_calls=1,
        ),
    ),
)
"""The run deadline boundary: its row and its scenarios."""
