"""The model-step budget boundary: the model-step budget stops the run with a named
reason (a model that keeps calling tools, beside a framework's stock call limits).
"""

from __future__ import annotations

from typing import Final

from ...budget import Budget
from ...testing import Reply, tool_call
from ..base import Boundary, BoundaryDefinition, Scenario
from ..checks import check_ran
from ..fixtures import basic_tools

__all__ = ["DEFINITION"]


def _loop_forever() -> tuple[Reply, ...]:
    return tuple(tool_call("echo", {"text": f"step {i}"}) for i in range(1, 8))


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="model_step_budget",
        label="model-step budget",
        rule="the model-step budget stops the run with a named reason",
        keep_it=(
            "`Budget(max_model_steps=N)`, checked by `RunState.check_before_model_call` "
            "before every model call; a run out of steps stops with `max_model_steps`, "
            "never with an answer."
        ),
    ),
    scenarios=(
        Scenario(
            name="step_budget",
            boundary="model_step_budget",
            description="a model that keeps calling tools stops at max_model_steps, unanswered",
            script=_loop_forever(),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_model_steps=3, max_tool_calls=10),
            stop_reason="max_model_steps",
            trajectory=("echo",) * 3,
            results=(("success", None),) * 3,
            model_calls=3,
            extra=(check_ran("echo", 3, "model_step_budget"),),
        ),
        Scenario(
            name="stock_limit_beside_the_budget",
            boundary="model_step_budget",
            description="a stock call limit above the budget: the contract's step budget "
            "stops the run",
            script=_loop_forever(),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_model_steps=3, max_tool_calls=10),
            extras={"middleware": ("tool_call_limit",)},
            stop_reason="max_model_steps",
            trajectory=("echo",) * 3,
            results=(("success", None),) * 3,
        ),
        Scenario(
            name="stock_limit_ends_the_run",
            boundary="model_step_budget",
            description="a stock call limit that ends the run is named (middleware_stop), "
            "never taken for an answer or blamed on the model",
            script=(tool_call("echo", {"text": "a"}), "done"),
            tools=basic_tools,
            extras={"middleware": ("model_call_limit_end",)},
            requires=("middleware",),
            stop_reason="middleware_stop",
            trajectory=("echo",),
            results=(("success", None),),
        ),
    ),
)
"""The model-step budget boundary: its row and its scenarios."""
