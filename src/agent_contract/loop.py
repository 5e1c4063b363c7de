"""The offline reference harness: a deterministic, bounded tool-calling loop.

It is a thin driver of :class:`~agent_contract.runtime.RunState` (the driver protocol
is in its docstring); every rule lives in :mod:`agent_contract.runtime`. The LangChain
middleware drives the same operations, so both harnesses agree by construction and the
contract suite proves they still do.

Parallel tool calls run concurrently on the contract's worker pool and their tool
messages are appended in the order the model issued the calls. A write call pauses the
run with ``pending_approval`` (the result carries a JSON ``snapshot``); :func:`resume`
continues it, in this process or another, once a human has decided.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, Unpack

from .approval import Approval
from .errors import ConfigurationError, ModelError, ScriptExhaustedError
from .messages import Completion, Message
from .model import Model
from .runtime import (
    Contract,
    ResumeOptions,
    RunInput,
    RunOptions,
    RunResult,
    RunState,
    Stop,
    interruptible,
)
from .runtime.history import keeps_refused_turn
from .tools import ToolRegistry, ToolSpec

__all__ = ["resume", "run", "run_child", "run_input"]

_Ended = TypeVar("_Ended")


def run(
    model: Model,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    max_output_tokens: int = 512,
    temperature: float = 0.0,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Run ``model`` on ``user_message`` under the contract and return the result.

    The keyword front door of :func:`run_input`: it builds the run's
    :class:`~agent_contract.runtime.RunInput` from its keywords and the Contract from
    ``tools``, and nothing else.

    Args:
        model: anything with ``complete(messages, tools, max_output_tokens, temperature)``.
        tools: a :class:`Contract` (then ``budget``, ``allowlist``, ``redaction`` and
            ``secrets`` must be left unset), a registry, or tool specs.
        user_message: the new user turn.
        max_output_tokens: passed to the model, in tokens.
        temperature: passed to the model.
        **options: the run's keywords, each optional (see
            :class:`~agent_contract.runtime.RunOptions`): ``budget`` (default
            ``Budget()``), ``history`` (earlier turns, replayed in order before the new
            turn), ``allowlist`` (default: all registered), ``redaction`` (``secrets``
            are added to it), ``secrets`` (never in the trace, tool messages or output),
            ``system`` (sent first), ``caller`` (the identity the run acts for, in
            ToolContext), ``context`` (values for context-aware tools), ``run_id``
            (default: a random id).

    Returns:
        A :class:`RunResult`; ``output`` is set only when ``stop_reason == "answered"``;
        for ``pending_approval`` it carries ``pending_approvals`` and ``snapshot``.

    Raises:
        ScriptExhaustedError: a scripted model ran dry (a test bug; never a stop).
        ConfigurationError: bad wiring (also when a Contract is combined with options).
    """
    request = RunInput.of(user_message, **options)
    return run_input(
        model,
        request.contract(tools),
        request,
        max_output_tokens=max_output_tokens,
        temperature=temperature,
    )


def run_input(
    model: Model,
    contract: Contract,
    options: RunInput,
    *,
    max_output_tokens: int = 512,
    temperature: float = 0.0,
    state: RunState | None = None,
) -> RunResult:
    """Run ``model`` on ``options`` under ``contract``: the one signature every driver of
    the offline loop calls (:func:`run` builds its ``options`` from keywords; harnesses
    and durable runners pass theirs on).

    Args:
        model: anything with ``complete(messages, tools, max_output_tokens, temperature)``.
        contract: the run's contract, usually ``options.contract(tools)`` (the loop reads
            no contract setting from ``options``).
        options: the run's input: its system message, history and user message are sent
            in that order; its run id, caller and context start the run. A decider,
            extras and a crash plan are a harness's business (see
            :func:`agent_contract.harnesses.offline_harness`).
        max_output_tokens: passed to the model, in tokens.
        temperature: passed to the model.
        state: the run, already begun by ``options.start(contract)`` (a harness whose
            tools need it first: the offline sub-agent hook); default: begun here.

    Returns:
        As :func:`run`.

    Raises:
        ScriptExhaustedError: a scripted model ran dry (a test bug; never a stop).
    """
    if state is None:
        state = options.start(contract)
    return _drive(model, state, options.messages(), max_output_tokens, temperature)


def run_child(
    model: Model,
    contract: Contract,
    state: RunState,
    call_id: str,
    user: str,
    *,
    max_output_tokens: int = 512,
    temperature: float = 0.0,
) -> str | None:
    """Run a child agent, ``model`` on ``user`` under ``contract`` (made from the run's
    by :meth:`~agent_contract.runtime.contract.Contract.child`), as the child scope of the tool
    call ``call_id`` of ``state`` (the run, or the scope, whose call it is): the offline
    loop's agent delegation, called from the handler of that call. Its answer goes back
    to the call; any other stop ends the whole run (see docs/MULTI_AGENT.md).

    Returns:
        The child's answer; ``None`` when it was stopped (the run halts with that stop).

    Raises:
        ChildScopeRefused: ``contract`` is not made from the run's (the run halts).
        ScriptExhaustedError: a scripted model ran dry.
    """
    state = contract.start(parent=state, parent_call_id=call_id)

    def end(
        stop: Stop,
        *,
        messages: Sequence[Message],
        output: str | None = None,
        structured: Any = None,
    ) -> str | None:
        # A child scope ends as a framework's child agent does: halted (an answer goes
        # back to the call, any other stop ends the run), no result of its own.
        state.halt(stop, output, structured)
        return output if stop.reason == "answered" else None

    messages = [Message(role="user", content=user)]
    return _drive_until(model, state, messages, max_output_tokens, temperature, end)


