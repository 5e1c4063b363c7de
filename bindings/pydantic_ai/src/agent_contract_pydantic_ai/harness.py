"""Running a PydanticAI ``Agent`` under the contract, returning the same
:class:`~agent_contract.runtime.RunResult` as the offline loop.

Three ways to drive the agent, all through the same capability and toolset:

- ``"run_sync"``: ``agent.run_sync``;
- ``"run"``: ``await agent.run`` (on an event loop of its own; :func:`arun_agent` runs in
  the caller's);
- ``"stream"``: ``agent.run_stream_events``: every tool call must arrive as a streamed
  tool-call part (checked), and the final ``AgentRunResultEvent`` gives the result.

Each run gets a :class:`~agent_contract_pydantic_ai.capability.ContractCapability` of its
own and ``UsageLimits(request_limit=None)``: the contract owns every budget (PydanticAI's
default of 50 requests, and its tool-call limit that counts only successful calls, would
end a run with an exception and no named stop). A stop the contract reaches raises
:class:`~agent_contract_pydantic_ai.capability.ContractStopped` inside the run, and the
run finishes with that stop: no stop is ever returned as an answer.

A write call pauses the run (PydanticAI ends it with ``DeferredToolRequests``; the result
is ``pending_approval`` with a snapshot). :func:`resume_agent` continues it from the
snapshot alone, in this process or another: the contract checks the decisions (bound to
the exact call: run id, call id, tool, canonical arguments), rebuilds the PydanticAI
history from the snapshot's transcript, and answers PydanticAI's deferred calls; the
approved writes run through the contract (preview, idempotency key, verification) with the
decided arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Unpack

from pydantic_ai.models import Model as PydanticModel
from pydantic_ai.tools import DeferredToolResults, ToolApproved, ToolDenied

from agent_contract.approval import Approval
from agent_contract.delegation import RunChild
from agent_contract.harnesses import Harness, RunInput, settle_approvals
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.runtime import (
    Contract,
    ResumeOptions,
    RunOptions,
    RunResult,
    interruptible,
)
from agent_contract.tools import ToolContext, ToolRegistry, ToolSpec

from .capability import ContractCapability
from .driving import (
    Mode,
    adrive_agent,
    build_agent,
    check_streamed,
    drive_agent,
    stream_events,
)
from .model import contract_model

__all__ = [
    "arun_agent",
    "child_runner",
    "resume_agent",
    "run_agent",
    "run_agent_input",
    "suite_harness",
]


def run_agent(
    model: Model | PydanticModel,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    mode: Mode = "run_sync",
    agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """The PydanticAI twin of :func:`agent_contract.run`: the same arguments (less
    ``max_output_tokens`` and ``temperature``, which belong to the model), the same result
    (``harness`` is ``"pydantic-ai"``, ``"pydantic-ai-run"`` or ``"pydantic-ai-stream"``).

    The keyword front door of :func:`run_agent_input`: it builds the run's
    :class:`~agent_contract.runtime.RunInput` from its keywords, and nothing else.

    Args:
        mode: ``"run_sync"``, ``"run"`` or ``"stream"``.
        agent_options: passed to ``Agent`` (see :func:`build_agent`; None: none).
        **options: the run's keywords, as :func:`agent_contract.run` takes them (see
            :class:`~agent_contract.runtime.RunOptions`).

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: bad wiring (also a Contract combined with options).
    """
    request = RunInput.of(user_message, **options)
    return run_agent_input(
        model, request.contract(tools), request, mode=mode, **(agent_options or {})
    )


def run_agent_input(
    model: Model | PydanticModel,
    contract: Contract,
    options: RunInput,
    *,
    mode: Mode = "run_sync",
    **agent_options: Any,
) -> RunResult:
    """Run a PydanticAI ``Agent`` over ``contract`` on ``options`` (the one signature the
    front doors, the suite harness and the durable runner call).

    Args:
        contract: the run's contract, usually ``options.contract(tools)`` (no contract
            setting is read from ``options``).
        options: the run's input: its system message, history and user message are the
            conversation; its run id, caller and context start the run.
        mode: ``"run_sync"``, ``"run"`` or ``"stream"``.
        **agent_options: passed to ``Agent`` (see :func:`build_agent`).

    Raises:
        ScriptExhaustedError, ConfigurationError: as :func:`run_agent`.
    """
    agent = build_agent(model, contract, **agent_options)
    return drive_agent(agent, options.start(contract), options.messages(), mode=mode)


async def arun_agent(
    model: Model | PydanticModel,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """:func:`run_agent` with ``await agent.run`` in the running event loop.

    Raises:
        ScriptExhaustedError, ConfigurationError: as :func:`run_agent`.
    """
    request = RunInput.of(user_message, **options)
    contract = request.contract(tools)
    agent = build_agent(model, contract, **(agent_options or {}))
    return await adrive_agent(agent, request.start(contract), request.messages())


def _deferred(transcript: Sequence[Message]) -> list[str]:
    """The calls PydanticAI deferred: those of the last assistant turn with no tool message
    in the transcript (writes decided since the pause included; a write that already ran
    is answered from the ledger, not run again)."""
    for index in range(len(transcript) - 1, -1, -1):
        message = transcript[index]
        if message.role == "assistant":
            answered = {m.tool_call_id for m in transcript[index + 1 :] if m.role == "tool"}
            return [c.id for c in message.tool_calls if c.id and c.id not in answered]
    return []


def resume_agent(
    model: Model | PydanticModel,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
    *,
    mode: Mode = "run_sync",
    agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[ResumeOptions],
) -> RunResult:
    """Continue a run paused with ``pending_approval``, from its snapshot alone (in this
    process or another).

    The decisions are checked first (an :class:`~agent_contract.errors.ApprovalError`
    changes nothing), recorded and handed to ``checkpoint``; then the agent is run again
    on the snapshot's transcript with PydanticAI's ``DeferredToolResults``: an approved
    call runs once, through the contract, with the decided arguments; a rejected one is
    answered with its bound ``rejected`` error. While a pending call has no decision yet,
    PydanticAI is not started (it needs an answer for every deferred call): the decided
    writes run and the run stays paused, as the offline loop does.

    Args:
        agent_options: passed to the ``Agent`` (as :func:`run_agent`'s; None: none); a
            keyword outside :class:`~agent_contract.runtime.ResumeOptions` is passed to
            it too.
        **options: the resume's keywords (see
            :class:`~agent_contract.runtime.ResumeOptions`): ``context`` and
            ``checkpoint``.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot cannot be restored.
    """
    keys = ResumeOptions.__optional_keys__
    extra = {k: v for k, v in options.items() if k not in keys}
    state, transcript = contract.restore(snapshot, context=options.get("context"))
    pending = [p.tool_call_id for p in state.view.pending_approvals()]  # before rejections answer
    checkpoint = options.get("checkpoint")
    writes = state.resume(approvals, checkpoint=checkpoint, transcript=transcript)
    harness = "pydantic-ai" if mode == "run_sync" else f"pydantic-ai-{mode}"
    if any(state.view.decision_for(call_id) is None for call_id in pending):
        with interruptible(state, transcript, harness=harness):
            for planned in writes:
                state.execute(planned)
        return state.finish(messages=transcript, harness=harness)
    results = DeferredToolResults()
    for call_id in _deferred(transcript):
        decision = state.view.decision_for(call_id)
        answered = state.view.result_for(call_id)
        if decision is not None and decision.decision == "reject" and answered is not None:
            results.approvals[call_id] = ToolDenied(answered.content)
        else:
            results.approvals[call_id] = ToolApproved()
    agent = build_agent(model, contract, **{**(agent_options or {}), **extra})
    deferred = results if results.approvals else None  # e.g. resuming an interrupted run
    return drive_agent(agent, state, transcript, mode=mode, deferred_tool_results=deferred)


def child_runner(model: Model, mode: Mode = "run", streamed: set[str] | None = None) -> RunChild:
    """How the sub-agent hook's child (:attr:`RunInput.sub_agent`) runs here, as
    PydanticAI delegates: an ``Agent`` on ``model`` over the child contract, run inside
    the delegating tool call with :meth:`ContractCapability.child`; with ``"stream"``,
    through its event stream (each tool-call part's id added to ``streamed``)."""

    async def run_child(child: Contract, context: ToolContext, text: str) -> str:
        agent = build_agent(model, child)
        capability = ContractCapability.child(child)
        if mode == "stream":
            options: dict[str, Any] = {"user_prompt": text, "capabilities": [capability]}
            out = await stream_events(agent, options, set() if streamed is None else streamed)
        else:
            out = await agent.run(text, capabilities=[capability])
        return str(out.output)

    return run_child


def suite_harness(mode: Mode = "run_sync") -> Harness:
    """:func:`run_agent` in ``mode`` as a contract-suite harness (approvals answered by the
    scenario's decider through :func:`resume_agent`). With ``"stream"``, every tool call of
    the run must have come through the event stream (:func:`check_streamed`), and the
    scripted model streams in the scenario's pieces (``_streaming_model``)."""

    def harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
        run_model = _streaming_model(model, options) if mode == "stream" else model
        streamed: set[str] = set()
        plan = options.sub_agent
        if plan is None:
            contract = options.contract(tools)
        else:
            contract = plan.contract(
                tools, options.contract, child_runner(plan.model, mode, streamed)
            )
        agent = build_agent(run_model, contract)
        result = drive_agent(
            agent, options.start(contract), options.messages(), mode=mode, streamed=streamed
        )
        if mode == "stream":
            check_streamed(result, streamed)
        return settle_approvals(
            result,
            lambda snapshot, approvals, checkpoint=None: resume_agent(
                run_model, contract, snapshot, approvals, mode=mode, checkpoint=checkpoint
            ),
            options,
            restart=lambda snapshot, approvals: resume_agent(
                run_model, options.contract(tools), snapshot, approvals, mode=mode
            ),
        )

    return harness


def _streaming_model(model: Model | PydanticModel, options: RunInput) -> Model | PydanticModel:
    """``model`` as the scripted PydanticAI model a ``stream`` suite run drives: each
    reply's text and argument text streamed in the pieces the scenario's ``stream``
    extras name (:func:`agent_contract.conformance.wire_check.stream_plan`:
    ``pieces:<n>``, ``interleaved``), as the replay server sends them over SSE; a
    scenario with no plan streams as :func:`~agent_contract_pydantic_ai.model.contract_model`
    does by default. A PydanticAI model (``check --wire``'s client, whose server cuts
    the pieces) is used as it is.

    Raises:
        ConfigurationError: the ``stream`` extras name an unknown item.
    """
    from agent_contract.conformance.wire_check import stream_plan  # the suite's, not the runtime's

    if isinstance(model, PydanticModel):
        return model
    pieces, interleaved = stream_plan(options.extras)
    return contract_model(model, chunk_chars=pieces, interleave_calls=interleaved)
