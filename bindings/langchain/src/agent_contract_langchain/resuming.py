"""Resuming a paused contract agent, and the harness the contract suite runs.

A run pauses with ``pending_approval`` (write calls wait for a human decision) or
``interrupted`` (another interrupt waits for an answer: a ``HumanInTheLoopMiddleware``
review, an ``interrupt()`` inside a tool). :func:`resume_agent` / :func:`resume_graph`
(and their async twins, in the caller's event loop) continue it, possibly in a new
process, from the LangGraph checkpoint and the contract's snapshot.

A process can also stop (a crash, a signal) after a resumed graph ended and before the
run store wrote its "finished" record: :func:`resume_or_reconcile` settles such a run
from the checkpoint (:func:`reconcile_finished`) instead of resuming a graph that would
do nothing.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, Unpack, cast

from langchain_core.language_models import BaseChatModel
from langgraph.types import Command

from agent_contract.approval import Approval
from agent_contract.delegation import RunChild, SubAgentPlan
from agent_contract.errors import CheckpointError
from agent_contract.harnesses import Harness, RunInput, settle_approvals
from agent_contract.model import Model
from agent_contract.runtime import (
    Checkpoint,
    Contract,
    ResumeOptions,
    RunResult,
    RunState,
    Stop,
)
from agent_contract.tools import ToolContext, ToolSpec

from .approvals import payload_call_id
from .driving import Mode, check_loop
from .errors import framework_errors
from .harness import arun_graph, build_agent, run_async, run_graph
from .messages import from_langchain_messages
from .stops import stop_of, without_stops
from .suite_extras import CAPABILITIES, extra_middleware, suite_tools

__all__ = [
    "GraphResumeOptions",
    "aresume_agent",
    "aresume_graph",
    "child_runner",
    "reconcile_finished",
    "resume_agent",
    "resume_graph",
    "resume_or_reconcile",
    "run_options",
    "suite_harness",
]


class GraphResumeOptions(ResumeOptions, total=False):
    """The keywords of a LangGraph resume (:func:`resume_agent`, :func:`resume_graph` and
    their async twins), declared once: the core's
    :class:`~agent_contract.runtime.ResumeOptions` (``context``, ``checkpoint``) and the
    graph's own below. Every key is optional; one left out is ``None``."""

    answers: Mapping[str, Any] | None
    """Resume values for interrupts that are not the contract's write approvals, by
    interrupt id (see :func:`resume_agent`)."""
    system: str | None
    """The system message the run was built with."""
    graph_context: Any
    """The graph's runtime ``context=`` (for ``context_schema``), passed through untouched."""


def _agent_graph(
    model: Model | BaseChatModel,
    contract: Contract,
    checkpointer: Any,
    create_agent_options: Mapping[str, Any] | None,
    options: Mapping[str, Any],
) -> tuple[Any, GraphResumeOptions]:
    """The ``create_agent`` graph a resume runs on, and the resume's own keywords.

    A keyword outside :class:`GraphResumeOptions` goes to ``create_agent`` beside
    ``create_agent_options`` (the spelling ``resume_agent(..., middleware=[...])``)."""
    keys = GraphResumeOptions.__optional_keys__
    resume = cast(GraphResumeOptions, {k: v for k, v in options.items() if k in keys})
    extra = {k: v for k, v in options.items() if k not in keys}
    graph = build_agent(
        model,
        contract,
        system=resume.get("system"),
        checkpointer=checkpointer,
        **{**(create_agent_options or {}), **extra},
    )
    return graph, resume


def resume_agent(
    model: Model | BaseChatModel,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    checkpointer: Any,
    mode: Mode = "invoke",
    create_agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[GraphResumeOptions],
) -> RunResult:
    """Continue a ``create_agent`` run that paused (``pending_approval`` or
    ``interrupted``), possibly in a new process.

    Two stores work together: ``checkpointer`` (LangGraph's, e.g. ``SqliteSaver``)
    holds the graph and its pending interrupts; ``snapshot`` (``RunResult.snapshot``,
    e.g. kept in :class:`agent_contract.runstore.RunStore`) holds the contract's state —
    budget usage, the call-ID ledger, decisions, the trace — so budgets hold across
    resumes even though LangChain's own run counters reset on every ``invoke``.

    The decisions are checked first (an :class:`ApprovalError` changes nothing), then
    recorded and handed to ``checkpoint``, and only then is the graph resumed with
    ``Command(resume=...)``: the interrupted tool task re-runs from its start, finds
    the decision, and writes once (settling any earlier crash by the idempotency key).
    Only interrupts of decided calls are resumed: a call without a decision yet (when
    ``approvals`` covers some of the pending calls, or none) stays interrupted and the
    run pauses again with ``pending_approval``, as offline.

    Args:
        create_agent_options: as the run was built with (``middleware``, ...; None:
            none); a keyword outside :class:`GraphResumeOptions` is handed to
            ``create_agent`` too.
        **options: the resume's keywords (see :class:`GraphResumeOptions`): ``answers``
            are resume values for interrupts that are not the contract's write
            approvals (a ``HumanInTheLoopMiddleware`` review, an ``interrupt()`` in a
            tool), by interrupt id (``RunResult.stop_detail`` names them; the thread's
            ``get_state(config).interrupts`` holds them).

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot cannot be restored, or the thread has no
            checkpoint or nothing pending to resume (never a fresh start).
    """
    graph, resume = _agent_graph(model, contract, checkpointer, create_agent_options, options)
    return resume_graph(graph, contract, snapshot, approvals, mode=mode, **resume)