def resume(
    model: Model,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    max_output_tokens: int = 512,
    temperature: float = 0.0,
    **options: Unpack[ResumeOptions],
) -> RunResult:
    """Continue a run paused with ``pending_approval``, after human decisions.

    Order of work, so that a crash at any point is safe: the decisions are checked and
    recorded, the snapshot is handed to ``checkpoint`` (store it durably), and only then
    do approved writes run (each settles an unknown outcome first; see
    :mod:`agent_contract.runtime.writes`). Decisions recorded by an earlier, crashed resume are
    carried out again with no new decision needed, and a write that already happened
    is verified, not repeated.

    Args:
        model: the model (a stateless script continues where it stopped).
        contract: the same tools and budget the run started with.
        snapshot: ``RunResult.snapshot`` or a stored copy.
        approvals: decisions for some or all pending calls.
        **options: the resume's keywords (see
            :class:`~agent_contract.runtime.ResumeOptions`): ``context``, application
            values for context-aware tools; ``checkpoint``, stores a snapshot durably
            (called before any write runs).

    Raises:
        ApprovalError: a decision does not fit (nothing runs, nothing is recorded).
        CheckpointError: the snapshot cannot be restored.
    """
    state, transcript = contract.restore(snapshot, context=options.get("context"))
    checkpoint = options.get("checkpoint")
    with interruptible(state, transcript):
        for planned in state.resume(approvals, checkpoint=checkpoint, transcript=transcript):
            state.execute(planned)
    messages = state.view.batch_messages()
    if messages is None:
        return state.finish(
            state.view.pending_stop() or Stop(reason="pending_approval"), messages=transcript
        )
    transcript.extend(messages)
    return _drive(model, state, transcript, max_output_tokens, temperature)


def _answers(state: RunState) -> list[Message]:
    """The tool messages of a batch whose every call has its result."""
    messages = state.view.batch_messages()
    if messages is None:
        raise ConfigurationError("a call of the batch has no result (a driver bug)")
    return messages


def _drive(
    model: Model,
    state: RunState,
    transcript: list[Message],
    max_output_tokens: int,
    temperature: float,
) -> RunResult:
    """Drive the run ``state`` to its stop and finish it (:meth:`RunState.finish`)."""
    return _drive_until(model, state, transcript, max_output_tokens, temperature, state.finish)


def _drive_until(
    model: Model,
    state: RunState,
    transcript: list[Message],
    max_output_tokens: int,
    temperature: float,
    end: Callable[..., _Ended],
) -> _Ended:
    """Drive ``state`` to its stop; ``end(stop, messages=..., output=...,
    structured=...)`` ends it (:meth:`RunState.finish`, the result, for a run)."""
    with interruptible(state, transcript):
        offered = state.view.contract.offered_tools()
        answer = state.view.contract.answer_format
        if answer is not None:  # the answer tools are offered beside the run's tools
            offered = [*offered, *answer.definitions()]
        while True:
            stop = state.check_before_model_call(transcript)
            if stop is not None:
                return end(stop, messages=transcript)
            try:
                completion = model.complete(
                    list(transcript),
                    tools=offered or None,
                    max_output_tokens=max_output_tokens,
                    temperature=temperature,
                )
                if not isinstance(completion, Completion):
                    raise ModelError(
                        f"model returned {type(completion).__name__}, not a Completion"
                    )
            except ScriptExhaustedError:
                raise
            except Exception as exc:  # noqa: BLE001 - any model failure stops the run, typed
                return end(Stop.model_error(exc), messages=transcript)

            verdict = state.accept_response(completion)
            if verdict.shape == "invalid" and not keeps_refused_turn(verdict.violations):
                # A turn no answer makes a valid history of: kept out of the messages
                # handed forward (the refusal is in the trace and the result).
                return end(verdict.stop or Stop(reason="invalid_response"), messages=transcript)
            transcript.append(
                Message(role="assistant", content=completion.text, tool_calls=verdict.calls)
            )
            if verdict.shape == "final":
                if verdict.accepted is not None:  # a structured answer's call, answered
                    transcript.append(verdict.accepted.to_message())
                return end(
                    Stop(reason="answered"),
                    messages=transcript,
                    output=verdict.text,
                    structured=verdict.structured,
                )
            if verdict.shape == "refused_answer":  # the model is told, and answers again
                transcript.extend(r.to_message() for r in verdict.refusals)
                continue
            if verdict.shape == "invalid":
                transcript.extend(r.to_message() for r in verdict.refusals)
                return end(verdict.stop or Stop(reason="invalid_response"), messages=transcript)

            plan = state.plan_tool_calls(verdict.calls)
            if plan.stop is not None:  # refused whole: every call already holds its refusal
                transcript.extend(_answers(state))
                return end(plan.stop, messages=transcript)
            # Start every runnable call, then wait for each in issue order.
            waiters = [state.submit(p) for p in plan.runnable]
            for wait in waiters:
                wait()
            paused = state.view.pending_stop()
            if paused is not None:
                return end(paused, messages=transcript)
            transcript.extend(_answers(state))
