"""``run_async``: one long-lived event loop for every synchronous call, its default
executor never joined, interruptions of the waiting thread handed to the run."""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import sys
import threading
import time
from typing import Any

import pytest

from agent_contract.pools import run_async
from agent_contract.runtime.records import interruption_name

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


async def where() -> tuple[asyncio.AbstractEventLoop, str, str]:
    return asyncio.get_running_loop(), threading.current_thread().name, WHO.get()


def test_every_call_runs_on_the_same_loop_in_the_callers_context() -> None:
    WHO.set("caller")
    first = run_async(where())
    second = run_async(where())
    from_thread: list[Any] = []
    worker = threading.Thread(target=lambda: from_thread.append(run_async(where())))
    worker.start()
    worker.join()
    assert first[0] is second[0] is from_thread[0][0]
    assert first[0].is_running()  # never closed between calls
    assert first[1] == "agent-contract-runs"
    assert first[2] == "caller"
    assert from_thread[0][2] == "nobody"  # the other thread's own context


def test_the_coroutines_exception_is_raised() -> None:
    async def fails() -> None:
        raise LookupError("boom")

    with pytest.raises(LookupError, match="boom"):
        run_async(fails())
    assert run_async(where())[1] == "agent-contract-runs"  # the loop survives


def test_refused_inside_a_running_loop() -> None:
    async def nested() -> None:
        coroutine = where()
        with pytest.raises(RuntimeError, match="running event loop"):
            run_async(coroutine)

    asyncio.run(nested())


def test_abandoned_executor_threads_hold_no_later_run() -> None:
    release = threading.Event()
    started: list[str] = []

    def stuck() -> None:
        started.append(threading.current_thread().name)
        release.wait()

    async def abandon() -> str:
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(loop.run_in_executor(None, stuck), timeout=0.05)
        except TimeoutError:
            return "timed out"
        return "finished"

    try:
        outcomes = [run_async(abandon()) for _ in range(12)]  # more than cpu count + 4
        assert outcomes == ["timed out"] * 12
        assert len(set(started)) == 12  # each on its own daemon thread, none queued

        async def after() -> int:
            return await asyncio.get_running_loop().run_in_executor(None, lambda: 7)

        assert run_async(after()) == 7
    finally:
        release.set()


class Paused(KeyboardInterrupt):
    """Stands for RunInterrupted: the run recorded its pause and carries the cause."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__("paused")
        self.cause = cause


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to the process")
@pytest.mark.parametrize("to", ["process", "another thread"])
def test_an_interrupted_wait_cancels_the_run_and_hands_it_the_interruption(to: str) -> None:
    """Ctrl-C while a run is waited for, whichever thread the OS delivers it to: on
    another thread than the main one, Python's handler is pending until the main thread
    runs again (a wait without a timeout hung here for good)."""
    running = threading.Event()
    seen: list[BaseException] = []

    async def waits() -> None:
        running.set()
        try:
            await asyncio.sleep(60)  # bounded: a wait that misses the signal ends loudly
        except BaseException as exc:  # as the driver's interruptible does
            seen.append(exc)
            raise Paused(exc) from exc

    def interrupt() -> None:
        running.wait()
        main = threading.main_thread().ident
        for _ in range(10_000):  # until the caller waits on the run's future
            frame = sys._current_frames().get(main or 0)
            if frame is not None and frame.f_code.co_name == "wait":
                break
            time.sleep(0.001)
        if to == "process":
            os.kill(os.getpid(), signal.SIGINT)
        else:  # the C handler runs in this thread; the Python one waits for the main
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    # Python's own Ctrl-C handler, whatever an earlier test in this process left
    # installed (in one process, the whole suite's, the handler was not the default).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        with pytest.raises(Paused) as raised:
            run_async(waits())
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert isinstance(raised.value.__cause__, KeyboardInterrupt)
    assert raised.value.cause is raised.value.__cause__
    (cancelled,) = seen
    assert isinstance(cancelled, asyncio.CancelledError)
    assert interruption_name(cancelled) == "KeyboardInterrupt"


@pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
def test_a_run_raising_keyboard_interrupt_or_system_exit_leaves_the_loop_serving(
    kind: type[BaseException],
) -> None:
    async def escapes() -> None:
        raise kind("out")

    with pytest.raises(kind):
        run_async(escapes())
    loop, thread, _ = run_async(where())  # the loop thread still runs later calls
    assert loop.is_running()
    assert thread == "agent-contract-runs"
