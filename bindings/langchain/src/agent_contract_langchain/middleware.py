"""The contract as ``create_agent`` middleware: a thin driver of the core RunState.

:class:`ContractMiddleware` uses only the two wrap hooks, which are composed inside
the model and tools nodes (no extra graph steps):

- ``wrap_model_call`` / ``awrap_model_call``: checks the step budget, deadline and
  trace size before the model runs; offers only allowlisted tools; judges the
  response (shape, ids, arguments); plans the whole batch of tool calls (tool-call
  budget, identical repeats, allowlist, JSON-Schema validation) before any runs. A
  stop ends the graph with ``jump_to="end"`` and leaves the reason in the
  :class:`~agent_contract.runtime.RunState` (and in the ``agent_contract_stop`` state
  key); every refused call gets its bound error ``ToolMessage``. No ``AIMessage`` is
  invented, so a stop can never look like an answer.
- ``wrap_tool_call`` / ``awrap_tool_call``: answers refused calls without running
  them and runs admitted calls through the contract's executor (timeout,
  serializer, size limit, classified errors). A tool exception never escapes.

The run's state travels in the graph's runtime context: invoke the agent with
``context=ContractContext(run_state)`` (the harness in
:mod:`agent_contract_langchain.harness` does it).

It does not use ``ModelCallLimitMiddleware``, ``ToolCallLimitMiddleware`` or the
recursion limit: their semantics differ from the contract's and changed between
releases (see docs and ``shared/LANGCHAIN_NOTES.md``).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Final, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from agent_contract.approval import Approval
from agent_contract.errors import (
    ApprovalError,
    ConfigurationError,
    ScriptExhaustedError,
    ToolError,
)
from agent_contract.results import error_content
from agent_contract.runtime import Contract, PlannedCall, RunState, Stop
from agent_contract.tools import ToolContext

from .messages import ai_message_to_completion, escaped_ai_message
from .tools import RawValue, current_tool_context, to_tool_message

__all__ = [
    "APPROVAL_INTERRUPT",
    "STOP_KEY",
    "ContractAgentState",
    "ContractContext",
    "ContractMiddleware",
]

APPROVAL_INTERRUPT: Final = "agent_contract.approval"
"""``type`` of the interrupt payload a write call raises while it waits for a decision."""

_NOT_A_MODEL_FAILURE: Final = (ScriptExhaustedError, ConfigurationError, NotImplementedError)
"""Raised through, not turned into ``model_error``: a dry script (a test bug) or
miswiring, e.g. a sync-only middleware under ``ainvoke`` (LangChain raises
NotImplementedError); a model failure is anything else."""

STOP_KEY: Final = "agent_contract_stop"
"""Private graph-state key holding ``{"reason", "detail"}`` once the contract stopped the
run; not in ``invoke``/``stream`` output (read ``graph.get_state(config).values`` or
``RunState.halted``)."""


class ContractAgentState(AgentState[Any]):
    """``AgentState`` plus the contract's stop record."""

    agent_contract_stop: NotRequired[Annotated[dict[str, str] | None, PrivateStateAttr]]


@dataclass(frozen=True)
class ContractContext:
    """The runtime context a contract agent is invoked with."""

    run_state: RunState
    """The core state of this run (usage, ledger, trace)."""


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        function = tool.get("function", tool)
        return str(function.get("name", ""))
    return str(getattr(tool, "name", ""))


class _ToolReportedError(ToolError):
    """A foreign tool returned an error ToolMessage (kind ``tool_error``)."""


def _unwrap(output: Any) -> Any:
    """The raw value inside what a LangChain tool handler returned."""
    if isinstance(output, ToolMessage):
        if output.status == "error":
            raise _ToolReportedError("the tool reported an error")
        if isinstance(output.artifact, RawValue):
            return output.artifact.value
        return output.content
    if isinstance(output, Command):
        raise _ToolReportedError("the tool returned a graph Command, which the contract refuses")
    return output


