"""The LangChain harness: ``create_agent`` + :class:`ContractMiddleware`, returning the
same :class:`~agent_contract.runtime.RunResult` as the offline loop.

Three ways to drive the graph, all through the same middleware:

- ``"invoke"``: ``graph.invoke``;
- ``"ainvoke"``: ``graph.ainvoke`` (async hooks, async tool path);
- ``"stream"``: ``graph.stream(stream_mode=["messages", "values"])``: the tool calls
  must arrive through the ``messages`` stream (the path ``GenericFakeChatModel``
  breaks); the last ``values`` chunk gives the final state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, Literal, TypeVar, get_args

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agent_contract.approval import Approval
from agent_contract.budget import Budget
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.harnesses import Harness, RunInput, settle_approvals
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.runtime import Contract, RunResult, RunState
from agent_contract.tools import ToolRegistry, ToolSpec
from agent_contract.trace import RedactionPolicy

from .chat_model import ContractChatModel
from .errors import framework_errors
from .messages import from_langchain_messages, to_langchain_messages
from .middleware import ContractContext, ContractMiddleware
from .tools import to_langchain_tools

__all__ = [
    "MODES",
    "Mode",
    "build_agent",
    "resume_agent",
    "resume_graph",
    "run_agent",
    "run_graph",
    "run_options",
    "suite_harness",
]

Mode = Literal["invoke", "ainvoke", "stream"]
MODES: Final[tuple[str, ...]] = get_args(Mode)

_T = TypeVar("_T")


def _run_async(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coroutine)``, without waiting for abandoned tool threads at the end.

    Under ``ainvoke`` LangChain runs sync tools on the event loop's default executor,
    and ``asyncio.run`` joins that executor's threads before it returns: a sync tool
    that timed out (it keeps running; a thread cannot be stopped) would hold the run
    until it finished. Here the default executor is a private pool that is shut down
    without waiting, so the run returns at the timeout as on the other paths.
    """
    pool = ThreadPoolExecutor(thread_name_prefix="agent-contract-ainvoke")
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        loop.set_default_executor(pool)
        try:
            return runner.run(coroutine)
        finally:
            # Runner.close() joins the default executor: hand it an idle one.
            loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
            pool.shutdown(wait=False)


def build_agent(
    model: Model,
    contract: Contract,
    *,
    system: str | None = None,
    checkpointer: Any = None,
    middleware: Sequence[Any] = (),
) -> Any:
    """``create_agent`` over the contract's tools, with the contract middleware first.

    Args:
        model: any agent_contract Model; wrapped in :class:`ContractChatModel`.
        contract: tools, allowlist, budget, redaction.
        system: system prompt.
        checkpointer: a LangGraph checkpointer, or None.
        middleware: more middleware, placed inside the contract's (the contract's
            is outermost, so it sees every model and tool call first).

    Returns:
        The compiled graph.
    """
    return create_agent(
        ContractChatModel(model=model),
        tools=to_langchain_tools(contract.registry),
        system_prompt=system,
        middleware=[ContractMiddleware(contract), *middleware],
        checkpointer=checkpointer,
    )


