"""One harness fixture, parametrized over every harness the contract must hold on, as the
registry lists them (entry-point group ``agent_contract.harnesses``).

Outcomes are cached per (scenario, harness) for the session, so the per-scenario
tests and the cross-harness agreement tests share one run of each.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_contract.conformance import Scenario, ScenarioOutcome, run_scenario
from agent_contract.harnesses import capabilities_of
from agent_contract.registry import harness_plugins, load_harness

CONTRACT_HARNESSES = tuple(p.name for p in harness_plugins() if p.role == "contract")
"""Every registered harness that must keep the contract (the offline reference first)."""
CONTROL_HARNESSES = tuple(p.name for p in harness_plugins() if p.role == "control")
"""Every registered control: expected to break."""

_cache: dict[tuple[str, str], ScenarioOutcome] = {}


def expresses(scenario: Scenario, harness: str) -> bool:
    """True when ``harness`` has every capability ``scenario`` requires."""
    return set(scenario.requires) <= capabilities_of(load_harness(harness))


def not_expressible(scenario: Scenario, harness: str) -> str | None:
    """Why ``harness`` cannot express ``scenario``, when it declares so (its
    ``not_expressible`` attribute: scenario name -> reason), else ``None``. The scenario
    still runs there and must break (its test is a strict xfail with the reason), so a
    declaration that stops being true fails the suite."""
    declared = getattr(load_harness(harness), "not_expressible", None) or {}
    reason = declared.get(scenario.name)
    return str(reason) if reason else None


def outcome_of(scenario: Scenario, harness: str) -> ScenarioOutcome:
    """Run (once per session) and return the outcome of ``scenario`` on ``harness``;
    skip when the harness cannot express it."""
    if not expresses(scenario, harness):
        pytest.skip(f"{harness} cannot express {scenario.name} (requires {scenario.requires})")
    key = (scenario.name, harness)
    if key not in _cache:
        _cache[key] = run_scenario(scenario, load_harness(harness), harness)
    return _cache[key]


@pytest.fixture(scope="session")
def outcomes() -> Callable[[Scenario, str], ScenarioOutcome]:
    """``outcomes(scenario, harness)``: the cached outcome."""
    return outcome_of


@pytest.fixture(params=CONTRACT_HARNESSES, ids=CONTRACT_HARNESSES)
def harness_name(request: pytest.FixtureRequest) -> str:
    """The name of the harness under test."""
    return str(request.param)


@pytest.fixture(params=CONTROL_HARNESSES, ids=CONTROL_HARNESSES)
def control_name(request: pytest.FixtureRequest) -> str:
    """The name of a control harness."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Demo runs (orders, paused runs, checkpoints) write into a temp folder, never $HOME."""
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
