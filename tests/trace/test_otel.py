"""``OTelSink``: one run as an OpenTelemetry span tree (GenAI conventions), on the
offline loop, LangChain (invoke, ainvoke, stream) and PydanticAI (run_sync, run,
stream), read back from the SDK's in-memory exporter on a private TracerProvider.

The run: step 1 calls ``search`` (its argument holds the run's secret) and ``wipe``
(registered, not on the allowlist: refused); step 2 calls ``delegate``, whose tool runs
a sub-agent (a child scope, ``researcher``) that calls ``search("vault")`` (which
returns the secret) and answers; step 3 calls the write ``refund``, and the run pauses
for approval. The offline run is also resumed (the resume is its own run span).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agent_contract import Contract
from agent_contract.approval import Approval
from agent_contract.errors import DependencyMissingError
from agent_contract.loop import _drive, resume
from agent_contract.messages import Message
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import OTelSink, TraceEvent
from agent_contract.trace import otel as otel_module

SECRET = "sk-PLANTED-7f3a9c21"
"""The run's secret (``secrets=``): the model sends it as an argument, a tool returns it."""
P = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
RAN: list[str] = []


def _search(q: str) -> str:
    RAN.append(f"search {q}")
    return f"the key is {SECRET}" if q == "vault" else f"result {q}"


def _wipe(q: str) -> str:
    RAN.append(f"wipe {q}")
    return "wiped"


def _refund(context: ToolContext, q: str) -> dict[str, str]:
    RAN.append(f"refund {q}")
    return {"refunded": q}


def _spec(name: str, handler: Callable[..., Any], **options: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name}.", parameters=P, handler=handler, **options)


def refund_spec() -> ToolSpec:
    return _spec(
        "refund",
        _refund,
        effect="write",
        needs_context=True,
        preview=lambda context, q: {"would_refund": q},
        verify=lambda context, q: {"refunded": q} if f"refund {q}" in RAN else None,
    )


PARENT_SCRIPT: list[Any] = [
    tool_calls(("search", {"q": SECRET}), ("wipe", {"q": "x"})),
    tool_call("delegate", {"q": "dig"}),
    tool_call("refund", {"q": "o1"}),
    "done",
]
CHILD_SCRIPT: list[Any] = [tool_call("search", {"q": "vault"}), "found it"]


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    RAN.clear()
    exported = InMemorySpanExporter()
    yield exported
    exported.clear()


def sink_for(exporter: InMemorySpanExporter) -> OTelSink:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OTelSink(provider)


# -- the harnesses ------------------------------------------------------------------------


def offline_run(sink: OTelSink) -> tuple[RunResult, Contract, FakeModel]:
    """The offline loop; ``delegate`` drives the child scope with the same loop."""
    holder: dict[str, Any] = {}

    def delegate(context: ToolContext, q: str) -> str:
        scope = holder["child"].start(parent=holder["state"], parent_call_id=context.tool_call_id)
        out = _drive(
            FakeModel(list(CHILD_SCRIPT)), scope, [Message(role="user", content=q)], 512, 0.0
        )
        return str(out.output)

    contract = Contract(
        [
            _spec("search", _search),
            _spec("wipe", _wipe),
            _spec("delegate", delegate, needs_context=True),
            refund_spec(),
        ],
        allowlist=["search", "delegate", "refund"],
        secrets=[SECRET],
        trace_sink=sink,
    )
    holder["child"] = contract.child(
        "researcher", tools=[_spec("search", _search)], allowlist=["search"]
    )
    model = FakeModel(list(PARENT_SCRIPT))
    state = holder["state"] = contract.start()
    result = _drive(model, state, [Message(role="user", content="go")], 512, 0.0)
    return result, contract, model


