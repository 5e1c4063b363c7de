"""The repeated-calls boundary: identical repeated calls are refused with a named
reason (arguments in another key order, ``3`` and ``3.0``, beside a framework's
middleware).
"""

from __future__ import annotations

from typing import Any, Final

from ...budget import Budget
from ...testing import Reply, tool_call
from ..base import Boundary, BoundaryDefinition, Scenario
from ..checks import check_ran
from ..fixtures import basic_tools

__all__ = ["DEFINITION"]

_SAME = tool_call("echo", {"text": "again"})


def _third_call_refused(
    name: str, description: str, script: tuple[Reply, ...], tool: str, **more: Any
) -> Scenario:
    """A scenario whose third identical call of ``tool`` (``max_identical_calls=2``) is
    refused and stops the run with ``repeated_call``, after the first two ran."""
    return Scenario(
        name=name,
        boundary="repeated_calls",
        description=description,
        script=script,
        tools=basic_tools,
        budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
        stop_reason="repeated_call",
        trajectory=(tool,) * 3,
        results=(("success", None), ("success", None), ("error", "repeated_call")),
        extra=(check_ran(tool, 2, "repeated_calls"),),
        **more,
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="repeated_calls",
        label="repeated calls",
        rule="identical repeated calls are refused with a named reason",
        keep_it=(
            "`Budget(max_identical_calls=N)`: the same tool with the same canonical "
            "arguments (RFC 8785: key order ignored, `3` and `3.0` one number) beyond N is "
            "refused with `repeated_call`."
        ),
    ),
    scenarios=(
        _third_call_refused(
            "repeated_identical_calls",
            "the same call (arguments in another key order) a third time is refused",
            (
                tool_call("forecast", {"city": "Oslo", "days": 2}),
                tool_call("forecast", {"days": 2, "city": "Oslo"}),
                tool_call("forecast", {"city": "Oslo", "days": 2}),
            ),
            "forecast",
        ),
        _third_call_refused(
            "repeated_calls_number_forms",
            "3 and 3.0 are one JSON number: alternating them is still one call",
            (
                *(tool_call("forecast", {"city": "Oslo", "days": d}) for d in (3, 3.0, 3, 3.0)),
                "done",
            ),
            "forecast",
        ),
        _third_call_refused(
            "after_model_middleware_keeps_the_stop",
            "a user middleware's after_model hook beside the contract cannot cancel its stop",
            (*(_SAME,) * 5, "done"),
            "echo",
            extras={"middleware": ("noop_after_model",)},
        ),
    ),
)
"""The repeated calls boundary: its row and its scenarios."""
