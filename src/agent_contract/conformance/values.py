"""Scenarios of the values a provider, a tool or a stored history can produce, and the
tools they run with: JSON numbers written two ways, text that is not valid Unicode,
histories a provider would reject, secrets under well-known keys, cross-field rules,
tools that answer directly, and ``async def`` tools. Part of
:data:`~agent_contract.conformance.scenarios.SCENARIOS`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Final

from ..budget import Budget
from ..errors import NotFoundError
from ..messages import Message, ToolCall
from ..testing import tool_call, tool_calls
from ..tools import ToolSpec
from .evaluate import (
    Scenario,
    check_cancelled,
    check_contents,
    check_model_calls,
    check_not_emitted,
    check_ran,
    check_timeout,
)
from .fixtures import Probe, basic_tools, tools_with

__all__ = [
    "KEYED_SECRETS",
    "async_hang_tool",
    "async_lookup_tool",
    "build_value_scenarios",
    "faq_tool",
    "fsname_tool",
    "login_tool",
    "range_tool",
]


_TEXT: Final = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def fsname_tool(probe: Probe) -> ToolSpec:
    """``fsname(text)``: returns ``os.fsdecode(b"report-\\xff.txt")``, which holds the
    lone surrogate U+DCFF."""

    def handler(text: str) -> str:
        probe.record("fsname", {"text": text})
        return os.fsdecode(b"report-\xff.txt")

    return ToolSpec(
        name="fsname",
        description="Returns a file name that is not UTF-8.",
        parameters=_TEXT,
        handler=handler,
    )


KEYED_SECRETS: Final = {
    "argument": "hunter2-planted",
    "result": "t0k3n-planted",
    "bearer": "Zq9",
    "error": 271828182845,
    "answer": "K3y-planted",
}
"""Values planted under secret keys (``password``, ``token``, ``api_key``) and after
``Bearer``, with no ``secrets=`` given: the default redaction must hide every one."""


def login_tool(probe: Probe) -> ToolSpec:
    """``login(user, password)``: returns a session whose token is planted, and an
    authorization header with a short bearer token."""

    def handler(user: str, password: str) -> dict[str, Any]:
        probe.record("login", {"user": user, "password": password})
        return {
            "user": user,
            "session": {"token": KEYED_SECRETS["result"]},
            "header": f"Authorization: Bearer {KEYED_SECRETS['bearer']}",
        }

    return ToolSpec(
        name="login",
        description="Log a user in.",
        parameters={
            "type": "object",
            "properties": {"user": {"type": "string"}, "password": {"type": "string"}},
            "required": ["user", "password"],
        },
        handler=handler,
    )


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


def async_lookup_tool(probe: Probe) -> ToolSpec:
    """``async_lookup(text)``: an ``async def`` handler returning JSON data."""

    async def handler(text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        probe.record("async_lookup", {"text": text})
        return {"found": text, "async": True}

    return ToolSpec(
        name="async_lookup",
        description="Look something up (async).",
        parameters=_TEXT,
        handler=handler,
    )


def async_hang_tool(probe: Probe) -> ToolSpec:
    """``async_hang(text)``: an ``async def`` handler that awaits 0.6 s under a 0.15 s
    timeout, then notes a late write (which a cancelled task never makes)."""

    async def handler(text: str) -> str:
        await asyncio.sleep(0.6)
        probe.late_writes.append(text)
        return "finished late"

    return ToolSpec(
        name="async_hang",
        description="An async tool that is too slow.",
        parameters=_TEXT,
        handler=handler,
        timeout_seconds=0.15,
    )


def _old_call(call_id: str, text: str = "a") -> Message:
    """An assistant turn of the history that called ``echo`` with id ``call_id``."""
    return Message(
        role="assistant", tool_calls=(ToolCall(id=call_id, name="echo", arguments={"text": text}),)
    )


def _old_result(call_id: str, text: str = "a") -> Message:
    """The tool message answering :func:`_old_call`."""
    return Message(
        role="tool", content=f"echo: {text}", tool_call_id=call_id, name="echo", status="success"
    )


_ASKED = Message(role="user", content="echo a")


def _broken_history(name: str, description: str, history: tuple[Message, ...]) -> Scenario:
    """A scenario whose history breaks the history boundary: the run stops with
    ``invalid_history`` before the model is called."""
    return Scenario(
        name=name,
        boundary="history",
        description=description,
        script=("this answer must never be produced",),
        tools=basic_tools,
        history=history,
        stop_reason="invalid_history",
        results=tuple(("success", None) for m in history if m.role == "tool"),
        extra=(check_model_calls(0, "history"),),
    )


def build_value_scenarios() -> list[Scenario]:
    """The scenarios of this module, in a stable order."""
    return [
        Scenario(
            name="async_tool",
            boundary="serialization",
            description="an async def handler runs, and its value reaches the model as JSON",
            script=(tool_call("async_lookup", {"text": "x"}), "found"),
            tools=tools_with(async_lookup_tool),
            stop_reason="answered",
            trajectory=("async_lookup",),
            results=(("success", None),),
            extra=(check_contents(['{"found": "x", "async": true}']),),
        ),
        Scenario(
            name="async_tool_timeout",
            boundary="timeouts",
            description=(
                "an async tool past its timeout is cancelled: outcome cancelled, side "
                "effects possible, its later write never lands"
            ),
            script=(tool_call("async_hang", {"text": "slow"}), "timed out"),
            tools=tools_with(async_hang_tool),
            stop_reason="answered",
            trajectory=("async_hang",),
            results=(("error", "timeout"),),
            extra=(check_timeout, check_cancelled),
            requires=("timeouts",),
        ),
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
        Scenario(
            name="return_direct_failure_goes_on",
            boundary="response_shape",
            description="a failed return_direct call does not end the run",
            script=(tool_call("faq", {"topic": "unknown"}), "no entry, sorry"),
            tools=tools_with(faq_tool),
            stop_reason="answered",
            trajectory=("faq",),
            results=(("error", "not_found"),),
            output_contains=("no entry, sorry",),
            extra=(check_model_calls(2, "response_shape"),),
        ),
        Scenario(
            name="secret_keys_redacted",
            boundary="trace_redaction",
            description=(
                "values under password/token/api_key and a short bearer token are redacted "
                "in arguments, results, errors and the answer without being declared"
            ),
            script=(
                tool_calls(
                    ("login", {"user": "bob", "password": KEYED_SECRETS["argument"]}, "call_ok"),
                    ("login", {"user": "bob", "password": KEYED_SECRETS["error"]}, "call_bad"),
                ),
                f"done; api_key: {KEYED_SECRETS['answer']}",
            ),
            tools=tools_with(login_tool),
            stop_reason="answered",
            trajectory=("login", "login"),
            results=(("success", None), ("error", "invalid_arguments")),
            output_contains=("api_key: [REDACTED]",),
            extra=(check_not_emitted(list(KEYED_SECRETS.values()), "trace_redaction"),),
        ),
        Scenario(
            name="repeated_calls_number_forms",
            boundary="repeated_calls",
            description="3 and 3.0 are one JSON number: alternating them is still one call",
            script=(
                *(tool_call("forecast", {"city": "Oslo", "days": d}) for d in (3, 3.0, 3, 3.0)),
                "done",
            ),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
            stop_reason="repeated_call",
            trajectory=("forecast",) * 3,
            results=(("success", None), ("success", None), ("error", "repeated_call")),
            extra=(check_ran("forecast", 2, "repeated_calls"),),
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
            name="lone_surrogate_result",
            boundary="serialization",
            description="a result holding a lone surrogate reaches the model escaped as \\udXXX",
            script=(tool_call("fsname", {"text": "x"}), "listed"),
            tools=tools_with(fsname_tool),
            stop_reason="answered",
            trajectory=("fsname",),
            results=(("success", None),),
            extra=(check_contents(["report-\\udcff.txt"]),),
        ),
        Scenario(
            name="history_with_tool_calls",
            boundary="history",
            description="a history with answered tool calls is replayed and the run goes on",
            script=(tool_call("echo", {"text": "b"}, id="call_new"), "done"),
            tools=basic_tools,
            history=(_ASKED, _old_call("old_1"), _old_result("old_1")),
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None), ("success", None)),
        ),
        _broken_history(
            "history_orphan_tool_result",
            "a tool message whose assistant turn is not there is never sent to the model",
            (_ASKED, _old_result("old_1")),
        ),
        _broken_history(
            "history_unanswered_call",
            "an assistant turn whose call has no result is never sent to the model",
            (_ASKED, _old_call("old_1"), Message(role="user", content="and now?")),
        ),
        _broken_history(
            "history_duplicate_ids",
            "two calls of one conversation sharing an id are never sent to the model",
            (
                _ASKED,
                _old_call("old_1"),
                _old_result("old_1"),
                _old_call("old_1", "b"),
                _old_result("old_1", "b"),
            ),
        ),
        Scenario(
            name="history_id_reused_by_the_model",
            boundary="response_shape",
            description="a new call reusing an id of the history is a contract violation",
            script=(tool_call("echo", {"text": "b"}, id="old_1"),),
            tools=basic_tools,
            history=(_ASKED, _old_call("old_1"), _old_result("old_1")),
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("success", None),),
            must_not_run=("echo",),
        ),
    ]
