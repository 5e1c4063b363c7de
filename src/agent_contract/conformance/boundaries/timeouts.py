"""The timeouts boundary: a slow tool times out with outcome unknown and side effects
possible (a sync tool, an ``async def`` tool that is cancelled, a tool behind a retry
layer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any, Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_ran
from ..fixtures import TEXT_SCHEMA, Probe, ToolFactory, text_tool, tools_with

__all__ = [
    "DEFINITION",
    "async_hang_tool",
    "check_cancelled",
    "check_timeout",
    "check_unknown",
    "flaky_tool",
    "hang_tool",
    "slow_cleanup_tool",
    "stubborn_tool",
]

_PAST_GRACE: Final = 2.0
"""Seconds a stubborn tool goes on after its cancellation: past the executor's grace
(1 s), bounded by the tool's own logic."""


def _too_slow(name: str, description: str, handler: Callable[..., Any]) -> ToolSpec:
    """A ``name(text)`` tool under a 0.15 s timeout (its handler takes 0.6 s)."""
    return ToolSpec(
        name=name,
        description=description,
        parameters=TEXT_SCHEMA,
        handler=handler,
        timeout_seconds=0.15,
    )


def hang_tool(probe: Probe) -> ToolSpec:
    """``hang(text)``: sleeps 0.6 s under a 0.15 s timeout, then notes a late write."""

    def handler(text: str) -> str:
        time.sleep(0.6)
        probe.late_writes.append(text)
        return "finished late"

    return _too_slow("hang", "A tool that is too slow.", handler)


def async_hang_tool(probe: Probe) -> ToolSpec:
    """``async_hang(text)``: an ``async def`` handler that awaits 0.6 s under a 0.15 s
    timeout, then notes a late write (which a cancelled task never makes); the probe
    notes where its coroutine is (``probe.coroutines``)."""

    async def handler(text: str) -> str:
        with probe.coroutine("async_hang"):
            await asyncio.sleep(0.6)
            probe.late_writes.append(text)
            return "finished late"

    return _too_slow("async_hang", "An async tool that is too slow.", handler)


def stubborn_tool(probe: Probe) -> ToolSpec:
    """``stubborn(text)``: an ``async def`` handler that swallows its cancellation at the
    0.15 s timeout and goes on past the grace, then notes a late write and returns."""

    async def handler(text: str) -> str:
        probe.record("stubborn", {"text": text})
        # The tool swallows its cancellation and goes on.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.6)
        await asyncio.sleep(_PAST_GRACE)
        probe.late_writes.append(text)
        return "finished anyway"

    return _too_slow("stubborn", "An async tool that ignores cancellation.", handler)


def slow_cleanup_tool(probe: Probe) -> ToolSpec:
    """``slow_cleanup(text)``: an ``async def`` handler whose cleanup after its
    cancellation at the 0.15 s timeout takes longer than the grace (it then ends
    cancelled)."""

    async def handler(text: str) -> str:
        probe.record("slow_cleanup", {"text": text})
        try:
            await asyncio.sleep(0.6)
        except asyncio.CancelledError:
            await asyncio.sleep(_PAST_GRACE)  # a slow cleanup, then the cancellation goes on
            raise
        return "finished"

    return _too_slow("slow_cleanup", "An async tool with a slow cleanup.", handler)


def _flaky(text: str) -> str:
    raise TimeoutError("the upstream service did not answer")


flaky_tool: Final = text_tool("flaky", "A tool whose upstream times out.", _flaky)
"""``flaky(text)``: raises its own ``TimeoutError`` every time."""


