"""The model-step budget boundary: the model-step budget stops the run with a named
reason (a model that keeps calling tools, beside a framework's stock call limits).
"""

from __future__ import annotations

from typing import Any, Final

from ...budget import Budget
from ...testing import tool_call
from ..base import Boundary, BoundaryDefinition, Scenario, call_then_answer
from ..checks import check_ran
from ..fixtures import basic_tools

__all__ = ["DEFINITION"]


def _out_of_steps(name: str, description: str, **fields: Any) -> Scenario:
    """A scenario whose model keeps calling ``echo`` (seven calls scripted) under a
    budget of three model steps: the three calls run and the run stops with
    ``max_model_steps``; ``fields`` are the scenario's other fields."""
    return Scenario(
        name=name,
        boundary="model_step_budget",
        description=description,
        script=tuple(tool_call("echo", {"text": f"step {i}"}) for i in range(1, 8)),
        tools=basic_tools,
        budget=Budget(deadline_seconds=30.0, max_model_steps=3, max_tool_calls=10),
        stop_reason="max_model_steps",
        trajectory=("echo",) * 3,
        results=(("success", None),) * 3,
        **fields,
    )


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
        _out_of_steps(
            "step_budget",
            "a model that keeps calling tools stops at max_model_steps, unanswered",
            model_calls=3,
            extra=(check_ran("echo", 3, "model_step_budget"),),
        ),
        _out_of_steps(
            "stock_limit_beside_the_budget",
            "a stock call limit above the budget: the contract's step budget stops the run",
            extras={"middleware": ("tool_call_limit",)},
        ),
        call_then_answer(
            name="stock_limit_ends_the_run",
            boundary="model_step_budget",
            description="a stock call limit that ends the run is named (middleware_stop), "
            "never taken for an answer or blamed on the model",
            call=tool_call("echo", {"text": "a"}),
            answer="done",
            result=("success", None),
            stop_reason="middleware_stop",
            tools=basic_tools,
            extras={"middleware": ("model_call_limit_end",)},
            requires=("middleware",),
        ),
    ),
)
"""The model-step budget boundary: its row and its scenarios."""
