"""The smallest inputs of issue 11 ("every value a provider, a tool or a stored history can
produce"), each on every harness it applies to, through public APIs only.

Each test here failed on the main branch before the issue was fixed (the reports say
how); the contract suite's scenarios hold the whole kind on every harness.
"""

from __future__ import annotations

from typing import Any

from agent_contract import Budget, ToolSpec
from agent_contract.harnesses import RunInput
from agent_contract.registry import load_harness
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, Reply, tool_call


def run_on(
    harness: str,
    script: list[Reply],
    tools: list[ToolSpec],
    *,
    budget: Budget | None = None,
    **options: Any,
) -> RunResult:
    """Run ``script`` on the harness called ``harness``."""
    result = load_harness(harness)(
        FakeModel(script),
        tools,
        RunInput(user="go", budget=budget or Budget(deadline_seconds=30.0), **options),
    )
    assert isinstance(result, RunResult)
    return result


def test_input_2_three_and_three_point_zero_are_one_call(harness_name: str) -> None:
    """Alternating ``{"days": 3}`` and ``{"days": 3.0}`` let four identical calls through
    with ``max_identical_calls=2``."""
    ran: list[Any] = []
    spec = ToolSpec(
        name="forecast",
        description="Forecast.",
        parameters={"type": "object", "properties": {"days": {"type": "integer"}}},
        handler=lambda days: ran.append(days) or "sunny",
    )
    script: list[Reply] = [tool_call("forecast", {"days": d}) for d in (3, 3.0, 3, 3.0)]
    result = run_on(
        harness_name,
        [*script, "done"],
        [spec],
        budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
    )
    assert ran == [3, 3.0]
    assert result.stop_reason == "repeated_call"
