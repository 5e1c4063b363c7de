"""Scenarios of the agent stack: the contract beside the other layers a framework's agent
has (middleware, retry layers, tools that update state or pause, checkpointed threads),
and the response features providers have (commentary beside tool calls, structured
answers).

A scenario names its framework pieces in :attr:`Scenario.extras` (see
:data:`~agent_contract.conformance.evaluate.EXTRAS`): a harness that has them applies
them; one that has none (the offline loop has no middleware) runs the scenario without
them, where the outcome must be the same, and the cross-harness agreement covers it. A
scenario whose outcome depends on a piece (a layer that ends the run, a pause) requires
the capability, and runs only where it can be expressed.
"""

from __future__ import annotations

from typing import Final

from ..budget import Budget
from ..harnesses import Observation
from ..messages import Completion, ToolCall
from ..runtime import AnswerFormat
from ..testing import FakeModel, tool_call, tool_calls
from .evaluate import Check, Problem, Scenario, check_ran, check_timeout
from .fixtures import Probe, basic_tools, text_tool, tools_with

__all__ = [
    "STACK_SCENARIOS",
    "WEATHER",
    "ask_tool",
    "build_stack_scenarios",
    "check_output",
    "flaky_tool",
    "note_tool",
]

_WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temp_c": {"type": "number", "maximum": 60},
    },
    "required": ["city", "temp_c"],
}
WEATHER: Final = AnswerFormat(tools={"Weather": _WEATHER})
"""A structured answer: a ``Weather`` object."""

_SAME = tool_call("echo", {"text": "again"})


def _flaky(text: str) -> str:
    raise TimeoutError("the upstream service did not answer")


flaky_tool: Final = text_tool("flaky", "A tool whose upstream times out.", _flaky)
"""``flaky(text)``: raises its own ``TimeoutError`` every time."""
note_tool: Final = text_tool("save_note", "Saves a note.", lambda text: f"saved: {text}")
"""``save_note(text)``: returns ``saved: <text>`` (a harness may return it in a command)."""
ask_tool: Final = text_tool("ask_human", "Asks the user.", lambda text: f"asked: {text}")
"""``ask_human(text)``: a harness with pauses pauses before it runs."""


