"""Deprecated: the scenarios moved to :mod:`agent_contract.conformance` and the harness
types to :mod:`agent_contract.harnesses` (kept for one release).

Renamed: ``Outcome`` is :class:`~agent_contract.conformance.ScenarioOutcome`,
``Decider`` is :class:`~agent_contract.conformance.ScriptedDecider`, ``RunOptions`` is
:class:`~agent_contract.harnesses.RunInput` (whose ``secrets`` default to none; the
``RunOptions`` kept here still plants the suite's secret). ``BOUNDARIES`` here is the old
``{id: rule}`` view of :data:`agent_contract.conformance.BOUNDARIES`; ``HARNESS_NAMES``
is read from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._deprecated import moved
from .conformance import BOUNDARIES as _BOUNDARIES
from .conformance import (
    PLANTED_SECRET,
    SCENARIOS,
    Probe,
    Problem,
    Scenario,
    evaluate,
    hide_planted,
    observe,
    run_scenario,
    scenario,
)
from .conformance import ScenarioOutcome as Outcome
from .conformance import ScriptedDecider as Decider
from .conformance.base import Check
from .conformance.evaluate import tool_message_view
from .harnesses import Harness, Observation, RunInput, offline_harness, settle_approvals
from .registry import harness_names, load_harness

moved(__name__, "agent_contract.conformance and agent_contract.harnesses")

__all__ = [
    "BOUNDARIES",
    "HARNESS_NAMES",
    "PLANTED_SECRET",
    "SCENARIOS",
    "Check",
    "Decider",
    "Harness",
    "Observation",
    "Outcome",
    "Probe",
    "Problem",
    "RunOptions",
    "Scenario",
    "build_approval_scenarios",
    "build_scenarios",
    "evaluate",
    "hide_planted",
    "load_harness",
    "observe",
    "offline_harness",
    "run_scenario",
    "scenario",
    "settle_approvals",
    "tool_message_view",
]

BOUNDARIES: Final[dict[str, str]] = {b.id: b.rule for b in _BOUNDARIES}
"""Deprecated: ``{id: rule}`` of :data:`agent_contract.conformance.BOUNDARIES`."""

HARNESS_NAMES: Final[tuple[str, ...]] = harness_names()
"""Deprecated: :func:`agent_contract.registry.harness_names`."""


@dataclass(frozen=True, kw_only=True)
class RunOptions(RunInput):
    """Deprecated: :class:`~agent_contract.harnesses.RunInput` with the planted secret."""

    secrets: tuple[str, ...] = (PLANTED_SECRET,)
    """Values to redact (the suite's planted secret)."""


def build_scenarios() -> list[Scenario]:
    """Deprecated: the first 23 scenarios of :data:`agent_contract.conformance.SCENARIOS`
    (the ones this function built before the scenarios moved to one module per
    boundary)."""
    return list(SCENARIOS[:23])


def build_approval_scenarios() -> list[Scenario]:
    """Deprecated: the six scenarios of write tools this function built (the
    write-approval ones and ``write_budget_across_resumes``)."""
    start = [s.name for s in SCENARIOS].index("write_waits_for_approval")
    return list(SCENARIOS[start : start + 6])
