"""Runs tool handlers with a wall-clock timeout on a long-lived worker pool.

Why a long-lived pool: ``ThreadPoolExecutor.__exit__`` waits for running work, so a
pool created per call turns a 0.2 s timeout around a 1.5 s handler into a 1.5 s wait.
One pool, created once, lets the caller stop waiting at the timeout.

What a timeout means in thread mode: Python cannot kill a thread. The handler keeps
running and any write it makes still lands later. The result therefore says
``outcome="unknown"`` and ``side_effects_possible=True``; only a handler that had not
started yet (the pool was saturated) is reported as ``not_run``. A tool that must be
stoppable needs a boundary the OS enforces (a subprocess), or a timeout inside its own
client.

Handlers run in a copy of the caller's :mod:`contextvars` context, which LangGraph
needs when its handlers are moved to another thread.

Opt-in process isolation (:func:`run_isolated`, ``ToolSpec(isolation="process")``) runs
a handler in a child process that is killed at the timeout, so a timed-out call's
later side effects cannot land.

The pool's threads are daemon threads: a timed-out handler never holds the process at
exit (see :mod:`agent_contract.pools`). An ``async def`` handler (one whose call returns
an awaitable) runs on the executor's own event loop, as a task cancelled at the timeout
(outcome ``cancelled`` once it has ended by its cancellation within the grace, else
``unknown``); :func:`run_awaitable` runs one from inside a handler the same way (the
LangChain binding's tools do). :func:`arun_with_timeout` does the same on the caller's
loop (the async paths), and never waits past the limit plus the grace.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from .errors import ConfigurationError
from .pools import CANCEL_GRACE_SECONDS, Call, DaemonThreadPool, LoopThread, RunningTask, wait_for

__all__ = [
    "ISOLATION_START_METHOD",
    "Invocation",
    "InvocationHandle",
    "ToolExecutor",
    "arun_with_timeout",
    "default_executor",
    "run_awaitable",
    "run_isolated",
]


@dataclass(frozen=True, kw_only=True)
class Invocation:
    """What happened when a handler was invoked."""

    value: Any = None
    """The handler's return value, when it returned in time."""
    error: BaseException | None = None
    """The exception it raised, when it raised in time."""
    timed_out: bool = False
    """True when the caller stopped waiting."""
    started: bool = True
    """False only when the handler never started before the timeout (pool saturated)."""
    killed: bool = False
    """True when an isolated handler's process was killed at the timeout."""
    cancelled: bool = False
    """True when an ``async def`` handler was cancelled at the timeout and its task has
    ended (it can do nothing more)."""
    duration_seconds: float = 0.0
    """Seconds from start until it returned, or until the caller stopped waiting."""


class _Started:
    """When the handler began (``at``, monotonic seconds; 0.0 until it starts), and the
    task of an ``async def`` handler once it runs on the loop."""

    __slots__ = ("abandoned", "at", "guard", "task")

    def __init__(self) -> None:
        self.at = 0.0
        self.task: RunningTask | None = None
        self.abandoned = False  # timed out before its coroutine started: never start it
        self.guard = threading.Lock()


_CURRENT: contextvars.ContextVar[tuple[ToolExecutor, _Started] | None] = contextvars.ContextVar(
    "agent_contract_current_call", default=None
)
"""The executor and call a handler runs under (for :func:`run_awaitable`)."""


