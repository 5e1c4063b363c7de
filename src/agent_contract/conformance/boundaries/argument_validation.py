"""The argument-validation boundary: arguments are validated against the JSON Schema
before running (missing fields, wrong types, extra properties, failed constraints,
cross-field rules, lone surrogates), and the refusal names the path and the constraint.
An argument's size (``Budget.max_argument_chars``) is the argument-size boundary's
(:mod:`~agent_contract.conformance.boundaries.argument_size`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from ...harnesses import Observation
from ...messages import Completion
from ...testing import FakeModel, tool_call
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..fixtures import Probe, basic_tools, required_object, tools_with

__all__ = ["DEFINITION", "check_error_names", "range_tool"]


def range_tool(probe: Probe) -> ToolSpec:
    """``date_range(start, end)``: a cross-field rule (``start <= end``) in
    ``check_arguments``; the handler notes each call."""

    def handler(start: int, end: int) -> list[int]:
        probe.record("date_range", {"start": start, "end": end})
        return list(range(start, end + 1))

    def check(arguments: dict[str, Any]) -> str | None:
        if arguments["start"] > arguments["end"]:
            return f"start ({arguments['start']}) must not be after end ({arguments['end']})"
        return None

    return ToolSpec(
        name="date_range",
        description="Days from start to end.",
        parameters=required_object({"start": {"type": "integer"}, "end": {"type": "integer"}}),
        handler=handler,
        check_arguments=check,
    )


def _first_tool_message_sent(model: FakeModel) -> str | None:
    """The content of the first tool message the model was sent (``None``: none was)."""
    for call in model.calls:
        for message in call["messages"]:
            if message.role == "tool":
                return str(message.content)
    return None


def check_error_names(*parts: str, boundary: str = "argument_validation") -> Check:
    """The first tool message (an ``invalid_arguments`` error) names every one of
    ``parts`` (the JSON path and the failed constraint), in the run's messages and in
    what the model was sent next (a layer that rewrites the error on its way to the
    model leaves the transcript right); a miss breaks ``boundary``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
        try:
            message = str(json.loads(content).get("message", ""))
        except (ValueError, AttributeError):
            message = content
        problems = []
        missing = [p for p in parts if p not in message]
        if missing:
            problems.append(
                Problem(
                    boundary=boundary,
                    message=f"the validation error does not name {missing}: {message!r}",
                )
            )
        sent = _first_tool_message_sent(model)
        unseen = [p for p in parts if sent is not None and p not in sent]
        if unseen:
            problems.append(
                Problem(
                    boundary=boundary,
                    message=f"the validation error the model was sent does not name "
                    f"{unseen}: {sent!r}",
                )
            )
        return problems

    return check


def _refused_before_running(
    name: str,
    description: str,
    call: Completion,
    answer: str,
    *,
    tools: Callable[[Probe], list[ToolSpec]] = basic_tools,
    extra: tuple[Check, ...] = (),
) -> Scenario:
    """A scenario whose one call has invalid arguments: refused as
    ``invalid_arguments`` before its handler runs, then the model answers ``answer``."""
    return call_then_answer(
        name=name,
        boundary="argument_validation",
        description=description,
        call=call,
        answer=answer,
        result=("error", "invalid_arguments"),
        tools=tools,
        must_not_run=(call.tool_calls[0].name,),
        extra=extra,
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="argument_validation",
        label="argument validation",
        rule="arguments are validated against the JSON Schema before running",
        keep_it=(
            "Declare each tool as a `ToolSpec(parameters=<JSON Schema>)`: planning validates "
            "the arguments (Draft 2020-12, closed objects) before any handler runs, and "
            "refuses them as `invalid_arguments` naming the JSON path."
        ),
    ),
    scenarios=(
        *[
            _refused_before_running(
                f"invalid_arguments_{label}",
                f"arguments with {label.replace('_', ' ')} are refused before running",
                tool_call("forecast", args),
                "bad arguments",
            )
            for label, args in (
                ("missing_field", {"city": "Oslo"}),
                ("wrong_type", {"city": "Oslo", "days": "two"}),
                ("extra_property", {"city": "Oslo", "days": 2, "units": "metric"}),
                ("failed_constraint", {"city": "Oslo", "days": 30}),
            )
        ],
        _refused_before_running(
            "cross_field_check",
            "a cross-field rule (start <= end) refuses the call before it runs",
            tool_call("date_range", {"start": 9, "end": 2}),
            "bad range",
            tools=tools_with(range_tool),
        ),
        _refused_before_running(
            "lone_surrogate_arguments",
            "arguments holding a lone surrogate are refused before anything runs",
            tool_call("echo", {"text": "report-\udcff.txt"}),
            "bad text",
        ),
        _refused_before_running(
            "validation_error_names_path_and_constraint",
            "an invalid argument is refused with a message naming its JSON path and the "
            "constraint it failed",
            tool_call("forecast", {"city": "Oslo", "days": 30}),
            "bad arguments",
            extra=(check_error_names("$.days", "maximum"),),
        ),
        _refused_before_running(
            "validation_error_names_missing_field",
            "a missing field is refused with a message naming the field and 'required'",
            tool_call("forecast", {"city": "Oslo"}),
            "bad arguments",
            extra=(check_error_names("days", "required"),),
        ),
    ),
)
"""The argument validation boundary: its row and its scenarios."""
