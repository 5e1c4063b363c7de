"""The fail-closed tool-errors boundary: tool failures are classified errors, never raw
exceptions or text (a raising tool, a tool's own classified errors, a tool that pauses
on a framework interrupt); and, in every run, a failure reported once was run once: each
handler body ran once per call plus the retries the contract admitted
(:func:`check_handler_runs`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...errors import NotFoundError, TransientError, UnauthorizedError
from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Problem, Scenario, call_then_answer
from ..fixtures import PLANTED_SECRET, Probe, kind_tool, text_tool, tools_with

__all__ = [
    "DEFINITION",
    "ask_tool",
    "check_handler_runs",
    "check_hidden_text",
    "explode_tool",
    "fetch_record_tool",
]


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


def _history_ids(scenario: Scenario) -> set[str]:
    return {c.id for m in scenario.history for c in m.tool_calls if c.id}


def check_handler_runs(
    scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe
) -> list[Problem]:
    """In every run: the handler body of each counted read tool (``probe.counted``) ran
    at most once per ``tool_call_id`` the model issued in the run, and once more only for
    each retry the contract admitted and traced (``tool_retry``, charged to the budget);
    a call the run answered with a success ran exactly so. A layer that re-runs a
    handler where the contract cannot see it (an adapter retrying inside one call) is
    caught by what the handler itself noted, whatever the run reported.

    Runs under an id the model never issued (a bare context's ``""``) are not counted,
    and then no run can be matched to its call: whether a tool got its call's id is the
    tool-context boundary's."""
    issued = {i for i in obs.issued_ids if i} - _history_ids(scenario)
    runs = probe.runs_by_call(probe.counted)
    admitted = 1 + obs.trace_types.count("tool_retry")
    problems = [
        f"the handler ran {count} times for call {call_id!r}, but the contract admitted "
        f"{admitted} attempt(s)"
        for call_id, count in sorted(runs.items())
        if call_id in issued and count > admitted
    ]
    if all(call_id in issued for call_id in runs):
        problems += [
            f"call {m['id']!r} of {m['name']!r} was answered with a success, but its "
            "handler never ran"
            for m in obs.tool_messages
            if m["status"] == "success"
            and m["name"] in probe.counted
            and m["id"] in issued
            and not runs.get(m["id"])
        ]
    return [Problem(boundary="tool_errors", message=m) for m in problems]


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
            extra=(check_hidden_text,),
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
    every_run=(check_handler_runs,),
)
"""The fail-closed tool errors boundary: its row and its scenarios."""