class InvocationHandle:
    """A submitted handler; :meth:`result` waits for it up to a timeout."""

    def __init__(
        self,
        future: Future[Any] | Call,
        started: _Started,
        submitted: float,
        cancel_grace: float = CANCEL_GRACE_SECONDS,
        *,
        awaits: bool = False,
    ) -> None:
        self._future = future
        self._started = started
        self._submitted = submitted
        self._cancel_grace = cancel_grace
        self._awaits = awaits

    def result(self, timeout: float) -> Invocation:
        """Wait at most ``timeout`` seconds (measured from submission) for the handler.

        Raises:
            BaseException: what is not an ``Exception`` (``KeyboardInterrupt`` while
                waiting, a ``SystemExit`` the handler raised) propagates: an interrupted
                run is never the tool's error. The handler's thread may still run on.
        """
        remaining = max(0.0, timeout - (time.monotonic() - self._submitted))
        try:
            value = self._future.result(timeout=remaining)
        except FutureTimeout as exc:
            if self._future.done() and not self._future.cancelled():
                # The handler itself raised a TimeoutError (the same class as the
                # future's own since Python 3.11): its failure, not our wait running out.
                return Invocation(error=exc, duration_seconds=self._elapsed())
            cancelled = self._future.cancel()
            started = not cancelled
            begun = self._started.at or time.monotonic()
            with self._started.guard:
                task = self._started.task
                self._started.abandoned = task is None
            ended = False
            if task is not None:  # an async handler: cancel its task, give it a moment
                task.cancel()
                ended = task.ended.wait(self._cancel_grace) and _ended_by_cancel(task)
            elif self._awaits:  # its coroutine never reached the loop, and now never will
                ended = True
            return Invocation(
                timed_out=True,
                started=started,
                cancelled=ended,
                duration_seconds=time.monotonic() - begun,
            )
        except Exception as exc:  # noqa: BLE001 - classified by the caller
            return Invocation(error=exc, duration_seconds=self._elapsed())
        # Anything else (KeyboardInterrupt while waiting, or a SystemExit the handler
        # raised) is not the tool's failure: it propagates, and the run is interrupted.
        return Invocation(value=value, duration_seconds=self._elapsed())

    async def aresult(self, timeout: float) -> Invocation:
        """:meth:`result` for a caller on an event loop: the loop waits for the handler
        to end (the worker wakes it) instead of a thread blocking on it, so a sync tool
        awaited from async code costs one thread hop, not two. The same timeout
        (seconds, from submission), outcomes and errors as :meth:`result`.

        Raises:
            asyncio.CancelledError: the awaiting task was cancelled (the handler's
                thread may still run on, as after an interrupted :meth:`result`).
        """
        import asyncio  # deferred: only the async paths need it

        loop = asyncio.get_running_loop()
        ended = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop was closed: nobody waits
                loop.call_soon_threadsafe(_set_once, ended)

        future = self._future
        if isinstance(future, Call):
            future.notify(wake)
        else:
            future.add_done_callback(lambda _: wake())
        remaining = max(0.0, timeout - (time.monotonic() - self._submitted))
        await asyncio.wait({ended}, timeout=remaining)
        if future.done():
            return self.result(timeout)  # it has ended: this does not block
        # The limit has passed: cancelling may wait a grace for an async handler's task.
        return await asyncio.to_thread(self.result, timeout)

    def _elapsed(self) -> float:
        return time.monotonic() - (self._started.at or self._submitted)


def _set_once(future: Any) -> None:
    """Resolve an event loop's future unless it is done (the waiter gave up)."""
    if not future.done():
        future.set_result(None)


def _ended_by_cancel(task: RunningTask) -> bool:
    """True when ``task`` (ended) ended by its cancellation: not a task that swallowed
    the ``CancelledError`` and returned or raised something else after its limit."""
    import asyncio  # the task ran on a loop: asyncio is already imported

    if task.future.cancelled():
        return True
    return isinstance(task.future.exception(timeout=0), asyncio.CancelledError)