def check_timeout(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The run has a ``timeout`` tool message, and every one reports
    ``side_effects_possible``."""
    timeouts = [m for m in obs.tool_messages if m["error_kind"] == "timeout"]
    if not timeouts or not all(m["side_effects_possible"] for m in timeouts):
        return [
            Problem(boundary="timeouts", message="a timeout did not report side_effects_possible")
        ]
    return []


def check_cancelled(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The timed-out async tool was cancelled (outcome ``cancelled``), its coroutine had
    really stopped by that cancellation when the run ended (what the probe saw, not what
    was reported: a handler shielded from the cancellation is still running), and its
    late write never happened."""
    problems = []
    outcomes = [
        json.loads(m["content"]).get("outcome")
        for m in obs.tool_messages
        if m["error_kind"] == "timeout"
    ]
    if outcomes != ["cancelled"]:
        problems.append(f"timeout outcomes {outcomes}, expected ['cancelled']")
    if probe.late_writes:
        problems.append(f"the cancelled tool still wrote {probe.late_writes}")
    where = probe.coroutines.get("async_hang")
    if outcomes == ["cancelled"] and where != "cancelled":
        problems.append(
            f"reported cancelled, but the tool's coroutine was {where or 'never started'} "
            "when the run ended (a cancelled call must have stopped)"
        )
    return [Problem(boundary="timeouts", message=m) for m in problems]


def _outcome(message: Any) -> str:
    """A tool message's outcome: the ``outcome`` of an error's JSON, else ``success``."""
    if message["status"] != "error":
        return "success"
    try:
        return str(json.loads(message["content"]).get("outcome"))
    except ValueError:
        return "not JSON"


def check_unknown(name: str) -> Callable[[Observation, FakeModel, Probe], list[Problem]]:
    """The tool ``name`` ran once, and its one timeout reports outcome ``unknown`` (it
    did not end at its cancellation: never a success, never ``cancelled``)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        problems = []
        outcomes = [_outcome(m) for m in obs.tool_messages]
        if outcomes != ["unknown"]:
            problems.append(f"{name} outcomes {outcomes}, expected ['unknown']")
        if probe.ran(name) != 1:
            problems.append(f"{name} ran {probe.ran(name)} times, expected 1")
        return [Problem(boundary="timeouts", message=m) for m in problems]

    return check


def _past_its_timeout(
    name: str, description: str, tool: str, make: ToolFactory, *checks: Check
) -> Scenario:
    """A scenario whose one call, ``tool(text="slow")`` (built by ``make``), runs past
    its timeout: its result is a ``timeout`` error, :func:`check_timeout` and ``checks``
    hold, and the model then answers ``timed out``."""
    return call_then_answer(
        name=name,
        boundary="timeouts",
        description=description,
        call=tool_call(tool, {"text": "slow"}),
        answer="timed out",
        result=("error", "timeout"),
        tools=tools_with(make),
        extra=(check_timeout, *checks),
        requires=("timeouts",),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="timeouts",
        label="timeouts",
        rule="a slow tool times out with outcome unknown and side effects possible",
        keep_it=(
            "`ToolSpec(timeout_seconds=...)`: `RunState.execute` runs each call on the "
            "contract's executor and reports a call past its limit as `timeout` with "
            "`outcome: unknown` and `side_effects_possible: true` while the run goes on "
            "(`isolation='process'` kills it instead)."
        ),
    ),
    scenarios=(
        _past_its_timeout(
            "tool_timeout",
            "a tool past its timeout: outcome unknown, side effects possible",
            "hang",
            hang_tool,
        ),
        _past_its_timeout(
            "async_tool_timeout",
            "an async tool past its timeout is cancelled: outcome cancelled, side "
            "effects possible, its later write never lands",
            "async_hang",
            async_hang_tool,
            check_cancelled,
        ),
        _past_its_timeout(
            "async_tool_ignores_cancellation",
            "an async tool that swallows its cancellation at the timeout is reported "
            "at the limit plus the grace: outcome unknown, side effects possible, "
            "never a success",
            "stubborn",
            stubborn_tool,
            check_unknown("stubborn"),
        ),
        _past_its_timeout(
            "async_tool_slow_cleanup",
            "an async tool whose cleanup after its cancellation outlasts the grace: "
            "outcome unknown, side effects possible",
            "slow_cleanup",
            slow_cleanup_tool,
            check_unknown("slow_cleanup"),
        ),
        call_then_answer(
            name="retry_layer_timeout",
            boundary="timeouts",
            description="a retry layer runs a timing-out tool three times: every attempt "
            "is charged, the outcome is unknown, side effects possible",
            call=tool_call("flaky", {"text": "go"}),
            answer="it timed out",
            result=("error", "timeout"),
            tools=tools_with(flaky_tool),
            extras={"middleware": ("tool_retry",)},
            requires=("middleware",),
            extra=(check_timeout, check_ran("flaky", 3, "timeouts")),
        ),
    ),
)
"""The timeouts boundary: its row and its scenarios."""
