"""Running one admitted call: the timeout, the worker pool or a killable process, and the
classified result of what happened.

Each function takes the :class:`~agent_contract.runtime.run.Run` it serves; the
result of a call is recorded through the run's ledger (its one way in) before it is
returned.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from ..errors import ConfigurationError
from ..executor import (
    Invocation,
    InvocationHandle,
    ToolExecutor,
    arun_with_timeout,
    run_isolated,
)
from ..pools import CANCEL_GRACE_SECONDS
from ..results import ToolResult, classify_exception, error_result, success_result
from ..text import copy_json
from ..tools import SecretHandle, ToolContext, ToolSpec
from ..trace import ProgressEmitter
from .attempts import amend
from .ledger import PlannedCall, refusal
from .records import interruption_name
from .run import Run
from .terms import Terms

__all__ = [
    "ISOLATION_GRACE_SECONDS",
    "AsyncInvoke",
    "Invoke",
    "Passthrough",
    "aexecute",
    "failed",
    "interrupted_result",
    "own_timeout",
    "refused_after_stop",
    "result_from",
    "settle_children",
    "settle_interrupted",
    "submit",
    "timeout_for",
    "tool_context",
]

ISOLATION_GRACE_SECONDS: Final = 5.0
"""Extra seconds a pool thread may take to start and reap an isolated tool's process."""

Invoke = Callable[[ToolContext], Any]
"""How a driver runs a call: called with the call's :class:`ToolContext`, returns the
tool's raw value (or raises)."""

AsyncInvoke = Callable[[ToolContext], Awaitable[Any]]
"""The async twin of :data:`Invoke`."""

Passthrough = tuple[type[BaseException], ...]
"""Exception types that are a framework's control flow, never a tool's failure: one that
``invoke`` raises is re-raised to the driver and nothing is recorded."""


def _reraise_passthrough(invocation: Invocation, passthrough: Passthrough) -> None:
    """Re-raise a control-flow exception ``invoke`` raised (see :data:`Passthrough`)."""
    if passthrough and isinstance(invocation.error, passthrough):
        raise invocation.error


def refused_after_stop(run: Run, planned: PlannedCall) -> ToolResult | None:
    """The bound ``not_run`` refusal of a call asked to run after the run halted (the
    guard every driver shares), recorded once; ``None`` while the run goes on."""
    with run.lock:
        stop = run.stopped()
        if stop is None:
            return None
        run.trace.record(
            "refused_after_stop", what="tool_call", id=planned.call_id, reason=stop.reason
        )
        recorded = run.ledger.answered.get(planned.call_id)
        if recorded is not None:
            return recorded
        return run.ledger.record(
            refusal(
                planned.call,
                "not_allowed",
                f"not run: the run has stopped ({stop.reason})",
                run.contract.redaction,
            )
        )


def tool_context(
    run: Run,
    call_id: str,
    spec: ToolSpec,
    *,
    idempotency_key: str | None = None,
    preview: bool = False,
) -> ToolContext:
    """The :class:`ToolContext` the handler (or verify; with ``preview``, the preview)
    of ``spec``'s call ``call_id`` gets: handles for the secrets ``spec`` declared and,
    except for a preview, their values the run holds; no other secret."""
    declared = spec.secrets
    return ToolContext(
        run_id=run.run_id,
        tool_call_id=call_id,
        caller=run.caller,
        values=run.context,
        idempotency_key=idempotency_key,
        emitter=ProgressEmitter(run.trace, call_id),
        tool=spec.name,
        secrets={name: SecretHandle(name) for name in declared},
        _secret_values=(
            {} if preview else {n: run.secrets[n] for n in declared if n in run.secrets}
        ),
        _reveals=not preview,
    )


def timeout_for(run: Run, spec: ToolSpec) -> float:
    """The tool's timeout in seconds, capped by what is left of the run's deadline."""
    timeout = float(spec.timeout_seconds)
    deadline = run.contract.budget.deadline_seconds
    if deadline is not None:
        timeout = max(0.0, min(timeout, deadline - run.counters.elapsed()))
    return timeout


