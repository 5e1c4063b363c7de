"""Running one scenario on one harness: :func:`run_scenario` and its
:class:`ScenarioOutcome`."""

from __future__ import annotations

import contextvars
import os
import threading
from dataclasses import dataclass, replace
from typing import Final

from ..errors import ConfigurationError
from ..harnesses import Harness, Observation
from ..testing import FakeModel
from ..trace import TraceSink
from .base import Problem, Scenario
from .evaluate import evaluate, observe
from .fixtures import Probe

__all__ = [
    "DEFAULT_SCENARIO_SECONDS",
    "SCENARIO_SECONDS_ENV",
    "ScenarioOutcome",
    "run_scenario",
    "scenario_seconds",
    "timed_out",
]


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


SCENARIO_SECONDS_ENV: Final = "AGENT_CONTRACT_SCENARIO_SECONDS"
"""Environment variable that sets the default wall-clock limit of one scenario, in
seconds (see :func:`scenario_seconds`)."""
DEFAULT_SCENARIO_SECONDS: Final = 120.0
"""The default wall-clock limit of one scenario, in seconds: generous (a scenario takes
well under a second), so only a harness that hangs or spins reaches it."""


def scenario_seconds() -> float:
    """The wall-clock limit of one scenario, in seconds: :data:`SCENARIO_SECONDS_ENV` when
    set to a positive number, else :data:`DEFAULT_SCENARIO_SECONDS`.

    Raises:
        ConfigurationError: the variable is set to something else.
    """
    raw = os.environ.get(SCENARIO_SECONDS_ENV, "").strip()
    if not raw:
        return DEFAULT_SCENARIO_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise ConfigurationError(f"{SCENARIO_SECONDS_ENV} must be a positive number, got {raw!r}")
    return seconds


def timed_out(harness: str, seconds: float) -> Observation:
    """What a scenario past its wall-clock limit showed: stop reason ``timed_out``."""
    return Observation(
        harness=harness,
        stop_reason="timed_out",
        output=None,
        trajectory=(),
        tool_messages=(),
        trace_types=(),
        emitted=f"the scenario did not finish within {seconds:g} s",
    )


def run_scenario(
    scenario: Scenario,
    harness: Harness,
    harness_name: str,
    *,
    seconds: float | None = None,
    trace_sink: TraceSink | None = None,
) -> ScenarioOutcome:
    """Run ``scenario`` on ``harness`` and evaluate it.

    The harness runs in a worker thread with a wall-clock limit (``seconds``; default
    :func:`scenario_seconds`): past it the scenario is reported broken with a
    ``timed_out`` observation and the worker is abandoned (a thread cannot be stopped),
    never a hang. Any exception the harness raises (``ScriptExhaustedError`` included:
    looping past the script breaks the step boundary) yields an observation with stop
    reason ``crashed:<ExceptionType>``, which breaks the scenario's boundary.

    ``trace_sink`` (``check --otel``) is set on the scenario's input
    (:attr:`~agent_contract.runtime.input.RunInput.trace_sink`), so it receives every event of
    the runs the harness makes; None: no sink.
    """
    limit = scenario_seconds() if seconds is None else seconds
    probe = Probe()
    model = FakeModel(scenario.script)
    tools = scenario.tools(probe)
    options = scenario.options(probe)
    if trace_sink is not None:
        options = replace(options, trace_sink=trace_sink)
    done: list[Observation] = []

    def work() -> None:
        try:
            done.append(observe(harness(model, tools, options)))
        except Exception as exc:  # noqa: BLE001 - a crash is an observation, not a suite error
            done.append(Observation.crashed(harness_name, exc))

    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run, args=(work,), name=f"scenario-{scenario.name}", daemon=True
    )
    worker.start()
    worker.join(limit)
    obs = done[0] if done else timed_out(harness_name, limit)
    return ScenarioOutcome(
        scenario=scenario,
        harness=harness_name,
        observation=obs,
        problems=tuple(evaluate(scenario, obs, model, probe)),
    )
