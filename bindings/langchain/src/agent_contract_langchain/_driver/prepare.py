"""Before the framework runs a call: what the contract decides first.

Each finds the run first (:mod:`~agent_contract_langchain.run_config`) and gives the
step the later phases read.

- :func:`prepare_model_call`: the last batch closed (a call another middleware answered
  without running it is recorded ``not_run``), the checks before a model step
  (deadline, trace size, step budget, the history), the contract's stop messages hidden
  from the model, only allowlisted tools offered (a :class:`ModelStep`); or the stop
  that ends the run.
- :func:`prepare_tool_call`: the answer to a call that must not run (answered before,
  never admitted, refused when planned, or refused after an outer layer rewrote its
  arguments), else :class:`Admitted`: its plan and the request to run it with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_config

from agent_contract.results import error_content
from agent_contract.runtime import Contract, PlannedCall, RunState

from .._memo import Unconverted
from ..gate import is_gate_refusal
from ..messages import from_langchain_messages
from ..run_config import RunNotes, run_in, run_state_in
from ..stops import stop_response, without_stops
from ..tools import to_langchain_tool, to_tool_message
from .requests import (
    allowed_tools,
    check_child_offer,
    visible_arguments,
    with_visible_arguments,
)

__all__ = ["Admitted", "ModelStep", "prepare_model_call", "prepare_tool_call"]

_FOREIGN: Final = "answered by another middleware without running"


@dataclass(frozen=True, slots=True)
class ModelStep:
    """A model call the contract lets through."""

    state: RunState
    """The run."""
    notes: RunNotes
    """The binding's notes on it."""
    contract: Contract
    """The run's contract."""
    request: ModelRequest[Any]
    """The request to send on: the history the model is shown, the allowed tools."""
    calls_before: int
    """The provider calls the gate had let through before this step."""


def prepare_model_call(
    contract: Contract, request: ModelRequest[Any]
) -> ModelStep | ModelResponse[Any]:
    """The :class:`ModelStep` to run, or the response that stops the run (see the
    module doc).

    Raises:
        ConfigurationError: the graph was invoked without the run's config.
        ChildScopeRefused: a child agent's contract is not made from the run's, or
            registers none of the tools its model is offered.
    """
    state, notes = run_in(get_config(), contract)
    check_child_offer(state, contract, request.tools)
    notes.offer_checked = True  # the gate of this model call need not check it again
    # Only the open batch can be answered by another layer: its tool messages
    # follow the last AIMessage (walk back to it, not the whole history).
    messages = request.messages
    start = len(messages)
    while start and not isinstance(messages[start - 1], AIMessage):
        start -= 1
    for message in messages[start:]:
        if isinstance(message, ToolMessage) and not is_gate_refusal(message):
            state.layers.refuse_unrun(str(message.tool_call_id), _FOREIGN)
    # The history grows by a turn per step: only what was added since the last
    # step is read here (the gate sees a message changed in place: it compares every
    # message it takes over with a copy of what it read).
    # A history over the budget's length is refused unconverted (the core reads its
    # length first); the contract's own stop messages count in it here.
    if len(messages) > state.view.contract.budget.max_history_messages:
        stop = state.check_before_model_call(Unconverted(len(messages)), count_step=False)
        if stop is not None:
            return stop_response(state, stop)
    kept, history = notes.history.read(messages, without_stops, from_langchain_messages)
    stop = state.check_before_model_call(history, count_step=False)
    if stop is not None:
        return stop_response(state, stop)
    request = request.override(messages=kept, tools=allowed_tools(contract, request.tools))
    return ModelStep(state, notes, contract, request, notes.provider_calls)


@dataclass(frozen=True, slots=True)
class Admitted:
    """A tool call the contract admitted."""

    state: RunState
    """The run."""
    contract: Contract
    """The run's contract."""
    planned: PlannedCall
    """Its plan (the arguments it runs with: an outer layer's rewrite, when valid)."""
    request: Any
    """The tool-call request to run it with: those arguments, the injected ones kept,
    and the tool (the contract's, for a tool another middleware added)."""


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


def prepare_tool_call(contract: Contract, request: Any) -> Admitted | ToolMessage:
    """The message answering ``request`` now, or the :class:`Admitted` call to run (see
    the module doc).

    Raises:
        ConfigurationError: the graph was invoked without the run's config.
    """
    state = run_state_in(request.runtime.config, contract)
    call_id = str(request.tool_call.get("id") or "")
    planned = state.view.planned_call(call_id)
    answered = state.view.result_for(call_id)  # also a task re-run on resume after a signal
    if answered is not None:
        return to_tool_message(answered)
    if planned is None:
        return _unplanned(call_id, str(request.tool_call.get("name", "")))
    if planned.refusal is not None:
        return to_tool_message(planned.refusal)
    arguments = visible_arguments(request.tool, request.tool_call.get("args"))
    updated = state.layers.rewrite_arguments(
        call_id, arguments, by="a middleware outside the contract"
    )
    if updated is not None:
        if updated.refusal is not None:
            return to_tool_message(state.record_result(updated.refusal))
        planned = updated
    prepared = with_visible_arguments(request, planned.arguments)
    if prepared.tool is None and planned.spec is not None:
        # A tool another middleware added at run time, registered with the contract:
        # the contract supplies it (LangChain's tool node knows only its own).
        prepared = prepared.override(tool=to_langchain_tool(planned.spec))
    return Admitted(state, contract, planned, prepared)
