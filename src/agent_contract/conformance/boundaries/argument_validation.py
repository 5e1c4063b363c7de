"""The argument-validation boundary: arguments are validated against the JSON Schema
before running (missing fields, wrong types, extra properties, failed constraints,
cross-field rules, lone surrogates), and the refusal names the path and the constraint.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario
from ..fixtures import Probe, basic_tools, tools_with

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
        parameters={
            "type": "object",
            "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
            "required": ["start", "end"],
        },
        handler=handler,
        check_arguments=check,
    )


def check_error_names(*parts: str) -> Check:
    """The first tool message (an ``invalid_arguments`` error) names every one of
    ``parts`` (the JSON path and the failed constraint) (``argument_validation``)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
        try:
            message = str(json.loads(content).get("message", ""))
        except (ValueError, AttributeError):
            message = content
        missing = [p for p in parts if p not in message]
        if missing:
            return [
                Problem(
                    boundary="argument_validation",
                    message=f"the validation error does not name {missing}: {message!r}",
                )
            ]
        return []

    return check


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
            Scenario(
                name=f"invalid_arguments_{label}",
                boundary="argument_validation",
                description=f"arguments with {label.replace('_', ' ')} are refused before running",
                script=(tool_call("forecast", args), "bad arguments"),
                tools=basic_tools,
                stop_reason="answered",
                trajectory=("forecast",),
                results=(("error", "invalid_arguments"),),
                must_not_run=("forecast",),
            )
            for label, args in (
                ("missing_field", {"city": "Oslo"}),
                ("wrong_type", {"city": "Oslo", "days": "two"}),
                ("extra_property", {"city": "Oslo", "days": 2, "units": "metric"}),
                ("failed_constraint", {"city": "Oslo", "days": 30}),
            )
        ],
        Scenario(
            name="cross_field_check",
            boundary="argument_validation",
            description="a cross-field rule (start <= end) refuses the call before it runs",
            script=(tool_call("date_range", {"start": 9, "end": 2}), "bad range"),
            tools=tools_with(range_tool),
            stop_reason="answered",
            trajectory=("date_range",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("date_range",),
        ),
        Scenario(
            name="lone_surrogate_arguments",
            boundary="argument_validation",
            description="arguments holding a lone surrogate are refused before anything runs",
            script=(tool_call("echo", {"text": "report-\udcff.txt"}), "bad text"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="validation_error_names_path_and_constraint",
            boundary="argument_validation",
            description=(
                "an invalid argument is refused with a message naming its JSON path and the "
                "constraint it failed"
            ),
            script=(tool_call("forecast", {"city": "Oslo", "days": 30}), "bad arguments"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("forecast",),
            extra=(check_error_names("$.days", "maximum"),),
        ),
        Scenario(
            name="validation_error_names_missing_field",
            boundary="argument_validation",
            description="a missing field is refused with a message naming the field and 'required'",
            script=(tool_call("forecast", {"city": "Oslo"}), "bad arguments"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("forecast",),
            extra=(check_error_names("days", "required"),),
        ),
    ),
)
"""The argument validation boundary: its row and its scenarios."""
