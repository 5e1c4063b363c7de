"""Driving a PydanticAI ``Agent`` under the contract: building the agent, the three
modes (``run_sync``, ``run``, ``stream``) and turning the agent's end into the contract's
:class:`~agent_contract.runtime.RunResult` (a stop, a pause, an answer). The public entry
points (:func:`~agent_contract_pydantic_ai.harness.run_agent`, ``resume_agent``, the suite
harness) live in :mod:`agent_contract_pydantic_ai.harness`.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar, get_args

from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.messages import ModelMessage, PartStartEvent, ToolCallPart
from pydantic_ai.models import Model as PydanticModel
from pydantic_ai.output import StructuredDict, ToolOutput
from pydantic_ai.run import AgentRunResult, AgentRunResultEvent
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.usage import UsageLimits

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.pools import run_async
from agent_contract.runtime import (
    AnswerFormat,
    Contract,
    RunResult,
    RunState,
    Stop,
    interruptible,
)
from agent_contract.runtime.history import answers_in_issue_order

from .capability import RAISED_THROUGH, ContractCapability, ContractStopped, ledger_view
from .messages import from_pydantic_messages, to_pydantic_messages
from .model import contract_model
from .tools import ContractToolset

__all__ = [
    "MODES",
    "NO_USAGE_LIMITS",
    "Mode",
    "adrive_agent",
    "build_agent",
    "check_streamed",
    "claim_client_loop",
    "close_model_client",
    "drive_agent",
    "output_type_for",
    "run_in_new_loop",
    "run_sync_on_own_loop",
    "stream_events",
]

Mode = Literal["run_sync", "run", "stream"]
MODES: Final[tuple[str, ...]] = get_args(Mode)

NO_USAGE_LIMITS: Final = UsageLimits(request_limit=None)
"""The limits every contract run passes: none (the contract's budget is the only one)."""

_T = TypeVar("_T")


def output_type_for(answer: AnswerFormat | None) -> list[Any]:
    """The agent's ``output_type``: plain text, or the answer tools of a structured answer
    (each an output tool with its JSON Schema), and ``DeferredToolRequests`` (the pause
    for approval)."""
    if answer is None or not answer.tools:
        return [str, DeferredToolRequests]
    tools: list[Any] = [
        ToolOutput(
            StructuredDict(dict(schema), name=name, description=answer.description),
            name=name,
            description=answer.description,
        )
        for name, schema in answer.tools.items()
    ]
    if answer.text_schema is not None:
        tools.append(str)
    return [*tools, DeferredToolRequests]


def build_agent(
    model: Model | PydanticModel,
    contract: Contract,
    *,
    system: str | None = None,
    toolsets: Sequence[Any] = (),
    **agent_options: Any,
) -> Agent[Any, Any]:
    """A PydanticAI ``Agent`` over the contract's tools.

    Args:
        model: an agent-contract model (wrapped by
            :func:`~agent_contract_pydantic_ai.model.contract_model`) or any PydanticAI
            model.
        contract: tools, allowlist, budget, redaction, answer format.
        system: the system prompt.
        toolsets: more toolsets; their tools are neither offered to the model nor run
            unless the contract registers them (register them as ``ToolSpec``s instead).
        **agent_options: passed to ``Agent`` (``instructions``, ``capabilities``, ...).

    Returns:
        The agent; run it with :func:`drive_agent` (or ``agent.run`` with a
        :class:`ContractCapability` of the run).
    """
    budget = contract.budget
    retries = max(budget.max_tool_calls, budget.max_model_steps) + 1
    pydantic_model = model if isinstance(model, PydanticModel) else contract_model(model)
    agent_options.setdefault("output_type", output_type_for(contract.answer_format))
    agent_options.setdefault("retries", {"tools": retries, "output": retries})
    return Agent(
        pydantic_model,
        system_prompt=system or (),
        toolsets=[ContractToolset(contract, max_retries=retries), *toolsets],
        **agent_options,
    )


_THREAD_LOOPS = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """The calling thread's long-lived run loop, made on first use; closed when the
    thread's object is collected, or at exit."""
    loop: asyncio.AbstractEventLoop | None = getattr(_THREAD_LOOPS, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _THREAD_LOOPS.loop = loop
        weakref.finalize(threading.current_thread(), _close_loop, loop)
    return loop


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close a thread's run loop once its thread is gone or the process exits; a loop
    still running then (the process is exiting from inside a run: a signal, an exit in
    a tool) is left to the interpreter, since closing it would raise."""
    if not loop.is_running() and not loop.is_closed():
        loop.close()


def _no_running_loop(what: str) -> None:
    """Raise when the thread's event loop is running (a sync entry point cannot run there).

    Raises:
        ConfigurationError: as above, naming ``what``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise ConfigurationError(
        f"{what} cannot run inside a running event loop: use arun_agent (or mode='run')"
    )


def run_in_new_loop(awaitable: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``awaitable()`` to its end on the process's one run loop
    (:func:`agent_contract.pools.run_async`, a daemon thread), from synchronous code on
    any thread; the thread's current event loop (if any) is left as it was.

    One loop for every call from every thread: an async client (PydanticAI's
    ``OpenAIChatModel`` over ``AsyncOpenAI``, any httpx ``AsyncClient``) keeps its
    connections on the loop that opened them, so a loop per call stranded it (its second
    run, a resume, a second turn failed ``Event loop is closed``), and a loop per thread
    stranded it on the first thread that used it. (The name is kept for callers.)

    Raises:
        ConfigurationError: called inside a running event loop.
    """
    _no_running_loop("a synchronous PydanticAI run")

    async def run() -> _T:
        return await awaitable()

    return run_async(run())


_RUN_LOOP: Final = "the process's run loop"
"""The loop key of :func:`run_in_new_loop` (every thread's sync ``run``/``stream``)."""
_LOOPS_OF: dict[int, tuple[weakref.ref[Any], Any]] = {}
"""``id(model)`` -> (a weak reference to the provider-backed model, the loop key its
client's connections were opened on); by id, as PydanticAI's models are unhashable
dataclasses; an entry goes when its model is collected."""


def _claimed(model: Any) -> Any:
    """The loop key ``model`` is claimed on, or None (the caller holds the guard)."""
    entry = _LOOPS_OF.get(id(model))
    return entry[1] if entry is not None and entry[0]() is model else None


_LOOPS_GUARD = threading.Lock()


def claim_client_loop(model: Any, loop: Any) -> None:
    """Record that ``model``'s client runs on ``loop`` (a loop, or :data:`_RUN_LOOP`),
    refusing a second loop: a PydanticAI model over a provider SDK client (it has a
    ``client``: ``OpenAIChatModel``, ``AnthropicModel``, ...) keeps its connections on
    the loop that opened them, and ``run_sync`` runs on the calling thread's own loop,
    so the same model driven by ``run_sync`` on a second thread (or by ``run_sync`` and
    by a sync ``run``/``stream``) would find them stranded and stop ``model_error``.
    Models without a client (scripted, ``FunctionModel``) are not tracked.

    Raises:
        ConfigurationError: ``model`` was already driven on another loop; names the fix.
    """
    if getattr(model, "client", None) is None:
        return
    with _LOOPS_GUARD:
        first = _claimed(model)
        if first is None:
            try:
                ref = weakref.ref(model, lambda _: _LOOPS_OF.pop(key, None))
            except TypeError:  # not weak-referenceable: cannot be tracked
                return
            key = id(model)
            _LOOPS_OF[key] = (ref, loop)
            return
    if first is not loop:
        where = _RUN_LOOP if first is _RUN_LOOP else "the run_sync loop of one thread"
        raise ConfigurationError(
            f"this {type(model).__name__} holds an async client whose connections live on "
            f"{where}; driving it here would strand them: run it with mode='run' or "
            "'stream' (one loop for every thread), or build one model per thread for run_sync"
        )


def close_model_client(model: Any) -> None:
    """Close ``model.client`` (an SDK client with an async ``close()``) on the loop its
    connections were opened on (:func:`claim_client_loop`; the process's run loop when
    it was never driven, or from another thread than its run_sync loop's); forget the claim.
    """
    with _LOOPS_GUARD:
        loop = _claimed(model)
        if loop is not None:
            del _LOOPS_OF[id(model)]
    if isinstance(loop, asyncio.AbstractEventLoop) and loop is _thread_loop():
        loop.run_until_complete(model.client.close())
    else:
        run_in_new_loop(model.client.close)


def run_sync_on_own_loop(agent: Agent[Any, Any], options: Mapping[str, Any]) -> Any:
    """``agent.run_sync(**options)`` on the calling thread's own run loop (one per
    thread, kept between calls so one async client serves every run on the thread), set
    as the thread's current loop for the call only.

    ``run_sync`` drives the thread's current event loop, creating one (and leaving it open
    and current) when there is none: a loop nobody owns, which the next ``asyncio.run`` in
    the thread drops unclosed. Here the thread's run loop is current for the run and no
    loop is current after it.

    Raises:
        ConfigurationError: called inside a running event loop (use :func:`arun_agent`).
    """
    _no_running_loop("run_sync")
    asyncio.set_event_loop(_thread_loop())
    try:
        return agent.run_sync(**options)
    finally:
        asyncio.set_event_loop(None)


async def stream_events(
    agent: Agent[Any, Any], options: Mapping[str, Any], streamed: set[str]
) -> AgentRunResult[Any]:
    """``agent.run_stream_events(**options)`` to its end: its result, with the id of
    every tool-call part the stream carried added to ``streamed``.

    Raises:
        ConfigurationError: the stream ended without a result.
    """
    result: AgentRunResult[Any] | None = None
    async with agent.run_stream_events(**options) as events:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, ToolCallPart):
                streamed.add(event.part.tool_call_id)
            elif isinstance(event, AgentRunResultEvent):
                result = event.result
    if result is None:
        raise ConfigurationError("the event stream ended without a result")
    return result


def check_streamed(result: RunResult, streamed: set[str]) -> None:
    """Every tool call of the run's transcript came through the event stream as a
    tool-call part (what a streaming consumer sees).

    Raises:
        ConfigurationError: naming the calls that did not.
    """
    issued = {call.id for call in result.tool_calls if call.id}  # this run's, not the history's
    lost = issued - streamed
    if lost:
        raise ConfigurationError(f"tool calls missing from the event stream: {sorted(lost)}")


def _finish_stopped(
    state: RunState, stopped: ContractStopped, captured: Sequence[ModelMessage], harness: str
) -> RunResult:
    transcript = from_pydantic_messages(captured)
    refused = stopped.response
    if refused is not None and not stopped.keep:
        # Kept out of the messages handed forward: the framework's own copy included.
        if transcript and transcript[-1].role == "assistant" and transcript[-1].tool_calls:
            transcript.pop()
    elif refused is not None:
        last = transcript[-1] if transcript else None
        if last is None or last.role != "assistant" or last.tool_calls != refused.tool_calls:
            transcript.append(refused)
        transcript.extend(r.to_message() for r in stopped.refusals)
    transcript = answers_in_issue_order(ledger_view(state, transcript))
    return state.finish(stopped.stop, messages=transcript, harness=harness)


def _finish(state: RunState, result: AgentRunResult[Any], harness: str) -> RunResult:
    # A resumed run's approved answers come after the ones given before the pause, in a
    # request of their own: the messages handed forward hold them in issue order.
    transcript = answers_in_issue_order(
        ledger_view(state, from_pydantic_messages(result.all_messages()))
    )
    if isinstance(result.output, DeferredToolRequests):
        stop = state.view.pending_stop() or Stop(
            reason="interrupted",
            detail=f"waiting on {len(result.output.calls) + len(result.output.approvals)} "
            "deferred tool call(s)",
        )
        return state.finish(stop, messages=transcript, harness=harness)
    if state.view.halted is None:
        stop = Stop(reason="invalid_response", detail="the agent ended without a contract decision")
        return state.finish(stop, messages=transcript, harness=harness)
    return state.finish(messages=transcript, harness=harness)


async def _adrive(
    agent: Agent[Any, Any], mode: Mode, options: dict[str, Any], streamed: set[str]
) -> AgentRunResult[Any]:
    if mode == "stream":
        return await stream_events(agent, options, streamed)
    result: AgentRunResult[Any] = await agent.run(**options)
    return result


def _run_options(
    state: RunState,
    messages: Sequence[Message],
    deferred_tool_results: DeferredToolResults | None,
) -> tuple[ContractCapability, dict[str, Any]]:
    """The run's capability and the keywords of ``agent.run``: the last user turn is the
    prompt (unless deferred calls are answered), the turns before it the history."""
    turns = list(messages)
    prompt: str | None = None
    if deferred_tool_results is None and turns and turns[-1].role == "user":
        prompt = turns.pop().content
    capability = ContractCapability(state)
    options = {
        "message_history": to_pydantic_messages(turns) or None,
        "capabilities": [capability],
        "usage_limits": NO_USAGE_LIMITS,
        "user_prompt": prompt,
        "deferred_tool_results": deferred_tool_results,
    }
    return capability, options


def drive_agent(
    agent: Agent[Any, Any],
    state: RunState,
    messages: Sequence[Message],
    *,
    mode: Mode = "run_sync",
    deferred_tool_results: DeferredToolResults | None = None,
    streamed: set[str] | None = None,
) -> RunResult:
    """Run ``agent`` once under ``state`` and build the RunResult.

    Args:
        agent: from :func:`build_agent` (or any agent with a
            :class:`~agent_contract_pydantic_ai.tools.ContractToolset` of
            ``state.view.contract``).
        state: from ``contract.start()`` or ``contract.restore(...)``.
        messages: the conversation (a system prompt, earlier turns, then the new user
            turn; or a paused run's transcript when resuming).
        mode: ``"run_sync"``, ``"run"`` or ``"stream"``.
        deferred_tool_results: the answers to a paused run's deferred calls.
        streamed: with ``"stream"``, filled with the id of every tool-call part the event
            stream carried (see :func:`check_streamed`).

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: an unknown ``mode``, or bad wiring.
        RunInterrupted: Ctrl-C, a signal or ``SystemExit`` interrupted the run; it carries
            the run paused ``interrupted`` (resume it with :func:`resume_agent`).
    """
    if mode not in MODES:
        raise ConfigurationError(f"unknown mode {mode!r}; expected one of {MODES}")
    harness = "pydantic-ai" if mode == "run_sync" else f"pydantic-ai-{mode}"
    if deferred_tool_results is None:
        # PydanticAI repairs a history before any hook sees it (it drops a tool result
        # whose call is not there): the contract checks the one it was handed first.
        stop = state.check_before_model_call(messages, count_step=False)
        if stop is not None:
            return state.finish(stop, messages=messages, harness=harness)
    capability, options = _run_options(state, messages, deferred_tool_results)
    if mode == "run_sync":
        _no_running_loop("run_sync")
    claim_client_loop(
        options.get("model") or agent.model, _thread_loop() if mode == "run_sync" else _RUN_LOOP
    )

    def run() -> AgentRunResult[Any]:
        if mode == "run_sync":
            result: AgentRunResult[Any] = run_sync_on_own_loop(agent, options)
            return result
        seen = streamed if streamed is not None else set()
        return run_in_new_loop(lambda: _adrive(agent, mode, options, seen))

    with capture_run_messages() as captured:
        return _settle(state, run, captured, capability, harness)


def _interrupted(
    state: RunState, exc: BaseException, captured: Sequence[ModelMessage], harness: str
) -> None:
    """Ctrl-C, SIGTERM or SystemExit (not an ``Exception``): the run pauses
    ``interrupted`` with the transcript so far, the model's last response included (the
    snapshot is all a resume has).

    Raises:
        RunInterrupted: carrying that result.
    """
    if isinstance(exc, Exception):
        return
    transcript = ledger_view(state, from_pydantic_messages(captured))
    with interruptible(state, transcript, harness=harness):
        raise exc


def _ended(
    state: RunState,
    exc: BaseException,
    captured: Sequence[ModelMessage],
    capability: ContractCapability,
    harness: str,
) -> RunResult:
    """The RunResult of a run that raised ``exc``: the contract's stop, or a model that
    failed on the event stream (``model_error``).

    Raises:
        RunInterrupted: ``exc`` is an interruption (see :func:`_interrupted`).
        BaseException: ``exc`` itself, when it is none of these.
    """
    if isinstance(exc, ContractStopped):
        return _finish_stopped(state, exc, captured, harness)
    _interrupted(state, exc, captured, harness)
    model_failed = isinstance(exc, Exception) and not isinstance(exc, RAISED_THROUGH)
    if model_failed and capability.awaiting_model:
        failed = ContractStopped(capability.model_failed(exc))
        return _finish_stopped(state, failed, captured, harness)
    raise exc


def _settle(
    state: RunState,
    run: Callable[[], AgentRunResult[Any]],
    captured: Sequence[ModelMessage],
    capability: ContractCapability,
    harness: str,
) -> RunResult:
    """``run()``, and the RunResult of how it ended."""
    try:
        result = run()
    except BaseException as exc:  # noqa: BLE001 - an interruption pauses the run
        return _ended(state, exc, captured, capability, harness)
    return _finish(state, result, harness)


async def adrive_agent(
    agent: Agent[Any, Any],
    state: RunState,
    messages: Sequence[Message],
    *,
    deferred_tool_results: DeferredToolResults | None = None,
) -> RunResult:
    """:func:`drive_agent` with ``await agent.run`` in the running event loop
    (``harness`` is ``"pydantic-ai-run"``).

    Raises:
        ScriptExhaustedError, ConfigurationError: as :func:`drive_agent`.
    """
    if deferred_tool_results is None:
        stop = state.check_before_model_call(messages, count_step=False)
        if stop is not None:
            return state.finish(stop, messages=messages, harness="pydantic-ai-run")
    capability, options = _run_options(state, messages, deferred_tool_results)
    with capture_run_messages() as captured:
        try:
            result = await _adrive(agent, "run", options, set())
        except BaseException as exc:  # noqa: BLE001 - an interruption pauses the run
            return _ended(state, exc, captured, capability, "pydantic-ai-run")
    return _finish(state, result, "pydantic-ai-run")