def langchain_run(sink: OTelSink, mode: str) -> RunResult:
    """create_agent under ContractMiddleware; ``delegate`` runs an inner create_agent
    under the child contract (the agent-as-tool shape of docs/MULTI_AGENT.md)."""
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_contract_langchain import ContractMiddleware, from_langchain_tool, run_graph
    from agent_contract_langchain.chat_model import ContractChatModel

    holder: dict[str, Any] = {}

    def ask(q: str) -> str:
        out = holder["researcher"].invoke({"messages": [{"role": "user", "content": q}]})
        return str(out["messages"][-1].content)

    async def aask(q: str) -> str:
        out = await holder["researcher"].ainvoke({"messages": [{"role": "user", "content": q}]})
        return str(out["messages"][-1].content)

    def tool(name: str, fn: Callable[..., Any]) -> StructuredTool:
        return StructuredTool.from_function(func=fn, name=name, description=f"{name}.")

    search, wipe = tool("search", _search), tool("wipe", _wipe)
    refund = tool("refund", lambda q: _refund(None, q))  # type: ignore[arg-type]
    delegate = StructuredTool.from_function(
        func=ask, coroutine=aask, name="delegate", description="delegate."
    )
    contract = Contract(
        [
            from_langchain_tool(search, effect="read"),
            from_langchain_tool(wipe, effect="read"),
            from_langchain_tool(delegate, effect="read"),
            from_langchain_tool(
                refund,
                effect="write",
                preview=refund_spec().preview,
                verify=refund_spec().verify,
            ),
        ],
        allowlist=["search", "delegate", "refund"],
        secrets=[SECRET],
        trace_sink=sink,
    )
    child = contract.child(
        "researcher", tools=[from_langchain_tool(search, effect="read")], allowlist=["search"]
    )
    holder["researcher"] = create_agent(
        ContractChatModel(model=FakeModel(list(CHILD_SCRIPT))),
        tools=[search],
        middleware=ContractMiddleware(child).around(),
        name="researcher",
    )
    graph = create_agent(
        ContractChatModel(model=FakeModel(list(PARENT_SCRIPT))),
        tools=[search, wipe, delegate, refund],
        middleware=ContractMiddleware(contract).around(),
        checkpointer=InMemorySaver(),  # a write pauses the graph: LangGraph keeps its thread
    )
    state = contract.start()
    return run_graph(
        graph,
        state,
        [Message(role="user", content="go")],
        mode=mode,  # type: ignore[arg-type]
        config={"configurable": {"thread_id": state.view.run_id}},
    )


def pydantic_ai_run(sink: OTelSink, mode: str) -> RunResult:
    """An Agent with a ContractToolset; ``delegate`` runs an inner Agent under
    ``ContractCapability.child`` (PydanticAI's agent delegation)."""
    from pydantic_ai import Agent
    from pydantic_ai.tools import DeferredToolRequests

    from agent_contract_pydantic_ai import (
        ContractCapability,
        ContractToolset,
        contract_model,
        drive_agent,
    )

    holder: dict[str, Any] = {}

    async def delegate(q: str) -> str:
        out = await holder["researcher"].run(
            q, capabilities=[ContractCapability.child(holder["child"])]
        )
        return str(out.output)

    contract = Contract(
        [
            _spec("search", _search),
            _spec("wipe", _wipe),
            _spec("delegate", delegate),
            refund_spec(),
        ],
        allowlist=["search", "delegate", "refund"],
        secrets=[SECRET],
        trace_sink=sink,
    )
    child = holder["child"] = contract.child(
        "researcher", tools=[_spec("search", _search)], allowlist=["search"]
    )
    holder["researcher"] = Agent(
        contract_model(FakeModel(list(CHILD_SCRIPT))), toolsets=[ContractToolset(child)]
    )
    agent = Agent(
        contract_model(FakeModel(list(PARENT_SCRIPT))),
        toolsets=[ContractToolset(contract)],
        output_type=[str, DeferredToolRequests],  # a write pauses the run: PydanticAI defers it
    )
    return drive_agent(agent, contract.start(), [Message(role="user", content="go")], mode=mode)  # type: ignore[arg-type]


HARNESSES: dict[str, Callable[[OTelSink], RunResult]] = {
    "offline": lambda sink: offline_run(sink)[0],
    **{
        f"langchain-{mode}": (lambda sink, mode=mode: langchain_run(sink, mode))
        for mode in ("invoke", "ainvoke", "stream")
    },
    **{
        f"pydantic-ai-{mode}": (lambda sink, mode=mode: pydantic_ai_run(sink, mode))
        for mode in ("run_sync", "run", "stream")
    },
}


# -- reading the spans --------------------------------------------------------------------