class ContractMiddleware(AgentMiddleware[ContractAgentState, Any, Any]):
    """Enforces an :class:`~agent_contract.runtime.Contract` inside ``create_agent``.

    Args:
        contract: the tools' allowlist, budget, redaction and executor. Its registry
            must name the tools given to ``create_agent``; a LangChain tool that is
            not registered is refused as ``unknown_tool``.
    """

    state_schema = ContractAgentState

    def __init__(self, contract: Contract) -> None:
        super().__init__()
        self.contract = contract

    @property
    def name(self) -> str:
        """Middleware name used by ``create_agent``."""
        return "AgentContract"

    # -- shared ------------------------------------------------------------------------

    def _run_state(self, runtime: Any) -> RunState:
        context = getattr(runtime, "context", None)
        if isinstance(context, ContractContext) and context.run_state.contract is self.contract:
            return context.run_state
        raise ConfigurationError(
            "ContractMiddleware needs context=ContractContext(contract.start()) for the same "
            "Contract; use agent_contract_langchain.run_agent or ContractAgent"
        )

    def _stop_response(
        self, state: RunState, stop: Stop, messages: list[Any], model_result: list[Any]
    ) -> ExtendedModelResponse[Any]:
        state.halt(stop)
        update: dict[str, Any] = {
            "jump_to": "end",
            **self._stop_update(stop),
        }
        if messages:
            update["messages"] = messages
        return ExtendedModelResponse(
            model_response=ModelResponse(result=model_result), command=Command(update=update)
        )

    def _stop_update(self, stop: Stop) -> dict[str, Any]:
        """The graph-state record of a stop (detail redacted: the state may be stored)."""
        detail = self.contract.redaction.redact(stop.detail)
        return {STOP_KEY: {"reason": stop.reason, "detail": detail}}

    def _before(
        self, request: ModelRequest[Any]
    ) -> tuple[RunState, Stop | None, ModelRequest[Any]]:
        state = self._run_state(request.runtime)
        stop = state.check_before_model_call()
        allowed = [t for t in request.tools if self.contract.is_allowed(_tool_name(t))]
        return state, stop, request.override(tools=allowed)

    def _after(
        self, state: RunState, response: ModelResponse[Any] | AIMessage
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        ai = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        if ai is not None and (safe := escaped_ai_message(ai)) is not ai:
            # The text rule: the graph state holds escaped text; the verdict reads `ai`.
            result = [safe if m is ai else m for m in response.result]
            response = ModelResponse(
                result=result, structured_response=response.structured_response
            )
        if ai is None:
            return self._stop_response(
                state,
                Stop(reason="invalid_response", detail="the model returned no AIMessage"),
                [],
                response.result,
            )
        verdict = state.accept_response(ai_message_to_completion(ai))
        redaction = self.contract.redaction
        if verdict.shape == "final":
            state.halt(Stop(reason="answered"), verdict.text)
            return ExtendedModelResponse(
                model_response=response,
                command=Command(update=self._stop_update(Stop(reason="answered"))),
            )
        if verdict.shape == "invalid":
            stop = verdict.stop or Stop(reason="invalid_response")
            messages = [to_tool_message(r, redaction) for r in verdict.refusals]
            return self._stop_response(state, stop, messages, response.result)
        plan = state.plan_tool_calls(verdict.calls)
        if plan.stop is not None:  # refused whole: every call holds its refusal
            messages = [to_tool_message(p.refusal, redaction) for p in plan.calls if p.refusal]
            return self._stop_response(state, plan.stop, messages, response.result)
        return response

    def _model_failed(self, state: RunState, exc: Exception) -> ExtendedModelResponse[Any]:
        return self._stop_response(state, Stop.model_error(exc), [], [])

    # -- model hooks -------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Budget checks, allowlisted tools, response judgment, batch planning."""
        state, stop, request = self._before(request)
        if stop is not None:
            return self._stop_response(state, stop, [], [])
        try:
            response = handler(request)
        except _NOT_A_MODEL_FAILURE:
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return self._model_failed(state, exc)
        return self._after(state, response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async :meth:`wrap_model_call`."""
        state, stop, request = self._before(request)
        if stop is not None:
            return self._stop_response(state, stop, [], [])
        try:
            response = await handler(request)
        except _NOT_A_MODEL_FAILURE:
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return self._model_failed(state, exc)
        return self._after(state, response)

    # -- tool hooks --------------------------------------------------------------------

    def _planned(self, request: ToolCallRequest) -> tuple[RunState, PlannedCall | None, str]:
        state = self._run_state(request.runtime)
        call_id = str(request.tool_call.get("id") or "")
        return state, state.planned_call(call_id), call_id

    def _unplanned(self, call_id: str, request: ToolCallRequest) -> ToolMessage:
        return ToolMessage(
            content=error_content(
                "not_allowed",
                "this call was not admitted by the contract",
                outcome="not_run",
                side_effects_possible=False,
            ),
            tool_call_id=call_id,
            name=str(request.tool_call.get("name", "")),
            status="error",
        )

    def _prepared(self, request: ToolCallRequest, planned: PlannedCall) -> ToolCallRequest:
        call = dict(request.tool_call)
        call["args"] = copy.deepcopy(planned.arguments)
        return request.override(tool_call=call)  # type: ignore[arg-type]

    def _write(self, state: RunState, planned: PlannedCall) -> ToolMessage:
        """A write call: wait for a decision (``interrupt``), then run it once.

        Nothing with a side effect happens before ``interrupt()``: the preview ran when
        the batch was planned (in the model node, which does not re-run on resume), and
        on resume this task starts again from the top, finds the decision and writes.
        A decision recorded by the harness before resuming is used as it is; a resume
        value given straight to ``Command(resume=...)`` is checked the same way.
        """
        pending = planned.approval
        if pending is None:
            raise ConfigurationError("_write() needs a call waiting for approval")
        if state.decision_for(planned.call_id) is None:
            answer = interrupt(
                {"type": APPROVAL_INTERRUPT, "run_id": state.run_id, **pending.to_dict()}
            )
            decisions = answer.get("decisions", []) if isinstance(answer, dict) else []
            state.resume(
                [
                    Approval.from_dict(d)
                    for d in decisions
                    if isinstance(d, dict) and d.get("tool_call_id") == planned.call_id
                ]
            )
        result = state.result_for(planned.call_id)
        if result is None:
            if state.decision_for(planned.call_id) is None:
                raise ApprovalError(
                    f"resumed without a decision for {planned.call_id!r}",
                    tool_call_id=planned.call_id,
                )
            result = state.execute(planned)  # with the decided arguments (an edit's)
        return to_tool_message(result, self.contract.redaction)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer refused calls; run admitted ones under the contract's executor."""
        state, planned, call_id = self._planned(request)
        if planned is None:
            return self._unplanned(call_id, request)
        if planned.refusal is not None:
            return to_tool_message(planned.refusal, self.contract.redaction)
        if planned.approval is not None:
            return self._write(state, planned)
        prepared = self._prepared(request, planned)

        def invoke(context: ToolContext) -> Any:
            current_tool_context.set(context)
            return _unwrap(handler(prepared))

        result = state.execute(planned, invoke)
        return to_tool_message(result, self.contract.redaction)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call` (an async tool is cancelled at its timeout)."""
        state, planned, call_id = self._planned(request)
        if planned is None:
            return self._unplanned(call_id, request)
        if planned.refusal is not None:
            return to_tool_message(planned.refusal, self.contract.redaction)
        if planned.approval is not None:
            return await asyncio.to_thread(
                contextvars.copy_context().run, self._write, state, planned
            )
        prepared = self._prepared(request, planned)

        async def ainvoke(context: ToolContext) -> Any:
            current_tool_context.set(context)
            return _unwrap(await handler(prepared))

        result = await state.aexecute(planned, ainvoke)
        return to_tool_message(result, self.contract.redaction)
