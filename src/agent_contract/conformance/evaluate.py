"""Judging a run: :func:`observe` gives the harness-neutral view of what a run showed and
:func:`evaluate` every expectation it broke, tagged by boundary: the scenario's own
expectations (stop, answer, trajectory, tool results, tools that must not run, model
calls), the checks every boundary makes in every run
(:data:`~agent_contract.conformance.boundaries.table.EVERY_RUN`), then the scenario's own
checks (``Scenario.extra``).
"""

from __future__ import annotations

import json
from typing import Any

from ..harnesses import Observation
from ..messages import Message
from ..runtime import RunResult
from ..testing import FakeModel
from .base import Problem, Scenario
from .boundaries.table import EVERY_RUN
from .boundaries.trace_redaction import leaked
from .fixtures import Probe

__all__ = ["error_fields", "evaluate", "observe", "tool_message_view"]


def error_fields(content: str) -> tuple[str | None, bool]:
    """``(error kind, side_effects_possible)`` of a tool message's content: the
    contract's error JSON (``{"error": kind, ...}``), else ``(None, False)``."""
    try:
        data = json.loads(content)
    except ValueError:
        return None, False
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"], bool(data.get("side_effects_possible", False))
    return None, False


def tool_message_view(message: Message) -> dict[str, Any]:
    """The Observation view of one tool message."""
    kind, side_effects = (
        error_fields(message.content) if message.status == "error" else (None, False)
    )
    return {
        "id": message.tool_call_id,
        "name": message.name,
        "status": message.status,
        "error_kind": kind,
        "side_effects_possible": side_effects,
        "content": message.content,
    }


def observe(result: RunResult | Observation) -> Observation:
    """The Observation of a RunResult (an Observation is returned as it is)."""
    if isinstance(result, Observation):
        return result
    tool_messages = tuple(tool_message_view(m) for m in result.messages if m.role == "tool")
    emitted = "\n".join(
        [
            result.trace.to_jsonl(),
            *(m["content"] for m in tool_messages),
            result.output or "",
            json.dumps(result.to_dict(), ensure_ascii=False),
        ]
    )
    issued = tuple(c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls)
    return Observation(
        harness=result.harness,
        stop_reason=result.stop_reason,
        output=result.output,
        trajectory=tuple(result.trajectory()),
        tool_messages=tool_messages,
        trace_types=tuple(e["type"] for e in result.trace.events),
        emitted=emitted,
        issued_ids=issued,
    )


def evaluate(scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """Every way ``obs`` breaks the scenario's expectations, tagged by boundary."""
    problems: list[Problem] = []

    def fail(boundary: str, message: str) -> None:
        problems.append(Problem(boundary=boundary, message=message))

    if obs.stop_reason.startswith("crashed:"):
        # The run raised: one verdict, under the scenario's boundary. A leak in the
        # exception's text is still a leak.
        what = obs.emitted.splitlines()[0] if obs.emitted else ""
        problems.append(
            Problem(
                boundary=scenario.boundary,
                message=f"the run raised {obs.stop_reason.partition(':')[2]}: {what}"[:500],
                verdict="crashed",
            )
        )
        if leaked(scenario, obs.emitted):
            fail("trace_redaction", "the planted secret appears in the exception's text")
        return problems
    if obs.stop_reason != scenario.stop_reason:
        fail(
            scenario.boundary, f"stop_reason {obs.stop_reason!r}, expected {scenario.stop_reason!r}"
        )
    if scenario.stop_reason != "answered" and obs.output is not None:
        fail(scenario.boundary, f"a {scenario.stop_reason} stop produced an answer {obs.output!r}")
    if obs.trajectory != scenario.trajectory:
        fail(
            scenario.boundary,
            f"trajectory {list(obs.trajectory)}, expected {list(scenario.trajectory)}",
        )
    seen = tuple((m["status"], m["error_kind"]) for m in obs.tool_messages)
    if seen != scenario.results:
        fail(scenario.boundary, f"tool messages {list(seen)}, expected {list(scenario.results)}")
    for text in scenario.output_contains:
        if text not in (obs.output or ""):
            fail(scenario.boundary, f"answer lacks {text!r}: {obs.output!r}")
    for name in scenario.must_not_run:
        if probe.ran(name):
            fail(scenario.boundary, f"tool {name!r} ran {probe.ran(name)} time(s); it must not run")
    for every_run in EVERY_RUN:
        problems.extend(every_run(scenario, obs, model, probe))
    if scenario.model_calls is not None and len(model.calls) != scenario.model_calls:
        fail(
            scenario.boundary,
            f"the model was called {len(model.calls)} times, expected {scenario.model_calls}",
        )
    for check in scenario.extra:
        problems.extend(check(obs, model, probe))
    return problems