def _runnable_spec(planned: PlannedCall) -> ToolSpec:
    """The spec of a call that may run now.

    Raises:
        ConfigurationError: the call was refused, or is a write call (writes run only
            after a human decision, through :meth:`RunState.execute`).
    """
    if planned.spec is None or planned.refusal is not None:
        raise ConfigurationError("a planned call without a spec or refusal cannot run")
    if planned.approval is not None:
        raise ConfigurationError(
            "a write call runs only after a human decision (RunState.resume, then execute)"
        )
    return planned.spec


def _default_invoke(spec: ToolSpec, arguments: dict[str, Any]) -> Invoke:
    """The plain way to run a call: its handler with its own copy of the arguments."""
    copied = copy_json(arguments)
    if spec.needs_context:
        return lambda context: spec.handler(context, **copied)
    return lambda context: spec.handler(**copied)


def submit(
    run: Run,
    planned: PlannedCall,
    invoke: Invoke | None = None,
    *,
    passthrough: Passthrough = (),
) -> Callable[[], ToolResult]:
    """Start one admitted call; the returned function waits for it and records the
    result (see :meth:`RunState.submit`)."""
    spec = _runnable_spec(planned)
    timeout = timeout_for(run, spec)
    context = tool_context(run, planned.call_id, spec)
    if spec.isolation == "process":
        args = (context,) if spec.needs_context else ()
        kwargs = copy.deepcopy(planned.arguments)
        handler = spec.handler
        isolated = run.contract.executor.submit(
            lambda: run_isolated(handler, args, kwargs, timeout)
        )

        def wait_isolated() -> ToolResult:
            with _interruptible(run, planned, spec):
                outer = isolated.result(timeout + ISOLATION_GRACE_SECONDS)
            invocation = outer.value if isinstance(outer.value, Invocation) else outer
            return run.record(result_from(run.contract, planned, spec, invocation, timeout))

        return wait_isolated
    handle = _start(run, planned, spec, invoke, context)

    def wait() -> ToolResult:
        with _interruptible(run, planned, spec):
            invocation = handle.result(timeout)
        _reraise_passthrough(invocation, passthrough)
        result = result_from(run.contract, planned, spec, invocation, timeout)
        return run.record(amend(run, result))

    return wait


def _start(
    run: Run, planned: PlannedCall, spec: ToolSpec, invoke: Invoke | None, context: ToolContext
) -> InvocationHandle:
    """Start ``planned`` on the run's executor: ``invoke`` (default: the handler) on a
    pool thread; an ``async def`` handler's own coroutine on the executor's loop."""
    call = invoke or _default_invoke(spec, planned.arguments)
    executor = run.contract.executor
    own = type(executor).submit is ToolExecutor.submit
    if spec.is_async and invoke is None and own:
        # An async def handler's coroutine goes straight to the executor's loop.
        return executor.submit_coroutine(lambda: call(context))
    if spec.is_async and own:
        # A binding's invoke prepares the coroutine on a pool thread (run_awaitable).
        return executor.submit(lambda: call(context), awaits=True)
    return executor.submit(lambda: call(context))


