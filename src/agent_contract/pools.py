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

import contextvars
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "CANCEL_GRACE_SECONDS",
    "DaemonThreadPool",
    "LoopThread",
    "RunningTask",
    "run_async",
]

_T = TypeVar("_T")

CANCEL_GRACE_SECONDS: Final = 1.0
"""How long a cancelled async handler may take to end before its outcome is reported
``unknown`` instead of ``cancelled``, in seconds."""


class DaemonThreadPool(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose work runs on daemon threads that the interpreter
    does not wait for at exit (see the module doc).

    It is a ``ThreadPoolExecutor`` (so asyncio accepts it as a loop's default executor)
    but does not use the base class's threads: :meth:`submit` queues work for its own
    workers, started on demand up to ``max_workers`` and reused when idle.

    Args:
        max_workers: the most threads at once (default: as ``ThreadPoolExecutor``'s,
            ``min(32, cpu count + 4)``).
        thread_name_prefix: the threads' names start with it.
    """

    def __init__(self, max_workers: int | None = None, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._limit = max_workers if max_workers is not None else min(32, (os.cpu_count() or 1) + 4)
        self._prefix = thread_name_prefix or "daemon-pool"
        self._queue: SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._idle_workers = threading.Semaphore(0)
        self._guard = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` on a daemon worker; returns its future.

        Raises:
            RuntimeError: the pool was shut down.
        """
        future: Future[Any] = Future()
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queue.put((future, lambda: fn(*args, **kwargs)))
            if not self._idle_workers.acquire(blocking=False) and len(self._workers) < self._limit:
                worker = threading.Thread(
                    target=self._work,
                    name=f"{self._prefix}_{len(self._workers)}",
                    daemon=True,
                )
                self._workers.append(worker)
                worker.start()
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    value = call()
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                    future.set_exception(exc)
                else:
                    future.set_result(value)
            del item, future, call
            self._idle_workers.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work. ``cancel_futures`` cancels what has not started; ``wait``
        waits only for work that is not an abandoned tool (nothing here is joined: a
        running handler may never return)."""
        with self._guard:
            self._closed = True
            if cancel_futures:
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except Exception:  # noqa: BLE001 - queue.Empty: nothing left
                        break
                    if item is not None:
                        item[0].cancel()
            for _ in self._workers:
                self._queue.put(None)


class RunningTask:
    """An ``async def`` handler's coroutine running on a :class:`LoopThread`."""

    def __init__(self, future: Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.future = future
        """Completes with the coroutine's value or exception (cancelled when it was)."""
        self.ended = threading.Event()
        """Set once the task has ended, whatever the way."""
        self._loop = loop
        self._task: asyncio.Task[Any] | None = None

    def cancel(self) -> None:
        """Cancel the task (thread-safe); :attr:`ended` is set once it has ended."""
        self._loop.call_soon_threadsafe(self._cancel)

    def _cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
        else:
            self.future.cancel()
            self.ended.set()


class LoopThread:
    """An event loop running forever in a daemon thread, started on first use."""

    def __init__(self, name: str = "agent-contract-async-tools") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                import asyncio  # deferred: only an async handler needs a loop

                loop = asyncio.new_event_loop()
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

        def begin() -> None:
            if not running.future.set_running_or_notify_cancel():
                coroutine.close()
                running.ended.set()
                return
            task = loop.create_task(coroutine, context=context)
            running._task = task
            task.add_done_callback(finish)

        def finish(task: asyncio.Task[Any]) -> None:
            if task.cancelled():
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


def run_async(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coroutine)``, without waiting for abandoned tool threads at the end.

    A framework's async run (LangChain's ``ainvoke``) runs sync tools on the event
    loop's default executor, and ``asyncio.run`` joins that executor's threads before it
    returns: a sync tool that timed out (it keeps running; a thread cannot be stopped)
    would hold the run until it finished. Here the default executor is a private pool of
    daemon threads (:class:`DaemonThreadPool`) that is shut down without waiting, so the
    run returns at the timeout as on the other paths, and an abandoned tool thread does
    not hold the process at exit either.
    """
    import asyncio

    pool = DaemonThreadPool(thread_name_prefix="agent-contract-ainvoke")
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        loop.set_default_executor(pool)
        try:
            return runner.run(coroutine)
        finally:
            # Runner.close() joins the default executor: hand it an idle one.
            loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
            pool.shutdown(wait=False)
