"""``async def`` handlers and the executor's threads, harness-free: the executor's own
event loop, cancellation at the timeout (``cancelled``, or ``unknown`` for a task that
will not end), async preview/verify/handler of a write tool, process isolation, what a
ToolSpec refuses at construction, and daemon worker threads."""

from __future__ import annotations

import asyncio
import concurrent.futures.thread as cf_thread
import gc
import threading
import weakref
from typing import Any

import pytest

from agent_contract import Approval, Budget, ToolSpec, resume, run
from agent_contract.errors import ConfigurationError
from agent_contract.executor import ToolExecutor, run_awaitable
from agent_contract.pools import DaemonThreadPool
from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}


def test_an_async_handler_runs_on_the_executors_loop() -> None:
    async def handler(text: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"text": text, "thread": threading.current_thread().name}

    spec = ToolSpec(name="a", description="A.", parameters=TEXT, handler=handler)
    assert spec.is_async
    result = run(FakeModel([tool_call("a", {"text": "x"}), "done"]), [spec], "go")
    message = next(m for m in result.messages if m.role == "tool")
    assert message.content == '{"text": "x", "thread": "agent-contract-async-tools"}'


def test_a_task_that_will_not_end_is_reported_unknown() -> None:
    ended = threading.Event()

    async def stubborn(text: str) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            await asyncio.sleep(0.3)  # swallows the cancellation for a while
        ended.set()
        return "late"

    spec = ToolSpec(
        name="s", description="S.", parameters=TEXT, handler=stubborn, timeout_seconds=0.05
    )
    contract = Contract(
        [spec],
        budget=Budget(deadline_seconds=30.0),
        executor=ToolExecutor(cancel_grace_seconds=0.01),
    )
    result = run(FakeModel([tool_call("s", {"text": "x"}), "gave up"]), contract, "go")
    record = result.tool_calls[0]
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )
    assert ended.wait(5.0)


def test_async_write_hooks_run_and_verify() -> None:
    applied: dict[str, int] = {}

    async def preview(context: Any, amount: int) -> dict[str, int]:
        return {"would_pay": amount}

    async def pay(context: Any, amount: int) -> dict[str, int]:
        await asyncio.sleep(0)
        applied[context.idempotency_key] = amount
        return {"paid": amount}

    async def verify(context: Any, amount: int) -> dict[str, int] | None:
        value = applied.get(context.idempotency_key)
        return None if value is None else {"paid": value}

    spec = ToolSpec(
        name="pay",
        description="Pay.",
        parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
        handler=pay,
        effect="write",
        preview=preview,
        verify=verify,
    )
    contract = Contract([spec], budget=Budget(deadline_seconds=30.0))
    model = FakeModel([tool_call("pay", {"amount": 3}), "paid"])
    paused = run(model, contract, "pay")
    assert paused.stop_reason == "pending_approval"
    assert paused.pending_approvals[0].preview == {"would_pay": 3}
    assert paused.snapshot is not None
    approval = Approval.for_pending(paused.pending_approvals[0], "approve")
    done = resume(model, contract, paused.snapshot, [approval])
    assert done.stop_reason == "answered"
    assert done.tool_calls[0].status == "success"
    assert list(applied.values()) == [3]


def test_an_async_handler_in_process_isolation() -> None:
    from tests.isolation.isolated_tools import async_quick

    spec = ToolSpec(
        name="iso",
        description="Iso.",
        parameters=TEXT,
        handler=async_quick,
        isolation="process",
        timeout_seconds=10.0,
    )
    result = run(FakeModel([tool_call("iso", {"text": "x"}), "done"]), [spec], "go")
    message = next(m for m in result.messages if m.role == "tool")
    assert message.content == '{"async_echo": "x"}'


def test_run_awaitable_outside_a_call() -> None:
    async def seven() -> int:
        return 7

    assert run_awaitable(seven()) == 7


