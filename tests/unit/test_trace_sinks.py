"""The seeds' sinks (callback, queue, collecting, null) and a tool's progress emitter."""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_contract.errors import ConfigurationError, ScriptExhaustedError
from agent_contract.loop import run
from agent_contract.runtime import Contract, RunInput
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import (
    CallbackSink,
    CollectingSink,
    MemorySink,
    NullSink,
    QueueSink,
    Trace,
    TraceEvent,
    tool_phase,
)


def test_queue_sink_streams_three_progress_events_before_the_run_ends() -> None:
    seen: list[threading.Event] = [threading.Event() for _ in range(3)]

    def work(context: ToolContext) -> str:
        emitter = context.emitter
        if emitter is None:
            raise RuntimeError("no emitter")
        for index in range(3):
            source = emitter if index < 2 else emitter.child("sub")
            source.progress(done=index + 1)
            # the consumer acknowledges each one while the call is still running
            if not seen[index].wait(10):
                raise RuntimeError(f"progress {index + 1} not consumed mid-run")
        return "ok"

    spec = ToolSpec(
        name="work",
        description="w",
        parameters={"type": "object"},
        handler=work,
        needs_context=True,
    )

    async def main() -> tuple[list[dict[str, Any]], bool]:
        sink = QueueSink()
        model = FakeModel([tool_call("work", {}), "done"])
        running = asyncio.ensure_future(
            asyncio.to_thread(run, model, Contract([spec], trace_sink=sink), "go")
        )
        progress: list[dict[str, Any]] = []
        while len(progress) < 3:
            _, event = await asyncio.wait_for(sink.queue.get(), 10)
            if event.type == "tool_progress":
                progress.append(dict(event.fields))
                seen[len(progress) - 1].set()
        ended_before = running.done()
        await running
        return progress, ended_before

    progress, ended_before = asyncio.run(main())
    assert not ended_before
    assert [p["data"] for p in progress] == [{"done": 1}, {"done": 2}, {"done": 3}]
    assert [p["source"] for p in progress] == [None, None, "sub"]


def test_a_full_bounded_queue_sink_ends_a_run_on_another_thread_loudly() -> None:
    """A bounded QueueSink fed from the run's thread (``asyncio.to_thread``): the event
    that does not fit raises QueueFull in the run, which ends loudly; it is not lost in
    the loop's exception handler while the run goes on to answer."""

    async def main() -> BaseException | None:
        sink = QueueSink(maxsize=1)
        model = FakeModel([tool_call("work", {}), "done"])
        spec = ToolSpec(
            name="work", description="w", parameters={"type": "object"}, handler=lambda: "ok"
        )
        try:
            await asyncio.to_thread(run, model, Contract([spec], trace_sink=sink), "go")
        except asyncio.QueueFull as exc:
            return exc
        return None

    assert isinstance(asyncio.run(main()), asyncio.QueueFull)


def _observability_example(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The ``stream`` consumer of docs/OBSERVABILITY.md, as written there (its code block
    saved as a module of its own and imported)."""
    page = (Path(__file__).parents[2] / "docs" / "OBSERVABILITY.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    (block,) = [b for b in blocks if "async def stream(model, tools, text):" in b]
    (folder / "queue_consumer_example.py").write_text(block, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "queue_consumer_example", raising=False)
    return importlib.import_module("queue_consumer_example").stream


def test_the_documented_queue_consumer_streams_a_run_and_ends_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/OBSERVABILITY.md's consumer: every event of a run, ending with its stop; a run
    that raises (a model out of replies) ends the stream with that error, never a hang."""
    stream = _observability_example(tmp_path, monkeypatch)
    spec = ToolSpec(
        name="work", description="w", parameters={"type": "object"}, handler=lambda: "ok"
    )

    async def consume(model: FakeModel) -> list[str]:
        async def read() -> list[str]:
            return [event["type"] async for event in stream(model, [spec], "go")]

        return await asyncio.wait_for(read(), 60)  # a hang guard, far above the run

    types = asyncio.run(consume(FakeModel([tool_call("work", {}), "done"])))
    assert types[0] == "run_started"
    assert types[-1] == "stop"
    assert "tool_result" in types
    with pytest.raises(ScriptExhaustedError):  # the model is out of replies
        asyncio.run(consume(FakeModel([tool_call("work", {})])))


def test_callback_collecting_and_null_sinks() -> None:
    got: list[str] = []
    trace = Trace(run_id="r", sink=CallbackSink(lambda rid, event: got.append(event.type)))
    trace.record("model_call", step=1)
    assert got == ["model_call"]
    assert CollectingSink is MemorySink
    null = Trace(run_id="r", sink=NullSink())
    null.record("model_call", step=1)
    assert null._sink is None  # treated as no sink: no event built per record
    assert len(null) == 1


def test_tool_phase_maps_existing_events() -> None:
    import datetime as dt

    def ev(type_: str, **fields: Any) -> TraceEvent:
        return TraceEvent(
            seq=0, type=type_, time=dt.datetime.now(dt.UTC), offset_seconds=0.0, fields=fields
        )

    assert tool_phase(ev("tool_call", decision="run")) == "tool.start"
    assert tool_phase(ev("tool_call", decision="refused")) == "tool.error"
    assert tool_phase(ev("tool_call", decision="awaiting_approval")) is None
    assert tool_phase(ev("tool_result", status="success")) == "tool.end"
    assert tool_phase(ev("tool_result", status="error")) == "tool.error"
    assert tool_phase(ev("stop")) is None
    # on a real run's events: the status a successful call's tool_result carries
    echo = ToolSpec(
        name="echo", description="e", parameters={"type": "object"}, handler=lambda: "x"
    )
    ran = run(FakeModel([tool_call("echo", {}), "done"]), [echo], "go")
    phases = [tool_phase(TraceEvent.from_dict(e)) for e in ran.trace.events]
    assert [p for p in phases if p is not None] == ["tool.start", "tool.end"]


def test_run_input_carries_its_trace_sink_to_the_contract_it_builds() -> None:
    sink = MemorySink()
    spec = ToolSpec(name="t", description="t", parameters={"type": "object"}, handler=lambda: 1)
    options = RunInput(user="go", trace_sink=sink)
    contract = options.contract([spec])
    assert contract.trace_sink is sink
    result = run(FakeModel(["done"]), contract, "go")
    assert [event.type for event in sink.of_run(result.run_id)][-1] == "stop"
    assert options.contract(contract) is contract  # the same sink: nothing to combine
    with pytest.raises(ConfigurationError, match="trace_sink"):
        options.contract(Contract([spec]))
    assert RunInput(user="go").contract([spec]).trace_sink is None
