"""The contract as a PydanticAI capability: :class:`ContractCapability`, a thin driver of the
core :class:`~agent_contract.runtime.RunState` (the peer of the LangChain binding's
``ContractMiddleware``).

One capability per run (``agent.run(..., capabilities=[ContractCapability(state)])``),
always the outermost layer (``get_ordering``), so it judges what every other capability
made of a request and a response. Its hooks:

- ``wrap_run``: makes the run's state reachable by the
  :class:`~agent_contract_pydantic_ai.tools.ContractToolset` (a context variable);
- ``wrap_model_request``: before the model, checks the history the model is about to get
  (``invalid_history``), the deadline, the trace size and the step budget, and offers only
  the allowlisted tools; after it, judges the response (shape, ids, arguments) and plans
  the whole batch (tool-call budget, repeats, allowlist, JSON Schema) before any call
  runs. A model that raises is ``model_error``. Every stop raises
  :class:`ContractStopped`, before PydanticAI acts on the response: a stopped run never
  returns an answer (:func:`~agent_contract_pydantic_ai.harness.run_agent` turns the
  exception into the run's :class:`~agent_contract.runtime.RunResult`);
- ``wrap_tool_execute``: a call the contract refused (or never planned: another toolset's
  tool) is answered with its bound refusal and never runs;
- ``before_output_validate``: a structured answer the contract refused is sent back to
  the model (PydanticAI's output retry), so it answers again;
- ``after_node_run``: the tool results the model gets next are the ledger's, one per call,
  in the order the model issued them (PydanticAI's own answers, e.g. to a tool name it
  does not know, are replaced by the contract's).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from pydantic_ai import CallToolsNode, ModelRequestNode
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import CapabilityOrdering
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.messages import (
    ModelRequestPart,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestContext

from agent_contract.errors import ConfigurationError, ScriptExhaustedError
from agent_contract.messages import Message, ToolCall
from agent_contract.results import ToolResult
from agent_contract.runtime import AnswerFormat, ChildScopeRefused, Contract, RunState, Stop
from agent_contract.runtime.history import keeps_refused_turn
from agent_contract.text import escape_value

from .messages import ConvertedHistory, response_to_completion, tool_return_part
from .tools import current_call, current_run_state, deliver, not_admitted

__all__ = ["RAISED_THROUGH", "ContractCapability", "ContractStopped", "ledger_view", "said"]

_NOT_A_MODEL_FAILURE: Final[tuple[type[BaseException], ...]] = (
    ScriptExhaustedError,
    ConfigurationError,
)
"""Raised through, not turned into ``model_error``: a dry script (a test bug) or miswiring."""


class ContractStopped(Exception):
    """The contract ended the run: it is never an answer.

    Raised out of ``agent.run`` (and every other way to drive the agent) by
    :class:`ContractCapability`; :func:`~agent_contract_pydantic_ai.harness.run_agent`
    catches it and finishes the run with :attr:`stop`.
    """

    def __init__(
        self,
        stop: Stop,
        *,
        response: Message | None = None,
        refusals: Sequence[ToolResult] = (),
        keep: bool = True,
    ) -> None:
        super().__init__(f"{stop.reason}: {stop.detail}" if stop.detail else stop.reason)
        self.stop = stop
        """The contract's stop."""
        self.response = response
        """The refused model response as the transcript records it, if one was refused."""
        self.refusals = tuple(refusals)
        """The bound refusals that answer its calls, in issue order."""
        self.keep = keep
        """Whether the refused response stays in the run's messages: ``False`` for one
        no answer makes a valid history of (see
        :func:`~agent_contract.runtime.history.keeps_refused_turn`)."""


RAISED_THROUGH: Final[tuple[type[BaseException], ...]] = (ContractStopped, *_NOT_A_MODEL_FAILURE)
"""Raised through a model call unchanged: the contract's stop, a dry script, miswiring."""


