"""The allowlist boundary: only registered, allowlisted tools run, and only they are
offered (unknown and look-alike names, tools outside the run's allowlist, the offered
schemas).
"""

from __future__ import annotations

from typing import Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario
from ..fixtures import Probe, basic_tools, text_tool, tools_with

__all__ = ["DEFINITION", "LOOK_ALIKE_NAMES", "admin_echo_tool", "check_offered"]

LOOK_ALIKE_NAMES: Final[tuple[str, ...]] = ("Echo", "ECHO", "\u0435cho", "ech", "echo_v2")
"""Names a loose match would take for ``echo``: case, a Cyrillic small ie (U+0435) for the ``e``, a
prefix, and a name that starts with it."""


def admin_echo_tool(probe: Probe) -> ToolSpec:
    """``echo_admin(text)``: registered, never allowlisted (its name starts with
    ``echo``)."""
    return text_tool("echo_admin", "Echo, with admin rights.", lambda text: f"admin: {text}")(probe)


def check_offered(expected: set[str]) -> Check:
    """The model's first call was offered exactly the tools named ``expected``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if not model.calls:
            return [Problem(boundary="allowlist", message="the model was never called")]
        tools = model.calls[0]["tools"] or []
        offered = {t["function"]["name"] for t in tools}
        if offered != expected:
            return [
                Problem(
                    boundary="allowlist",
                    message=f"offered {sorted(offered)}, expected {sorted(expected)}",
                )
            ]
        return []

    return check


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="allowlist",
        label="allowlist",
        rule="only registered, allowlisted tools run, and only they are offered",
        keep_it=(
            "`Contract(tools, allowlist=[...])`: offer the model `contract.offered_tools()` "
            "only, and plan every call with `RunState.plan_tool_calls`, which refuses "
            "`unknown_tool` and `not_allowed`."
        ),
    ),
    scenarios=(
        Scenario(
            name="unknown_tool",
            boundary="allowlist",
            description="a call to a tool nobody registered gets unknown_tool",
            script=(tool_call("delete_everything", {"text": "now"}), "could not do it"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("delete_everything",),
            results=(("error", "unknown_tool"),),
        ),
        Scenario(
            name="outside_allowlist",
            boundary="allowlist",
            description="a registered tool outside the run's allowlist is neither offered nor run",
            script=(tool_call("forecast", {"city": "Oslo", "days": 2}), "not allowed"),
            tools=basic_tools,
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "not_allowed"),),
            must_not_run=("forecast",),
            extra=(check_offered({"echo"}),),
        ),
        Scenario(
            name="tool_schemas_offered",
            boundary="allowlist",
            description="the model is offered exactly the allowlisted tools, with their schemas",
            script=("nothing to do",),
            tools=basic_tools,
            stop_reason="answered",
            extra=(check_offered({"echo", "forecast"}),),
        ),
        Scenario(
            name="look_alike_tool_names",
            boundary="allowlist",
            description=(
                "names that differ from an allowed tool in case, by a look-alike letter, or "
                "by a prefix are unknown tools: nothing runs"
            ),
            script=(
                tool_calls(
                    *((n, {"text": "hi"}, f"call_{i}") for i, n in enumerate(LOOK_ALIKE_NAMES))
                ),
                "none of those exist",
            ),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=LOOK_ALIKE_NAMES,
            results=(("error", "unknown_tool"),) * len(LOOK_ALIKE_NAMES),
            must_not_run=("echo",),
            model_calls=2,
        ),
        Scenario(
            name="allowlist_prefix",
            boundary="allowlist",
            description=(
                "a registered tool whose name only starts with an allowlisted one is neither "
                "offered nor run"
            ),
            script=(tool_call("echo_admin", {"text": "root"}), "not allowed"),
            tools=tools_with(admin_echo_tool),
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("echo_admin",),
            results=(("error", "not_allowed"),),
            must_not_run=("echo_admin",),
            extra=(check_offered({"echo"}),),
        ),
    ),
)
"""The allowlist boundary: its row and its scenarios."""
