"""A tool streams progress through a QueueSink while the run goes on (issue 26).

An async consumer drains the sink's queue; the tool sends a progress event and then
waits until the consumer has acknowledged it, so a call that returned before the
consumer saw its events (the events buffered and delivered at the end) cannot pass:
the tool would wait for an acknowledgement that never comes. The waits are hang
guards far above the expected time (milliseconds), never timing assertions.

Covered: the offline loop driven from an event loop (a sync tool on a worker thread
and an ``async def`` tool on the executor's own loop), LangChain ``ainvoke`` in the
consumer's own event loop and ``stream`` on a thread, PydanticAI ``agent.run`` in the
consumer's event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agent_contract.loop import run
from agent_contract.runtime import Contract, RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import QueueSink

HANG_GUARD_SECONDS = 60.0
"""Far above the expected milliseconds: reached only when the streaming is broken."""


@dataclass
class Progress:
    """What the tool and the consumer share: one acknowledgement per progress event,
    and whether the tool had returned when the consumer saw each event."""

    acks: list[threading.Event] = field(
        default_factory=lambda: [threading.Event() for _ in range(3)]
    )
    returned: threading.Event = field(default_factory=threading.Event)
    returned_when_seen: list[bool] = field(default_factory=list)


def _emitter(context: ToolContext, index: int) -> Any:
    emitter = context.emitter
    if emitter is None:
        raise RuntimeError("the tool got no emitter")
    # the third event comes from a child emitter: same stream, namespaced source
    return emitter if index < 2 else emitter.child("sub")


def _work_spec(work: Callable[..., Any]) -> ToolSpec:
    """The tool both variants declare, with ``work`` as its handler."""
    return ToolSpec(
        name="work",
        description="does work in three steps",
        parameters={"type": "object"},
        handler=work,
        needs_context=True,
    )


def sync_tool(shared: Progress) -> ToolSpec:
    """A sync tool (it runs on a worker thread) that waits for each acknowledgement."""

    def work(context: ToolContext) -> str:
        for index in range(3):
            _emitter(context, index).progress(done=index + 1)
            if not shared.acks[index].wait(HANG_GUARD_SECONDS):
                raise RuntimeError(f"progress {index + 1} was not consumed while the call ran")
        shared.returned.set()
        return "worked"

    return _work_spec(work)


def async_tool(shared: Progress) -> ToolSpec:
    """An ``async def`` tool that awaits each acknowledgement (without blocking its loop,
    which may be the consumer's own)."""

    async def work(context: ToolContext) -> str:
        for index in range(3):
            _emitter(context, index).progress(done=index + 1)
            acked = await asyncio.to_thread(shared.acks[index].wait, HANG_GUARD_SECONDS)
            if not acked:
                raise RuntimeError(f"progress {index + 1} was not consumed while the call ran")
        shared.returned.set()
        return "worked"

    return _work_spec(work)


async def consume_while_running(
    start: Callable[[QueueSink], Awaitable[RunResult]], shared: Progress
) -> tuple[RunResult, list[dict[str, Any]], list[str]]:
    """Start the run as a task, drain the sink's queue as it fills, acknowledge each
    progress event at once, then drain what is left after the run.

    Returns:
        The run's result, the progress events' fields in arrival order, and the types of
        every event received (during and after the run).
    """
    sink = QueueSink()
    running = asyncio.ensure_future(start(sink))
    progress: list[dict[str, Any]] = []
    types: list[str] = []
    try:
        while len(progress) < 3:
            getter = asyncio.ensure_future(sink.queue.get())
            done, _ = await asyncio.wait(
                {getter, running}, timeout=HANG_GUARD_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if running in done:
                    running.result()  # raise the run's own error, if any
                    raise AssertionError(f"the run ended before 3 progress events: {progress}")
                raise AssertionError("no event within the hang guard")
            _, event = getter.result()
            types.append(event.type)
            if event.type == "tool_progress":
                shared.returned_when_seen.append(shared.returned.is_set())
                progress.append(dict(event.fields))
                shared.acks[len(progress) - 1].set()
    except BaseException:
        # a failed check: release the tool and let the run end before the loop closes
        for ack in shared.acks:
            ack.set()
        await asyncio.wait({running}, timeout=HANG_GUARD_SECONDS)
        raise
    result = await asyncio.wait_for(running, HANG_GUARD_SECONDS)
    await asyncio.sleep(0)  # let events handed over with call_soon_threadsafe land
    while not sink.queue.empty():
        types.append(sink.queue.get_nowait()[1].type)
    return result, progress, types


def check(
    result: RunResult, progress: list[dict[str, Any]], types: list[str], shared: Progress
) -> None:
    assert result.stop_reason == "answered", result.stop_reason
    assert result.output == "done"
    assert shared.returned_when_seen == [False, False, False]
    assert [p["data"] for p in progress] == [{"done": 1}, {"done": 2}, {"done": 3}]
    assert [p["source"] for p in progress] == [None, None, "sub"]
    assert len({p["id"] for p in progress}) == 1
    # the progress events sit between the call's start and its result, and the run's
    # later events reach the same queue
    first, last = types.index("tool_progress"), len(types) - 1 - types[::-1].index("tool_progress")
    assert "tool_call" in types[:first]
    assert "tool_result" in types[last:]
    assert types[-1] == "stop"


def script() -> FakeModel:
    return FakeModel([tool_call("work", {}), "done"])


@pytest.mark.parametrize("make_tool", [sync_tool, async_tool], ids=["sync-tool", "async-tool"])
def test_offline_loop_streams_progress_to_an_async_consumer(
    make_tool: Callable[[Progress], ToolSpec],
) -> None:
    shared = Progress()

    async def start(sink: QueueSink) -> RunResult:
        contract = Contract([make_tool(shared)], trace_sink=sink)
        return await asyncio.to_thread(run, script(), contract, "go")

    check(*asyncio.run(consume_while_running(start, shared)), shared)


@pytest.mark.parametrize("binding", ["agent_contract_langchain", "agent_contract_pydantic_ai"])
def test_a_bindings_async_run_streams_progress_in_the_consumers_loop(binding: str) -> None:
    """LangChain ``arun_agent`` (ainvoke) and PydanticAI ``arun_agent``, in the consumer's
    own event loop."""
    arun_agent = importlib.import_module(binding).arun_agent
    shared = Progress()

    async def start(sink: QueueSink) -> RunResult:
        result: RunResult = await arun_agent(
            script(), Contract([async_tool(shared)], trace_sink=sink), "go"
        )
        return result

    check(*asyncio.run(consume_while_running(start, shared)), shared)


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_langchain_sync_modes_stream_progress_to_an_async_consumer(mode: str) -> None:
    from agent_contract_langchain import run_agent

    shared = Progress()

    async def start(sink: QueueSink) -> RunResult:
        contract = Contract([sync_tool(shared)], trace_sink=sink)
        return await asyncio.to_thread(run_agent, script(), contract, "go", mode=mode)  # type: ignore[arg-type]

    check(*asyncio.run(consume_while_running(start, shared)), shared)
