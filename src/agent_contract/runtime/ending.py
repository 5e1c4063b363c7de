"""Ending a run: the stop's last checks, the closed ledger, the redacted answer, the
``stop`` event and the :class:`~agent_contract.runtime.records.RunResult`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import budget as budget_checks
from ..errors import PAUSE_REASONS
from ..messages import Message
from ..text import escape_surrogates, escape_value
from . import snapshot
from .execution import settle_children, settle_interrupted
from .records import RunResult, Stop
from .run import Run

__all__ = ["finish"]


def finish(
    run: Run,
    stop: Stop,
    *,
    messages: Sequence[Message],
    output: str | None,
    harness: str,
    structured: Any = None,
) -> RunResult:
    """Close the batch, record ``stop`` and build the result (see
    :meth:`RunState.finish`). The caller holds the run's lock.

    An ``answered`` stop after the deadline becomes the ``deadline`` stop (the deadline
    is checked after every model step: an answer that came after it is not an answer; a
    batch after it is refused at planning). A pause keeps the open batch and carries a
    snapshot. ``output`` and ``structured`` (a structured answer's value) are kept
    (escaped by the text rule, then redacted) only for ``answered``.
    """
    late = budget_checks.check_deadline(run.contract.budget, run.counters)
    if stop.reason == "answered" and late is not None:
        stop, output = Stop(reason=late.reason, detail=late.message), None
    pausing = stop.reason in PAUSE_REASONS
    if stop.from_outside:  # Ctrl-C, SIGTERM: calls in flight have an unknown outcome
        settle_interrupted(run, stop.detail)
    if not pausing:  # a pause keeps its batch open, to resume it
        settle_children(run, stop.reason)  # a child a sibling's stop ended mid-batch
        run.ledger.close(force=True)
    redaction = run.contract.redaction
    detail = redaction.redact(escape_surrogates(stop.detail))
    answer, escaped = (
        escape_value(output) if stop.reason == "answered" and output is not None else (None, 0)
    )
    answer = redaction.redact(answer) if answer is not None else None
    if answer is None or structured is None:
        structured = None
    else:
        structured = redaction.redact_value(escape_value(structured)[0])
    fields: dict[str, Any] = {"reason": stop.reason, "detail": detail}
    if escaped:
        fields["escaped_chars"] = escaped
    run.trace.record("stop", **fields)
    pending = tuple(p.approval for p in run.ledger.waiting() if p.approval is not None)
    return RunResult(
        run_id=run.run_id,
        stop_reason=stop.reason,
        stop_detail=detail,
        output=answer,
        structured_response=structured,
        messages=tuple(messages),
        trace=run.trace,
        tool_calls=tuple(run.tree_records()),
        usage=run.counters.usage(),
        harness=harness,
        pending_approvals=pending if pausing else (),
        snapshot=snapshot.dump(run, messages) if pausing else None,
        artifacts={
            call_id: result.artifact
            for call_id in dict.fromkeys(run.ledger.issued)
            if (result := run.ledger.answered.get(call_id)) is not None
            and result.artifact is not None
        },
    )
