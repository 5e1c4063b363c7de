"""The call-ID binding boundary: every call gets exactly one tool message with its id,
in issue order (a slow first call, a tool returning a framework command), checked in
every scenario's run (:func:`check_binding`), whatever the scenario's own boundary.
"""

from __future__ import annotations

import time
from typing import Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Problem, Scenario, call_then_answer
from ..checks import check_contents
from ..fixtures import PLANTED_SECRET, Probe, basic_tools, required_object, text_tool, tools_with

__all__ = ["DEFINITION", "check_binding", "note_tool", "slow_echo_tool"]

_SECRET_ARGS = {"text": f"my key is {PLANTED_SECRET}"}


def slow_echo_tool(probe: Probe) -> ToolSpec:
    """``slow_echo(text, delay)``: echoes after ``delay`` seconds (timeout 5 s)."""

    def handler(text: str, delay: float) -> str:
        time.sleep(delay)
        probe.record("slow_echo", {"text": text})
        return f"slow: {text}"

    return ToolSpec(
        name="slow_echo",
        description="Echo after a delay (seconds).",
        parameters=required_object(
            {"text": {"type": "string"}, "delay": {"type": "number", "minimum": 0}}
        ),
        handler=handler,
        timeout_seconds=5.0,
    )


note_tool: Final = text_tool("save_note", "Saves a note.", lambda text: f"saved: {text}")
"""``save_note(text)``: returns ``saved: <text>`` (a harness may return it in a command)."""

_UNANSWERED_STOPS: Final = frozenset(
    {"invalid_response", "invalid_history", "pending_approval", "interrupted"}
)
"""Stops that leave issued calls without a tool message: nothing ran, or the run paused."""


def check_binding(
    scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe
) -> list[Problem]:
    """In every run: one tool message per issued id, in issue order (unless the run
    stopped in one of :data:`_UNANSWERED_STOPS`), no id answered twice, and every model
    call's input answers each assistant turn's calls once, in issue order (a broken
    history's unanswered call is filed under ``history``)."""
    problems: list[Problem] = []
    issued = [i for i in obs.issued_ids if i]
    answered = [m["id"] for m in obs.tool_messages]
    unique_issued = list(dict.fromkeys(issued))
    if answered != unique_issued and scenario.stop_reason not in _UNANSWERED_STOPS:
        message = f"tool messages answer {answered}, calls issued {unique_issued}"
        problems.append(Problem(boundary="call_id_binding", message=message))
    if len(answered) != len(set(answered)) and scenario.stop_reason != "invalid_history":
        message = f"an id is answered more than once: {answered}"
        problems.append(Problem(boundary="call_id_binding", message=message))
    # A broken history's unanswered call is the history's problem, not the binding's.
    history_ids = {c.id for m in scenario.history for c in m.tool_calls}
    for message, ids in _unbound_turns(model):
        boundary = "history" if set(ids) & history_ids else "call_id_binding"
        problems.append(Problem(boundary=boundary, message=message))
    return problems


def _unbound_turns(model: FakeModel) -> list[tuple[str, list[str | None]]]:
    """What the model was actually sent, checked for the binding: in each call's input,
    the tool messages after an assistant turn with tool calls answer exactly those calls,
    in issue order. The first difference per model call, with the calls' ids."""
    problems: list[tuple[str, list[str | None]]] = []
    for number, call in enumerate(model.calls, start=1):
        messages = list(call["messages"])
        for index, message in enumerate(messages):
            if message.role != "assistant" or not message.tool_calls:
                continue
            answers = []
            for later in messages[index + 1 :]:
                if later.role != "tool":
                    break
                answers.append(later.tool_call_id)
            issued = [c.id for c in message.tool_calls]
            if answers != issued:
                problems.append(
                    (
                        f"model call {number} got tool messages {answers} after calls "
                        f"{issued} (every call answered once, in issue order)",
                        list(issued),
                    )
                )
                break
    return problems


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="call_id_binding",
        label="call-ID binding",
        rule="every call gets exactly one tool message with its id, in issue order",
        keep_it=(
            "Answer each call with the result the run's ledger binds to its id "
            "(`RunState.view.batch_messages()`), in issue order, and add no tool messages of "
            "your own."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="single_tool_call",
            boundary="call_id_binding",
            description="one call, its result bound to its id, then an answer",
            call=tool_call("echo", _SECRET_ARGS, id="call_a"),
            answer="done",
            result=("success", None),
            tools=basic_tools,
            output_contains=("done",),
        ),
        Scenario(
            name="parallel_calls_issue_order",
            boundary="call_id_binding",
            description="two calls at once; the first is slowest; results come back in issue order",
            script=(
                tool_calls(
                    ("slow_echo", {"text": "first", "delay": 0.15}, "call_first"),
                    ("slow_echo", {"text": "second", "delay": 0.0}, "call_second"),
                ),
                "both done",
            ),
            tools=tools_with(slow_echo_tool),
            stop_reason="answered",
            trajectory=("slow_echo", "slow_echo"),
            results=(("success", None), ("success", None)),
            extra=(check_contents(["slow: first", "slow: second"], "call_id_binding"),),
        ),
        call_then_answer(
            name="command_tool_result",
            boundary="call_id_binding",
            description="a tool that returns a framework command: its message is the "
            "call's result, bound and redacted; its state update goes through",
            call=tool_call("save_note", {"text": "buy milk"}),
            answer="noted",
            result=("success", None),
            tools=tools_with(note_tool),
            extras={"command_tools": ("save_note",)},
            requires=("graph_commands",),
        ),
    ),
    every_run=(check_binding,),
    held_by_every_run=True,
)
"""The call-ID binding boundary: its row and its scenarios, and the check it makes in every run."""