def check_output(expected: str, boundary: str = "response_shape") -> Check:
    """The answer is exactly ``expected``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if obs.output != expected:
            return [
                Problem(boundary=boundary, message=f"output {obs.output!r}, expected {expected!r}")
            ]
        return []

    return check


def build_stack_scenarios() -> list[Scenario]:
    """The scenarios, in a stable order."""
    return [
        Scenario(
            name="commentary_with_tool_calls",
            boundary="response_shape",
            description="text beside tool calls is commentary: the calls run, it is never "
            "the answer",
            script=(
                Completion(
                    text="Let me look that up.",
                    tool_calls=(ToolCall(id="call_c", name="echo", arguments={"text": "x"}),),
                ),
                "done",
            ),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None),),
            extra=(check_output("done"),),
        ),
        Scenario(
            name="text_and_tool_calls",
            boundary="response_shape",
            description="with commentary='refuse', a reply with both text and calls is a "
            "contract violation",
            commentary="refuse",
            script=(
                Completion(
                    text="Sure, running it.",
                    tool_calls=(ToolCall(id="call_both", name="echo", arguments={"text": "x"}),),
                ),
            ),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="structured_answer",
            boundary="response_shape",
            description="a structured answer is the answer: validated, never run, not a tool call",
            script=(tool_call("Weather", {"city": "Oslo", "temp_c": 3}),),
            tools=basic_tools,
            answer_format=WEATHER,
            stop_reason="answered",
            trajectory=("Weather",),
            results=(("success", None),),
            extra=(check_output('{"city":"Oslo","temp_c":3}'),),
        ),
        Scenario(
            name="structured_answer_retried",
            boundary="response_shape",
            description="a structured answer that fails its schema is refused, the model "
            "is told and answers again",
            script=(
                tool_call("Weather", {"city": "Oslo", "temp_c": 999}),
                tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
            ),
            tools=basic_tools,
            answer_format=WEATHER,
            stop_reason="answered",
            trajectory=("Weather", "Weather"),
            results=(("error", "invalid_arguments"), ("success", None)),
            extra=(check_output('{"city":"Oslo","temp_c":3}'),),
        ),
        Scenario(
            name="structured_answer_with_tool_calls",
            boundary="response_shape",
            description="a structured answer beside a tool call is a contract violation; "
            "nothing runs",
            script=(
                tool_calls(("Weather", {"city": "Oslo", "temp_c": 3}), ("echo", {"text": "also"})),
            ),
            tools=basic_tools,
            answer_format=WEATHER,
            stop_reason="invalid_response",
            trajectory=("Weather", "echo"),
            results=(("error", "invalid_call"), ("error", "invalid_call")),
            must_not_run=("echo",),
        ),
        Scenario(
            name="after_model_middleware_keeps_the_stop",
            boundary="repeated_calls",
            description="a user middleware's after_model hook beside the contract cannot "
            "cancel its stop",
            script=(*(_SAME,) * 5, "done"),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
            extras={"middleware": ("noop_after_model",)},
            stop_reason="repeated_call",
            trajectory=("echo",) * 3,
            results=(("success", None), ("success", None), ("error", "repeated_call")),
            extra=(check_ran("echo", 2, "repeated_calls"),),
        ),
        Scenario(
            name="stock_limit_beside_the_budget",
            boundary="model_step_budget",
            description="a stock call limit above the budget: the contract's step budget "
            "stops the run",
            script=tuple(tool_call("echo", {"text": f"step {i}"}) for i in range(1, 8)),
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
        Scenario(
            name="retry_layer_timeout",
            boundary="timeouts",
            description="a retry layer runs a timing-out tool three times: every attempt "
            "is charged, the outcome is unknown, side effects possible",
            script=(tool_call("flaky", {"text": "go"}), "it timed out"),
            tools=tools_with(flaky_tool),
            extras={"middleware": ("tool_retry",)},
            requires=("middleware",),
            stop_reason="answered",
            trajectory=("flaky",),
            results=(("error", "timeout"),),
            extra=(check_timeout, check_ran("flaky", 3, "timeouts")),
        ),
        Scenario(
            name="command_tool_result",
            boundary="call_id_binding",
            description="a tool that returns a framework command: its message is the "
            "call's result, bound and redacted; its state update goes through",
            script=(tool_call("save_note", {"text": "buy milk"}), "noted"),
            tools=tools_with(note_tool),
            extras={"command_tools": ("save_note",)},
            requires=("graph_commands",),
            stop_reason="answered",
            trajectory=("save_note",),
            results=(("success", None),),
        ),
        Scenario(
            name="pausing_tool",
            boundary="tool_errors",
            description="a tool that pauses on a framework interrupt ends the run "
            "interrupted (resumable), never as a tool error",
            script=(tool_call("ask_human", {"text": "which colour?"}), "done"),
            tools=tools_with(ask_tool),
            extras={"pausing_tools": ("ask_human",)},
            requires=("pauses",),
            stop_reason="interrupted",
            trajectory=(),
            must_not_run=("ask_human",),
        ),
        Scenario(
            name="second_turn_on_a_thread",
            boundary="history",
            description="the second turn of a checkpointed thread whose first turn called a tool",
            script=(tool_call("echo", {"text": "first"}), "first answer", "second answer"),
            tools=basic_tools,
            user="and now?",
            extras={"earlier_turns": ("first question",)},
            requires=("threads",),
            stop_reason="answered",
            results=(("success", None),),  # the first turn's, in the thread's transcript
            extra=(check_output("second answer", "history"),),
        ),
    ]


STACK_SCENARIOS: Final[tuple[Scenario, ...]] = tuple(build_stack_scenarios())
"""Every scenario of the agent stack."""