class ToolExecutor:
    """A long-lived thread pool for tool handlers.

    Args:
        max_workers: threads in the pool. Timed-out handlers keep their thread until
            they return, so size it above the number of calls that may hang at once.
        cancel_grace_seconds: how long a cancelled ``async def`` handler may take to end
            before its outcome is reported unknown instead of cancelled, in seconds.

    Raises:
        ConfigurationError: ``max_workers`` is not a positive int, or the grace is not
            a number >= 0.
    """

    def __init__(
        self, max_workers: int = 16, *, cancel_grace_seconds: float = CANCEL_GRACE_SECONDS
    ) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ConfigurationError("ToolExecutor max_workers must be an int >= 1")
        grace = cancel_grace_seconds
        if isinstance(grace, bool) or not isinstance(grace, int | float) or not grace >= 0:
            raise ConfigurationError("ToolExecutor cancel_grace_seconds must be a number >= 0")
        self._cancel_grace = float(grace)
        self._pool = DaemonThreadPool(
            max_workers=max_workers, thread_name_prefix="agent-contract-tool"
        )
        self._loop = LoopThread()
        self.cancel_grace_seconds = self._cancel_grace
        """How long a cancelled ``async def`` handler may take to end, in seconds."""
        self.closed = False
        """True once :meth:`shutdown` was called."""

    def submit(self, fn: Callable[[], Any], *, awaits: bool = False) -> InvocationHandle:
        """Start ``fn()`` on the pool in a copy of the current context. When it returns
        an awaitable (an ``async def`` handler), that runs on the executor's event loop
        and the call waits for it. ``awaits=True`` says ``fn`` only prepares an ``async
        def`` handler's coroutine: a timeout before the coroutine reached the loop is
        then reported cancelled (it is never started), not unknown."""
        context = contextvars.copy_context()
        started = _Started()

        def call() -> Any:
            started.at = time.monotonic()
            context.run(_CURRENT.set, (self, started))
            value = context.run(fn)
            if inspect.isawaitable(value):
                return self.await_in_call(value, context, started)
            return value

        submitted = time.monotonic()
        return InvocationHandle(
            self._pool.start(call), started, submitted, self._cancel_grace, awaits=awaits
        )

    def submit_coroutine(self, fn: Callable[[], Any]) -> InvocationHandle:
        """Start an ``async def`` handler's call as a task on the executor's event loop,
        from the calling thread: ``fn()`` only creates the coroutine (nothing of the
        handler runs until the loop starts it), so no pool thread has to wait for the
        loop: one thread hop instead of two. A value that is not awaitable is the call's
        value as it is; an exception ``fn()`` raises (wrong arguments) is its error.
        The handle times out and cancels like :meth:`submit`'s."""
        context = contextvars.copy_context()
        started = _Started()
        submitted = time.monotonic()
        started.at = submitted
        context.run(_CURRENT.set, (self, started))
        done: Future[Any] = Future()
        try:
            value = context.run(fn)
        except Exception as exc:  # noqa: BLE001 - the call's error, classified by the caller
            done.set_exception(exc)
            return InvocationHandle(done, started, submitted, self._cancel_grace)
        if not inspect.isawaitable(value):
            done.set_result(value)
            return InvocationHandle(done, started, submitted, self._cancel_grace)
        task = self._loop.start(_as_coroutine(value), context)
        started.task = task
        return InvocationHandle(task.future, started, submitted, self._cancel_grace)

    def await_in_call(self, awaitable: Any, context: contextvars.Context, started: _Started) -> Any:
        """Run ``awaitable`` on the executor's loop for the call ``started`` describes
        and wait for its value (its task is what a timeout cancels)."""
        with started.guard:
            if started.abandoned:  # the call timed out before it got here
                close = getattr(awaitable, "close", None)
                if callable(close):
                    close()
                raise _Abandoned("the call timed out before its coroutine started")
            task = self._loop.start(_as_coroutine(awaitable), context)
            started.task = task
        return task.future.result()

    def run(self, fn: Callable[[], Any], timeout: float) -> Invocation:
        """Submit ``fn`` and wait at most ``timeout`` seconds for it."""
        return self.submit(fn).result(timeout)

    def shutdown(self) -> None:
        """Stop accepting work; running handlers are not waited for. Idle worker threads
        end (also one whose start an interruption cut short, which the interpreter would
        otherwise wait for forever at exit)."""
        self.closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)


class _Abandoned(Exception):
    """Ends a pool thread whose call timed out before its coroutine was started."""


class _OwnTimeout(Exception):
    """Carries a ``TimeoutError`` the awaited function raised itself."""

    def __init__(self, error: TimeoutError) -> None:
        super().__init__()
        self.error = error


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _as_coroutine(awaitable: Any) -> Any:
    """``awaitable`` as a coroutine (a task needs one)."""
    return awaitable if inspect.iscoroutine(awaitable) else _await(awaitable)


def run_awaitable(awaitable: Any) -> Any:
    """Wait for ``awaitable`` from synchronous code and return its value.

    Inside a call the executor runs (a tool handler, or a framework's tool that calls
    one), it runs on that executor's event loop as the call's task, so the call's
    timeout cancels it. Anywhere else it runs on the default executor's loop with no
    timeout. Never on the calling thread's own loop: the caller is blocked.

    Raises:
        BaseException: whatever the awaitable raised (``CancelledError`` when its call
            was cancelled at the timeout).
    """
    current = _CURRENT.get()
    context = contextvars.copy_context()
    if current is None:
        executor = default_executor()
        return wait_for(executor._loop.start(_as_coroutine(awaitable), context).future)
    executor, started = current
    return executor.await_in_call(awaitable, context, started)


_ABANDONED: set[Any] = set()
"""Tasks that outlived their timeout and grace: held until they end (the loop keeps
only weak references to its tasks), their outcome already reported unknown."""


def _forget(task: Any) -> None:
    """Drop an abandoned task that has ended, reading its exception so the loop does
    not log it as never retrieved."""
    _ABANDONED.discard(task)
    if not task.cancelled():
        task.exception()


