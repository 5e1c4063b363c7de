"""The contract as ``create_agent`` middleware: a thin driver of the core RunState.

Two middleware instances, both wrap hooks only (composed inside the model and tools
nodes: no extra graph steps):

- :class:`ContractMiddleware`, **outermost**: before the model, it closes the last batch
  (a call another middleware answered without running it is recorded ``not_run``) and
  checks deadline, trace size and step budget; it hides the contract's stop messages
  from the model and offers only allowlisted tools; after the model, it judges the
  response (shape, ids, arguments) and plans the whole batch (tool-call budget,
  identical repeats, allowlist, JSON-Schema validation) before any call runs. On the
  tool side it answers refused calls without running them, validates arguments an
  outer layer rewrote, and runs admitted calls through the contract's executor
  (timeout, serializer, size limit, classified errors).
- :class:`~agent_contract_langchain.gate.ContractGate` (``ContractMiddleware.inner()``),
  **innermost**: counts every provider call, filters the final tool list, vouches for
  the model's real messages and reports every tool execution (see its module).

A stop is a marked ``AIMessage`` without tool calls at the end of the model node's
result (:mod:`agent_contract_langchain.stops`): ``create_agent`` ends the run on it
whatever other middleware does, and the halted run refuses any further model or tool
call. The run's state travels in the config (:func:`~agent_contract_langchain.run_config.
contract_config`), so the graph's ``context=`` stays the team's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.structured_output import StructuredOutputError
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_config
from langgraph.types import Command

from agent_contract.errors import ConfigurationError, ScriptExhaustedError, ToolError
from agent_contract.results import error_content
from agent_contract.runtime import Contract, PlannedCall, RunState, Stop
from agent_contract.tools import ToolContext

from ._inline_hooks import install as install_inline_hooks
from .approvals import awrite_in_graph, write_in_graph
from .attribution import model_hook_failure
from .control import CONTROL_FLOW, ResumeRefused, aguard_resume, guard_resume
from .gate import (
    ContractGate,
    allowed_tools,
    is_gate_refusal,
    visible_arguments,
    with_visible_arguments,
)
from .graph_commands import split_command
from .messages import ai_message_to_completion, escaped_ai_message, from_langchain_messages
from .run_config import RunNotes, notes_for, run_state_in
from .stops import is_stop_message, stop_message, without_stops
from .structured import answer_format_of
from .tools import (
    RawValue,
    current_tool_context,
    to_langchain_tool,
    to_tool_message,
)

__all__ = ["ContractMiddleware"]

_NOT_A_MODEL_FAILURE: Final[tuple[type[BaseException], ...]] = (
    ScriptExhaustedError,
    ConfigurationError,
    NotImplementedError,
    *CONTROL_FLOW,
)
"""Raised through, not turned into ``model_error``: a dry script (a test bug), miswiring
(e.g. a sync-only middleware under ``ainvoke``: LangChain raises NotImplementedError),
or LangGraph's control flow; a model failure is anything else."""

_FOREIGN: Final = "answered by another middleware without running"


class _ToolReportedError(ToolError):
    """A foreign tool (or a layer inside the contract) answered with an error message."""


def _unparsed(exc: BaseException) -> Stop:
    """The stop for a structured answer LangChain's own parser refused (the model's
    reply is not the structure asked for)."""
    return Stop(
        reason="invalid_response",
        detail=f"the structured answer is not the structure asked for ({type(exc).__name__})",
    )


def _unplanned(call_id: str, name: str) -> ToolMessage:
    """The answer to a call the contract never admitted (nothing is recorded: the
    ledger knows only the calls the model issued through the contract)."""
    return ToolMessage(
        content=error_content(
            "not_allowed",
            "this call was not admitted by the contract",
            outcome="not_run",
            side_effects_possible=False,
        ),
        tool_call_id=call_id,
        name=name,
        status="error",
    )


