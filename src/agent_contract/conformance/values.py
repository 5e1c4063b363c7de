"""Scenarios of the values a provider, a tool or a stored history can produce: JSON
numbers written two ways, text that is not valid Unicode, and histories a provider would
reject. Part of :data:`~agent_contract.conformance.scenarios.SCENARIOS`.
"""

from __future__ import annotations

from ..budget import Budget
from ..messages import Message, ToolCall
from ..testing import tool_call, tool_calls
from .evaluate import Scenario, check_contents, check_model_calls, check_not_emitted, check_ran
from .fixtures import (
    KEYED_SECRETS,
    basic_tools,
    faq_tool,
    fsname_tool,
    login_tool,
    range_tool,
    tools_with,
)

__all__ = ["build_value_scenarios"]


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
