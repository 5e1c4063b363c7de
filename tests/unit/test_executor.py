"""The worker pool: long-lived, honest about timeouts in thread mode, context-preserving."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any

import pytest

from agent_contract import executor as executor_module
from agent_contract.errors import ConfigurationError
from agent_contract.executor import (
    ToolExecutor,
    arun_with_timeout,
    default_executor,
    run_awaitable,
)
from agent_contract.pools import DaemonThreadPool

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")
HANG_GUARD_SECONDS = 60.0
"""How long a call expected to finish may take before the test calls it hung: far above
the expected time, so a loaded machine does not fail a test (no test here asserts a
duration; a timeout that is meant to expire is given as its own small number)."""


@pytest.fixture
def pool() -> Iterator[ToolExecutor]:
    executor = ToolExecutor(max_workers=4)
    yield executor
    executor.shutdown()


@pytest.mark.parametrize(
    "workers",
    [
        pytest.param(0, id="zero"),
        pytest.param(-2, id="negative"),
        pytest.param(1.0, id="float"),
        pytest.param(True, id="bool"),
    ],
)
def test_max_workers_validation(workers: Any) -> None:
    with pytest.raises(ConfigurationError, match="max_workers"):
        ToolExecutor(max_workers=workers)


def test_one_pool_for_many_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[ThreadPoolExecutor] = []

    class CountingPool(DaemonThreadPool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    monkeypatch.setattr(executor_module, "DaemonThreadPool", CountingPool)
    executor = ToolExecutor(max_workers=2)
    try:
        pool = executor._pool
        for i in range(10):
            assert executor.run(lambda i=i: i * 2, timeout=HANG_GUARD_SECONDS).value == i * 2
        assert len(created) == 1
        assert executor._pool is pool
    finally:
        executor.shutdown()


def test_a_call_cancelled_before_it_begins_never_runs() -> None:
    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-cancel")
    release = threading.Event()
    ran: list[str] = []
    try:
        busy = pool.start(lambda: release.wait(HANG_GUARD_SECONDS))
        queued = pool.start(lambda: ran.append("queued"))
        assert queued.cancel()
        assert queued.cancelled()
        assert queued.done()
        assert not busy.cancel()  # running: too late to cancel
        release.set()
        assert busy.result(HANG_GUARD_SECONDS) is True
        with pytest.raises(CancelledError):
            queued.result(0)
        after = pool.start(lambda: "after")  # the worker took the cancelled call, skipped it
        assert after.result(HANG_GUARD_SECONDS) == "after"
        assert ran == []
    finally:
        release.set()
        pool.shutdown()


def test_a_calls_wait_is_bounded_and_its_error_kept() -> None:
    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-wait")
    release = threading.Event()
    problem = ValueError("boom")

    def fail() -> None:
        release.wait(HANG_GUARD_SECONDS)
        raise problem

    try:
        call = pool.start(fail)
        with pytest.raises(TimeoutError):
            call.result(0.05)
        assert not call.done()
        release.set()
        for _ in range(2):  # a finished call answers every later wait the same
            with pytest.raises(ValueError, match="boom") as raised:
                call.result(HANG_GUARD_SECONDS)
            assert raised.value is problem
        assert call.done()
        assert not call.cancelled()
    finally:
        release.set()
        pool.shutdown()


def test_a_worker_is_idle_again_before_its_caller_wakes() -> None:
    """One call after another needs one thread: the worker is back among the idle ones
    before the caller it wakes can start the next call (else the pool would grow)."""
    pool = DaemonThreadPool(max_workers=8, thread_name_prefix="test-reuse")
    try:
        threads = {
            pool.start(threading.current_thread).result(HANG_GUARD_SECONDS) for _ in range(300)
        }
        assert len(threads) == 1
        assert pool.idle_workers == 1
    finally:
        pool.shutdown()


def test_shutdown_cancels_the_backlog_and_ends_the_workers() -> None:
    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-shutdown")
    release = threading.Event()
    ran: list[str] = []
    busy = pool.start(lambda: release.wait(HANG_GUARD_SECONDS))
    queued = pool.submit(ran.append, "queued")
    pool.shutdown(cancel_futures=True)
    assert queued.cancelled()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.start(lambda: None)
    worker = next(t for t in threading.enumerate() if t.name.startswith("test-shutdown"))
    release.set()
    assert busy.result(HANG_GUARD_SECONDS) is True
    worker.join(HANG_GUARD_SECONDS)
    assert not worker.is_alive()  # it ended instead of waiting for work
    assert ran == []
    assert pool.idle_workers == 0


def test_a_calls_callback_runs_once_when_it_ends_or_is_cancelled() -> None:
    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-notify")
    release = threading.Event()
    ended: list[str] = []
    try:
        busy = pool.start(lambda: release.wait(HANG_GUARD_SECONDS))
        queued = pool.start(lambda: "queued")
        busy.notify(lambda: ended.append("busy"))
        queued.notify(lambda: ended.append("queued"))
        assert ended == []  # neither has ended yet
        assert queued.cancel()
        assert ended == ["queued"]  # a cancelled call's callback runs on the cancelling thread
        release.set()
        assert busy.result(HANG_GUARD_SECONDS) is True
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while "busy" not in ended and time.monotonic() < deadline:
            time.sleep(0.001)  # the worker calls back just after it woke the waiter
        assert ended == ["queued", "busy"]
        busy.notify(lambda: ended.append("late"))  # already ended: called at once
        assert ended == ["queued", "busy", "late"]
        failing = pool.start(lambda: "fine")
        failing.notify(lambda: 1 / 0)  # a callback that raises does not stop the worker
        assert failing.result(HANG_GUARD_SECONDS) == "fine"
        assert pool.start(lambda: "next").result(HANG_GUARD_SECONDS) == "next"
    finally:
        release.set()
        pool.shutdown()


def test_an_awaited_handle_gives_the_value_without_a_waiting_thread(pool: ToolExecutor) -> None:
    """``aresult``: the loop is woken when the handler ends; no thread of the loop's (nor
    any other but the pool's worker) waits for it."""
    hops: list[str] = []

    class CountingExecutor(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            hops.append(getattr(fn, "__name__", repr(fn)))
            return super().submit(fn, *args, **kwargs)

    def handler() -> str:
        return threading.current_thread().name

    async def main() -> Any:
        asyncio.get_running_loop().set_default_executor(CountingExecutor(max_workers=2))
        return await pool.submit(handler).aresult(HANG_GUARD_SECONDS)

    invocation = asyncio.run(main())
    assert invocation.value.startswith("agent-contract-tool")
    assert not invocation.timed_out
    assert hops == []


def test_an_awaited_handle_times_out_at_the_limit_and_the_handler_runs_on(
    pool: ToolExecutor,
) -> None:
    release = threading.Event()
    landed = threading.Event()

    def slow() -> str:
        release.wait(HANG_GUARD_SECONDS)
        landed.set()
        return "late"

    invocation = asyncio.run(pool.submit(slow).aresult(0.1))
    assert invocation.timed_out
    assert invocation.started
    assert not invocation.cancelled  # a thread cannot be stopped: the outcome is unknown
    assert not landed.is_set()
    release.set()
    assert landed.wait(HANG_GUARD_SECONDS)


def test_an_awaited_handle_keeps_the_handlers_error(pool: ToolExecutor) -> None:
    def fail() -> None:
        raise LookupError("missing")

    invocation = asyncio.run(pool.submit(fail).aresult(HANG_GUARD_SECONDS))
    assert isinstance(invocation.error, LookupError)


def test_an_awaited_handle_over_a_future_gives_the_value(pool: ToolExecutor) -> None:
    """A handle whose work is a ``concurrent.futures.Future`` (an ``async def``
    handler's task on the executor's loop) is awaited through the future's callback."""

    async def handler() -> str:
        return "awaited"

    invocation = asyncio.run(pool.submit_coroutine(handler).aresult(HANG_GUARD_SECONDS))
    assert invocation.value == "awaited"


def test_a_call_whose_linked_future_was_cancelled_calls_back_and_never_runs() -> None:
    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-linked")
    release = threading.Event()
    ran: list[str] = []
    ended = threading.Event()
    try:
        busy = pool.start(lambda: release.wait(HANG_GUARD_SECONDS))
        linked: Future[Any] = Future()
        queued = pool.start(lambda: ran.append("queued"), linked=linked)
        queued.notify(ended.set)
        assert linked.cancel()  # the future, not the call: the worker finds it cancelled
        release.set()
        assert busy.result(HANG_GUARD_SECONDS) is True
        assert ended.wait(HANG_GUARD_SECONDS)
        assert queued.cancelled()
        assert ran == []
    finally:
        release.set()
        pool.shutdown()


def test_cancelling_the_awaiting_task_leaves_the_handler_to_end(pool: ToolExecutor) -> None:
    started = threading.Event()
    release = threading.Event()
    landed = threading.Event()

    def slow() -> None:
        started.set()
        release.wait(HANG_GUARD_SECONDS)
        landed.set()

    async def main() -> None:
        waiting = asyncio.ensure_future(pool.submit(slow).aresult(HANG_GUARD_SECONDS))
        while not started.is_set():
            await asyncio.sleep(0.001)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(main())  # the loop closes: the handler's later wake-up is dropped
    release.set()
    assert landed.wait(HANG_GUARD_SECONDS)
    assert pool.submit(lambda: "next").result(HANG_GUARD_SECONDS).value == "next"


def test_default_executor_is_shared() -> None:
    first = default_executor()
    assert default_executor() is first
    assert first._pool is default_executor()._pool


def test_returns_value_and_duration(pool: ToolExecutor) -> None:
    invocation = pool.run(lambda: {"ok": True}, timeout=HANG_GUARD_SECONDS)
    assert invocation.value == {"ok": True}
    assert invocation.error is None
    assert not invocation.timed_out
    assert invocation.started
    assert invocation.duration_seconds >= 0


def test_errors_are_captured_not_raised(pool: ToolExecutor) -> None:
    problem = ValueError("boom")

    def fail() -> None:
        raise problem

    invocation = pool.run(fail, timeout=HANG_GUARD_SECONDS)
    assert invocation.error is problem
    assert invocation.value is None
    assert not invocation.timed_out


@pytest.mark.parametrize("problem", [SystemExit(3), KeyboardInterrupt()], ids=repr)
def test_an_interruption_is_not_captured_as_the_tools_error(
    pool: ToolExecutor, problem: BaseException
) -> None:
    """Issue 12: a SystemExit or KeyboardInterrupt is not the tool's failure; it reaches
    the waiting thread, where the run is interrupted."""

    def exit_() -> None:
        raise problem

    with pytest.raises(type(problem)):
        pool.run(exit_, timeout=HANG_GUARD_SECONDS)


def test_timeout_returns_early_and_late_side_effect_still_lands(pool: ToolExecutor) -> None:
    """Thread mode cannot kill a handler: the caller stops waiting, the write still happens."""
    release = threading.Event()
    landed = threading.Event()
    writes: list[str] = []

    def slow_write() -> str:
        release.wait(timeout=10.0)  # held until the caller has stopped waiting
        writes.append("written")
        landed.set()
        return "done"

    invocation = pool.run(slow_write, timeout=0.2)

    assert invocation.timed_out
    assert invocation.started
    assert invocation.value is None
    assert writes == []  # not yet: the handler is still running
    release.set()
    assert landed.wait(timeout=HANG_GUARD_SECONDS)
    assert writes == ["written"]  # ...and then the side effect lands after the timeout


def test_timeout_before_start_reports_not_started() -> None:
    executor = ToolExecutor(max_workers=1)
    release = threading.Event()
    ran: list[str] = []
    try:
        blocker = executor.submit(lambda: release.wait(timeout=HANG_GUARD_SECONDS))
        invocation = executor.run(lambda: ran.append("queued"), timeout=0.1)
        assert invocation.timed_out
        assert not invocation.started  # cancelled in the queue: it was never run
        release.set()
        assert blocker.result(timeout=HANG_GUARD_SECONDS).value is True
        assert ran == []
    finally:
        release.set()
        executor.shutdown()


def test_timeout_is_measured_from_submission(
    pool: ToolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    handle = pool.submit(lambda: release.wait(timeout=10.0))
    time.sleep(0.15)
    waits: list[float | None] = []
    call = handle._future

    class Spy:
        # The pool's Call has slots: the spy stands in for it and hands every
        # operation on (only result's timeout is recorded).
        def result(self, timeout: float | None = None) -> object:
            waits.append(timeout)
            return call.result(timeout)

        def __getattr__(self, name: str) -> Any:
            return getattr(call, name)

    monkeypatch.setattr(handle, "_future", Spy())
    invocation = handle.result(timeout=0.1)
    assert invocation.timed_out
    assert waits == [0.0]  # the budget was already spent: no new wait
    release.set()


def test_contextvars_propagate_into_the_handler(pool: ToolExecutor) -> None:
    token = REQUEST_ID.set("req-42")
    try:
        assert pool.run(REQUEST_ID.get, timeout=HANG_GUARD_SECONDS).value == "req-42"
    finally:
        REQUEST_ID.reset(token)
    assert pool.run(REQUEST_ID.get, timeout=HANG_GUARD_SECONDS).value == "unset"


def test_handler_context_changes_do_not_leak_back(pool: ToolExecutor) -> None:
    def change() -> str:
        REQUEST_ID.set("inside")
        return REQUEST_ID.get()

    assert pool.run(change, timeout=HANG_GUARD_SECONDS).value == "inside"
    assert REQUEST_ID.get() == "unset"


def test_parallel_submissions_run_concurrently(pool: ToolExecutor) -> None:
    first_waiting = threading.Event()
    second_done = threading.Event()

    def first() -> bool:
        first_waiting.set()
        return second_done.wait(timeout=HANG_GUARD_SECONDS)

    def second() -> str:
        first_waiting.wait(timeout=HANG_GUARD_SECONDS)
        second_done.set()
        return "second"

    a = pool.submit(first)
    b = pool.submit(second)
    assert a.result(timeout=HANG_GUARD_SECONDS).value is True
    assert b.result(timeout=HANG_GUARD_SECONDS).value == "second"


# -- async --------------------------------------------------------------------------------


def test_arun_returns_value() -> None:
    async def fine() -> int:
        await asyncio.sleep(0)
        return 7

    invocation = asyncio.run(arun_with_timeout(fine, timeout=1.0))
    assert invocation.value == 7
    assert not invocation.timed_out


def test_arun_captures_errors() -> None:
    async def fail() -> None:
        raise LookupError("nope")

    invocation = asyncio.run(arun_with_timeout(fail, timeout=1.0))
    assert isinstance(invocation.error, LookupError)
    assert not invocation.timed_out


def test_arun_cancels_the_coroutine_at_the_timeout() -> None:
    cancelled = threading.Event()
    finished: list[str] = []

    async def slow() -> str:
        try:
            await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        finished.append("finished")
        return "late"

    invocation = asyncio.run(arun_with_timeout(slow, timeout=0.1))
    assert invocation.timed_out
    assert cancelled.is_set()  # unlike a thread, a coroutine is really stopped
    assert finished == []


def test_arun_lets_outer_cancellation_through() -> None:
    async def main() -> None:
        async def forever() -> None:
            await asyncio.sleep(10)

        task = asyncio.ensure_future(arun_with_timeout(forever, timeout=5.0))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


@pytest.mark.parametrize("awaits", [True, False])
def test_a_coroutine_not_yet_started_at_the_timeout_never_starts(awaits: bool) -> None:
    """A busy pool thread reaches the event loop only after the call timed out: the
    coroutine is never started (its write never lands). Said to await, the call is
    reported cancelled; otherwise its outcome stays unknown (cancelled is False)."""
    wrote: list[str] = []
    preamble_done = threading.Event()

    async def body() -> str:
        wrote.append("late")
        await asyncio.sleep(0)
        return "done"

    def prepare() -> object:
        time.sleep(0.2)  # the pool thread is slow to reach the coroutine
        preamble_done.set()
        return run_awaitable(body())

    pool = ToolExecutor(max_workers=1)
    try:
        invocation = pool.submit(prepare, awaits=awaits).result(0.02)
        assert invocation.timed_out
        assert invocation.cancelled is awaits
        assert preamble_done.wait(5)
        time.sleep(0.05)  # had it started, the body would have run by now
        assert wrote == []
    finally:
        pool.shutdown()


# -- a tool that ignores its cancellation ------------------------------------------------


def test_arun_does_not_wait_for_a_task_that_swallows_its_cancellation() -> None:
    """The caller gets the timeout back at the limit plus the grace while the tool still
    runs (it is waiting for the test), and the outcome is unknown, never its value.

    When it fails: ``arun_with_timeout`` waits for the cancelled task to end
    (``asyncio.wait_for`` does) and hands back its late value as a success."""
    release = asyncio.Event()
    ran: list[str] = []

    async def stubborn() -> str:
        ran.append("started")
        with contextlib.suppress(asyncio.CancelledError):  # swallowed
            await asyncio.sleep(5.0)
        await asyncio.wait_for(release.wait(), 30.0)  # hang guard far above the expected time
        ran.append("finished")
        return "late"

    async def main() -> tuple[Any, list[str]]:
        invocation = await arun_with_timeout(stubborn, 0.05, native=True, cancel_grace=0.1)
        seen = list(ran)
        release.set()
        await asyncio.sleep(0.05)
        return invocation, seen

    invocation, seen_at_report = asyncio.run(main())
    assert invocation.timed_out
    assert not invocation.cancelled  # it did not end by its cancellation
    assert invocation.value is None
    assert seen_at_report == ["started"]  # reported while the tool still ran
    assert ran == ["started", "finished"]  # the abandoned task was left to end


def test_arun_reports_a_task_that_returns_after_its_cancellation_unknown() -> None:
    """A tool that swallows its cancellation and returns within the grace is still not
    a success, nor cancelled: it worked past its limit."""

    async def stubborn() -> str:
        try:
            await asyncio.sleep(5.0)
        except asyncio.CancelledError:
            return "returned anyway"
        return "late"

    invocation = asyncio.run(arun_with_timeout(stubborn, 0.05, native=True, cancel_grace=2.0))
    assert invocation.timed_out
    assert not invocation.cancelled
    assert invocation.value is None


def test_arun_a_slow_cleanup_past_the_grace_is_unknown() -> None:
    """A cleanup that outlasts the grace: the caller has the result before the cleanup
    ended, outcome unknown; within the grace it is cancelled."""
    cleaned: list[float] = []

    def slow_cleanup(seconds: float) -> Any:
        async def body() -> None:
            try:
                await asyncio.sleep(5.0)
            except asyncio.CancelledError:
                await asyncio.sleep(seconds)
                cleaned.append(seconds)
                raise

        return body

    async def main() -> tuple[Any, Any, list[float]]:
        slow = await arun_with_timeout(slow_cleanup(1.0), 0.05, native=True, cancel_grace=0.05)
        seen = list(cleaned)
        quick = await arun_with_timeout(slow_cleanup(0.0), 0.05, native=True, cancel_grace=2.0)
        return slow, quick, seen

    slow, quick, seen_at_report = asyncio.run(main())
    assert slow.timed_out
    assert not slow.cancelled
    assert seen_at_report == []  # reported before the cleanup ended
    assert quick.timed_out
    assert quick.cancelled


def test_the_pool_reports_a_task_that_returns_after_its_cancellation_unknown() -> None:
    """The executor's own loop (offline, LangChain's sync path): a coroutine that
    swallows its cancellation and returns within the grace is unknown, not cancelled."""

    async def stubborn() -> str:
        try:
            await asyncio.sleep(5.0)
        except asyncio.CancelledError:
            return "returned anyway"
        return "late"

    pool = ToolExecutor(max_workers=1, cancel_grace_seconds=2.0)
    try:
        invocation = pool.submit_coroutine(stubborn).result(0.05)
        assert invocation.timed_out
        assert not invocation.cancelled
    finally:
        pool.shutdown()
