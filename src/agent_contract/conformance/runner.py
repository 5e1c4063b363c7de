"""Running one scenario on one harness: :func:`run_scenario` and its
:class:`ScenarioOutcome`."""

from __future__ import annotations

from dataclasses import dataclass

from ..harnesses import Harness, Observation
from ..testing import FakeModel
from .evaluate import Problem, Scenario, evaluate, observe
from .fixtures import Probe

__all__ = ["ScenarioOutcome", "run_scenario"]


@dataclass(frozen=True, kw_only=True)
class ScenarioOutcome:
    """One scenario run on one harness."""

    scenario: Scenario
    harness: str
    observation: Observation
    problems: tuple[Problem, ...]

    @property
    def holds(self) -> bool:
        """True when no expectation failed."""
        return not self.problems


def run_scenario(scenario: Scenario, harness: Harness, harness_name: str) -> ScenarioOutcome:
    """Run ``scenario`` on ``harness`` and evaluate it.

    Any exception the harness raises (``ScriptExhaustedError`` included: looping past
    the script breaks the step boundary) yields an observation with stop reason
    ``crashed:<ExceptionType>``, which breaks the scenario's boundary.
    """
    probe = Probe()
    model = FakeModel(scenario.script)
    tools = scenario.tools(probe)
    try:
        obs = observe(harness(model, tools, scenario.options(probe)))
    except Exception as exc:  # noqa: BLE001 - a crash is an observation, not a suite error
        obs = Observation.crashed(harness_name, exc)
    return ScenarioOutcome(
        scenario=scenario,
        harness=harness_name,
        observation=obs,
        problems=tuple(evaluate(scenario, obs, model, probe)),
    )
