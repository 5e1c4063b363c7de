"""The allowlist boundary: only registered, allowlisted tools run, and only they are
offered (unknown and look-alike names, tools outside the run's allowlist, the offered
schemas).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...harnesses import Observation
from ...messages import Completion
from ...testing import FakeModel, tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
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


def _outside_the_allowlist(
    name: str, description: str, call: Completion, tools: Callable[[Probe], list[ToolSpec]]
) -> Scenario:
    """A scenario whose one call is to a registered tool outside the run's allowlist
    (``echo`` only): it is neither offered nor run, refused as ``not_allowed``, and the
    model answers ``not allowed``."""
    tool = call.tool_calls[0].name
    return call_then_answer(
        name=name,
        boundary="allowlist",
        description=description,
        call=call,
        answer="not allowed",
        result=("error", "not_allowed"),
        tools=tools,
        allowlist=("echo",),
        must_not_run=(tool,),
        extra=(check_offered({"echo"}),),
    )


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
        call_then_answer(
            name="unknown_tool",
            boundary="allowlist",
            description="a call to a tool nobody registered gets unknown_tool",
            call=tool_call("delete_everything", {"text": "now"}),
            answer="could not do it",
            result=("error", "unknown_tool"),
            tools=basic_tools,
        ),
        _outside_the_allowlist(
            "outside_allowlist",
            "a registered tool outside the run's allowlist is neither offered nor run",
            tool_call("forecast", {"city": "Oslo", "days": 2}),
            basic_tools,
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
        _outside_the_allowlist(
            "allowlist_prefix",
            "a registered tool whose name only starts with an allowlisted one is neither "
            "offered nor run",
            tool_call("echo_admin", {"text": "root"}),
            tools_with(admin_echo_tool),
        ),
    ),
)
"""The allowlist boundary: its row and its scenarios."""