async def aresume_agent(
    model: Model | BaseChatModel,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    checkpointer: Any,
    create_agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[GraphResumeOptions],
) -> RunResult:
    """:func:`resume_agent` in the running event loop (for an async checkpointer).

    Raises:
        ConfigurationError: the checkpointer is bound to another event loop.
        ApprovalError, CheckpointError: as :func:`resume_agent`.
    """
    graph, resume = _agent_graph(model, contract, checkpointer, create_agent_options, options)
    return await aresume_graph(graph, contract, snapshot, approvals, **resume)


def _resume_command(
    state: RunState,
    current: Any,
    approvals: Sequence[Approval],
    answers: Mapping[str, Any] | None,
    checkpoint: Callable[[dict[str, Any]], None] | None,
) -> Command[Any]:
    """Record the decisions (checked first), then the ``Command(resume=...)`` that
    resumes the decided approvals and the answered interrupts."""
    if not current.values:
        raise CheckpointError(f"no LangGraph checkpoint for thread {state.view.run_id!r}")
    interrupts = list(current.interrupts)
    decided = [p for p in state.view.pending_approvals() if state.view.decision_for(p.tool_call_id)]
    if not interrupts and not decided and not current.next:  # next: a run a signal stopped
        raise CheckpointError(
            f"thread {state.view.run_id!r} has no pending approval or interrupt to resume"
        )
    unknown = sorted(set(answers or {}) - {str(i.id) for i in interrupts})
    if unknown:
        raise CheckpointError(f"thread {state.view.run_id!r} has no pending interrupt {unknown}")
    state.resume(
        approvals,
        checkpoint=checkpoint,
        transcript=from_langchain_messages(without_stops(current.values.get("messages", ()))),
    )
    value = {"decisions": [a.to_dict() for a in approvals]}
    resume: dict[str, Any] = {}
    for pending in interrupts:
        call_id = payload_call_id(pending.value)
        if call_id is not None:
            if state.view.decision_for(call_id) is not None:
                resume[str(pending.id)] = value
        elif answers and str(pending.id) in answers:
            resume[str(pending.id)] = answers[str(pending.id)]
    return Command(resume=resume)


class _GraphRun(TypedDict):
    """The keywords :func:`run_graph` and :func:`arun_graph` continue a resume with."""

    system: str | None
    config: dict[str, Any]
    resume: Command[Any]
    graph_context: Any


def _restored(
    contract: Contract, snapshot: Mapping[str, Any], options: GraphResumeOptions
) -> tuple[RunState, dict[str, Any]]:
    """The paused run restored from ``snapshot``, and the config of its thread."""
    state, _ = contract.restore(snapshot, context=options.get("context"))
    return state, {"configurable": {"thread_id": state.view.run_id}}


def _continued(
    state: RunState,
    current: Any,
    approvals: Sequence[Approval],
    config: dict[str, Any],
    options: GraphResumeOptions,
) -> _GraphRun:
    """Record the decisions against the thread's ``current`` state, and the keywords
    the graph is then run again with (see :func:`_resume_command`)."""
    command = _resume_command(
        state, current, approvals, options.get("answers"), options.get("checkpoint")
    )
    return _GraphRun(
        system=options.get("system"),
        config=config,
        resume=command,
        graph_context=options.get("graph_context"),
    )


def resume_graph(
    graph: Any,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    mode: Mode = "invoke",
    **options: Unpack[GraphResumeOptions],
) -> RunResult:
    """:func:`resume_agent` for a graph you compiled yourself (with a checkpointer and
    the contract's middleware for ``contract``).

    Raises:
        ApprovalError, CheckpointError: as :func:`resume_agent`.
        ConfigurationError: an async checkpointer (use :func:`aresume_graph`).
    """
    if mode == "ainvoke":
        return run_async(aresume_graph(graph, contract, snapshot, approvals, **options))
    state, config = _restored(contract, snapshot, options)
    with framework_errors():
        current = graph.get_state(config)
    run = _continued(state, current, approvals, config, options)
    return run_graph(graph, state, [], mode=mode, **run)


