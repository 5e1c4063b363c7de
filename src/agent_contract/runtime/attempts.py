"""Attempts: every time a framework actually executes an admitted call.

A driver that runs tools inside a framework may see one call executed several times (a
retry layer) or with other arguments than the contract planned (a human-review layer
that edits the call). Each execution is an *attempt*; the driver's innermost hook
reports it with ``RunState.layers.record_attempt`` before the tool runs and
``RunState.layers.attempt_failed`` when it raises. The rules, one place for every driver:

- the first attempt is the call the batch admitted; each further attempt is a retry,
  traced (``tool_retry``) and charged to ``max_tool_calls`` like any call: a retry past
  the budget is refused (``budget_exceeded``);
- a write call is never executed twice: a second attempt is refused;
- arguments that differ from the ones the model issued (canonically) were rewritten by
  another layer: they are validated against the tool's JSON Schema (refused as
  ``invalid_arguments`` when they fail), traced (``arguments_rewritten``) and become the
  call's arguments in the report: the arguments that run are the ones recorded. A write
  call's arguments are never rewritten this way (its preview and approval were for the
  issued ones; a human edits a write through its approval): the call is refused;
- once the call's result is in, :func:`amend` folds the attempts into it: a call with a
  refused last attempt carries that refusal; a call any attempt of which timed out
  reports the outcome as unknown with side effects possible; an exception a layer
  turned into an error message is classified as if nothing were in between; and a call
  another layer answered while no attempt reached the tool (:func:`answered_unrun`: an
  emulator, a blocking policy) is refused (``not_allowed``, outcome ``not_run``), since
  its answer is not a tool result.
"""

from __future__ import annotations

from typing import Any

from ..errors import ErrorKind
from ..messages import ToolCall, canonical_json
from ..results import ToolResult, classify_exception, error_result
from .ledger import PlannedCall, refusal
from .run import AttemptLog, Run

__all__ = [
    "amend",
    "answered_unrun",
    "attempt_failed",
    "record_attempt",
    "rewrite",
]


def _exactly_equal(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value, type by type (``True`` is not
    ``1``, ``1`` is not ``1.0``): exact equality implies equal canonical forms, at the
    cost of one walk and no serialization. ``False`` says nothing (compare canonically)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return a.keys() == b.keys() and all(_exactly_equal(v, b[k]) for k, v in a.items())
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(_exactly_equal, a, b))
    if kind is str or kind is int or kind is bool or kind is float:
        return bool(a == b)
    return False


def _same(arguments: Any, call: ToolCall) -> bool:
    """Whether ``arguments`` are canonically the arguments of ``call`` (one
    serialization at most: the call's canonical text is computed once per call)."""
    try:
        if _exactly_equal(arguments, call.arguments):
            return True
    except RecursionError:  # nested past the interpreter's limit: the canonical form decides
        pass
    return canonical_json(arguments) == call.canonical_arguments


def rewrite(run: Run, planned: PlannedCall, arguments: dict[str, Any], by: str) -> PlannedCall:
    """Re-plan ``planned`` with ``arguments`` another layer put in its place: validated
    (a refusal when they fail), traced, and swapped into the open batch. Unchanged
    arguments return ``planned`` as it is. The caller holds the run's lock."""
    if _same(arguments, planned.call) or planned.spec is None:
        return planned
    spec = planned.spec
    call = ToolCall(id=planned.call.id, name=planned.call.name, arguments=arguments)
    problem = spec.validate(arguments)
    if planned.approval is not None:
        problem = (
            "a write's arguments were changed after the contract previewed them; edit a "
            "write through its approval"
        )
    run.trace.record(
        "arguments_rewritten",
        id=planned.call_id,
        name=spec.name,
        arguments=arguments,
        by=by,
        valid=problem is None,
    )
    if problem is not None:
        refused = refusal(
            call,
            "invalid_arguments",
            f"invalid arguments for {spec.name!r} (rewritten by {by}): {problem}",
            run.contract.redaction,
        )
        updated = PlannedCall(call=call, refusal=refused)
    else:
        updated = PlannedCall(call=call, spec=spec, arguments=arguments, approval=planned.approval)
    run.ledger.replace(updated)
    return updated


