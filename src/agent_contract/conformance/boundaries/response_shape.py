"""The response-shape boundary: a reply is a final answer or tool calls, nothing else
(malformed or list arguments, missing or reused call ids, empty replies, commentary beside
calls, tools that answer directly, structured answers). Whether the model finished the
reply (its finish reason) is the finish-reasons boundary's
(:mod:`~agent_contract.conformance.boundaries.finish_reasons`).
"""

from __future__ import annotations

from typing import Any, Final

from ...errors import NotFoundError
from ...harnesses import Observation
from ...messages import Completion, ToolCall
from ...runtime import AnswerFormat
from ...testing import FakeModel, tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_model_calls, check_output
from ..fixtures import (
    EARLIER_QUESTION,
    Probe,
    basic_tools,
    earlier_call,
    earlier_result,
    required_object,
    tools_with,
)

__all__ = ["DEFINITION", "WEATHER", "check_tool_runs", "faq_tool"]

WEATHER: Final = AnswerFormat(
    tools={
        "Weather": required_object(
            {"city": {"type": "string"}, "temp_c": {"type": "number", "maximum": 60}}
        )
    }
)
"""A structured answer: a ``Weather`` object."""


def faq_tool(probe: Probe) -> ToolSpec:
    """``faq(topic)``: ``return_direct``: its answer ends the run; the topic
    ``"unknown"`` raises ``not_found`` (a failed call does not end the run)."""

    def handler(topic: str) -> str:
        probe.record("faq", {"topic": topic})
        if topic == "unknown":
            raise NotFoundError(f"no FAQ entry for {topic!r}")
        return f"FAQ {topic}: see the handbook"

    return ToolSpec(
        name="faq",
        description="Answer from the FAQ; the answer goes to the user as it is.",
        parameters={"type": "object", "properties": {"topic": {"type": "string"}}},
        handler=handler,
        return_direct=True,
    )


def check_tool_runs(times: int, boundary: str) -> Check:
    """Tool handlers ran exactly ``times`` times in all (every tool, every attempt)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        ran = len(probe.calls) + probe.write_calls
        if ran != times:
            return [Problem(boundary=boundary, message=f"tools ran {ran} times, expected {times}")]
        return []

    return check


def _refused_reply(
    name: str,
    description: str,
    reply: Completion,
    *,
    results: tuple[tuple[str, str | None], ...] = (("error", "invalid_call"),),
    **fields: Any,
) -> Scenario:
    """A scenario whose only reply breaks the response contract: the run stops with
    ``invalid_response`` and nothing runs; the trajectory is the reply's calls,
    ``results`` the tool messages expected (one ``invalid_call`` by default), ``fields``
    the scenario's other fields."""
    return Scenario(
        name=name,
        boundary="response_shape",
        description=description,
        script=(reply,),
        tools=basic_tools,
        stop_reason="invalid_response",
        trajectory=tuple(c.name for c in reply.tool_calls),
        results=results,
        must_not_run=("echo",),
        **fields,
    )


