"""Judging one model response for a run: its finish reason first, then the response
contract (:mod:`~agent_contract.runtime.response`), commentary beside tool calls, and
structured answers (:mod:`~agent_contract.runtime.answers`). What
:meth:`RunState.accept_response` does, with the run's lock held.

The finish reason (:attr:`Completion.finish`, mapped from the provider's value by
:func:`~agent_contract.messages.finish_reason_of`) is contract input, read before the
content: a reply the model did not finish is never an answer and none of its tool calls
runs, whatever its shape. A refusal (a refusal text, or the finish reason ``refusal``)
stops the run with ``refused``, the text (redacted) in the stop's detail; a reply cut
by the output limit (``length``) or paused (``paused``) with ``truncated_response``; a
filtered one (``content_filter``) with ``content_filtered``. Each call of such a reply
is answered with a bound ``invalid_call`` error, so the transcript stays a conversation
a provider accepts.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from ..canonical import canonical_json
from ..errors import StopReason
from ..messages import Completion, FinishReason, ToolCall
from ..results import MAX_ERROR_CHARS, success_result
from ..text import escape_surrogates
from ..trace import PREVIEW_CHARS, RAW_ARGUMENTS_CHARS
from .answers import AnswerFormat
from .ledger import refusal
from .records import Stop
from .response import ResponseShape, ResponseVerdict, Violation, validate_response
from .run import Run

__all__ = ["UNFINISHED_STOPS", "judge"]

UNFINISHED_STOPS: dict[FinishReason, StopReason] = {
    "refusal": "refused",
    "length": "truncated_response",
    "paused": "truncated_response",
    "content_filter": "content_filtered",
}
"""The stop of a reply that the model did not finish, by its finish reason."""

_WHY: dict[FinishReason, str] = {
    "refusal": "the model refused",
    "length": "the reply was cut by the model's output limit",
    "paused": "the provider paused the reply before it was finished",
    "content_filter": "the provider's content filter withheld the reply",
}


def _invalid(
    run: Run, calls: tuple[ToolCall, ...], violations: tuple[Violation, ...]
) -> ResponseVerdict:
    for violation in violations:
        run.trace.record("contract_violation", **_violation_fields(run, violation))
    return ResponseVerdict(
        shape="invalid",
        calls=calls,
        violations=violations,
        refusals=run.ledger.refuse_invalid(calls, violations, run.history.ids),
        stop=Stop(reason="invalid_response", detail="; ".join(v.message for v in violations)),
    )


def _violation_fields(run: Run, violation: Violation) -> dict[str, Any]:
    """A violation's trace fields; unparseable argument text is kept, redacted and
    escaped first, then cut to :data:`RAW_ARGUMENTS_CHARS` (what an auditor needs)."""
    fields = violation.to_dict()
    raw = violation.raw_arguments
    if raw is not None:
        shown = run.contract.redaction.redact(escape_surrogates(raw))
        fields["raw_arguments"] = shown[:RAW_ARGUMENTS_CHARS]
        fields["raw_arguments_chars"] = len(raw)
        fields["raw_arguments_cut"] = len(shown) > RAW_ARGUMENTS_CHARS
    return fields


def _answer_violations(
    completion: Completion, calls: tuple[ToolCall, ...], answer: AnswerFormat
) -> tuple[Violation, ...]:
    """Why a response breaks the structured-answer rule (see the answers module)."""
    answering = [c for c in calls if c.name in answer.tools]
    if answering and len(calls) > 1:
        return (
            Violation(
                code="answer_and_tool_calls",
                message="a structured answer must be the response's only call",
            ),
        )
    if not calls:
        _, problem = answer.check_text(completion.text)
        if problem is not None:
            return (Violation(code="unstructured_answer", message=problem),)
    return ()


def _usage(completion: Completion) -> dict[str, int]:
    """The ``model_response`` event's token counts: ``input_tokens`` and ``output_tokens``
    as the model reported them, or nothing when it reported none (both 0)."""
    usage = completion.usage
    if not (usage.input_tokens or usage.output_tokens):
        return {}
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}


def _unfinished(
    run: Run, completion: Completion, calls: tuple[ToolCall, ...]
) -> ResponseVerdict | None:
    """The verdict on a reply its finish reason says is unfinished (see the module
    doc), or ``None`` for a finished one."""
    finish = completion.finish
    reason = UNFINISHED_STOPS.get(finish)
    if reason is None:
        return None
    why = _WHY[finish]
    raw = completion.finish_reason
    fields: dict[str, Any] = {
        "step": run.counters.model_steps,
        "shape": "invalid",
        "tool_calls": [{"id": c.id, "name": c.name} for c in calls],
        "text_chars": len(completion.text),
        "finish_reason": raw,
        **_usage(completion),
    }
    detail = f"{why} (finish reason {raw!r})"
    if finish == "refusal":
        said = completion.refusal or completion.text
        text = run.contract.redaction.redact(escape_surrogates(said.strip()))
        if len(text) > MAX_ERROR_CHARS:
            text = text[:MAX_ERROR_CHARS] + " [cut]"
        fields["refusal"] = text[:PREVIEW_CHARS]
        detail = f"{why}: {text}" if text else why
    run.trace.record("model_response", **fields)
    violations = tuple(
        Violation(
            code="unfinished_reply",
            message=f"not run: {why} (finish reason {raw!r})",
            tool_call_id=c.id or None,
        )
        for c in calls
    )
    return ResponseVerdict(
        shape="invalid",
        calls=calls,
        violations=violations,
        refusals=run.ledger.refuse_invalid(calls, violations, run.history.ids),
        stop=Stop(reason=reason, detail=detail),
    )


class _Seen:
    """The ids a response may not use again: the ledger's issued ones and the
    history's (``in`` on both sets; nothing copied, so the cost stays flat in the
    length of the run)."""

    __slots__ = ("_history", "_issued")

    def __init__(self, issued: Container[str], history: Container[str]) -> None:
        self._issued = issued
        self._history = history

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._issued or call_id in self._history


def judge(run: Run, completion: Completion, answer: AnswerFormat | None) -> ResponseVerdict:
    """The verdict on ``completion`` (see :meth:`RunState.accept_response`); refusals
    are recorded and the ``model_response`` event is traced. An unfinished reply (see
    the module doc) is ``invalid`` with its own stop, whatever its content."""
    contract = run.contract
    calls, violations = validate_response(
        completion,
        seen_ids=_Seen(run.ledger.issued_ids, run.history.ids),
        commentary=contract.commentary,
    )
    unfinished = _unfinished(run, completion, calls)
    if unfinished is not None:
        return unfinished
    if answer is not None and not violations:
        violations = _answer_violations(completion, calls, answer)
    answering = answer is not None and len(calls) == 1 and calls[0].name in answer.tools
    problem = None
    if answering and answer is not None and not violations:
        problem = answer.check_call(calls[0].name, calls[0].arguments)
    shape: ResponseShape = (
        "invalid"
        if violations
        else "refused_answer"
        if problem is not None
        else "final"
        if answering or not calls
        else "tool_calls"
    )
    fields: dict[str, object] = {
        "step": run.counters.model_steps,
        "shape": shape,
        "tool_calls": [{"id": c.id, "name": c.name} for c in calls],
        "text_chars": len(completion.text),
        **_usage(completion),
    }
    commentary = completion.text if calls and completion.text.strip() else ""
    if commentary and shape == "tool_calls":
        fields["commentary"] = commentary[:PREVIEW_CHARS]
    if answering:
        fields["answer"] = calls[0].name
    run.trace.record("model_response", **fields)
    if shape == "invalid":
        return _invalid(run, calls, violations)
    if shape == "refused_answer":
        call = calls[0]
        run.ledger.issue(call.id or "")
        refused = run.ledger.record(
            refusal(
                call,
                "invalid_arguments",
                f"the structured answer {call.name!r} does not match its schema: {problem}",
                contract.redaction,
            )
        )
        run.ledger.settle(call, refused)
        return ResponseVerdict(shape="refused_answer", calls=calls, refusals=(refused,))
    if shape == "tool_calls":
        return ResponseVerdict(shape="tool_calls", calls=calls, commentary=commentary)
    if answering:
        call = calls[0]
        run.ledger.issue(call.id or "")
        accepted = run.ledger.record(
            success_result(
                call.id or "",
                call.name,
                "the structured answer was accepted",
                max_result_chars=1_000,
                on_oversize="truncate",
                redaction=contract.redaction,
            )
        )
        run.ledger.settle(call, accepted)
        value = call.arguments
        return ResponseVerdict(
            shape="final",
            text=canonical_json(value),
            structured=value,
            calls=calls,
            accepted=accepted,
        )
    if answer is not None:
        value, _ = answer.check_text(completion.text)
        return ResponseVerdict(shape="final", text=canonical_json(value), structured=value)
    return ResponseVerdict(shape="final", text=completion.text)