def _stream(graph: Any, payload: Any, config: Any, context: ContractContext) -> dict[str, Any]:
    if isinstance(payload, Command):
        before = len(graph.get_state(config).values.get("messages", ()))
    else:
        before = len(payload["messages"])
    final: dict[str, Any] = {}
    streamed: list[BaseMessage] = []
    for mode, chunk in graph.stream(
        payload, config=config, context=context, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            streamed.append(chunk[0])
        elif mode == "values":
            final = chunk
    _check_streamed_calls(streamed, list(final.get("messages", ()))[before:])
    return final


def _check_streamed_calls(streamed: Sequence[BaseMessage], produced: Sequence[Any]) -> None:
    """Every tool call in the messages this invocation produced must have come through
    the messages stream."""
    sent = {
        call["id"]
        for message in streamed
        if isinstance(message, AIMessage | AIMessageChunk)
        for call in message.tool_calls
    }
    wanted = {
        call["id"]
        for message in produced
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    }
    lost = wanted - sent
    if lost:
        raise ConfigurationError(
            f"tool calls missing from the messages stream: {sorted(str(i) for i in lost)}"
        )


def run_graph(
    graph: Any,
    state: RunState,
    messages: Sequence[Message],
    *,
    mode: Mode = "invoke",
    config: Mapping[str, Any] | None = None,
    system: str | None = None,
    resume: Command[Any] | None = None,
) -> RunResult:
    """Drive a compiled contract agent once and build the RunResult.

    Args:
        graph: from :func:`build_agent` (or any ``create_agent`` graph whose middleware
            includes a ContractMiddleware for ``state.contract``).
        state: from ``contract.start()``.
        messages: the input turns (history, then the new user message).
        mode: ``"invoke"``, ``"ainvoke"`` or ``"stream"``.
        config: LangGraph config (``thread_id`` for checkpointers).
        system: the system prompt the graph was built with, to put first in the
            transcript as the offline loop does.
        resume: a ``Command(resume=...)`` to continue an interrupted thread instead of
            starting from ``messages``.

    With a checkpointer on ``graph`` the input messages are redacted first, since the
    graph state is written to disk.

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: unknown ``mode``, or tool calls lost from the stream.
        CheckpointError: the graph's checkpoint cannot be read.
    """
    if getattr(graph, "checkpointer", None) is not None:
        # A checkpointer writes the graph state to disk: a secret handed to the run must
        # not be stored, so a durable run's input is redacted (as the offline snapshot's
        # transcript is), and the model sees the redaction marker.
        redact = state.contract.redaction.redact_value
        messages = [Message.from_dict(redact(m.to_dict())) for m in messages]
    payload: Any = resume if resume is not None else {"messages": to_langchain_messages(messages)}
    context = ContractContext(state)
    cfg = dict(config or {})
    with framework_errors():
        if mode == "invoke":
            final = graph.invoke(payload, config=cfg, context=context)
        elif mode == "ainvoke":
            final = _run_async(graph.ainvoke(payload, config=cfg, context=context))
        elif mode == "stream":
            final = _stream(graph, payload, cfg, context)
        else:
            raise ConfigurationError(f"unknown mode {mode!r}; expected one of {MODES}")
    transcript = from_langchain_messages(final.get("messages", ()))
    if system is not None:
        transcript.insert(0, Message(role="system", content=system))
    # The stop is the one the middleware halted with (or the pause, while writes wait).
    return state.finish(messages=transcript, harness=f"langchain-{mode}")


def run_agent(
    model: Model,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    budget: Budget | None = None,
    history: Sequence[Message] = (),
    allowlist: Iterable[str] | None = None,
    redaction: RedactionPolicy | None = None,
    secrets: Iterable[str] = (),
    system: str | None = None,
    caller: str | None = None,
    context: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    mode: Mode = "invoke",
    checkpointer: Any = None,
) -> RunResult:
    """The LangChain twin of :func:`agent_contract.run`: the same arguments (less
    ``max_output_tokens`` and ``temperature``, which belong to the chat model), the same
    result.

    Builds ``create_agent`` with :class:`ContractMiddleware`, runs it once in ``mode``
    and returns a :class:`RunResult` (``harness`` is ``"langchain-<mode>"``).

    Args:
        mode: ``"invoke"``, ``"ainvoke"`` or ``"stream"``.
        checkpointer: a LangGraph checkpointer; the run's thread id is its run id, a
            write pauses on ``interrupt()`` (resume with :func:`resume_agent`), and the
            input is redacted before it is stored.

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: bad wiring.
        CheckpointError: the checkpoint cannot be read.
    """
    contract = Contract.of(
        tools, budget=budget, allowlist=allowlist, redaction=redaction, secrets=secrets
    )
    graph = build_agent(model, contract, system=system, checkpointer=checkpointer)
    state = contract.start(run_id=run_id, caller=caller, context=context)
    turns = [*history, Message(role="user", content=user_message)]
    config = {"configurable": {"thread_id": state.run_id}} if checkpointer is not None else None
    return run_graph(graph, state, turns, mode=mode, system=system, config=config)


def resume_agent(
    model: Model,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    checkpointer: Any,
    context: Mapping[str, Any] | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
    system: str | None = None,
    mode: Mode = "invoke",
) -> RunResult:
    """Continue a ``create_agent`` run paused for approval, possibly in a new process.

    Two stores work together: ``checkpointer`` (LangGraph's, e.g. ``SqliteSaver``)
    holds the graph and its pending interrupt; ``snapshot`` (``RunResult.snapshot``,
    e.g. kept in :class:`agent_contract.app.store.RunStore`) holds the contract's state —
    budget usage, the call-ID ledger, decisions, the trace — so budgets hold across
    resumes even though LangChain's own run counters reset on every ``invoke``.

    The decisions are checked first (an :class:`ApprovalError` changes nothing), then
    recorded and handed to ``checkpoint``, and only then is the graph resumed with
    ``Command(resume=...)``: the interrupted tool task re-runs from its start, finds
    the decision, and writes once (settling any earlier crash by the idempotency key).
    Only interrupts of decided calls are resumed: a call without a decision yet (when
    ``approvals`` covers some of the pending calls, or none) stays interrupted and the
    run pauses again with ``pending_approval``, as offline.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot cannot be restored, or the thread has no
            checkpoint or no pending interrupt (never a fresh start).
    """
    graph = build_agent(model, contract, system=system, checkpointer=checkpointer)
    return resume_graph(
        graph,
        contract,
        snapshot,
        approvals,
        context=context,
        checkpoint=checkpoint,
        system=system,
        mode=mode,
    )


def resume_graph(
    graph: Any,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    context: Mapping[str, Any] | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
    system: str | None = None,
    mode: Mode = "invoke",
) -> RunResult:
    """:func:`resume_agent` for a graph you compiled yourself (with a checkpointer and a
    :class:`ContractMiddleware` for ``contract``).

    Raises:
        ApprovalError, CheckpointError: as :func:`resume_agent`.
    """
    state, _ = contract.restore(snapshot, context=context)
    config: dict[str, Any] = {"configurable": {"thread_id": state.run_id}}
    with framework_errors():
        current = graph.get_state(config)
    if not current.values:
        raise CheckpointError(f"no LangGraph checkpoint for thread {state.run_id!r}")
    interrupts = list(current.interrupts)
    decided = [p for p in state.pending_approvals() if state.decision_for(p.tool_call_id)]
    if not interrupts and not decided:
        raise CheckpointError(f"thread {state.run_id!r} has no pending approval to resume")
    state.resume(
        approvals,
        checkpoint=checkpoint,
        transcript=from_langchain_messages(current.values.get("messages", ())),
    )
    value = {"decisions": [a.to_dict() for a in approvals]}
    command: Command[Any] = Command(
        resume={i.id: value for i in interrupts if _decided(state, i.value)}
    )
    return run_graph(graph, state, [], mode=mode, system=system, config=config, resume=command)


def _decided(state: RunState, payload: Any) -> bool:
    """True when the interrupt ``payload`` is a write call with a recorded decision. Only
    those are resumed; the others stay interrupted, waiting for their own decision."""
    call_id = payload.get("tool_call_id") if isinstance(payload, Mapping) else None
    return call_id is None or state.decision_for(str(call_id)) is not None


def suite_harness(mode: Mode = "invoke") -> Harness:
    """:func:`run_agent` in ``mode`` as a contract-suite harness.

    Each run gets its own in-memory LangGraph checkpointer, so approval scenarios pause
    on ``interrupt()`` and resume with :func:`resume_agent`.
    """

    def harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
        contract = options.contract(tools)
        graph = build_agent(model, contract, checkpointer=InMemorySaver())
        return run_options(graph, contract, options, mode=mode)

    return harness


def run_options(graph: Any, contract: Contract, options: RunInput, *, mode: Mode) -> RunResult:
    """Run a suite scenario's options on a checkpointed contract graph: start a run as
    ``options.caller``, drive it, and answer approvals with the options' decider
    through :func:`resume_graph` until the run ends."""
    state = contract.start(caller=options.caller)
    config = {"configurable": {"thread_id": state.run_id}}
    result = run_graph(graph, state, options.turns(), mode=mode, config=config)
    return settle_approvals(
        result,
        lambda snapshot, approvals: resume_graph(graph, contract, snapshot, approvals, mode=mode),
        options,
    )
