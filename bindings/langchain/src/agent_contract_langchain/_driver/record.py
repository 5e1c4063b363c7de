"""After the framework ran a call: what the contract records and answers.

- :func:`record_model_response`: the model's response judged (shape, ids, arguments;
  only an ``AIMessage`` the gate saw come back from the model counts), its text
  escaped in the graph state, and the whole batch planned (tool-call budget, identical
  repeats, allowlist, JSON-Schema validation) before any call runs; or the stop.
- :func:`record_tool_result`: the ToolMessage answering a call and, for a tool that
  returned a ``Command``, its state update (applied only when the call succeeded; the
  trace records the update's key names).
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from agent_contract.errors import ConfigurationError
from agent_contract.runtime import RunState, Stop
from agent_contract.runtime.history import keeps_refused_turn

from ..messages import ai_message_to_completion, escaped_ai_message, with_judged_calls
from ..run_config import RunNotes
from ..stops import is_stop_message, stop_response
from ..structured import answer_format_of
from ..tools import to_tool_message
from .prepare import Admitted, ModelStep
from .run import Ran

__all__ = ["record_model_response", "record_tool_result"]


def _unvouched(state: RunState, notes: RunNotes) -> ModelResponse[Any]:
    """The stop for an AIMessage the model did not produce (the gate never saw it)."""
    if notes.provider_error is not None:
        stop = Stop(
            reason="model_error",
            detail=f"the model raised {notes.provider_error}; a middleware answered in its place",
        )
    else:
        stop = Stop(
            reason="middleware_stop",
            detail="a middleware returned a model response the model did not produce",
        )
    return stop_response(state, stop)


def record_model_response(
    step: ModelStep, response: ModelResponse[Any] | AIMessage, *, gate_seen: bool
) -> ModelResponse[Any]:
    """The model node's result for ``response``, the answer to ``step``'s request (see
    the module doc).

    Args:
        step: the model call (its request's ``response_format`` is read).
        response: what the handler returned.
        gate_seen: whether the contract's gate has ever run (else a response with no
            provider call means the stack has no gate).

    Raises:
        ConfigurationError: the stack has no gate innermost.
    """
    state, notes, contract = step.state, step.notes, step.contract
    if isinstance(response, AIMessage):
        response = ModelResponse(result=[response])
    if state.view.halted is not None:  # the gate refused the call (budget, or a stop)
        if any(is_stop_message(m) for m in response.result):
            return response
        return stop_response(state, state.view.halted, [])
    if notes.provider_calls == step.calls_before and not gate_seen:
        raise ConfigurationError(
            "ContractMiddleware needs its gate innermost: create_agent(..., "
            "middleware=contract_middleware.around(*yours)), i.e. "
            "[contract_middleware, *yours, contract_middleware.inner()]"
        )
    ai = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    if ai is not None and (safe := escaped_ai_message(ai)) is not ai:
        # The text rule: the graph state holds escaped text; the verdict reads `ai`.
        result = [safe if m is ai else m for m in response.result]
        response = ModelResponse(result=result, structured_response=response.structured_response)
    if ai is None:
        return stop_response(
            state, Stop(reason="invalid_response", detail="the model returned no AIMessage")
        )
    if ai.id is None or ai.id not in notes.vouched:
        return _unvouched(state, notes)
    answer = answer_format_of(getattr(step.request, "response_format", None), contract)
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
        reply = to_tool_message(refused)
        return ModelResponse(result=[*kept, reply], structured_response=None)
    if verdict.shape == "invalid":
        stop = verdict.stop or Stop(reason="invalid_response")
        if not keeps_refused_turn(verdict.violations):
            # Kept out of the thread: no answer makes a valid history of this turn.
            return stop_response(state, stop)
        return stop_response(state, stop, response.result, verdict.refusals)
    judged = next(m for m in reversed(response.result) if isinstance(m, AIMessage))
    if (runnable := with_judged_calls(judged, verdict.calls)) is not judged:
        # Arguments sent as JSON text holding an object run, as on every harness: the
        # graph routes only AIMessage.tool_calls to the tools.
        result = [runnable if m is judged else m for m in response.result]
        response = ModelResponse(result=result, structured_response=response.structured_response)
    plan = state.plan_tool_calls(verdict.calls)
    if plan.stop is not None:  # refused whole: every call holds its refusal
        refusals = [p.refusal for p in plan.calls if p.refusal is not None]
        return stop_response(state, plan.stop, response.result, refusals)
    return response


def record_tool_result(step: Admitted, ran: Ran) -> ToolMessage | Command[Any]:
    """The ToolMessage answering ``step`` with the result it ran to; with the rest of a
    ``Command``'s update when the call succeeded (recorded as the state update's key
    names)."""
    result, update = ran
    message = to_tool_message(result)
    if update is None or result.status != "success":
        return message
    step.state.layers.record_state_update(result.tool_call_id, sorted(update))
    return Command(update={**update, "messages": [message]})
