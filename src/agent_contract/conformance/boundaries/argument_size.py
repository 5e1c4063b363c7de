"""The argument-size boundary: each top-level argument of a tool call is within
``Budget.max_argument_chars`` (a string's length, any other value's compact JSON text,
so a large string nested in an object or a list counts too). An argument exactly at the
limit runs, whole; one over it is refused as ``invalid_arguments`` naming the limit, the
argument and its size, before its schema is checked, and never runs; the trace keeps a
cut, marked copy of the refused arguments, never the oversized value.
"""

from __future__ import annotations

from typing import Any, Final

from ...budget import Budget, argument_chars
from ...harnesses import Observation
from ...messages import Completion
from ...testing import FakeModel, tool_call
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_ran
from ..fixtures import Probe, required_object, text_tool, tools_with
from .argument_validation import check_error_names

__all__ = [
    "DEFINITION",
    "archive_tool",
    "check_received_chars",
    "check_trace_cut",
    "measure_tool",
]

_LIMIT: Final = Budget().max_argument_chars
"""The per-argument limit every scenario's budget keeps (the default, 50,000)."""

_HUGE: Final = 60_000
"""Characters of an oversized argument: over :data:`_LIMIT`."""

_PART: Final = 30_000
"""Characters of each of two strings that are under :data:`_LIMIT` apart, over it
together in one argument."""

_BOUNDARY: Final = "argument_size"

measure_tool: Final = text_tool(
    "measure", "Count the characters of the text.", lambda text: {"chars": len(text)}
)
"""``measure(text)``: returns ``{"chars": len(text)}`` (a small result, whatever the
argument's size)."""


def archive_tool(probe: Probe) -> ToolSpec:
    """``archive(document)``: a nested argument, ``{"title": str, "sections": [str]}``;
    the handler notes each call and returns the sections' count."""

    def handler(document: dict[str, Any]) -> dict[str, int]:
        probe.record("archive", {"document": document})
        return {"sections": len(document["sections"])}

    document = required_object(
        {"title": {"type": "string"}, "sections": {"type": "array", "items": {"type": "string"}}}
    )
    return ToolSpec(
        name="archive",
        description="Archive a document.",
        parameters=required_object({"document": document}),
        handler=handler,
    )


_TOOLS: Final = tools_with(measure_tool, archive_tool)
"""``echo``, ``measure`` and ``archive``."""


def check_received_chars(name: str, chars: int) -> Check:
    """Each run of tool ``name`` got its ``text`` whole: ``chars`` characters, nothing
    cut on the way in (how often it ran is what ``checks.check_ran`` checks)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        got = [len(str(args.get("text", ""))) for n, args in probe.calls if n == name]
        cut = [size for size in got if size != chars]
        if cut:
            message = f"{name} got text of {cut} chars, expected {chars}"
            return [Problem(boundary=_BOUNDARY, message=message)]
        return []

    return check


def check_trace_cut(value: str) -> Check:
    """The oversized ``value`` is not in what the run emitted, and the run stays small
    (it emitted less than the value's size): the trace keeps a cut, marked copy of the
    refused arguments (``arguments_cut``)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        problems = []
        if "arguments_cut" not in obs.emitted:
            problems.append(Problem(boundary=_BOUNDARY, message="no cut, marked copy traced"))
        if value in obs.emitted:
            problems.append(Problem(boundary=_BOUNDARY, message="the whole argument was emitted"))
        elif len(obs.emitted) >= len(value):
            message = f"the run emitted {len(obs.emitted)} chars for a refused {len(value)}"
            problems.append(Problem(boundary=_BOUNDARY, message=message))
        return problems

    return check


def _refused_for_size(
    name: str,
    description: str,
    call: Completion,
    *,
    argument: str,
    chars: int,
    value: str,
) -> Scenario:
    """A scenario whose one call has an argument over the limit: refused as
    ``invalid_arguments`` naming the limit, ``argument`` and its size ``chars``, its
    tool never runs (``value``: the oversized text, never emitted), then the model
    answers."""
    tool = call.tool_calls[0].name
    return call_then_answer(
        name=name,
        boundary=_BOUNDARY,
        description=description,
        call=call,
        answer="that is too long",
        result=("error", "invalid_arguments"),
        tools=_TOOLS,
        must_not_run=(tool,),
        extra=(
            check_error_names(
                f"max_argument_chars of {_LIMIT}",
                repr(argument),
                f"{chars} chars",
                boundary=_BOUNDARY,
            ),
            check_trace_cut(value),
        ),
    )


def _nested(sections: list[str]) -> dict[str, Any]:
    """``archive``'s arguments: a document titled ``notes`` with ``sections``."""
    return {"document": {"title": "notes", "sections": sections}}


_NESTED_HUGE: Final = _nested(["intro", "x" * _HUGE])
_NESTED_PARTS: Final = _nested(["y" * _PART, "z" * _PART])


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id=_BOUNDARY,
        label="argument size",
        rule="each argument of a call is within max_argument_chars: one at the limit runs "
        "whole, one over it is refused before running and kept out of the trace",
        keep_it=(
            "Keep `Budget(max_argument_chars=...)` (50,000 by default) in the Contract the "
            "run is given: planning refuses a call with an argument over it as "
            "`invalid_arguments` (naming the limit, the argument and its size) before its "
            "schema is checked, and the trace keeps a cut, marked copy."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="argument_at_size_limit",
            boundary=_BOUNDARY,
            description=f"an argument of exactly max_argument_chars ({_LIMIT}) runs, once, "
            "and the tool gets it whole",
            call=tool_call("measure", {"text": "x" * _LIMIT}),
            answer=f"the text has {_LIMIT} characters",
            result=("success", None),
            tools=_TOOLS,
            output_contains=(f"{_LIMIT} characters",),
            extra=(check_ran("measure", 1, _BOUNDARY), check_received_chars("measure", _LIMIT)),
        ),
        _refused_for_size(
            "argument_over_size_limit",
            "an argument over max_argument_chars is refused before it runs, naming the "
            "limit and the argument; the tool runs 0 times, the trace keeps a cut copy",
            tool_call("echo", {"text": "x" * _HUGE}),
            argument="text",
            chars=_HUGE,
            value="x" * _HUGE,
        ),
        _refused_for_size(
            "nested_argument_over_size_limit",
            "a large string inside a nested argument (an object's list) counts: the "
            "argument's JSON text is over max_argument_chars, refused, never run",
            tool_call("archive", _NESTED_HUGE),
            argument="document",
            chars=argument_chars(_NESTED_HUGE["document"]),
            value="x" * _HUGE,
        ),
        _refused_for_size(
            "argument_over_size_limit_in_parts",
            "strings each under max_argument_chars that make one argument over it "
            "together are refused: the limit counts the whole argument, not each string",
            tool_call("archive", _NESTED_PARTS),
            argument="document",
            chars=argument_chars(_NESTED_PARTS["document"]),
            value="y" * _PART,
        ),
    ),
)
"""The argument size boundary: its row and its scenarios."""
