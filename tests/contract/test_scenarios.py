"""The contract suite: every scenario on every harness, and the harnesses agree."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_contract.scenarios import BOUNDARIES, SCENARIOS, Outcome, Scenario

IDS = [s.name for s in SCENARIOS]
CONTRACT_HARNESSES = ("offline", "langchain", "langchain-async", "langchain-stream")
Outcomes = Callable[[Scenario, str], Outcome]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_scenario_holds(scenario: Scenario, harness_name: str, outcomes: Outcomes) -> None:
    """Each scenario's expected outcome holds on the harness.

    When it fails: the message names the boundary and what was observed; compare with
    the offline harness first (it is the reference).
    """
    result = outcomes(scenario, harness_name)
    assert result.holds, "\n".join(f"[{p.boundary}] {p.message}" for p in result.problems)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_harnesses_agree(scenario: Scenario, outcomes: Outcomes) -> None:
    """Stop reason, output, trajectory, bound tool messages and trace events are the
    same on every harness as on the offline reference."""
    reference = outcomes(scenario, "offline").observation.comparable()
    for name in CONTRACT_HARNESSES:
        assert outcomes(scenario, name).observation.comparable() == reference, name


def test_every_boundary_has_a_scenario() -> None:
    assert {s.boundary for s in SCENARIOS} | {"trace_redaction"} == set(BOUNDARIES)


def test_scenario_names_unique() -> None:
    assert len(IDS) == len(set(IDS))