class ContractMiddleware(AgentMiddleware):
    """Enforces a :class:`~agent_contract.runtime.Contract` inside ``create_agent``.

    Put it first and its gate last::

        contract_mw = ContractMiddleware(contract)
        create_agent(model, tools, middleware=contract_mw.around(*your_middleware))
        # = [contract_mw, *your_middleware, contract_mw.inner()]

    and invoke the graph with ``config=contract_config(contract.start(), config)`` (or
    use :func:`~agent_contract_langchain.run_graph`, which also sets the recursion limit).

    Args:
        contract: the tools' allowlist, budget, redaction and executor. Its registry
            must name the tools given to ``create_agent``; a LangChain tool that is
            not registered is neither offered to the model nor run.

    Raises:
        ConfigurationError: at the first model call, when the stack has no gate
            (``inner()``), or when the graph was invoked without the run's config.
    """

    def __init__(self, contract: Contract) -> None:
        super().__init__()
        install_inline_hooks()  # LangSmith's hook wrappers inline while it does not trace
        self.contract = contract
        self.gate_seen = False
        self._gate: ContractGate | None = None

    @property
    def name(self) -> str:
        """Middleware name used by ``create_agent``."""
        return "AgentContract"

    def inner(self) -> ContractGate:
        """The gate to put last in the middleware list (one per ContractMiddleware)."""
        if self._gate is None:
            self._gate = ContractGate(self)
        return self._gate

    def around(self, *middleware: Any) -> list[Any]:
        """``[self, *middleware, self.inner()]``: the list to give ``create_agent``."""
        return [self, *middleware, self.inner()]

    # -- model -------------------------------------------------------------------------

    def _stop(
        self, state: RunState, stop: Stop, head: Sequence[Any] = (), refusals: Sequence[Any] = ()
    ) -> ModelResponse[Any]:
        state.halt(stop)
        redaction = self.contract.redaction
        messages = [to_tool_message(r, redaction) for r in refusals]
        halted = state.view.halted or stop
        kept = [m for m in head if not isinstance(m, ToolMessage)]  # the contract answers
        return ModelResponse(result=[*kept, *messages, stop_message(state, halted)])

    def _before(
        self, request: ModelRequest[Any]
    ) -> tuple[RunState, RunNotes, int, ModelResponse[Any] | None, ModelRequest[Any]]:
        state = run_state_in(get_config(), self.contract)
        notes = notes_for(state)
        # Only the open batch can be answered by another layer: its tool messages
        # follow the last AIMessage (walk back to it, not the whole history).
        start = len(request.messages)
        while start and not isinstance(request.messages[start - 1], AIMessage):
            start -= 1
        for message in request.messages[start:]:
            if isinstance(message, ToolMessage) and not is_gate_refusal(message):
                state.layers.refuse_unrun(str(message.tool_call_id), _FOREIGN)
        # The history grows by a turn per step: only what was added since the last
        # step is read here (the gate re-reads every message, changed in place or not).
        kept, history = notes.history.read(request.messages, without_stops, from_langchain_messages)
        stop = state.check_before_model_call(history, count_step=False)
        if stop is not None:
            return state, notes, notes.provider_calls, self._stop(state, stop), request
        request = request.override(
            messages=kept,
            tools=allowed_tools(self.contract, request.tools),
        )
        return state, notes, notes.provider_calls, None, request

    def _unvouched(self, state: RunState, notes: RunNotes) -> ModelResponse[Any]:
        if notes.provider_error is not None:
            stop = Stop(
                reason="model_error",
                detail=f"the model raised {notes.provider_error}; a middleware answered "
                "in its place",
            )
        else:
            stop = Stop(
                reason="middleware_stop",
                detail="a middleware returned a model response the model did not produce",
            )
        return self._stop(state, stop)

    def _after(
        self,
        state: RunState,
        notes: RunNotes,
        calls_before: int,
        request: ModelRequest[Any],
        response: ModelResponse[Any] | AIMessage,
    ) -> ModelResponse[Any]:
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        if state.view.halted is not None:  # the gate refused the call (budget, or a stop)
            if any(is_stop_message(m) for m in response.result):
                return response
            return self._stop(state, state.view.halted, [])
        if notes.provider_calls == calls_before and not self.gate_seen:
            raise ConfigurationError(
                "ContractMiddleware needs its gate innermost: create_agent(..., "
                "middleware=contract_middleware.around(*yours)), i.e. "
                "[contract_middleware, *yours, contract_middleware.inner()]"
            )
        ai = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        if ai is not None and (safe := escaped_ai_message(ai)) is not ai:
            # The text rule: the graph state holds escaped text; the verdict reads `ai`.
            result = [safe if m is ai else m for m in response.result]
            response = ModelResponse(
                result=result, structured_response=response.structured_response
            )
        if ai is None:
            return self._stop(
                state, Stop(reason="invalid_response", detail="the model returned no AIMessage")
            )
        if ai.id is None or ai.id not in notes.vouched:
            return self._unvouched(state, notes)
        answer = answer_format_of(getattr(request, "response_format", None), self.contract)
        verdict = state.accept_response(ai_message_to_completion(ai), answer=answer)
        if verdict.shape == "final":
            state.halt(Stop(reason="answered"), verdict.text, verdict.structured)
            return response
        if verdict.shape == "refused_answer":  # the model is told, and answers again
            refused = verdict.refusals[0]
            kept = [
                m
                for m in response.result
                if not (isinstance(m, ToolMessage) and m.tool_call_id == refused.tool_call_id)
            ]
            reply = to_tool_message(refused, self.contract.redaction)
            return ModelResponse(result=[*kept, reply], structured_response=None)
        if verdict.shape == "invalid":
            stop = verdict.stop or Stop(reason="invalid_response")
            return self._stop(state, stop, response.result, verdict.refusals)
        plan = state.plan_tool_calls(verdict.calls)
        if plan.stop is not None:  # refused whole: every call holds its refusal
            refusals = [p.refusal for p in plan.calls if p.refusal is not None]
            return self._stop(state, plan.stop, response.result, refusals)
        return response

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """Budget checks, allowlisted tools, response judgment, batch planning."""
        state, notes, calls, early, request = self._before(request)
        if early is not None:
            return early
        try:
            response = handler(request)
        except _NOT_A_MODEL_FAILURE:
            raise
        except StructuredOutputError as exc:
            return self._stop(state, _unparsed(exc))
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return self._stop(state, model_hook_failure(exc, notes, calls))
        return self._after(state, notes, calls, request, response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        state, notes, calls, early, request = self._before(request)
        if early is not None:
            return early
        try:
            response = await handler(request)
        except _NOT_A_MODEL_FAILURE:
            raise
        except StructuredOutputError as exc:
            return self._stop(state, _unparsed(exc))
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return self._stop(state, model_hook_failure(exc, notes, calls))
        return self._after(state, notes, calls, request, response)

    # -- tools -------------------------------------------------------------------------

    def _answer(self, state: RunState, request: Any) -> tuple[PlannedCall | None, Any]:
        """``(planned, None)`` for a call to run, or ``(None, message)`` to answer now."""
        call_id = str(request.tool_call.get("id") or "")
        planned = state.view.planned_call(call_id)
        redaction = self.contract.redaction
        answered = state.view.result_for(call_id)  # also a task re-run on resume after a signal
        if answered is not None:
            return None, to_tool_message(answered, redaction)
        if planned is None:
            return None, _unplanned(call_id, str(request.tool_call.get("name", "")))
        if planned.refusal is not None:
            return None, to_tool_message(planned.refusal, redaction)
        arguments = visible_arguments(request.tool, request.tool_call.get("args"))
        updated = state.layers.rewrite_arguments(
            call_id, arguments, by="a middleware outside the contract"
        )
        if updated is None:
            return planned, None
        if updated.refusal is not None:
            return None, to_tool_message(state.record_result(updated.refusal), redaction)
        return updated, None

    def _prepared(self, request: Any, planned: PlannedCall) -> Any:
        prepared = with_visible_arguments(request, planned.arguments)
        if prepared.tool is None and planned.spec is not None:
            # A tool another middleware added at run time, registered with the contract:
            # the contract supplies it (LangChain's tool node knows only its own).
            prepared = prepared.override(tool=to_langchain_tool(planned.spec))
        return prepared

    def _unwrap(self, output: Any, state: RunState, call_id: str) -> Any:
        """The raw value inside what the tool handler returned."""
        if isinstance(output, Command):
            message, update = split_command(output, call_id)
            notes_for(state).command_updates[call_id] = update
            output = message
        if isinstance(output, ToolMessage):
            if output.status == "error":
                raise _ToolReportedError("the tool reported an error")
            if isinstance(output.artifact, RawValue):
                return output.artifact.value
            return output.content
        return output

    def _reply(self, state: RunState, result: Any) -> ToolMessage | Command[Any]:
        message = to_tool_message(result, self.contract.redaction)
        update = notes_for(state).command_updates.pop(result.tool_call_id, None)
        if update is None or result.status != "success":
            return message
        state.layers.record_state_update(result.tool_call_id, sorted(update))
        return Command(update={**update, "messages": [message]})

    def wrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer refused calls; run admitted ones under the contract's executor."""
        state = run_state_in(request.runtime.config, self.contract)
        planned, early = self._answer(state, request)
        if planned is None:
            return early  # type: ignore[no-any-return]
        if planned.approval is not None:
            prepared = self._prepared(request, planned)

            def run_write(arguments: dict[str, Any]) -> Any:
                output = handler(with_visible_arguments(prepared, arguments))
                return self._unwrap(output, state, planned.call_id)

            return write_in_graph(state, planned, self.contract.redaction, run_write)
        prepared = self._prepared(request, planned)
        call_id = planned.call_id

        def invoke(context: ToolContext) -> Any:
            current_tool_context.set(context)
            output = guard_resume(lambda: handler(prepared))
            state.layers.answered_unrun(call_id)
            return self._unwrap(output, state, call_id)

        try:
            result = state.execute(planned, invoke, passthrough=CONTROL_FLOW)
        except ResumeRefused as exc:
            raise exc.error from None
        return self._reply(state, result)

    async def awrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call` (an async tool is cancelled at its timeout)."""
        state = run_state_in(request.runtime.config, self.contract)
        planned, early = self._answer(state, request)
        if planned is None:
            return early  # type: ignore[no-any-return]
        if planned.approval is not None:
            prepared = self._prepared(request, planned)

            def arun_write(arguments: dict[str, Any]) -> Awaitable[Any]:
                return handler(with_visible_arguments(prepared, arguments))

            def unwrap(output: Any) -> Any:
                return self._unwrap(output, state, planned.call_id)

            return await awrite_in_graph(
                state, planned, self.contract.redaction, arun_write, unwrap
            )
        prepared = self._prepared(request, planned)
        call_id = planned.call_id

        async def ainvoke(context: ToolContext) -> Any:
            current_tool_context.set(context)
            output = await aguard_resume(lambda: handler(prepared))
            state.layers.answered_unrun(call_id)
            return self._unwrap(output, state, call_id)

        try:
            result = await state.aexecute(planned, ainvoke, passthrough=CONTROL_FLOW)
        except ResumeRefused as exc:
            raise exc.error from None
        return self._reply(state, result)