def tree(spans: tuple[ReadableSpan, ...]) -> list[tuple[int, str]]:
    """``(depth, name)`` of every span, depth-first in start order."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans if s.context is not None}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        by_parent.setdefault(parent if parent in ids else None, []).append(span)
    out: list[tuple[int, str]] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(by_parent.get(parent, []), key=lambda s: s.start_time or 0):
            out.append((depth, span.name))
            if span.context is not None:
                walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return out


def named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def every_text(span: ReadableSpan) -> list[str]:
    """Every text a span exports: name, status description, attributes, events."""
    texts = [span.name, span.status.description or ""]
    texts += [f"{k}={v}" for k, v in (span.attributes or {}).items()]
    for event in span.events:
        texts.append(event.name)
        texts += [f"{k}={v}" for k, v in (event.attributes or {}).items()]
    return texts


EXPECTED_TREE = [
    (0, "invoke_agent"),
    (1, "chat"),
    (1, "execute_tool search"),
    (1, "execute_tool wipe"),
    (1, "chat"),
    (1, "execute_tool delegate"),
    (2, "invoke_agent researcher"),
    (3, "chat"),
    (3, "execute_tool search"),
    (3, "chat"),
    (1, "chat"),
    (1, "execute_tool refund"),
]


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_run_is_one_span_tree_by_the_genai_conventions(
    harness: str, exporter: InMemorySpanExporter
) -> None:
    sink = sink_for(exporter)
    result = HARNESSES[harness](sink)
    assert result.stop_reason == "pending_approval", result.stop_detail
    assert [f"search {SECRET}", "search vault"] == RAN  # wipe refused, refund waits
    assert sink.open_runs == 0  # the paused run's state is dropped
    spans = exporter.get_finished_spans()
    assert tree(spans) == EXPECTED_TREE
    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1

    (run,) = named(spans, "invoke_agent")
    attributes = dict(run.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["agent_contract.run_id"] == result.run_id
    assert attributes["agent_contract.stop_reason"] == "pending_approval"
    assert attributes["agent_contract.paused"] is True
    assert run.status.status_code is StatusCode.UNSET  # a pause is no error

    chats = named(spans, "chat")
    assert all(dict(c.attributes or {})["gen_ai.operation.name"] == "chat" for c in chats)
    assert all(c.status.status_code is StatusCode.UNSET for c in chats)
    first = dict(chats[0].attributes or {})
    assert first["agent_contract.response_shape"] == "tool_calls"
    assert first["agent_contract.tool_calls"] == 2
    assert first["gen_ai.usage.input_tokens"] > 0  # the fake model's estimates
    assert first["gen_ai.usage.output_tokens"] > 0

    search, child_search = named(spans, "execute_tool search")
    ok = dict(search.attributes or {})
    assert ok["gen_ai.operation.name"] == "execute_tool"
    assert ok["gen_ai.tool.name"] == "search"
    assert ok["gen_ai.tool.call.id"]
    assert ok["agent_contract.outcome"] == "succeeded"
    assert ok["agent_contract.side_effects_possible"] is False
    assert search.status.status_code is StatusCode.UNSET

    (wipe,) = named(spans, "execute_tool wipe")
    refused = dict(wipe.attributes or {})
    assert refused["agent_contract.decision"] == "refused"
    assert refused["agent_contract.error_kind"] == "not_allowed"
    assert refused["agent_contract.outcome"] == "not_run"
    assert refused["error.type"] == "not_allowed"
    assert wipe.status.status_code is StatusCode.ERROR
    assert "not_allowed" in (wipe.status.description or "")

    (delegate,) = named(spans, "execute_tool delegate")
    (child,) = named(spans, "invoke_agent researcher")
    assert child.parent is not None
    assert delegate.context is not None
    assert child.parent.span_id == delegate.context.span_id
    child_attributes = dict(child.attributes or {})
    assert child_attributes["gen_ai.agent.name"] == "researcher"
    # the offline loop records the child's stop; a binding's child agent that answered
    # records none (its span ends with the call that started it)
    expected_stop = "answered" if harness == "offline" else None
    assert child_attributes.get("agent_contract.stop_reason") == expected_stop
    assert child.end_time is not None
    assert delegate.end_time is not None
    assert child.end_time <= delegate.end_time
    assert child_attributes["agent_contract.call_path"] == (
        dict(delegate.attributes or {})["gen_ai.tool.call.id"],
    )
    assert dict(child_search.attributes or {})["gen_ai.tool.call.result"] == (
        "the key is [REDACTED]"
    )

    (refund,) = named(spans, "execute_tool refund")
    waiting = dict(refund.attributes or {})
    assert waiting["agent_contract.decision"] == "awaiting_approval"
    assert waiting["agent_contract.approval_state"] == "pending"
    assert waiting["agent_contract.ended_by_stop"] == "pending_approval"

    texts = [text for span in spans for text in every_text(span)]
    assert any("[REDACTED]" in text for text in texts)  # the secret was there, redacted
    assert [text for text in texts if SECRET in text] == []


def test_the_resume_is_its_own_run_span_and_the_approved_write_its_tool_span(
    exporter: InMemorySpanExporter,
) -> None:
    sink = sink_for(exporter)
    paused, contract, model = offline_run(sink)
    (pending,) = paused.pending_approvals
    exporter.clear()
    result = resume(
        model, contract, paused.snapshot or {}, [Approval.for_pending(pending, "approve")]
    )
    assert (result.stop_reason, result.output) == ("answered", "done")
    spans = exporter.get_finished_spans()
    assert tree(spans) == [(0, "invoke_agent"), (1, "execute_tool refund"), (1, "chat")]
    (run,) = named(spans, "invoke_agent")
    assert dict(run.attributes or {})["agent_contract.resumed"] is True
    assert dict(run.attributes or {})["agent_contract.stop_reason"] == "answered"
    (refund,) = named(spans, "execute_tool refund")
    attributes = dict(refund.attributes or {})
    assert attributes["agent_contract.approval_state"] == "approve"
    assert attributes["agent_contract.outcome"] == "succeeded"
    assert [e.name for e in refund.events] == [
        "agent_contract.approval_decided",
        "agent_contract.write_settled",
    ]
    assert sink.open_runs == 0


def test_a_contract_stop_sets_the_run_spans_status(exporter: InMemorySpanExporter) -> None:
    from agent_contract import Budget
    from agent_contract.loop import run

    sink = sink_for(exporter)
    model = FakeModel([tool_call("search", {"q": "a"}), tool_call("search", {"q": "b"}), "x"])
    contract = Contract(
        [_spec("search", _search)], budget=Budget(max_tool_calls=1), trace_sink=sink
    )
    result = run(model, contract, "go")
    assert result.stop_reason == "max_tool_calls"
    (span,) = named(exporter.get_finished_spans(), "invoke_agent")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.status.description or "").startswith("max_tool_calls")
    assert dict(span.attributes or {})["error.type"] == "max_tool_calls"


def test_a_run_started_inside_a_callers_span_is_its_child(exporter: InMemorySpanExporter) -> None:
    from agent_contract.loop import run

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    contract = Contract([_spec("search", _search)], trace_sink=OTelSink(provider))
    with provider.get_tracer("caller").start_as_current_span("request") as outer:
        run(FakeModel([tool_call("search", {"q": "a"}), "done"]), contract, "go")
    spans = exporter.get_finished_spans()
    assert tree(spans) == [
        (0, "request"),
        (1, "invoke_agent"),
        (2, "chat"),
        (2, "execute_tool search"),
        (2, "chat"),
    ]
    assert {s.context.trace_id for s in spans if s.context} == {outer.get_span_context().trace_id}


def test_the_open_runs_are_bounded(exporter: InMemorySpanExporter) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OTelSink(provider, max_open_runs=2)
    import datetime as dt

    def event(kind: str) -> TraceEvent:
        return TraceEvent(seq=0, type=kind, time=dt.datetime.now(dt.UTC), offset_seconds=0.0)

    for run_id in ("r1", "r2", "r3"):
        sink.emit(run_id, event("run_started"))
    assert sink.open_runs == 2
    (abandoned,) = exporter.get_finished_spans()
    assert dict(abandoned.attributes or {})["agent_contract.run_id"] == "r1"
    assert dict(abandoned.attributes or {})["agent_contract.abandoned"] is True
    sink.close()
    assert sink.open_runs == 0
    assert len(exporter.get_finished_spans()) == 3


def test_the_global_provider_is_the_default() -> None:
    sink = OTelSink()
    assert sink.open_runs == 0
    assert otel_trace.get_tracer_provider() is not None


def test_without_opentelemetry_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def missing(name: str, package: str | None = None) -> Any:
        if name.startswith("opentelemetry"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, package)

    monkeypatch.setattr(otel_module.importlib, "import_module", missing)
    with pytest.raises(DependencyMissingError, match=r"agent-contract\[otel\]") as caught:
        OTelSink()
    assert isinstance(caught.value, ImportError)


def test_an_event_after_the_runs_stop_is_a_span_of_its_own(
    exporter: InMemorySpanExporter,
) -> None:
    import datetime as dt

    sink = sink_for(exporter)

    def event(kind: str, **fields: Any) -> TraceEvent:
        now = dt.datetime.now(dt.UTC)
        return TraceEvent(seq=0, type=kind, time=now, offset_seconds=0.0, fields=fields)

    sink.emit("r1", event("run_started"))
    sink.emit("r1", event("stop", reason="max_model_steps", detail="spent"))
    sink.emit("r1", event("refused_after_stop", what="model_call", reason="max_model_steps"))
    assert sink.open_runs == 0  # nothing held for a run that ended
    run, late = exporter.get_finished_spans()
    assert run.name == "invoke_agent"
    assert late.name == "agent_contract.refused_after_stop"
    assert dict(late.attributes or {})["agent_contract.what"] == "model_call"
