"""The fail-closed tool-errors boundary: tool failures are classified errors, never raw
exceptions or text (a raising tool, a tool's own classified errors, a tool that pauses
on a framework interrupt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...errors import NotFoundError, TransientError, UnauthorizedError
from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Problem, Scenario, call_then_answer
from ..checks import check_ran_once_per_attempt
from ..fixtures import PLANTED_SECRET, Probe, kind_tool, text_tool, tools_with

__all__ = ["DEFINITION", "ask_tool", "check_hidden_text", "explode_tool", "fetch_record_tool"]


def _explode(text: str) -> str:
    raise RuntimeError(f"database password is {PLANTED_SECRET}; traceback follows")


explode_tool: Final = text_tool("explode", "A tool that fails.", _explode)
"""``explode(text)``: raises an exception whose text holds the planted secret."""


def _raise_classified(kind: str, error: Callable[[str], Exception]) -> Any:
    raise error(f"record lookup failed: {kind}")


fetch_record_tool: Final = kind_tool(
    "fetch_record",
    "Fetch a record; fails in a classified way.",
    {"unauthorized": UnauthorizedError, "not_found": NotFoundError, "transient": TransientError},
    _raise_classified,
)
"""``fetch_record(kind)``: raises the classified ToolError ``kind`` names."""
ask_tool: Final = text_tool("ask_human", "Asks the user.", lambda text: f"asked: {text}")
"""``ask_human(text)``: a harness with pauses pauses before it runs."""


def check_hidden_text(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """No tool message shows a traceback or the raising tool's exception text."""
    text = " ".join(m["content"] for m in obs.tool_messages)
    if "traceback" in text.lower() or "database password" in text:
        return [Problem(boundary="tool_errors", message="exception text reached the model")]
    return []


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="tool_errors",
        label="fail-closed tool errors",
        rule="tool failures are classified errors, never raw exceptions or text",
        keep_it=(
            "Run tools through `RunState.execute`: exceptions become `tool_error`, or the "
            "kind of a raised `UnauthorizedError` / `NotFoundError` / `TransientError`; "
            "exception text stays out unless `Contract(expose_exception_text=True)`."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="tool_raises",
            boundary="tool_errors",
            description="an exception becomes tool_error; its text (with a secret) stays hidden",
            call=tool_call("explode", {"text": "go"}),
            answer="it failed",
            result=("error", "tool_error"),
            tools=tools_with(explode_tool),
            extra=(check_hidden_text, check_ran_once_per_attempt("explode", "tool_errors")),
        ),
        *[
            call_then_answer(
                name=f"classified_{kind}",
                boundary="tool_errors",
                description=f"a tool's own {kind} error keeps its kind",
                call=tool_call("fetch_record", {"kind": kind}),
                answer="handled",
                result=("error", kind),
                tools=tools_with(fetch_record_tool),
                extra=(check_ran_once_per_attempt("fetch_record", "tool_errors"),),
            )
            for kind in ("unauthorized", "not_found", "transient")
        ],
        Scenario(
            name="pausing_tool",
            boundary="tool_errors",
            description="a tool that pauses on a framework interrupt ends the run "
            "interrupted (resumable), never as a tool error",
            script=(tool_call("ask_human", {"text": "which colour?"}), "done"),
            tools=tools_with(ask_tool),
            extras={"pausing_tools": ("ask_human",)},
            requires=("pauses",),
            stop_reason="interrupted",
            trajectory=(),
            must_not_run=("ask_human",),
        ),
    ),
)
"""The fail-closed tool errors boundary: its row and its scenarios."""