def record_attempt(
    run: Run, call_id: str, arguments: dict[str, Any] | None, by: str
) -> ToolResult | None:
    """Note one attempt of ``call_id`` (see the module doc); the caller holds the lock.

    Returns:
        ``None`` to let the attempt run, or the refusal to answer it with (not recorded
        in the ledger: the call's one result is recorded when its driver finishes it).
    """
    planned = run.ledger.planned(call_id)
    redaction = run.contract.redaction
    if planned is None or planned.spec is None:
        call = planned.call if planned is not None else ToolCall(id=call_id, name="", arguments={})
        return refusal(call, "not_allowed", "this call was not admitted by the contract", redaction)
    log = run.attempts.setdefault(call_id, AttemptLog())
    log.count += 1
    log.last_error = None
    name = planned.spec.name

    def refuse(kind: ErrorKind, message: str) -> ToolResult:
        log.refusal = refusal(planned.call, kind, message, redaction)
        return log.refusal

    halted = run.stopped()
    if halted is not None:
        run.trace.record("refused_after_stop", what="tool_call", id=call_id, reason=halted.reason)
        return refuse("not_allowed", f"not run: the run has stopped ({halted.reason})")
    if log.count > 1:
        if planned.approval is not None:
            return refuse("not_allowed", f"write {name!r} ran once; it is never run again")
        budget = run.contract.budget
        if run.counters.tool_calls + 1 > budget.max_tool_calls:
            return refuse(
                "budget_exceeded",
                f"max_tool_calls of {budget.max_tool_calls} reached: attempt {log.count} of "
                f"{name!r} was not run",
            )
        run.counters.tool_calls += 1
        run.trace.record("tool_retry", id=call_id, name=name, attempt=log.count)
    if arguments is not None:
        updated = rewrite(run, planned, arguments, by)
        if updated.refusal is not None:
            log.refusal = updated.refusal
            return updated.refusal
    return None


def attempt_failed(run: Run, call_id: str, error: BaseException) -> None:
    """Note that an attempt of ``call_id`` raised ``error``; the caller holds the lock."""
    log = run.attempts.setdefault(call_id, AttemptLog())
    log.errors.append(type(error).__name__)
    log.last_error = error
    if isinstance(error, TimeoutError):
        log.timed_out += 1


def answered_unrun(run: Run, call_id: str) -> bool:
    """Note that another layer answered ``call_id`` when no attempt reached the tool
    (the caller holds the lock). Returns ``True`` when that is so (no attempt seen)."""
    log = run.attempts.setdefault(call_id, AttemptLog())
    log.unrun = log.count == 0
    return log.unrun


def amend(run: Run, result: ToolResult) -> ToolResult:
    """``result`` with what the attempts of its call showed (see the module doc)."""
    log = run.attempts.get(result.tool_call_id)
    if log is None:
        return result
    if log.unrun:
        return error_result(
            result.tool_call_id,
            result.name,
            "not_allowed",
            f"{result.name!r} was answered by another layer without running; its answer "
            "is not a tool result",
            redaction=run.contract.redaction,
        )
    if result.status == "success":
        return result
    ran = log.count - (1 if log.refusal is not None else 0)
    suffix = f" after {ran} attempt(s) that failed ({', '.join(log.errors)})" if ran else ""
    if log.refusal is not None:
        return error_result(
            result.tool_call_id,
            result.name,
            log.refusal.error_kind or "not_allowed",
            f"{log.refusal.error_message}{suffix}",
            redaction=run.contract.redaction,
            outcome="failed" if ran else "not_run",
            side_effects_possible=log.timed_out > 0,
            duration_seconds=result.duration_seconds,
        )
    if log.timed_out == 0 and log.last_error is not None and result.error_kind == "tool_error":
        # A layer inside turned the tool's exception into a message: classify the
        # exception itself, as if nothing were in between.
        kind, message = classify_exception(
            log.last_error, result.name, expose_exception_text=run.contract.expose_exception_text
        )
        return error_result(
            result.tool_call_id,
            result.name,
            kind,
            f"{message}{suffix}" if log.count > 1 else message,
            redaction=run.contract.redaction,
            outcome="failed",
            duration_seconds=result.duration_seconds,
        )
    if log.timed_out and result.error_kind != "timeout":
        return error_result(
            result.tool_call_id,
            result.name,
            "timeout",
            f"tool {result.name!r} timed out on {log.timed_out} of {log.count} attempt(s) "
            "(a retry layer ran it again); its outcome is unknown and side effects are "
            "possible",
            redaction=run.contract.redaction,
            outcome="unknown",
            side_effects_possible=True,
            duration_seconds=result.duration_seconds,
        )
    return result