async def aexecute(
    run: Run,
    planned: PlannedCall,
    ainvoke: AsyncInvoke | None = None,
    *,
    passthrough: Passthrough = (),
) -> ToolResult:
    """Await one admitted call with its timeout and record the result (see
    :meth:`RunState.aexecute`). ``ainvoke`` of an ``async def`` tool is taken to await
    the tool natively: at the timeout it is cancelled (outcome ``cancelled``); for a
    sync tool it may wrap a thread that runs on (outcome ``unknown``). Without
    ``ainvoke`` the tool's own handler runs: an ``async def`` one awaited here, a sync
    one on the executor's pool, awaited without a second thread."""
    import asyncio  # deferred: only the async path needs it

    spec = _runnable_spec(planned)
    if spec.isolation == "process":
        return await asyncio.to_thread(lambda: submit(run, planned)())
    timeout = timeout_for(run, spec)
    context = tool_context(run, planned.call_id, spec)
    with _interruptible(run, planned, spec):
        if ainvoke is None and not spec.is_async:
            handle = _start(run, planned, spec, None, context)
            aresult = getattr(handle, "aresult", None)  # an executor's own handle may lack it
            if aresult is not None:
                invocation = await aresult(timeout)
            else:
                invocation = await asyncio.to_thread(handle.result, timeout)
        else:
            run_it = ainvoke or _default_invoke(spec, planned.arguments)
            invocation = await arun_with_timeout(
                lambda: run_it(context),
                timeout,
                native=spec.is_async,
                cancel_grace=_cancel_grace(run.contract.executor),
            )
    _reraise_passthrough(invocation, passthrough)
    result = result_from(run.contract, planned, spec, invocation, timeout)
    return run.record(amend(run, result))


def _cancel_grace(executor: ToolExecutor) -> float:
    """The grace a cancelled async tool gets to end: the executor's, or the default for
    an executor that does not say."""
    grace = getattr(executor, "cancel_grace_seconds", CANCEL_GRACE_SECONDS)
    return float(grace) if isinstance(grace, int | float) else CANCEL_GRACE_SECONDS


@contextmanager
def _interruptible(run: Run, planned: PlannedCall, spec: ToolSpec) -> Iterator[None]:
    """Record the call in flight when the wait for it is interrupted (a
    ``KeyboardInterrupt``, ``SystemExit``, a signal, a cancelled task: anything that is
    not an ``Exception``), then let the interruption go on: never the tool's error; its
    outcome is unknown (the handler may still be running)."""
    try:
        yield
    except BaseException as exc:
        if not isinstance(exc, Exception):
            with run.lock:
                if planned.call_id not in run.ledger.answered:
                    run.ledger.record(
                        interrupted_result(
                            run.contract,
                            planned.call_id,
                            spec.name,
                            f"interrupted by {interruption_name(exc)}",
                        )
                    )
        raise


def settle_interrupted(run: Run, what: str) -> None:
    """Record every call of the open batch that was admitted to run and has no result as
    ``what`` (``interrupted by SIGINT``; it may have started: its outcome is unknown). Write calls
    keep waiting: for a decision, or, once decided, to be verified on resume. The caller
    holds the run's lock."""
    for planned in run.ledger.batch:
        runs = planned.refusal is None and planned.approval is None and planned.spec is not None
        if runs and planned.call_id not in run.ledger.answered:
            name = planned.spec.name if planned.spec is not None else planned.call.name
            run.ledger.record(interrupted_result(run.contract, planned.call_id, name, what))


def settle_children(run: Run, reason: str) -> None:
    """Close the open batch of every child scope under ``run`` (deepest first), as the
    run ends with ``reason``: a call admitted to run with no result yet gets one with
    kind ``interrupted`` and outcome unknown (another scope's stop ended the run while
    it was admitted; it may have started), then every call's ``tool_result`` is
    written. A child halted by a sibling's stop is never asked again, so without this
    its admitted calls would leave no result. The caller holds the run's lock."""
    for child in run.children:
        settle_children(child, reason)
        for planned in child.ledger.batch:
            runs = planned.refusal is None and planned.approval is None and planned.spec is not None
            if runs and planned.call_id not in child.ledger.answered:
                name = planned.spec.name if planned.spec is not None else planned.call.name
                child.ledger.record(
                    error_result(
                        planned.call_id,
                        name,
                        "interrupted",
                        f"the run stopped ({reason}) before tool {name!r} recorded a "
                        "result; its outcome is unknown and side effects are possible",
                        redaction=child.contract.redaction,
                        outcome="unknown",
                        side_effects_possible=True,
                    )
                )
        child.ledger.close(force=True)