def _issue_order(calls: Sequence[ToolCallPart]) -> dict[str, int]:
    return {call.tool_call_id: index for index, call in enumerate(calls)}


def _escaped_arguments(response: ModelResponse, calls: Sequence[ToolCall]) -> ModelResponse:
    """``response`` with the text rule applied to its calls' arguments: a call whose
    judged arguments hold a lone surrogate gets them escaped, as an object (as in every
    :class:`~agent_contract.messages.Message`); otherwise ``response`` itself. A real
    model sends arguments as JSON text: PydanticAI would validate that text itself and
    echo the raw surrogate in its retry prompt, which no client can encode in the next
    request (stop ``model_error``); the contract's refusal is what answers the call."""
    judged = {c.id: c for c in calls}
    parts = []
    changed = False
    for part in response.parts:
        call = judged.get(part.tool_call_id) if isinstance(part, ToolCallPart) else None
        if call is not None and isinstance(call.arguments, dict):
            escaped, found = escape_value(call.arguments)
            if found:
                part = dataclasses.replace(part, args=escaped)
                changed = True
        parts.append(part)
    return dataclasses.replace(response, parts=parts) if changed else response


@dataclasses.dataclass(init=False)
class ContractCapability(AbstractCapability[Any]):
    """Enforces the contract of ``state`` inside one PydanticAI agent run (see the module doc).

    Args:
        state: the run, from ``contract.start()`` (or ``contract.restore(...)``).
        answer: the structured answer the run asks for (default: the contract's
            ``answer_format``); its answer tools are the agent's output tools.
    """

    state: RunState
    answer: AnswerFormat | None
    awaiting_model: bool
    _after_seen: bool
    _judge_after: bool
    _history: ConvertedHistory

    def __init__(self, state: RunState, *, answer: AnswerFormat | None = None) -> None:
        self.state = state
        self._history = ConvertedHistory()
        """The run's history as converted at its last model request (only what is new
        or changed is converted again)."""
        self.answer = answer if answer is not None else state.view.contract.answer_format
        self._after_seen = False
        self._judge_after = False
        self.awaiting_model = False
        """True from the model call until its response is judged: on the event stream a
        model that fails raises out of the stream, past this capability's hooks, and the
        driver turns it into ``model_error`` with :meth:`model_failed`."""

    def model_failed(self, exc: BaseException) -> Stop:
        """The ``model_error`` stop for a model that raised where no hook of this
        capability saw it (the event stream); the run is halted with it."""
        self.awaiting_model = False
        self.state.halt(Stop.model_error(exc))
        return self.state.view.halted or Stop.model_error(exc)

    def get_ordering(self) -> CapabilityOrdering:
        """Always the outermost capability."""
        return CapabilityOrdering(position="outermost")

    # -- the run ---------------------------------------------------------------------

    @classmethod
    def child(
        cls, contract: Contract, *, agent: str | None = None, answer: AnswerFormat | None = None
    ) -> ContractCapability:
        """The capability of a child agent started inside the contract tool call being
        run (PydanticAI's agent delegation: a tool that runs another ``Agent``): a child
        scope of that call's run under ``contract`` (its own ledger and allowlist; the
        run's budget, trace and stop; see docs/MULTI_AGENT.md)::

            async def ask(question: str) -> str:
                out = await researcher.run(
                    question, capabilities=[ContractCapability.child(researcher_contract)]
                )
                return out.output

        Args:
            contract: the child's contract, made from the run's by ``Contract.child``.
            agent: the child agent's name; default: the one ``Contract.child`` gave.
            answer: as the constructor's.

        Raises:
            ConfigurationError: not inside a contract tool call (no run to be a child
                of).
            ChildScopeRefused: ``contract`` is not made from the run's (see
                ``Contract.start``); the run halts with ``middleware_stop``.
        """
        outer = current_call.get()
        if outer is None:
            raise ConfigurationError(
                "ContractCapability.child runs only inside a contract tool call (a tool of "
                "a ContractToolset run under its ContractCapability)"
            )
        state, call_id = outer
        return cls(contract.start(parent=state, parent_call_id=call_id, agent=agent), answer=answer)

    def _refuse_nested_run(self) -> None:
        """Refuse a top-level run started inside another run's contract tool call: its
        budget would not be the run's (a fresh ``contract.start()`` for an inner agent).

        Raises:
            ChildScopeRefused: this capability's run is not a child scope and another
                run's tool call is being run; that run halts with ``middleware_stop``.
        """
        outer = current_call.get()
        if outer is None or self.state.view.scope is not None or outer[0] is self.state:
            return
        state, call_id = outer
        agent = self.state.view.contract.agent or "agent"
        named = f"agent {agent!r}" if self.state.view.contract.agent else "an agent"
        error = ChildScopeRefused(
            f"{named} started inside tool call {call_id!r} of a contract run runs under a "
            "run of its own (a fresh contract.start()): its model steps and tool calls "
            "would not be charged to the run. It is refused: run it with "
            "capabilities=[ContractCapability.child(contract.child(name, tools=...))] "
            "(see docs/MULTI_AGENT.md)",
            agent=agent,
            call_id=call_id,
        )
        state.halt(Stop(reason="middleware_stop", detail=str(error)))
        raise error

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        """Run with the state reachable by the contract's toolset.

        Raises:
            ChildScopeRefused: a run of its own started inside another run's contract
                tool call (see :meth:`child`).
        """
        self._refuse_nested_run()
        token = current_run_state.set(self.state)
        try:
            return await handler()
        finally:
            # Reset from another context (a cancelled stream) raises ValueError: harmless.
            with contextlib.suppress(ValueError):
                current_run_state.reset(token)

    # -- the model ---------------------------------------------------------------------

    def _stop(
        self,
        stop: Stop,
        *,
        response: Message | None = None,
        refusals: Any = (),
        keep: bool = True,
    ) -> None:
        state = self.state
        state.halt(stop)
        raise ContractStopped(
            state.view.halted or stop, response=response, refusals=refusals, keep=keep
        )

    async def wrap_model_request(
        self, ctx: Any, *, request_context: ModelRequestContext, handler: Any
    ) -> ModelResponse:
        """Check before the model call, then judge the response and plan its batch (see
        the module doc and :meth:`judge`), once every other layer had its say.

        Raises:
            ContractStopped: the contract ends the run.
        """
        state = self.state
        history = self._history.convert(request_context.messages)
        stop = state.check_before_model_call(history)
        if stop is not None:
            self._stop(stop)
        params = request_context.model_request_parameters
        contract = state.view.contract
        request_context.model_request_parameters = dataclasses.replace(
            params,
            function_tools=[t for t in params.function_tools if contract.is_allowed(t.name)],
        )
        self.awaiting_model = True
        self._after_seen = False
        try:
            response: ModelResponse = await handler(request_context)
        except RAISED_THROUGH:
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            self.awaiting_model = False
            self._stop(Stop.model_error(exc))
        # (on the event stream a cancelled handler leaves it set: the failure surfaces
        # in the stream's consumer, where the driver reads it)
        self.awaiting_model = False
        if self._after_seen:  # after_model_request hooks ran inside: judge what they made
            return self.judge(response)
        self._judge_after = True  # older PydanticAI: they run after this hook returns
        return response

    async def after_model_request(
        self, ctx: Any, *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """Where PydanticAI calls the other capabilities' ``after_model_request`` after
        every ``wrap_model_request`` returned (older releases: 2.16 and 2.30 measured), this one runs last
        and judges the response they made.

        Raises:
            ContractStopped: the contract ends the run.
        """
        if self._judge_after:
            self._judge_after = False
            return self.judge(response)
        self._after_seen = True
        return response

    def judge(self, response: ModelResponse) -> ModelResponse:
        """Judge the model's response and plan its batch (see the module doc).

        Raises:
            ContractStopped: the response breaks the contract, or its batch is refused.
        """
        state = self.state
        completion = response_to_completion(response)
        verdict = state.accept_response(completion, answer=self.answer)
        if verdict.shape == "final":
            state.halt(Stop(reason="answered"), verdict.text, verdict.structured)
            return response
        if verdict.shape == "refused_answer":  # PydanticAI's output retry tells the model
            return response
        said = Message(role="assistant", content=completion.text, tool_calls=verdict.calls)
        if verdict.shape == "invalid":
            kept = keeps_refused_turn(verdict.violations)
            self._stop(
                verdict.stop or Stop(reason="invalid_response"),
                response=said,
                refusals=verdict.refusals if kept else (),
                keep=kept,
            )
        plan = state.plan_tool_calls(verdict.calls)
        if plan.stop is not None:  # refused whole: every call holds its refusal
            refusals = [p.refusal for p in plan.calls if p.refusal is not None]
            self._stop(plan.stop, response=said, refusals=refusals)
        return _escaped_arguments(response, verdict.calls)

    # -- tools and answers -------------------------------------------------------------

    async def wrap_tool_execute(
        self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any, handler: Any
    ) -> Any:
        """Answer a refused or unplanned call with the contract's result; run the rest.

        Raises:
            ToolFailed: the call's bound refusal.
        """
        state = self.state
        planned = state.view.planned_call(call.tool_call_id)
        if planned is None:
            answered = state.view.result_for(call.tool_call_id)
            if answered is not None:
                return deliver(answered)
            not_admitted()
        if planned.refusal is not None:
            return deliver(planned.refusal)
        return await handler(args)

    async def before_output_validate(self, ctx: Any, *, output_context: Any, output: Any) -> Any:
        """Send a structured answer the contract refused back to the model.

        Raises:
            ModelRetry: with the contract's refusal (PydanticAI binds it to the call).
        """
        call = getattr(output_context, "tool_call", None)
        if call is not None:
            answered = self.state.view.result_for(call.tool_call_id)
            if answered is not None and not answered.ok:
                raise ModelRetry(answered.content)
        return output

    async def after_node_run(self, ctx: Any, *, node: Any, result: Any) -> Any:
        """Make the next request's tool results the ledger's, in issue order."""
        if isinstance(node, CallToolsNode) and isinstance(result, ModelRequestNode):
            calls = [p for p in node.model_response.parts if isinstance(p, ToolCallPart)]
            result.request.parts = self.ledger_parts(result.request.parts, _issue_order(calls))
        return result

    def ledger_parts(
        self, parts: Sequence[ModelRequestPart], order: dict[str, int]
    ) -> list[ModelRequestPart]:
        """``parts`` with every tool result the ledger holds replaced by the ledger's,
        the tool results first, in ``order`` (call id -> issue position)."""
        answers: list[tuple[int, ModelRequestPart]] = []
        others: list[ModelRequestPart] = []
        for part in parts:
            if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id:
                answered = self.state.view.result_for(part.tool_call_id)
                kept = tool_return_part(answered) if answered is not None else part
                answers.append((order.get(part.tool_call_id, len(order)), kept))
            else:
                others.append(part)
        answers.sort(key=lambda item: item[0])
        return [*(part for _, part in answers), *others]


def ledger_view(state: RunState, messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every tool message the ledger answers replaced by the ledger's
    (the contract's content, redacted, bound to the call)."""
    out: list[Message] = []
    for message in messages:
        if message.role == "tool" and message.tool_call_id:
            answered = state.view.result_for(message.tool_call_id)
            if answered is not None:
                out.append(answered.to_message())
                continue
        out.append(message)
    return out


def said(calls: Sequence[ToolCall], text: str) -> Message:
    """The assistant turn of a response, as the transcript records it."""
    return Message(role="assistant", content=text, tool_calls=tuple(calls))
