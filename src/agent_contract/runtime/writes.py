"""Write calls: preview, human approval, an idempotency key, and completion verification.

A write call never runs on the model's word. At planning it is previewed and waits
(:func:`plan_write`); a human's decisions are checked and recorded (:func:`decide`);
an approved call runs once (:func:`execute_write`): ``verify`` first settles whether an
earlier attempt already applied it (a retry, or a resume after a crash), the handler
writes with an idempotency key, and ``verify`` reads the write back to confirm it.

Each function takes the :class:`~agent_contract.runtime.run.Run` it serves, whose
lock the caller holds where the run is changed; results go through the run's ledger.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..approval import Approval, PendingApproval, idempotency_key
from ..errors import ApprovalError, CheckpointError, ConfigurationError, ErrorKind
from ..executor import Invocation
from ..faults import crashpoint
from ..messages import ToolCall
from ..results import (
    ResultNotSerializableError,
    ToolResult,
    classify_exception,
    error_result,
    serialize_result,
    success_result,
)
from ..text import escape_value
from ..tools import ToolContext, ToolRegistry, ToolSpec
from ..trace import RedactionPolicy
from .binding import check_bound, token_for
from .execution import failed, timeout_for, tool_context
from .ledger import PlannedCall, refusal
from .run import Run

__all__ = [
    "EDIT_NOTE",
    "decide",
    "decided",
    "execute_write",
    "plan_write",
    "restate_applied",
]


def plan_write(run: Run, call: ToolCall, spec: ToolSpec) -> PlannedCall:
    """Preview a write call and make it wait for approval (or refuse it with the
    preview's error kind)."""
    arguments = copy.deepcopy(call.arguments)
    call_id = call.id or ""
    preview, problem = _preview(run, spec, call_id, arguments)
    redaction = run.contract.redaction
    if problem is not None:
        return PlannedCall(call=call, refusal=refusal(call, *problem, redaction))
    pending = PendingApproval(
        tool_call_id=call_id,
        name=spec.name,
        arguments=arguments,
        preview=redaction.redact_value(escape_value(preview)[0]),
        token=token_for(run, call_id, spec.name, arguments),
    )
    run.trace.record(
        "approval_requested",
        id=pending.tool_call_id,
        name=pending.name,
        token=pending.token,
        preview=pending.preview,
    )
    return PlannedCall(call=call, spec=spec, arguments=arguments, approval=pending)


def _preview(
    run: Run, spec: ToolSpec, call_id: str, arguments: dict[str, Any]
) -> tuple[Any, tuple[ErrorKind, str] | None]:
    """Run a write tool's preview: ``(preview, None)``, or ``(None, (kind, message))``
    when it times out, raises, or returns something that is not JSON data."""
    if spec.preview is None:  # ToolSpec guarantees it for writes; fail closed anyway
        return None, ("not_allowed", f"write tool {spec.name!r} has no preview")
    invocation = _run_hook(
        run, spec.preview, spec, tool_context(run, call_id, spec, preview=True), arguments
    )
    if invocation.timed_out:
        return None, ("timeout", f"preview of {spec.name!r} timed out")
    if invocation.error is not None:
        return None, classify_exception(
            invocation.error,
            spec.name,
            expose_exception_text=run.contract.expose_exception_text,
        )
    try:
        serialize_result(invocation.value)
    except ResultNotSerializableError as exc:
        return None, ("tool_error", exc.message)
    return invocation.value, None


def _run_hook(
    run: Run,
    fn: Callable[..., Any],
    spec: ToolSpec,
    context: ToolContext,
    arguments: dict[str, Any],
) -> Invocation:
    """Run a write tool's preview, handler or verify with its own copy of the
    arguments, on the worker pool, with the tool's timeout."""
    args = copy.deepcopy(arguments)
    return run.contract.executor.run(lambda: fn(context, **args), timeout_for(run, spec))


# -- decisions ---------------------------------------------------------------------------


def decide(run: Run, approvals: Sequence[Approval]) -> None:
    """Check human decisions against the pending approvals and record them.

    All decisions are checked before any is recorded, so one bad decision changes
    nothing. A decision identical to one already recorded (a resume after a crash) is
    accepted again; a different one is refused. A rejected call is answered with a bound
    ``rejected`` error; an edit replaces the call's arguments in the open batch.

    Raises:
        ApprovalError: a decision names no pending call, carries a token bound to other
            arguments, another call or another run, conflicts with a recorded decision,
            or edits to arguments that fail the schema or the tool's preview.
    """
    waiting = {p.call_id: p for p in run.ledger.waiting()}
    checked = [_checked(run, waiting, approval) for approval in approvals]
    for planned, approval in checked:
        run.decisions[planned.call_id] = approval.to_dict()
        run.trace.record(
            "approval_decided",
            id=planned.call_id,
            name=planned.call.name,
            decision=approval.decision,
            decided_by=approval.decided_by,
            reason=approval.reason,
            arguments=approval.arguments if approval.decision == "edit" else None,
        )
        if approval.decision == "reject":
            reason = f": {approval.reason}" if approval.reason else ""
            run.ledger.record(
                refusal(
                    planned.call,
                    "rejected",
                    f"a human rejected this call{reason}",
                    run.contract.redaction,
                )
            )
        elif approval.decision == "edit" and approval.arguments is not None:
            run.ledger.replace(
                PlannedCall(
                    call=planned.call,
                    spec=planned.spec,
                    arguments=copy.deepcopy(approval.arguments),
                    approval=planned.approval,
                )
            )


def _checked(
    run: Run, waiting: dict[str, PlannedCall], approval: Approval
) -> tuple[PlannedCall, Approval]:
    """``approval`` with the call it decides, once it is known to fit.

    Raises:
        ApprovalError: as :func:`decide`.
    """
    planned = waiting.get(approval.tool_call_id)
    if planned is None or planned.approval is None or planned.spec is None:
        raise ApprovalError(
            f"no pending approval for call {approval.tool_call_id!r} in run {run.run_id!r}",
            tool_call_id=approval.tool_call_id,
        )
    # Recomputed from the call, never read back from stored state: a snapshot edited to
    # other arguments or another caller no longer matches the token a human was shown.
    if approval.token != token_for(run, planned.call_id, planned.spec.name, planned.call.arguments):
        raise ApprovalError(
            f"the approval token does not match call {approval.tool_call_id!r}: it "
            "was issued for other arguments, another call, another caller or another run",
            tool_call_id=approval.tool_call_id,
        )
    recorded = run.decisions.get(approval.tool_call_id)
    if recorded is not None and Approval.from_dict(recorded).binding() != approval.binding():
        raise ApprovalError(
            f"call {approval.tool_call_id!r} was already decided "
            f"({recorded['decision']}); a different decision is refused",
            tool_call_id=approval.tool_call_id,
        )
    if approval.decision == "edit":
        problem = planned.spec.validate(approval.arguments)
        if problem is None:
            problem = _preview_problem(run, planned, approval.arguments or {})
        if problem is not None:
            raise ApprovalError(
                f"edited arguments are invalid: {run.contract.redaction.redact(problem)}",
                tool_call_id=approval.tool_call_id,
            )
    return planned, approval


def _preview_problem(run: Run, planned: PlannedCall, arguments: dict[str, Any]) -> str | None:
    """Preview an edit before accepting it: ``None`` when the tool accepts the edited
    arguments, else the (redacted) reason. An approver's typo is refused, and the call
    stays pending, instead of ending the run in a failed write."""
    if planned.spec is None:
        return None
    _, problem = _preview(run, planned.spec, planned.call_id, arguments)
    if problem is None:
        return None
    kind, message = problem
    return run.contract.redaction.redact(f"{kind}: {message}")


def decided(run: Run) -> list[PlannedCall]:
    """Approved or edited calls of the open batch with a recorded decision and no result
    yet (their write may or may not have happened: a crash came in between)."""
    return [
        p
        for p in run.ledger.waiting()
        if run.decisions.get(p.call_id, {}).get("decision") in ("approve", "edit")
    ]


# -- the write ---------------------------------------------------------------------------


def execute_write(run: Run, call_id: str) -> ToolResult:
    """Run the approved write ``call_id`` once, with the arguments decided (an edit's,
    if edited), and return its result, not yet recorded.

    1. ``verify`` with the idempotency key: if the write is already applied (a retry,
       or a resume after a crash), it is not written again.
    2. If ``verify`` cannot tell, nothing is written: outcome unknown, side effects
       possible, the error kind ``verify``'s own (``transient`` only when its failure
       is: a store locked past its timeout; a corrupt store is ``tool_error``), or
       ``timeout`` when it did not finish in time (:func:`_unverifiable`).
    3. Otherwise the handler runs (with the timeout), then ``verify`` confirms. A
       confirmed write succeeds even if the handler timed out; an unconfirmed one is an
       error with outcome unknown unless the handler failed cleanly.

    Raises:
        ConfigurationError: ``call_id`` is not a write call of the open batch with an
            approving decision and no result yet.
    """
    with run.lock:
        planned = next((p for p in decided(run) if p.call_id == call_id), None)
    spec = planned.spec if planned is not None else None
    if planned is None or spec is None:
        raise ConfigurationError(
            f"call {call_id!r} is not a write with an approving decision and no result; "
            "a write runs only after a human decision (RunState.resume)"
        )
    name, redaction = spec.name, run.contract.redaction
    check_bound(run, planned, name)
    key = idempotency_key(run.run_id, call_id, name, planned.arguments)
    context = tool_context(run, call_id, spec, idempotency_key=key)
    before = _verify(run, spec, context, planned.arguments)
    if before.timed_out or before.error is not None:
        result = _unverifiable(run, spec, call_id, key, before)
    elif before.value is not None:
        result = _already_applied(call_id, spec, key, before.value, redaction)
    else:
        invocation = _run_hook(run, spec.handler, spec, context, planned.arguments)
        crashpoint("after_write")
        after = _verify(run, spec, context, planned.arguments)
        result = _write_outcome(run, planned, spec, key, invocation, after)
    edited = run.decisions.get(call_id, {}).get("decision") == "edit"
    if edited:
        result = _stating_edit(result, planned.arguments, spec, redaction)
    run.trace.record(
        "write_settled",
        id=call_id,
        name=name,
        idempotency_key=key,
        status=result.status,
        outcome=result.outcome,
        arguments=planned.arguments,
        edited=edited,
    )
    return result


def _already_applied(
    call_id: str, spec: ToolSpec, key: str, record: Any, redaction: RedactionPolicy
) -> ToolResult:
    """The result of a write found applied before this attempt: ``{"status": "applied",
    "verified": True, "already_applied": True, "idempotency_key", "record"}``."""
    return success_result(
        call_id,
        spec.name,
        {
            "status": "applied",
            "verified": True,
            "already_applied": True,
            "idempotency_key": key,
            "record": record,
        },
        max_result_chars=spec.max_result_chars,
        on_oversize=spec.on_oversize,
        redaction=redaction,
    )


def restate_applied(
    snapshot: Mapping[str, Any], registry: ToolRegistry, redaction: RedactionPolicy
) -> Mapping[str, Any]:
    """Before a stored run is restored (``Contract.restore``): ``snapshot`` with each
    approved write of its open batch whose stored result is a success restated as
    already applied, the stored result its ``record`` (an edit's stated again with its
    arguments); ``snapshot`` itself when there is none (or it is not well-formed:
    restoring it then says why).

    The process that stored it wrote it and was stopped (Ctrl-C, a signal) before the
    model read the result; the resumed run does not write again, and the model reads
    what a resume that verifies the write reads (:func:`execute_write`'s step 1): "already
    applied", never a new write. The report follows; the trace keeps the one write
    (``write_settled`` of the process that ran it). A failed write's result stays. The
    result enters the ledger as any restored one does."""
    try:
        answered = dict(snapshot["answered"])
        decisions = dict(snapshot["decisions"])
        run_id = str(snapshot["run_id"])
        batch = [PlannedCall.from_dict(item, registry) for item in snapshot["batch"]]
        restated = dict(answered)
        for planned in batch:
            spec, call_id = planned.spec, planned.call_id
            stored = answered.get(call_id)
            decision = dict(decisions.get(call_id) or {}).get("decision")
            if spec is None or planned.approval is None or stored is None:
                continue
            result = ToolResult.from_dict(dict(stored))
            if not result.ok or decision not in ("approve", "edit"):
                continue
            try:
                recorded: Any = json.loads(result.content)
            except ValueError:
                recorded = result.content  # plain text, or a truncated JSON text
            edited = decision == "edit"
            if edited and isinstance(recorded, dict) and recorded.get("note") == EDIT_NOTE:
                recorded = recorded.get("result")
            key = idempotency_key(run_id, call_id, spec.name, planned.arguments)
            again = _already_applied(call_id, spec, key, recorded, redaction)
            if edited:
                again = _stating_edit(again, planned.arguments, spec, redaction)
            restated[call_id] = again.to_dict()
    except (KeyError, TypeError, ValueError, AttributeError, CheckpointError):
        return snapshot
    if restated == answered:
        return snapshot
    return {**snapshot, "answered": restated}


EDIT_NOTE = "a human edited this call's arguments before it ran"
"""What the tool message of an edited write says, with the arguments that ran."""


def _stating_edit(
    result: ToolResult, arguments: dict[str, Any], spec: ToolSpec, redaction: RedactionPolicy
) -> ToolResult:
    """``result`` restated so the model reads which arguments ran (a human edited them):
    a success becomes ``{"note": EDIT_NOTE, "arguments": ..., "result": <what it read>}``
    (sized like any result); an error's message ends with the arguments."""
    if not result.ok:
        return replace(
            error_result(
                result.tool_call_id,
                result.name,
                result.error_kind or "tool_error",
                f"{result.error_message} ({EDIT_NOTE}: it ran with {json.dumps(arguments)})",
                redaction=redaction,
                outcome=result.outcome,
                side_effects_possible=result.side_effects_possible,
                duration_seconds=result.duration_seconds,
            ),
            artifact=result.artifact,
        )
    try:
        shown: Any = json.loads(result.content)
    except ValueError:
        shown = result.content  # plain text, or a truncated JSON text
    return success_result(
        result.tool_call_id,
        result.name,
        {"note": EDIT_NOTE, "arguments": arguments, "result": shown},
        max_result_chars=spec.max_result_chars,
        on_oversize=spec.on_oversize,
        redaction=redaction,
        duration_seconds=result.duration_seconds,
        artifact=result.artifact,
    )


def _verify(
    run: Run, spec: ToolSpec, context: ToolContext, arguments: dict[str, Any]
) -> Invocation:
    if spec.verify is None:
        raise ConfigurationError(f"write tool {spec.name!r} has no verify")
    return _run_hook(run, spec.verify, spec, context, arguments)


def _unverifiable(
    run: Run, spec: ToolSpec, call_id: str, key: str, before: Invocation
) -> ToolResult:
    """An approved write whose ``verify`` failed or timed out before it ran: not written
    (again), outcome unknown. The kind is the failure's own (only a temporary one is
    ``transient``), or ``timeout``; the call is answered, so no "retry later"."""
    name = spec.name
    kind: ErrorKind
    if before.timed_out or before.error is None:
        kind, why = "timeout", "the check did not finish in time"
    else:
        kind, why = classify_exception(
            before.error, name, expose_exception_text=run.contract.expose_exception_text
        )
    return error_result(
        call_id,
        name,
        kind,
        f"could not check whether this write already happened ({why}); it was not written "
        f"again, and its outcome is unknown: an earlier attempt may have applied it "
        f"(idempotency key {key})",
        redaction=run.contract.redaction,
        outcome="unknown",
        side_effects_possible=True,
    )


def _write_outcome(
    run: Run,
    planned: PlannedCall,
    spec: ToolSpec,
    key: str,
    invocation: Invocation,
    after: Invocation,
) -> ToolResult:
    call_id, name, redaction = planned.call_id, spec.name, run.contract.redaction
    confirmed = not after.timed_out and after.error is None and after.value is not None
    if confirmed:
        value: Any = (
            invocation.value
            if invocation.error is None and not invocation.timed_out
            else {"status": "applied", "verified": True, "record": after.value}
        )
        return success_result(
            call_id,
            name,
            value,
            max_result_chars=spec.max_result_chars,
            on_oversize=spec.on_oversize,
            redaction=redaction,
            duration_seconds=invocation.duration_seconds,
            artifact=value,
        )
    settled = not after.timed_out and after.error is None  # verify says: not applied
    if invocation.error is not None and settled:
        return failed(run.contract, call_id, name, invocation.error, invocation.duration_seconds)
    if invocation.timed_out:
        return error_result(
            call_id,
            name,
            "timeout",
            f"write {name!r} did not finish in time and is not confirmed; its outcome is "
            f"unknown and side effects are possible (idempotency key {key})",
            redaction=redaction,
            outcome="unknown",
            side_effects_possible=True,
            duration_seconds=invocation.duration_seconds,
        )
    return error_result(
        call_id,
        name,
        "tool_error",
        f"write {name!r} could not be confirmed by reading it back; its outcome is unknown "
        f"(idempotency key {key})",
        redaction=redaction,
        outcome="unknown",
        side_effects_possible=True,
        duration_seconds=invocation.duration_seconds,
    )