async def arun_with_timeout(
    fn: Callable[[], Awaitable[Any]],
    timeout: float,
    *,
    native: bool = False,
    cancel_grace: float = CANCEL_GRACE_SECONDS,
) -> Invocation:
    """Await ``fn()`` for at most ``timeout`` seconds, as a task on the running loop.

    At the timeout the task is cancelled and given ``cancel_grace`` seconds to end; the
    caller never waits longer than ``timeout + cancel_grace`` (``asyncio.wait_for``
    would wait for as long as the task takes to end, and hand back the value of a task
    that swallowed its cancellation as a success). The result then says:

    - ``cancelled``: ``native`` (it is an ``async def`` handler's own coroutine, not a
      wrapper around a thread that runs on) and the task ended by its cancellation
      within the grace: it can do nothing more;
    - otherwise only ``timed_out``, the outcome unknown: the task ignored its
      cancellation (it returned or raised something else), or is still running (it is
      left to end on its own; its value is dropped).

    Raises:
        asyncio.CancelledError: the caller itself was cancelled (the task is cancelled
            too).
    """
    import asyncio  # deferred: only the async path needs it

    begun = time.monotonic()

    async def guarded() -> Any:
        try:
            return await fn()
        except TimeoutError as exc:
            # The tool's own TimeoutError: its failure, not our limit passing.
            raise _OwnTimeout(exc) from exc

    task = asyncio.ensure_future(guarded())
    try:
        done, _ = await asyncio.wait({task}, timeout=max(0.0, timeout))
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=cancel_grace)
            ended = bool(done) and task.cancelled()
            if not done:
                _ABANDONED.add(task)
                task.add_done_callback(_forget)
            elif not task.cancelled():
                task.exception()  # read: whatever it was, it came past the limit
            return Invocation(
                timed_out=True,
                cancelled=native and ended,
                duration_seconds=time.monotonic() - begun,
            )
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.cancelled():  # cancelled from elsewhere: the run's, not the tool's
        raise asyncio.CancelledError
    error = task.exception()
    if isinstance(error, _OwnTimeout):
        return Invocation(error=error.error, duration_seconds=time.monotonic() - begun)
    if error is not None:
        if not isinstance(error, Exception):
            raise error
        return Invocation(error=error, duration_seconds=time.monotonic() - begun)
    return Invocation(value=task.result(), duration_seconds=time.monotonic() - begun)


_default: ToolExecutor | None = None
_default_lock = threading.Lock()


def default_executor() -> ToolExecutor:
    """The process-wide executor that contracts share unless given their own (a new one
    once it was shut down)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = ToolExecutor()
        return _default


# -- process isolation -------------------------------------------------------------------

ISOLATION_START_METHOD = "forkserver"
"""Start method for isolated tools: ``forkserver`` forks from a clean, single-threaded
server, so it is safe in a threaded process and starts a call in milliseconds after the
first one (which starts the server)."""


def _isolated_entry(
    conn: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    try:
        value = fn(*args, **kwargs)
        if inspect.isawaitable(value):  # an async def handler: its own loop, here
            import asyncio  # deferred: only an async handler needs it

            value = asyncio.run(_as_coroutine(value))
    except Exception as exc:  # noqa: BLE001 - sent back to the parent to be classified
        try:
            conn.send(("error", exc))
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled
            conn.send(("error", RuntimeError(type(exc).__name__)))
    else:
        try:
            conn.send(("value", value))
        except Exception as exc:  # noqa: BLE001 - a value that cannot be pickled
            conn.send(
                ("error", TypeError(f"result cannot leave the process: {type(exc).__name__}"))
            )
    finally:
        conn.close()


def run_isolated(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], timeout: float
) -> Invocation:
    """Run ``fn(*args, **kwargs)`` in a child process; kill it (SIGKILL) at ``timeout``.

    Unlike thread mode, a killed call can do nothing more: a write it had not made
    yet never lands. Work it did before the kill may have happened, so the caller still
    reports side effects as possible. ``fn``, its arguments and its result must be
    picklable; process start-up time counts against ``timeout``.

    Returns:
        An :class:`Invocation`; ``timed_out`` and ``killed`` are set on a kill.
    """
    import multiprocessing

    context: Any = multiprocessing.get_context(ISOLATION_START_METHOD)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_isolated_entry, args=(sender, fn, args, kwargs), daemon=True)
    begun = time.monotonic()
    try:
        process.start()
    except Exception as exc:  # noqa: BLE001 - e.g. the function cannot be pickled
        receiver.close()
        sender.close()
        return Invocation(error=exc, started=False)
    sender.close()
    try:
        if receiver.poll(timeout):
            try:
                status, payload = receiver.recv()
            except EOFError:
                process.join(1.0)
                return Invocation(
                    error=RuntimeError(f"isolated tool process died (exit {process.exitcode})"),
                    duration_seconds=time.monotonic() - begun,
                )
            process.join(1.0)
            elapsed = time.monotonic() - begun
            if status == "error":
                return Invocation(error=payload, duration_seconds=elapsed)
            return Invocation(value=payload, duration_seconds=elapsed)
        process.kill()
        process.join()
        return Invocation(timed_out=True, killed=True, duration_seconds=time.monotonic() - begun)
    finally:
        receiver.close()
