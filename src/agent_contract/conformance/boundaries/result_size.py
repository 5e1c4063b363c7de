"""The result-size boundary: oversized results are cut with an explicit marker."""

from __future__ import annotations

from typing import Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Problem, call_then_answer
from ..fixtures import Probe, text_tool, tools_with

__all__ = ["DEFINITION", "big_tool", "check_truncated"]

big_tool: Final = text_tool("big", "Returns a lot.", lambda text: "x" * 5_000, max_result_chars=500)
"""``big(text)``: returns 5,000 characters under a 500-character limit."""


def check_truncated(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The first tool message is at most 500 characters and carries the truncation
    marker."""
    content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
    if len(content) > 500 or "[truncated" not in content:
        return [
            Problem(boundary="result_size", message=f"result of {len(content)} chars, no marker")
        ]
    return []


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="result_size",
        label="result size",
        rule="oversized results are cut with an explicit marker",
        keep_it=(
            "`ToolSpec(max_result_chars=..., on_oversize='truncate' | 'error')`: oversized "
            "results are cut with an explicit marker, or refused as `result_too_large`."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="oversized_result",
            boundary="result_size",
            description="a 5000-char result is cut to 500 chars with a marker",
            call=tool_call("big", {"text": "all"}),
            answer="truncated",
            result=("success", None),
            tools=tools_with(big_tool),
            extra=(check_truncated,),
        ),
    ),
)
"""The result size boundary: its row and its scenarios."""