def _structured_answer(
    name: str,
    description: str,
    script: tuple[Completion, ...],
    *,
    results: tuple[tuple[str, str | None], ...],
) -> Scenario:
    """A scenario asking for a :data:`WEATHER` answer whose script ends with a valid one
    (Oslo, 3 degrees): the run ends answered with it as the output."""
    return Scenario(
        name=name,
        boundary="response_shape",
        description=description,
        script=script,
        tools=basic_tools,
        answer_format=WEATHER,
        stop_reason="answered",
        trajectory=tuple(c.name for reply in script for c in reply.tool_calls),
        results=results,
        extra=(check_output('{"city":"Oslo","temp_c":3}'),),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="response_shape",
        label="response shape",
        rule="a response is a final answer or tool calls, nothing else",
        keep_it=(
            "Judge every model reply with `RunState.accept_response` before acting on it: "
            "a final text or tool calls, never both or neither; ids present and unique; "
            "arguments a JSON object. Anything else stops the run with `invalid_response`."
        ),
    ),
    scenarios=(
        Scenario(
            name="direct_answer",
            boundary="response_shape",
            description="a plain text reply is the answer; no tool runs",
            script=("Tool calling lets a model ask the runtime to act.",),
            tools=basic_tools,
            stop_reason="answered",
            output_contains=("Tool calling",),
            must_not_run=("echo", "forecast"),
        ),
        _refused_reply(
            "malformed_json_arguments",
            "arguments that are not parseable JSON are a contract violation",
            tool_call("echo", '{"text": "unterminated', id="call_bad"),
        ),
        _refused_reply(
            "arguments_not_object",
            "arguments that are a JSON list are a contract violation",
            tool_call("echo", ["a", "b"], id="call_list"),
        ),
        call_then_answer(
            name="empty_string_arguments",
            boundary="response_shape",
            description="arguments that are an empty string are no arguments, {}, as every "
            "provider client reads them: the tool's schema refuses them (invalid_arguments), "
            "the tool does not run, the run goes on",
            call=tool_call("echo", "", id="call_empty"),
            answer="I need a text to echo.",
            result=("error", "invalid_arguments"),
            tools=basic_tools,
            must_not_run=("echo",),
            extra=(check_output("I need a text to echo."),),
        ),
        _refused_reply(
            "missing_call_id",
            "a call without an id cannot be answered: the run stops, nothing runs",
            tool_call("echo", {"text": "hi"}, id=None),
            results=(),
        ),
        _refused_reply(
            "duplicate_call_ids",
            "two calls sharing one id are a contract violation: the refused turn is kept "
            "out of the messages handed forward (no answer makes it a valid history)",
            tool_calls(
                ("echo", {"text": "one"}, "call_dup"), ("echo", {"text": "two"}, "call_dup")
            ),
            results=(),
        ),
        Scenario(
            name="empty_response",
            boundary="response_shape",
            description="a reply with neither text nor calls is never an answer",
            script=(Completion(text=""),),
            tools=basic_tools,
            stop_reason="invalid_response",
        ),
        Scenario(
            name="return_direct_ends_the_run",
            boundary="response_shape",
            description=(
                "return_direct results end the run as the answer after the batch, "
                "the model is not called again"
            ),
            script=(
                tool_calls(
                    ("faq", {"topic": "refunds"}, "call_faq_1"),
                    ("echo", {"text": "also"}, "call_echo"),
                    ("faq", {"topic": "returns"}, "call_faq_2"),
                ),
                "this answer must never be produced",
            ),
            tools=tools_with(faq_tool),
            stop_reason="answered",
            trajectory=("faq", "echo", "faq"),
            results=(("success", None),) * 3,
            output_contains=("FAQ refunds: see the handbook\n\nFAQ returns: see the handbook",),
            extra=(check_model_calls(1, "response_shape"),),
        ),
        call_then_answer(
            name="return_direct_failure_goes_on",
            boundary="response_shape",
            description="a failed return_direct call does not end the run",
            call=tool_call("faq", {"topic": "unknown"}),
            answer="no entry, sorry",
            result=("error", "not_found"),
            tools=tools_with(faq_tool),
            output_contains=("no entry, sorry",),
            extra=(check_model_calls(2, "response_shape"),),
        ),
        _refused_reply(
            "history_id_reused_by_the_model",
            "a new call reusing an id of the history is a contract violation",
            tool_call("echo", {"text": "b"}, id="old_1"),
            history=(EARLIER_QUESTION, earlier_call("old_1"), earlier_result("old_1")),
            results=(("success", None),),
        ),
        call_then_answer(
            name="commentary_with_tool_calls",
            boundary="response_shape",
            description="text beside tool calls is commentary: the calls run, it is never "
            "the answer",
            call=Completion(
                text="Let me look that up.",
                tool_calls=(ToolCall(id="call_c", name="echo", arguments={"text": "x"}),),
            ),
            answer="done",
            result=("success", None),
            tools=basic_tools,
            extra=(check_output("done"),),
        ),
        _refused_reply(
            "text_and_tool_calls",
            "with commentary='refuse', a reply with both text and calls is a contract violation",
            Completion(
                text="Sure, running it.",
                tool_calls=(ToolCall(id="call_both", name="echo", arguments={"text": "x"}),),
            ),
            commentary="refuse",
        ),
        _structured_answer(
            "structured_answer",
            "a structured answer is the answer: validated, never run, not a tool call",
            (tool_call("Weather", {"city": "Oslo", "temp_c": 3}),),
            results=(("success", None),),
        ),
        _structured_answer(
            "structured_answer_retried",
            "a structured answer that fails its schema is refused, the model is told and "
            "answers again",
            (
                tool_call("Weather", {"city": "Oslo", "temp_c": 999}),
                tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
            ),
            results=(("error", "invalid_arguments"), ("success", None)),
        ),
        *[
            _structured_answer(
                f"structured_answer_{label}",
                f"a structured answer {what} is refused like an out-of-range one: the "
                "model is told and answers again",
                (
                    tool_call("Weather", invalid),
                    tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
                ),
                results=(("error", "invalid_arguments"), ("success", None)),
            )
            for label, what, invalid in (
                ("missing_field", "missing a required field", {"city": "Oslo"}),
                (
                    "undeclared_field",
                    "carrying an undeclared field (the schema is closed)",
                    {"city": "Oslo", "temp_c": 3, "humidity": 80},
                ),
                ("wrong_type", "of the wrong type", {"city": "Oslo", "temp_c": "three"}),
            )
        ],
        _refused_reply(
            "structured_answer_with_tool_calls",
            "a structured answer beside a tool call is a contract violation; nothing runs",
            tool_calls(("Weather", {"city": "Oslo", "temp_c": 3}), ("echo", {"text": "also"})),
            answer_format=WEATHER,
            results=(("error", "invalid_call"), ("error", "invalid_call")),
        ),
        Scenario(
            name="call_id_reused_in_a_later_turn",
            boundary="response_shape",
            description=(
                "a call reusing the id of a call from an earlier turn of the same run is a "
                "contract violation: it does not run"
            ),
            script=(
                tool_call("echo", {"text": "a"}, id="call_same"),
                tool_call("echo", {"text": "b"}, id="call_same"),
                "this answer must never be produced",
            ),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo", "echo"),
            results=(("success", None),),
            model_calls=2,
            extra=(check_tool_runs(1, "response_shape"),),
        ),
    ),
)
"""The response shape boundary: its row and its scenarios."""
