"""The ``agent_contract`` pytest plugin (entry point ``pytest11``), loaded automatically
wherever agent-contract is installed.

It only provides fixtures; it imports neither LangChain nor the suite, adds no hooks
that change collection, and emits no warnings.

Fixtures:

- ``contract_scenarios``: every scenario of :mod:`agent_contract.conformance.scenarios`
  (a tuple).
- ``fake_model``: a factory ``fake_model(script, *, stateless=False) -> FakeModel``; a
  model still holding unused replies at teardown fails the test (a scripted
  conversation that ended early is a bug in the test or the agent).
- ``contract_harness``: a factory ``contract_harness(name) -> Harness`` over
  :func:`agent_contract.registry.load_harness` (a registered name such as
  ``"offline"``, or ``"module:factory"``).
- ``run_contract_scenario``: ``run_contract_scenario(scenario, harness, name="user")
  -> ScenarioOutcome``, the suite's runner, for a test of your own about one scenario.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from ..harnesses import Harness
from ..registry import load_harness
from ..testing import FakeModel, Reply
from .base import Scenario
from .runner import ScenarioOutcome, run_scenario
from .scenarios import SCENARIOS

__all__ = ["contract_harness", "contract_scenarios", "fake_model", "run_contract_scenario"]


@pytest.fixture
def contract_scenarios() -> tuple[Scenario, ...]:
    """Every contract scenario, in definition order."""
    return SCENARIOS


@pytest.fixture
def fake_model() -> Iterator[Callable[..., FakeModel]]:
    """A factory of scripted models, checked for unused replies at teardown."""
    made: list[tuple[FakeModel, int]] = []

    def make(script: Sequence[Reply], *, stateless: bool = False) -> FakeModel:
        model = FakeModel(script, stateless=stateless)
        made.append((model, len(script)))
        return model

    yield make
    for model, length in made:
        if len(model.calls) < length:
            pytest.fail(
                f"a FakeModel scripted with {length} replies was called {len(model.calls)} "
                "time(s): the conversation ended before the script did",
                pytrace=False,
            )


@pytest.fixture
def contract_harness() -> Callable[[str], Harness]:
    """``contract_harness(name)``: a harness by name (see ``load_harness``)."""
    return load_harness


@pytest.fixture
def run_contract_scenario() -> Callable[..., ScenarioOutcome]:
    """``run_contract_scenario(scenario, harness, name="user")``: run and evaluate."""

    def run(scenario: Scenario, harness: Harness, name: str = "user") -> ScenarioOutcome:
        return run_scenario(scenario, harness, name)

    return run