@pytest.mark.parametrize("role", ["handler", "preview", "verify"])
def test_generator_functions_are_refused_at_construction(role: str) -> None:
    def gen(*args: Any, **kwargs: Any) -> Any:
        yield 1

    async def agen(*args: Any, **kwargs: Any) -> Any:
        yield 1

    def plain(*args: Any, **kwargs: Any) -> None:
        return None

    for bad in (gen, agen):
        fields: dict[str, Any] = {"handler": plain, "effect": "write", "preview": plain}
        fields["verify"] = plain
        fields[role] = bad
        with pytest.raises(ConfigurationError, match=f"{role} is a generator function"):
            ToolSpec(name="g", description="G.", parameters=TEXT, **fields)


def test_the_pool_runs_work_on_daemon_threads_exit_does_not_join() -> None:
    pool = DaemonThreadPool(max_workers=2, thread_name_prefix="test-daemon")
    names = [pool.submit(lambda: threading.current_thread()).result(5.0) for _ in range(3)]
    assert all(t.daemon for t in names)
    assert all(t.name.startswith("test-daemon") for t in names)
    assert not any(t in cf_thread._threads_queues for t in names)  # what exit joins
    assert len({t.name for t in names}) <= 2  # idle workers are reused
    pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_an_idle_worker_keeps_nothing_of_its_last_work() -> None:
    # On the run loop's executor the last work is a graph node: its value (the run's
    # state) must not stay reachable from the idle worker until the next work comes.
    class State:
        pass

    pool = DaemonThreadPool(max_workers=1, thread_name_prefix="test-idle")
    state = State()
    gone = weakref.ref(state)
    future = pool.submit(lambda value: value, state)
    assert future.result(5.0) is state
    del future, state
    # The worker is back among the idle ones before it wakes its caller (it is idle
    # now; waiting for it by submitting more work would overwrite what it kept).
    assert pool.idle_workers == 1
    gc.collect()
    assert gone() is None
    pool.shutdown()


def test_the_executor_validates_its_grace() -> None:
    with pytest.raises(ConfigurationError, match="cancel_grace_seconds"):
        ToolExecutor(cancel_grace_seconds=-1)


def test_an_async_handler_needs_no_pool_thread() -> None:
    # The only pool thread is held by a timed-out sync handler; an async def handler
    # still runs (its coroutine goes to the executor's loop from the calling thread).
    release = threading.Event()

    def hung(text: str) -> str:
        release.wait(5.0)
        return "late"

    async def quick(text: str) -> str:
        await asyncio.sleep(0)
        return f"quick {text}"

    specs = [
        ToolSpec(name="h", description="H.", parameters=TEXT, handler=hung, timeout_seconds=0.05),
        ToolSpec(name="q", description="Q.", parameters=TEXT, handler=quick),
    ]
    contract = Contract(specs, executor=ToolExecutor(max_workers=1))
    try:
        script = [tool_call("h", {"text": "x"}), tool_call("q", {"text": "y"}), "done"]
        result = run(FakeModel(script), contract, "go")
    finally:
        release.set()
    kinds = [(r.name, r.status, r.outcome) for r in result.tool_calls]
    assert kinds == [("h", "error", "unknown"), ("q", "success", "succeeded")]
    assert (
        next(m for m in result.messages if m.tool_call_id == result.tool_calls[1].id).content
        == "quick y"
    )


def test_an_async_handler_called_with_wrong_arguments_is_an_error_not_a_crash() -> None:
    async def strict(text: str) -> str:
        return text

    spec = ToolSpec(
        name="s",
        description="S.",
        parameters={"type": "object", "properties": {"other": {"type": "string"}}},
        handler=strict,
    )
    result = run(FakeModel([tool_call("s", {"other": "x"}), "done"]), [spec], "go")
    record = result.tool_calls[0]
    assert (record.status, record.error_kind) == ("error", "tool_error")
