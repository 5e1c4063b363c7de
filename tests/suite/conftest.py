"""Fixtures for the user-facing suite's tests.

``pytester`` is enabled for the whole run in the root ``pyproject.toml`` (``-p pytester``):
pytest refuses ``pytest_plugins`` in a conftest below the root directory.

The imports below are there for speed only: pytester's in-process runs restore
``sys.modules`` after each run, so a module first imported inside a throwaway project
(LangChain, the suite) would be imported again for every one.
"""

import langchain.agents  # noqa: F401 - see the module doc
import langchain_core.tools  # noqa: F401 - see the module doc
import pytest

import agent_contract.conformance.check
import agent_contract.conformance.suite
import agent_contract_langchain.testing  # noqa: F401 - see the module doc
from agent_contract.app.check_command import default_harnesses
from agent_contract.conformance import (
    CheckReport,
    Scenario,
    ScenarioOutcome,
    run_check,
    run_scenario,
)
from agent_contract.harnesses import Harness
from agent_contract.trace import TraceSink

_outcomes: dict[tuple[str, str], ScenarioOutcome] = {}


def cached_run_scenario(
    scenario: Scenario, harness: Harness, name: str, *, trace_sink: TraceSink | None = None
) -> ScenarioOutcome:
    """``run_scenario``, run once per (scenario, harness name) for the whole session (a
    run with a ``trace_sink`` is run afresh: its sink must see the events)."""
    if trace_sink is not None:
        return run_scenario(scenario, harness, name, trace_sink=trace_sink)
    key = (scenario.name, name)
    if key not in _outcomes:
        _outcomes[key] = run_scenario(scenario, harness, name)
    return _outcomes[key]


@pytest.fixture
def cached_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` (in-process) reuses the session's scenario outcomes."""
    monkeypatch.setattr(agent_contract.conformance.check, "run_scenario", cached_run_scenario)


@pytest.fixture(scope="session")
def default_report() -> CheckReport:
    """What ``agent-contract check --control`` measures: the default harnesses and the
    control columns (run once per session)."""
    checked, control = default_harnesses()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agent_contract.conformance.check, "run_scenario", cached_run_scenario)
        return run_check(checked, control=control)
