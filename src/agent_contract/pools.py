"""The threads tool handlers run on: a pool of daemon threads, and an event loop in a
daemon thread for ``async def`` handlers.

**Daemon threads, so a timed-out tool never holds the process at exit.** Python cannot
stop a thread. A thread-mode tool that timed out keeps running (its result said so:
outcome ``unknown``, side effects possible), and ``concurrent.futures``' own pool joins
every worker when the interpreter exits, so one stuck tool kept a finished program alive
until the tool returned. :class:`DaemonThreadPool` runs work on daemon threads that
exit does not wait for: at exit an abandoned handler stops wherever it is. The policy
is deliberate: its outcome was already reported unknown, and a write it had not made
yet does not land (one it made does; see ``ToolSpec(isolation="process")`` for a tool
that must be killable).

**One event loop per executor for ``async def`` handlers** (:class:`LoopThread`): a
coroutine a handler returns runs as a task on it, in the caller's
:mod:`contextvars` context; at the timeout the task is cancelled, and once it has ended
the call's outcome is ``cancelled`` (it can do nothing more). A coroutine that does not
end within :data:`CANCEL_GRACE_SECONDS` of its cancellation (it swallowed the
``CancelledError``, or blocks the loop) is reported ``unknown``, like a thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "CANCEL_GRACE_SECONDS",
    "INTERRUPT_GRACE_SECONDS",
    "SIGNAL_POLL_SECONDS",
    "Call",
    "DaemonThreadPool",
    "LoopThread",
    "RunningTask",
    "run_async",
    "wait_for",
]

_T = TypeVar("_T")

CANCEL_GRACE_SECONDS: Final = 1.0
"""How long a cancelled async handler may take to end before its outcome is reported
``unknown`` instead of ``cancelled``, in seconds."""


_PENDING: Final = 0
_RUNNING: Final = 1
_FINISHED: Final = 2
_CANCELLED: Final = 3


class Call:
    """One piece of work handed to a :class:`DaemonThreadPool` worker by
    :meth:`DaemonThreadPool.start`: a small future for the one caller that waits on it.

    Lighter than a ``concurrent.futures.Future`` (no condition variable, no waiter
    list): the call's ``done`` lock is taken when it is made and released once, when it
    has finished or was cancelled, so a wait is one lock acquisition. An event loop
    waits without a thread through :meth:`notify` (one callback at the most).

    States: pending (queued or handed to a worker, not begun), running, finished,
    cancelled (only a pending call can be).
    """

    __slots__ = ("_done", "_error", "_fn", "_guard", "_linked", "_on_end", "_state", "_value")

    def __init__(self, fn: Callable[[], Any], linked: Future[Any] | None = None) -> None:
        self._fn: Callable[[], Any] | None = fn
        self._linked = linked
        self._state = _PENDING
        self._value: Any = None
        self._error: BaseException | None = None
        self._guard = threading.Lock()
        self._done = threading.Lock()
        self._done.acquire()
        self._on_end: Callable[[], object] | None = None

    def result(self, timeout: float | None = None) -> Any:
        """The work's value, waiting at most ``timeout`` seconds (None: no limit).

        Raises:
            TimeoutError: it has not finished within ``timeout``.
            concurrent.futures.CancelledError: it was cancelled before it began.
            BaseException: whatever the work raised.
        """
        if not self._done.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            raise TimeoutError
        self._done.release()  # finished for good: any later wait passes at once
        if self._state == _CANCELLED:
            raise CancelledError
        if self._error is not None:
            raise self._error
        return self._value

    def notify(self, callback: Callable[[], object]) -> None:
        """Have ``callback()`` called once the call has finished or was cancelled: at
        once, on this thread, when it already has; else on the thread that ends it (the
        worker's), after :meth:`result` stops blocking. It must not raise (what it
        raises is dropped) nor block; one callback per call, a later one replaces it.
        """
        with self._guard:
            if self._state < _FINISHED:
                self._on_end = callback
                return
        _call_back(callback)

    def cancel(self) -> bool:
        """Cancel the call unless it has begun; True when it is cancelled (now or
        before), False when it is running or finished."""
        with self._guard:
            if self._state == _CANCELLED:
                return True
            if self._state != _PENDING:
                return False
            self._state = _CANCELLED
            self._fn = None
            callback, self._on_end = self._on_end, None
        if self._linked is not None:
            self._linked.cancel()
        self._done.release()
        _call_back(callback)
        return True

    def done(self) -> bool:
        """True once it has finished or was cancelled."""
        return self._state >= _FINISHED

    def cancelled(self) -> bool:
        """True when it was cancelled before it began."""
        return self._state == _CANCELLED

    def _run(self) -> bool:
        """Run the work on the calling (worker) thread, unless it was cancelled; True
        when it ran. The waiting caller is woken later, by :meth:`_end`."""
        with self._guard:
            if self._state != _PENDING:
                return False
            if self._linked is not None and not self._linked.set_running_or_notify_cancel():
                self._state = _CANCELLED  # its future was cancelled: never run
                self._fn = None
                self._done.release()
                callback, self._on_end = self._on_end, None
                _call_back(callback)  # it does not block (see notify)
                return False
            self._state = _RUNNING
            fn, self._fn = self._fn, None
        try:
            self._value = fn()  # type: ignore[misc]  # set while pending
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            self._error = exc
        return True

    def _end(self) -> None:
        """Wake the caller: the call has finished (its linked future too)."""
        with self._guard:
            self._state = _FINISHED
            callback, self._on_end = self._on_end, None
        if self._linked is not None:
            if self._error is not None:
                self._linked.set_exception(self._error)
            else:
                self._linked.set_result(self._value)
        self._done.release()
        _call_back(callback)


def _call_back(callback: Callable[[], object] | None) -> None:
    """Call a :meth:`Call.notify` callback, if there is one; what it raises is dropped (a
    worker thread must go on; a loop closed meanwhile makes ``call_soon_threadsafe``
    raise)."""
    if callback is not None:
        with contextlib.suppress(Exception):
            callback()


class _Worker:
    """One daemon thread of a :class:`DaemonThreadPool`: ``wake`` is held except while
    the thread is being woken with its next ``call`` (None: end)."""

    __slots__ = ("call", "wake")

    def __init__(self, call: Call) -> None:
        self.call: Call | None = call
        self.wake = threading.Lock()
        self.wake.acquire()


class DaemonThreadPool(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose work runs on daemon threads that the interpreter
    does not wait for at exit (see the module doc).

    It is a ``ThreadPoolExecutor`` (so asyncio accepts it as a loop's default executor)
    but does not use the base class's threads: work goes to its own workers, an idle
    one if there is one (the last to become idle: its stack is still warm), else a new
    thread up to ``max_workers``, else a backlog the next free worker takes from.

    **The hand-off per call is one lock release each way**: :meth:`start` gives the
    work to an idle worker by releasing that worker's wake lock, and the worker wakes
    the waiting caller by releasing the :class:`Call`'s done lock. A worker is back
    among the idle ones *before* it wakes its caller, so a caller that runs one tool
    after another finds it idle again and the pool does not grow (see
    ``docs/PERFORMANCE.md`` for what the hop costs).

    Args:
        max_workers: the most threads at once (default: as ``ThreadPoolExecutor``'s,
            ``min(32, cpu count + 4)``).
        thread_name_prefix: the threads' names start with it.
    """

    def __init__(self, max_workers: int | None = None, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._limit = max_workers if max_workers is not None else min(32, (os.cpu_count() or 1) + 4)
        self._prefix = thread_name_prefix or "daemon-pool"
        self._idle: list[_Worker] = []
        self._backlog: deque[Call] = deque()
        self._running_threads = 0
        self._guard = threading.Lock()
        self._closed = False

    @property
    def idle_workers(self) -> int:
        """How many workers wait for work now."""
        return len(self._idle)

    def start(self, fn: Callable[[], Any], *, linked: Future[Any] | None = None) -> Call:
        """Run ``fn()`` on a daemon worker; returns its :class:`Call`. ``linked`` is a
        future that follows the call: it is cancelled with it, set running when it
        begins (a cancelled future: the call never runs) and given its outcome.

        Raises:
            RuntimeError: the pool was shut down.
        """
        call = Call(fn, linked)
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._idle:
                worker = self._idle.pop()
                worker.call = call
                worker.wake.release()
                return call
            if self._running_threads >= self._limit:
                self._backlog.append(call)
                return call
            self._running_threads += 1
            thread = threading.Thread(
                target=self._work,
                args=(_Worker(call),),
                name=f"{self._prefix}_{self._running_threads - 1}",
                daemon=True,
            )
            try:
                thread.start()
            except BaseException:
                self._running_threads -= 1  # no thread (the system's limit, an interruption)
                raise
        return call

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` on a daemon worker; returns its future (what
        asyncio's ``run_in_executor`` needs; :meth:`start` is the lighter way).

        Raises:
            RuntimeError: the pool was shut down.
        """
        future: Future[Any] = Future()
        self.start(lambda: fn(*args, **kwargs), linked=future)
        return future

    def _work(self, worker: _Worker) -> None:
        call = worker.call
        while call is not None:
            worker.call = None
            ran = call._run()  # False: it was cancelled, its caller already woken
            following = self._next(worker)
            if ran:
                call._end()
            # Nothing of the call stays on this idle worker's frame: its value (a graph
            # node's state, on the run loop's executor) would stay reachable until the
            # next work arrived.
            del call
            if following is None:
                worker.wake.acquire()
                following = worker.call
            call = following

    def _next(self, worker: _Worker) -> Call | None:
        """The finished ``worker``'s next call from the backlog, or None after it was
        put back among the idle workers (or, the pool being shut down, ended)."""
        with self._guard:
            if self._backlog:
                return self._backlog.popleft()
            if self._closed:
                worker.call = None
                worker.wake.release()  # its wait returns at once, with no call: it ends
                self._running_threads -= 1
            else:
                self._idle.append(worker)
        return None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work; idle workers end, busy ones once the backlog is empty.
        ``cancel_futures`` cancels what has not started; ``wait`` waits only for work
        that is not an abandoned tool (nothing here is joined: a running handler may
        never return)."""
        with self._guard:
            self._closed = True
            backlog = list(self._backlog) if cancel_futures else []
            if cancel_futures:
                self._backlog.clear()
            idle, self._idle = self._idle, []
            self._running_threads -= len(idle)
            for worker in idle:
                worker.call = None
                worker.wake.release()
        for call in backlog:
            call.cancel()


class RunningTask:
    """An ``async def`` handler's coroutine running on a :class:`LoopThread`."""

    def __init__(self, future: Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.future = future
        """Completes with the coroutine's value or exception (cancelled when it was)."""
        self.ended = threading.Event()
        """Set once the task has ended, whatever the way."""
        self._loop = loop
        self._task: asyncio.Task[Any] | None = None

    def cancel(self, message: object = None) -> None:
        """Cancel the task (thread-safe); :attr:`ended` is set once it has ended.
        ``message`` becomes the ``CancelledError``'s argument inside the task."""
        self._loop.call_soon_threadsafe(self._cancel, message)

    def _cancel(self, message: object = None) -> None:
        if self._task is not None:
            self._task.cancel(message)
        else:
            self.future.cancel()
            self.ended.set()


class LoopThread:
    """An event loop running forever in a daemon thread, started on first use.

    Args:
        name: the thread's name.
        default_executor: makes the loop's default executor (``run_in_executor(None,
            ...)``) when the loop starts; None: asyncio's own.
    """

    def __init__(
        self,
        name: str = "agent-contract-async-tools",
        *,
        default_executor: Callable[[], ThreadPoolExecutor] | None = None,
    ) -> None:
        self._name = name
        self._default_executor = default_executor
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                import asyncio  # deferred: only an async handler needs a loop

                loop = asyncio.new_event_loop()
                if self._default_executor is not None:
                    loop.set_default_executor(self._default_executor())
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def start(
        self, coroutine: Coroutine[Any, Any, Any], context: contextvars.Context
    ) -> RunningTask:
        """Run ``coroutine`` as a task on the loop, in ``context``."""
        loop = self._running_loop()
        running = RunningTask(Future(), loop)
        escaped: list[BaseException] = []

        async def contained() -> Any:
            # A task that raises KeyboardInterrupt or SystemExit re-raises it out of
            # the loop itself, which would end the loop thread for every later call:
            # kept here, and handed to the caller through the future instead.
            try:
                return await coroutine
            except (KeyboardInterrupt, SystemExit) as exc:
                escaped.append(exc)
                return None

        def begin() -> None:
            if not running.future.set_running_or_notify_cancel():
                coroutine.close()
                running.ended.set()
                return
            task = loop.create_task(contained(), context=context)
            running._task = task
            task.add_done_callback(finish)

        def finish(task: asyncio.Task[Any]) -> None:
            if escaped:
                running.future.set_exception(escaped[0])
            elif task.cancelled():
                running.future.set_exception(_cancelled())
            elif (error := task.exception()) is not None:
                running.future.set_exception(error)
            else:
                running.future.set_result(task.result())
            running.ended.set()

        loop.call_soon_threadsafe(begin)
        return running


def _cancelled() -> BaseException:
    """An ``asyncio.CancelledError`` (asyncio is imported only once a loop runs)."""
    import asyncio

    return asyncio.CancelledError()


SIGNAL_POLL_SECONDS: Final = 0.2
"""How long :func:`wait_for` blocks at a time, in seconds: the longest a Ctrl-C (or any
signal with a Python handler) waits to be raised in a thread blocked on a future."""


def wait_for(future: Future[_T]) -> _T:
    """``future.result()``, waited for in slices of :data:`SIGNAL_POLL_SECONDS`.

    Python runs signal handlers in the main thread only, between bytecodes. The OS may
    deliver a process-directed signal (Ctrl-C, ``kill``) to any thread; when it lands
    on another one, a main thread blocked in a lock with no timeout is not woken, and
    ``future.result()`` never raises the ``KeyboardInterrupt`` (seen: a run waited on
    forever after its SIGINT). A wait with a timeout returns to the interpreter, which
    then runs the pending handler.

    Raises:
        BaseException: what ``future`` raised, or what a signal handler raised while
            waiting (``KeyboardInterrupt``).
    """
    while True:
        try:
            return future.result(SIGNAL_POLL_SECONDS)
        except TimeoutError:
            if future.done():  # the future's own TimeoutError
                raise


_RUN_WORKERS: Final = 1 << 20
"""The run loop's default executor starts a new daemon thread whenever no worker is idle
(in effect unbounded): a tool thread abandoned at its timeout keeps its worker, and
later runs on the shared loop must not queue behind it."""

INTERRUPT_GRACE_SECONDS: Final = 10.0
"""How long :func:`run_async` waits, after the waiting thread was interrupted, for the
cancelled run to finish recording its pause before it re-raises the interruption alone."""


def _run_pool() -> ThreadPoolExecutor:
    return DaemonThreadPool(max_workers=_RUN_WORKERS, thread_name_prefix="agent-contract-ainvoke")


_RUNS = LoopThread("agent-contract-runs", default_executor=_run_pool)


def run_async(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` to its end on the process's one run loop and return its value
    (or raise its exception), from synchronous code.

    **One loop for every call**, in a daemon thread started on first use
    (:class:`LoopThread`): an async client (``ChatOpenAI``'s ``AsyncOpenAI``, an httpx
    ``AsyncClient``) keeps its connections on the loop that opened them, so a new loop
    per call (``asyncio.run``) stranded it and its second run failed. Here one client
    object serves any number of runs, resumes and turns, from any thread. The
    coroutine runs as a task in a copy of the caller's :mod:`contextvars` context.

    **Abandoned tool threads hold neither the run nor the process.** A framework's
    async run (LangChain's ``ainvoke``) runs sync tools on the loop's default executor;
    ``asyncio.run`` joins that executor's threads before it returns, so a sync tool that
    timed out (it keeps running: a thread cannot be stopped) held the run until it
    finished. The run loop's default executor is a :class:`DaemonThreadPool` that is
    never joined and starts a new daemon thread when no worker is idle: the call
    returns at the timeout as on the other paths, later runs do not wait behind the
    abandoned thread, and exit does not wait for it either.

    **Interrupted while waiting** (Ctrl-C, a signal handler's exception, ``SystemExit``
    in the calling thread): the task is cancelled and given
    :data:`INTERRUPT_GRACE_SECONDS` to end; a run that ends by pausing
    (:class:`~agent_contract.runtime.RunInterrupted`, a ``KeyboardInterrupt``) is
    raised with the interruption as its cause, anything else re-raises the interruption.

    Raises:
        RuntimeError: called from a thread whose event loop is running (await the
            coroutine there instead).
        BaseException: whatever the coroutine raised.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        coroutine.close()
        raise RuntimeError(
            "run_async() cannot be called from a running event loop: await the coroutine"
        )
    running = _RUNS.start(coroutine, contextvars.copy_context())
    try:
        value: _T = wait_for(running.future)
        return value
    except BaseException as interrupt:
        if running.future.done():
            raise  # the coroutine's own outcome
        running.cancel(interrupt)  # the run's pause names it (interruption_name)
        running.ended.wait(INTERRUPT_GRACE_SECONDS)
        if running.future.done() and not running.future.cancelled():
            ended = running.future.exception()
            if isinstance(ended, KeyboardInterrupt) and ended is not interrupt:
                ended.__cause__ = interrupt
                if hasattr(ended, "cause"):  # RunInterrupted names what interrupted it
                    ended.cause = interrupt
                raise ended from interrupt
        raise
