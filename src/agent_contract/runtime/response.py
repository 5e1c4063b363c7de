"""The response contract: a model response is a final answer or tool calls, nothing else.

:func:`validate_response` judges a completion (shape, call ids, arguments) and
:class:`ResponseVerdict` is what the run makes of it. A model is allowed to *say*
something malformed; the runtime holds it in order to refuse it.
"""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass
from typing import Any, Literal

from ..messages import Completion, ToolCall
from ..results import ToolResult
from .records import ContractViolation, Stop

__all__ = [
    "Commentary",
    "ResponseShape",
    "ResponseVerdict",
    "Violation",
    "ViolationCode",
    "validate_response",
]

ResponseShape = Literal["final", "tool_calls", "invalid", "refused_answer"]
"""The two legal shapes of a model response, or ``invalid``; ``refused_answer`` is a
structured answer whose arguments fail its schema: refused, bound to its call, and the
run goes on (see :mod:`agent_contract.runtime.answers`)."""

Commentary = Literal["keep", "refuse"]
"""What a response's text beside tool calls is: ``keep`` (commentary: kept in the
transcript and the trace, never the output) or ``refuse`` (a contract violation,
``text_and_tool_calls``)."""

ViolationCode = Literal[
    "text_and_tool_calls",
    "answer_and_tool_calls",
    "unstructured_answer",
    "empty_response",
    "empty_tool_name",
    "missing_call_id",
    "duplicate_call_id",
    "arguments_not_object",
    "unparseable_arguments",
    "unfinished_reply",
]


@dataclass(frozen=True, kw_only=True)
class Violation(ContractViolation[ViolationCode]):
    """One way a model response broke the response contract."""

    raw_arguments: str | None = None
    """For ``unparseable_arguments``: the text the model sent (the trace keeps it
    redacted and capped; :meth:`to_dict` leaves it out)."""


def _normalize_arguments(call: ToolCall) -> tuple[Any, Violation | None]:
    args = call.arguments
    if isinstance(args, str) and not args.strip():
        # No argument text is no arguments: every provider client reads it so
        # (ChatOpenAI, ChatAnthropic, PydanticAI), so every harness does too.
        return {}, None
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            what = (
                "are nested too deeply to parse"
                if isinstance(exc, RecursionError)
                else "are not valid JSON"
            )
            return call.arguments, Violation(
                code="unparseable_arguments",
                message=f"arguments of call {call.id!r} {what}",
                tool_call_id=call.id or None,
                raw_arguments=call.arguments,
            )
    if not isinstance(args, dict):
        return args, Violation(
            code="arguments_not_object",
            message=(
                f"arguments of call {call.id!r} must be a JSON object, got {type(args).__name__}"
            ),
            tool_call_id=call.id or None,
        )
    return args, None


def validate_response(
    completion: Completion, *, seen_ids: Container[str] = (), commentary: Commentary = "keep"
) -> tuple[tuple[ToolCall, ...], tuple[Violation, ...]]:
    """Judge a completion against the response contract.

    A response has exactly two legal shapes, told apart by whether tool calls are
    present: a final answer (non-blank text, no tool calls) or a request (one or more
    tool calls). Text beside tool calls is commentary ("Let me look that up."): kept,
    never an answer; with ``commentary="refuse"`` it is a violation instead. Each call
    needs a non-empty name, an id that is unique within the response and the run, and
    arguments that are a JSON object (a JSON *string* holding an object is accepted and
    parsed; an empty or blank string is no arguments, ``{}``, which the tool's schema
    then judges). Arguments that are any other JSON value (a list, a number) are
    ``arguments_not_object`` and text that does not parse ``unparseable_arguments``: both
    stop the run with ``invalid_response``, the call answered ``invalid_call``.

    Args:
        completion: what the model returned.
        seen_ids: tool-call ids issued earlier in the run or used in its history (read
            with ``in`` only, never copied: a run's ledger passes its own set).
        commentary: ``keep`` (the default) or ``refuse`` text beside tool calls.

    Returns:
        ``(calls, violations)``: the calls with arguments normalized to dicts (invalid
        calls keep their raw arguments), and every violation found; no violations
        means the response is legal.
    """
    violations: list[Violation] = []
    has_text = bool(completion.text.strip())
    if has_text and completion.tool_calls and commentary == "refuse":
        violations.append(
            Violation(
                code="text_and_tool_calls",
                message="a response is either a final text or tool calls, not both",
            )
        )
    if not has_text and not completion.tool_calls:
        violations.append(
            Violation(code="empty_response", message="the response has neither text nor tool calls")
        )
    own: set[str] = set()  # this response's ids so far
    calls: list[ToolCall] = []
    for call in completion.tool_calls:
        call_id = call.id or None
        if not call.name.strip():
            violations.append(
                Violation(
                    code="empty_tool_name",
                    message=f"call {call_id!r} has an empty tool name",
                    tool_call_id=call_id,
                )
            )
        if call_id is None:
            violations.append(
                Violation(code="missing_call_id", message=f"a call to {call.name!r} has no id")
            )
        elif call_id in own or call_id in seen_ids:
            violations.append(
                Violation(
                    code="duplicate_call_id",
                    message=f"tool_call_id {call_id!r} is used more than once in this run",
                    tool_call_id=call_id,
                )
            )
        else:
            own.add(call_id)
        arguments, problem = _normalize_arguments(call)
        if problem is not None:
            violations.append(problem)
        calls.append(ToolCall(id=call.id, name=call.name, arguments=arguments))
    return tuple(calls), tuple(violations)


@dataclass(frozen=True, kw_only=True)
class ResponseVerdict:
    """The verdict on one model response (what :meth:`RunState.accept_response` returns)."""

    shape: ResponseShape
    """Which legal shape it has, or ``invalid``."""
    text: str = ""
    """The answer, for ``final`` (a structured answer's canonical JSON text)."""
    structured: Any = None
    """For a ``final`` structured answer: the validated value."""
    calls: tuple[ToolCall, ...] = ()
    """The calls (arguments normalized), for ``tool_calls`` and ``invalid``."""
    violations: tuple[Violation, ...] = ()
    """For ``invalid``."""
    refusals: tuple[ToolResult, ...] = ()
    """For ``invalid``: one error result per distinct call id, bound to it; for
    ``refused_answer``: the answer call's refusal."""
    stop: Stop | None = None
    """For ``invalid``: the ``invalid_response`` stop, or for a reply the model did not
    finish ``truncated_response``, ``content_filtered`` or ``refused`` (see
    :mod:`agent_contract.runtime.judging`)."""
    commentary: str = ""
    """For ``tool_calls``: the text that came with the calls (never an answer)."""
    accepted: ToolResult | None = None
    """For a ``final`` structured answer given by an answer call: the call's bound
    success result (recorded), so the transcript answers every call it shows."""