async def aresume_graph(
    graph: Any,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    **options: Unpack[GraphResumeOptions],
) -> RunResult:
    """:func:`resume_graph` with ``ainvoke`` in the running event loop.

    Raises:
        ConfigurationError: the checkpointer is bound to another event loop.
        ApprovalError, CheckpointError: as :func:`resume_agent`.
    """
    check_loop(graph)
    state, config = _restored(contract, snapshot, options)
    with framework_errors():
        current = await graph.aget_state(config)
    run = _continued(state, current, approvals, config, options)
    return await arun_graph(graph, state, [], **run)


def resume_or_reconcile(
    model: Model | BaseChatModel,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval],
    *,
    checkpointer: Any,
    checkpoint: Checkpoint | None = None,
) -> RunResult:
    """:func:`resume_agent`, unless the thread's graph
    already ended: then :func:`reconcile_finished` reports the run it finished.

    A process can stop (a crash, a signal) after a resumed graph ended and before the
    run store recorded the end. The stored snapshot still says "paused"; the
    checkpoint says "ended". Resuming that graph would do nothing and the run would stay
    paused forever, so the run is settled from the checkpoint instead.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot or the checkpoint cannot be read.
    """
    graph = build_agent(model, contract, checkpointer=checkpointer)
    config = {"configurable": {"thread_id": str(snapshot.get("run_id", ""))}}
    with framework_errors():
        current = graph.get_state(config)
    if current.values and not current.next and not current.interrupts:
        return reconcile_finished(contract, snapshot, current.values, approvals)
    return resume_graph(graph, contract, snapshot, approvals, checkpoint=checkpoint)


def reconcile_finished(
    contract: Contract,
    snapshot: Mapping[str, Any],
    values: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
) -> RunResult:
    """The result of a run whose graph ended (``values``: its final graph state) while
    the stored ``snapshot`` was not updated: decisions in ``approvals`` are checked and
    recorded, every approved write is settled (``verify`` finds what the graph wrote,
    and nothing is written twice), and the run ends with the stop the graph recorded.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot cannot be restored.
    """
    state, _ = contract.restore(snapshot)
    messages = list(values.get("messages", ()))
    transcript = from_langchain_messages(without_stops(messages))
    for planned in state.resume(approvals, transcript=transcript):
        state.execute(planned)
    stop = stop_of(messages)
    if stop is None:  # the graph ended on the model's answer
        last = next((m for m in reversed(transcript) if m.role == "assistant"), None)
        if last is not None and not last.tool_calls:
            state.halt(Stop(reason="answered"), last.content)
    else:
        state.halt(stop)
    return state.finish(messages=transcript, harness="langchain-invoke")


def child_runner(plan: SubAgentPlan, mode: Mode = "invoke") -> RunChild:
    """How the sub-agent hook's child (:attr:`RunInput.sub_agent`) runs here: an agent
    wrapped as a tool, a ``create_agent`` over the child contract (its
    :class:`ContractMiddleware`) invoked inside the delegating tool call, which it joins
    through LangGraph's config as a child scope (``ainvoke`` in the ``ainvoke`` mode, whose
    tools run on the async path; ``invoke`` and ``stream`` run them on the sync one)."""

    def graph(child: Contract) -> Any:
        return build_agent(plan.model, child, name=plan.agent)

    def answer(out: Mapping[str, Any]) -> str:
        return str(out["messages"][-1].content)

    def run_child(child: Contract, context: ToolContext, text: str) -> str:
        return answer(graph(child).invoke({"messages": [{"role": "user", "content": text}]}))

    async def arun_child(child: Contract, context: ToolContext, text: str) -> str:
        out = await graph(child).ainvoke({"messages": [{"role": "user", "content": text}]})
        return answer(out)

    return arun_child if mode == "ainvoke" else run_child


def suite_harness(mode: Mode = "invoke") -> Harness:
    """:func:`run_agent` in ``mode`` as a contract-suite harness.

    Each run gets its own in-memory LangGraph checkpointer, so approval scenarios pause
    on ``interrupt()`` and resume with :func:`resume_agent`. The scenario's extras
    (middleware, command and pausing tools, earlier turns) are applied (see
    :mod:`agent_contract_langchain.suite_extras`); the harness declares them in its
    ``capabilities``. In the ``stream`` mode it also declares ``streamed_replies``: the
    scripted model streams each reply in the pieces the scenario's ``stream`` extras
    name (``_streaming_model``).
    """

    def harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
        from .suite_store import SuiteStore  # it builds on this module

        chat_model = _streaming_model(model, options) if mode == "stream" else model
        store = SuiteStore(options, mode)  # the durable store: it outlives a crashed instance
        saver = store.saver

        def build() -> tuple[Any, Contract]:
            plan = options.sub_agent
            if plan is None:
                contract = options.contract(tools)
            else:
                contract = plan.contract(tools, options.contract, child_runner(plan, mode))
            graph = build_agent(
                chat_model,
                contract,
                system=options.system,
                checkpointer=saver,
                middleware=extra_middleware(options.extras),
                tools=suite_tools(contract, options.extras),
            )
            return graph, contract

        with store:
            graph, contract = build()
            return run_options(
                graph, contract, options, mode=mode, rebuild=build, endpoint=store.endpoint
            )

    capabilities = (*CAPABILITIES, "streamed_replies") if mode == "stream" else CAPABILITIES
    harness.capabilities = capabilities  # type: ignore[attr-defined]
    return harness


