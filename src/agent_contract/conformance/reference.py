"""Comparing a harness's observation with the reference harness's (the offline loop):
one definition, used by ``agent-contract check`` and the pytest suite's agreement test."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from ..harnesses import Observation
from .base import Problem, Scenario
from .runner import ScenarioOutcome

__all__ = ["differences", "with_differences"]


_AFTER_STOP: Final = frozenset({"refused_after_stop"})
"""Trace events left out of the comparison with the reference: a framework step (a
graph's extra node, a structured-output retry) the contract refused after the run had
stopped; the run's result is the same, and a harness without that framework has none."""

_REFERENCE_FIELDS: Final = {
    "stop_reason": "stop",
    "output": "answer",
    "trajectory": "trajectory",
    "tool_messages": "bound tool messages (id, status, error kind, side effects)",
    "trace_types": "trace events",
}


def differences(
    scenario: Scenario, obs: Observation, reference: Observation, reference_name: str = "offline"
) -> list[Problem]:
    """How ``obs`` differs from the reference harness's observation of the same scenario
    (:meth:`Observation.comparable`: stop, answer, trajectory, bound tool messages,
    trace event types, ``refused_after_stop`` left out): one problem per differing field,
    under the scenario's boundary,
    the trace's under ``trace_redaction`` and the tool messages' ids under
    ``call_id_binding``. A crashed run has its own verdict and is not compared.

    The pytest suite's agreement test and ``agent-contract check`` both use it."""
    if obs.stop_reason.startswith("crashed:") or reference.stop_reason.startswith("crashed:"):
        return []
    mine, theirs = obs.comparable(), reference.comparable()
    for fields in (mine, theirs):  # a framework's step refused after the stop changes nothing
        fields["trace_types"] = tuple(t for t in fields["trace_types"] if t not in _AFTER_STOP)
    problems = []
    for key, label in _REFERENCE_FIELDS.items():
        if mine[key] == theirs[key]:
            continue
        boundary = scenario.boundary
        if key == "trace_types":
            boundary = "trace_redaction"
        elif key == "tool_messages" and [m[0] for m in mine[key]] != [m[0] for m in theirs[key]]:
            boundary = "call_id_binding"
        problems.append(
            Problem(
                boundary=boundary,
                message=f"{label} differ from the {reference_name} reference: "
                f"{_short(mine[key])}, reference {_short(theirs[key])}",
            )
        )
    return problems


def with_differences(outcome: ScenarioOutcome, reference: ScenarioOutcome) -> ScenarioOutcome:
    """``outcome`` with its :func:`differences` from ``reference`` (the reference
    harness's outcome of the same scenario, named by its ``harness``) added as problems;
    ``outcome`` itself when there are none."""
    found = differences(
        outcome.scenario, outcome.observation, reference.observation, reference.harness
    )
    return replace(outcome, problems=(*outcome.problems, *found)) if found else outcome


def _short(value: Any, limit: int = 400) -> str:
    text = repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
