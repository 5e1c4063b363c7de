"""The serialization boundary: non-string results reach the model as JSON, non-ASCII
kept (numbers, dicts, lists, a set that is not JSON, ``async def`` tools, text that is
not valid Unicode).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any, Final

from ...budget import Budget
from ...messages import Completion
from ...testing import tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Scenario, call_then_answer
from ..checks import check_contents
from ..fixtures import TEXT_SCHEMA, Probe, basic_tools, kind_tool, tools_with

__all__ = ["DEFINITION", "async_lookup_tool", "fsname_tool", "typed_tool"]

typed_tool: Final = kind_tool(
    "typed",
    "Returns a value of the requested type.",
    {
        "int": 42,
        "float": 2.5,
        "dict": {"城市": "北京", "ok": True, "none": None},
        "list": [1, "二", {"three": 3}],
        "set": {1, 2},
    },
    lambda kind, value: value,
)
"""``typed(kind)``: returns an int, float, dict, list, or a set (not JSON)."""


def async_lookup_tool(probe: Probe) -> ToolSpec:
    """``async_lookup(text)``: an ``async def`` handler returning JSON data."""

    async def handler(text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        probe.record("async_lookup", {"text": text})
        return {"found": text, "async": True}

    return ToolSpec(
        name="async_lookup",
        description="Look something up (async).",
        parameters=TEXT_SCHEMA,
        handler=handler,
    )


def fsname_tool(probe: Probe) -> ToolSpec:
    """``fsname(text)``: returns ``os.fsdecode(b"report-\\xff.txt")``, which holds the
    lone surrogate U+DCFF."""

    def handler(text: str) -> str:
        probe.record("fsname", {"text": text})
        return os.fsdecode(b"report-\xff.txt")

    return ToolSpec(
        name="fsname",
        description="Returns a file name that is not UTF-8.",
        parameters=TEXT_SCHEMA,
        handler=handler,
    )


def _reaches_the_model(
    name: str,
    description: str,
    call: Completion,
    answer: str,
    tools: Callable[[Probe], list[ToolSpec]],
    content: str,
    *,
    output_contains: tuple[str, ...] = (),
) -> Scenario:
    """A scenario whose one call succeeds and whose tool message's content is exactly
    ``content`` (what the model is sent), then the model answers ``answer``."""
    return call_then_answer(
        name=name,
        boundary="serialization",
        description=description,
        call=call,
        answer=answer,
        result=("success", None),
        tools=tools,
        output_contains=output_contains,
        extra=(check_contents([content]),),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="serialization",
        label="serialization",
        rule="non-string results reach the model as JSON, non-ASCII kept",
        keep_it=(
            "Hand the model the tool's raw value through the contract's one serializer "
            "(`RunState.execute` applies it): JSON with non-ASCII kept; a value that is not "
            "JSON is a `tool_error`, never its `str()`."
        ),
    ),
    scenarios=(
        Scenario(
            name="non_string_results",
            boundary="serialization",
            description="numbers, dicts and lists reach the model as JSON; a set is an error",
            script=(
                tool_calls(
                    ("typed", {"kind": "int"}, "call_int"),
                    ("typed", {"kind": "float"}, "call_float"),
                    ("typed", {"kind": "dict"}, "call_dict"),
                    ("typed", {"kind": "list"}, "call_list"),
                    ("typed", {"kind": "set"}, "call_set"),
                ),
                "typed",
            ),
            tools=tools_with(typed_tool),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=8),
            stop_reason="answered",
            trajectory=("typed",) * 5,
            results=(("success", None),) * 4 + (("error", "tool_error"),),
            extra=(
                check_contents(
                    [
                        "42",
                        "2.5",
                        '{"城市": "北京", "ok": true, "none": null}',
                        '[1, "二", {"three": 3}]',
                    ]
                ),
            ),
        ),
        _reaches_the_model(
            "non_ascii",
            "non-ASCII arguments and results pass through unchanged",
            tool_call("echo", {"text": "你好, café ☕"}),
            "好的",
            basic_tools,
            "echo: 你好, café ☕",
            output_contains=("好的",),
        ),
        _reaches_the_model(
            "async_tool",
            "an async def handler runs, and its value reaches the model as JSON",
            tool_call("async_lookup", {"text": "x"}),
            "found",
            tools_with(async_lookup_tool),
            '{"found": "x", "async": true}',
        ),
        _reaches_the_model(
            "lone_surrogate_result",
            "a result holding a lone surrogate reaches the model escaped as \\udXXX",
            tool_call("fsname", {"text": "x"}),
            "listed",
            tools_with(fsname_tool),
            "report-\\udcff.txt",
        ),
    ),
)
"""The serialization boundary: its row and its scenarios."""