def _streaming_model(model: Model | BaseChatModel, options: RunInput) -> Model | BaseChatModel:
    """``model`` as the :class:`~agent_contract_langchain.chat_model.ContractChatModel`
    a suite run streams: each reply's text and argument text in the pieces the
    scenario's ``stream`` extras name
    (:func:`agent_contract.conformance.wire_check.stream_plan`: ``pieces:<n>``,
    ``interleaved``), as the replay server sends them over SSE; a scenario with no plan
    streams each text whole. A LangChain chat model (``check --wire``'s client, whose
    server cuts the pieces) is used as it is.

    Raises:
        ConfigurationError: the ``stream`` extras name an unknown item.
    """
    from agent_contract.conformance.wire_check import stream_plan  # the suite's, not the runtime's

    from .chat_model import ContractChatModel

    if isinstance(model, BaseChatModel):
        return model
    pieces, interleaved = stream_plan(options.extras)
    return ContractChatModel(model=model, chunk_chars=pieces, interleave_calls=interleaved)


# How a suite run carries decisions into a paused run (see run_options).
_Endpoint = Callable[
    [Any, Contract, Mapping[str, Any], list[Approval], Callable[[dict[str, Any]], None] | None],
    RunResult,
]


def run_options(
    graph: Any,
    contract: Contract,
    options: RunInput,
    *,
    mode: Mode,
    rebuild: Callable[[], tuple[Any, Contract]] | None = None,
    endpoint: _Endpoint | None = None,
) -> RunResult:
    """Run a suite scenario's options on a checkpointed contract graph: run its earlier
    turns on the thread first (``options.extras["earlier_turns"]``), then start a run as
    ``options.caller``, drive it, and answer approvals with the options' decider until
    the run ends.

    The run gets a thread id of its own (``options.run_id``, else ``run-<12 hex
    digits>``; its earlier turns included), so runs sharing a durable checkpointer
    never meet.

    Args:
        rebuild: ``rebuild() -> (graph, contract)`` builds a fresh instance over the
            same checkpointer: with it the crash/restart hook (``options.crash``) is
            honoured (see :func:`agent_contract.harnesses.settle_approvals`).
        endpoint: ``endpoint(graph, contract, snapshot, approvals, checkpoint) ->
            RunResult`` carries the decider's decisions into the paused run (on the
            fresh instance after a crash, with ``checkpoint`` ``None``); default
            :func:`resume_graph` in ``mode``.

    Raises:
        CheckpointError: the thread cannot be read or resumed.
        ConfigurationError: as :func:`run_graph`.
    """
    thread = options.run_id or f"run-{uuid.uuid4().hex[:12]}"
    config = {"configurable": {"thread_id": thread}}
    for text in options.extras.get("earlier_turns", ()):
        earlier = RunInput(user=text, caller=options.caller, context=options.context)
        run_graph(graph, earlier.start(contract), earlier.turns(), mode=mode, config=config)
    state = dataclasses.replace(options, run_id=thread).start(contract)
    turns = options.turns() if not options.extras.get("earlier_turns") else [options.turns()[-1]]
    result = run_graph(graph, state, turns, mode=mode, config=config, system=options.system)

    decide = endpoint or (
        lambda graph, contract, snapshot, approvals, checkpoint: resume_graph(
            graph, contract, snapshot, approvals, mode=mode, checkpoint=checkpoint
        )
    )

    def restart(snapshot: Mapping[str, Any], approvals: list[Approval]) -> RunResult:
        if rebuild is None:  # settle_approvals passes no crash plan without a restart
            raise CheckpointError("no fresh instance to restart in")
        fresh, fresh_contract = rebuild()
        return decide(fresh, fresh_contract, snapshot, approvals, None)

    return settle_approvals(
        result,
        lambda snapshot, approvals, checkpoint=None: decide(
            graph, contract, snapshot, approvals, checkpoint
        ),
        options,
        restart=restart if rebuild is not None else None,
    )