def interrupted_result(contract: Terms, call_id: str, name: str, what: str) -> ToolResult:
    """The result of a call whose run was interrupted while it ran (``what``: e.g.
    ``interrupted by SIGTERM``): kind ``interrupted``, outcome unknown, side effects
    possible."""
    return error_result(
        call_id,
        name,
        "interrupted",
        f"the run was {what} while tool {name!r} ran; its outcome is unknown and side "
        "effects are possible",
        redaction=contract.redaction,
        outcome="unknown",
        side_effects_possible=True,
    )


def result_from(
    contract: Terms,
    planned: PlannedCall,
    spec: ToolSpec,
    invocation: Invocation,
    timeout: float,
) -> ToolResult:
    """The classified result of an invocation: killed, cancelled (an async tool), not
    started, timed out (outcome unknown, side effects possible), failed, or the
    serialized, size-limited value."""
    call_id, name, redaction = planned.call_id, spec.name, contract.redaction
    if invocation.killed:
        return error_result(
            call_id,
            name,
            "timeout",
            f"tool {name!r} did not finish within {timeout:.3g} s and its process was "
            "killed; nothing it had not done yet can happen, but work before the kill may "
            "have happened",
            redaction=redaction,
            outcome="killed",
            side_effects_possible=True,
            duration_seconds=invocation.duration_seconds,
        )
    if invocation.timed_out and invocation.cancelled:
        return error_result(
            call_id,
            name,
            "timeout",
            f"async tool {name!r} did not finish within {timeout:.3g} s and was cancelled; "
            "nothing it had not done yet can happen, but work before the cancellation may "
            "have happened",
            redaction=redaction,
            outcome="cancelled",
            side_effects_possible=True,
            duration_seconds=invocation.duration_seconds,
        )
    if invocation.timed_out:
        if not invocation.started:
            return error_result(
                call_id,
                name,
                "timeout",
                f"tool {name!r} did not start within {timeout:.3g} s; it was not run",
                redaction=redaction,
                outcome="not_run",
            )
        return error_result(
            call_id,
            name,
            "timeout",
            f"tool {name!r} did not finish within {timeout:.3g} s; its outcome is unknown "
            "and side effects are possible",
            redaction=redaction,
            outcome="unknown",
            side_effects_possible=True,
            duration_seconds=invocation.duration_seconds,
        )
    if isinstance(invocation.error, TimeoutError):
        return own_timeout(contract, call_id, name, invocation.duration_seconds)
    if invocation.error is not None:
        return failed(contract, call_id, name, invocation.error, invocation.duration_seconds)
    return success_result(
        call_id,
        name,
        invocation.value,
        max_result_chars=spec.max_result_chars,
        on_oversize=spec.on_oversize,
        redaction=redaction,
        duration_seconds=invocation.duration_seconds,
        artifact=invocation.value,
    )


def own_timeout(contract: Terms, call_id: str, name: str, duration_seconds: float) -> ToolResult:
    """The result of a handler that raised ``TimeoutError`` itself (its own client gave
    up on something): like the executor's timeout, the outcome is unknown and side
    effects are possible (the request it waited for may have landed)."""
    return error_result(
        call_id,
        name,
        "timeout",
        f"tool {name!r} raised a timeout of its own after {duration_seconds:.3g} s; its "
        "outcome is unknown and side effects are possible",
        redaction=contract.redaction,
        outcome="unknown",
        side_effects_possible=True,
        duration_seconds=duration_seconds,
    )


def failed(
    contract: Terms,
    call_id: str,
    name: str,
    error: BaseException,
    duration_seconds: float,
    *,
    side_effects_possible: bool = False,
) -> ToolResult:
    """The classified error result of a handler that raised (outcome ``failed``)."""
    kind, message = classify_exception(
        error, name, expose_exception_text=contract.expose_exception_text
    )
    return error_result(
        call_id,
        name,
        kind,
        message,
        redaction=contract.redaction,
        outcome="failed",
        side_effects_possible=side_effects_possible,
        duration_seconds=duration_seconds,
    )
