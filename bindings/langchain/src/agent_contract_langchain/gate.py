"""The contract's inner gate: the innermost middleware, where the model and tools are
really called.

:class:`ContractMiddleware` is outermost: it judges each response and plans each batch.
What sits between it and the model or the tools (retry layers, fallbacks, tool
emulators, human review, middleware that add tools) is seen only from inside, so
``ContractMiddleware.inner()`` gives a :class:`ContractGate` to put last::

    contract_mw = ContractMiddleware(contract)
    create_agent(model, tools, middleware=[contract_mw, *yours, contract_mw.inner()])

On the model side the gate checks the history the model really gets (a trimming or
summarizing middleware between the halves may have changed it: a broken one is
``invalid_history``), counts every provider call as a model step (a retry layer's
second call included; a halted run, a broken history or a spent budget gets the stop
message, and the model is not called), offers the model only registered, allowlisted tools from the
*final* tool list (a tool another middleware added is offered only if the contract
registered it; a provider-side tool dict is never offered unless registered), and
vouches for the ``AIMessage`` the model really returned, so a message another
middleware invented is never judged an answer. A streamed reply is judged on the
argument text the model sent, not on langchain-core's repair of it
(:mod:`~agent_contract_langchain.streamed`).

On the tool side it reports every execution as an attempt
(:meth:`~agent_contract.runtime.layers.LayerOps.record_attempt`): a retry is charged to the
tool-call budget, a write never runs twice, arguments another layer rewrote are
validated (and recorded) before they run, and an attempt that raised is noted (a
timeout makes the call's outcome unknown) before the exception goes back to the retry
layer.

**The route back to the model.** A structured answer that fails its schema is refused in
the model node: the response holds the model's ``AIMessage`` and a ``ToolMessage``
answering its call, and the graph must go from the model node back to the model. Up to
langchain 1.3.x (:data:`MODEL_NODE_ROUTES_BACK` is False: measured on the installed
release by :func:`model_node_routes_back`, not by its number) ``create_agent`` gives the
model node that route only when the agent has a ``response_format`` or an ``after_model``
hook, and the run crashed inside LangGraph (``KeyError: 'model'``); from 1.4.0 a
``wrap_model_call`` hook is enough. On those releases the gate has an ``after_model``
hook that does nothing, only so that the route exists (one more graph step per model
call).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_config

from agent_contract.messages import Message
from agent_contract.runtime import Contract, RunState, Stop

from ._driver.requests import allowed_tools, check_child_offer, visible_arguments
from ._memo import Unconverted
from .control import CONTROL_FLOW
from .messages import from_langchain_messages, unbuilt_reply, with_streamed_arguments
from .run_config import RunNotes, gated, run_in, run_state_in
from .stops import stop_message
from .streamed import StreamedCalls, collecting
from .tools import to_tool_message

__all__ = ["MODEL_NODE_ROUTES_BACK", "ContractGate", "is_gate_refusal", "model_node_routes_back"]

_GATE_REFUSAL = "agent_contract_gate"
"""Artifact key marking a ToolMessage the gate answered an attempt with."""


def is_gate_refusal(message: Any) -> bool:
    """True for a ToolMessage the gate answered a refused attempt with."""
    return (
        isinstance(message, ToolMessage)
        and isinstance(message.artifact, dict)
        and (_GATE_REFUSAL in message.artifact)
    )


class _WrapsModelCalls(AgentMiddleware):
    """A middleware with a ``wrap_model_call`` hook only (for :func:`model_node_routes_back`)."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Pass the call on."""
        return handler(request)


@tool
def _nothing() -> str:
    """Returns nothing (for :func:`model_node_routes_back`)."""
    return ""


def model_node_routes_back() -> bool:
    """Whether the installed ``create_agent`` routes its model node back to the model in
    an agent with tools, a ``wrap_model_call`` hook, and neither a ``response_format``
    nor an ``after_model`` hook (True from langchain 1.4.0; see the module doc). Measured
    by building such an agent (nothing runs) and reading the model node's destinations."""
    graph = create_agent(
        GenericFakeChatModel(messages=iter(())), tools=[_nothing], middleware=[_WrapsModelCalls()]
    )
    branches = graph.builder.branches.get("model", {})
    return any("model" in (branch.ends or {}) for branch in branches.values())


MODEL_NODE_ROUTES_BACK: Final = model_node_routes_back()
""":func:`model_node_routes_back` on the installed langchain, measured once at import."""


@contextmanager
def _passed(state: RunState) -> Iterator[StreamedCalls]:
    """The block of a model call the contract gate passes: ``state`` is the gated run
    (:data:`~agent_contract_langchain.run_config.gated`) and the call's streamed
    argument text is collected into the :class:`StreamedCalls` yielded."""
    token = gated.set(state)
    try:
        with collecting() as streamed:
            yield streamed
    finally:
        gated.reset(token)


class ContractGate(AgentMiddleware):
    """The inner half of :class:`~agent_contract_langchain.middleware.ContractMiddleware`
    (see the module doc). Build it with ``ContractMiddleware.inner()``.

    Args:
        contract: the outer middleware's contract.
        name: the middleware name ``create_agent`` sees.
    """

    def __init__(self, contract: Contract, *, name: str = "AgentContractGate") -> None:
        super().__init__()
        self.contract = contract
        self.seen = False
        """Whether a model call has gone through this gate (the stack has it)."""
        self._name = name

    @property
    def name(self) -> str:
        """Middleware name used by ``create_agent``."""
        return self._name

    if not MODEL_NODE_ROUTES_BACK:
        # Only so that create_agent gives the model node its route back to the model
        # (see the module doc); it changes nothing in the state.

        def after_model(self, state: Any, runtime: Any) -> None:
            """Nothing (the route back to the model, up to langchain 1.3.x)."""
            return None

        async def aafter_model(self, state: Any, runtime: Any) -> None:
            """Nothing (the route back to the model, up to langchain 1.3.x)."""
            return None

    # -- model -------------------------------------------------------------------------

    def _before(
        self, request: ModelRequest[Any]
    ) -> tuple[RunState, RunNotes, ModelRequest[Any] | ModelResponse[Any]]:
        """``(run, notes, the request to send)``, or ``(run, notes, the stop response)``."""
        self.seen = True
        state, notes = run_in(get_config(), self.contract)
        if notes.offer_checked:  # the outer hook checked this model call's offer
            notes.offer_checked = False
        else:  # a gate without its outer hook
            check_child_offer(state, self.contract, request.tools)
        # The history boundary again, on what the model really gets: a middleware
        # between the two halves may have trimmed or rewritten the messages.
        messages = request.messages
        if len(messages) > state.view.contract.budget.max_history_messages:
            history: Sequence[Message] = Unconverted(len(messages))  # refused unread
        else:
            # Only what is new or changed since the gate's last step is converted
            # (a message edited in place is seen: CheckedHistory compares copies).
            history = notes.checked.read(messages, from_langchain_messages)
        stop = state.check_before_model_call(history)
        if stop is not None:
            state.halt(stop)
            return state, notes, ModelResponse(result=[stop_message(state, stop)])
        tools = allowed_tools(self.contract, request.tools)
        notes.provider_error = None
        notes.provider_calls += 1
        return state, notes, request.override(tools=tools)

    @staticmethod
    def _unbuilt(state: RunState, notes: RunNotes, exc: Exception) -> ModelResponse[Any] | None:
        """The ``invalid_response`` stop for a reply the client could not build because
        its arguments are not a JSON object (:func:`~agent_contract_langchain.messages.
        unbuilt_reply`), else ``None`` with the provider call's failure noted on
        ``notes`` (the caller raises ``exc`` again)."""
        why = unbuilt_reply(exc)
        if why is None:
            notes.provider_error = type(exc).__name__
            return None
        stop = Stop(reason="invalid_response", detail=f"{why} (the client could not read it)")
        state.halt(stop)
        return ModelResponse(result=[stop_message(state, stop)])

    @staticmethod
    def _vouch(
        notes: RunNotes, response: ModelResponse[Any] | AIMessage, streamed: StreamedCalls
    ) -> Any:
        """``response`` with its calls' streamed argument text put back, its AIMessages
        vouched for."""
        raw = streamed.arguments()
        if raw:
            if isinstance(response, AIMessage):
                response = with_streamed_arguments(response, raw)
            else:
                result = [
                    with_streamed_arguments(m, raw) if isinstance(m, AIMessage) else m
                    for m in response.result
                ]
                response = ModelResponse(
                    result=result, structured_response=response.structured_response
                )
        messages = [response] if isinstance(response, AIMessage) else response.result
        for message in messages:
            if isinstance(message, AIMessage) and message.id:
                notes.vouched.add(message.id)
        return response

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """Count the provider call, offer only allowed tools, vouch for the reply."""
        state, notes, prepared = self._before(request)
        if isinstance(prepared, ModelResponse):
            return prepared
        try:
            with _passed(state) as streamed:
                response = handler(prepared)
        except Exception as exc:
            unbuilt = self._unbuilt(state, notes, exc)
            if unbuilt is None:
                raise
            return unbuilt
        return self._vouch(notes, response, streamed)  # type: ignore[no-any-return]

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        state, notes, prepared = self._before(request)
        if isinstance(prepared, ModelResponse):
            return prepared
        try:
            with _passed(state) as streamed:
                response = await handler(prepared)
        except Exception as exc:
            unbuilt = self._unbuilt(state, notes, exc)
            if unbuilt is None:
                raise
            return unbuilt
        return self._vouch(notes, response, streamed)  # type: ignore[no-any-return]

    # -- tools -------------------------------------------------------------------------

    def _attempt(self, request: Any) -> tuple[RunState, str, ToolMessage | None]:
        call_id = str(request.tool_call.get("id") or "")
        state = run_state_in(request.runtime.config, self.contract, inside_call=call_id)
        arguments = visible_arguments(request.tool, request.tool_call.get("args"))
        refused = state.layers.record_attempt(
            call_id, arguments, by="a middleware inside the contract"
        )
        if refused is None:
            return state, call_id, None
        message = to_tool_message(refused)
        message.artifact = {_GATE_REFUSAL: True, **(message.artifact or {})}
        return state, call_id, message

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Report the attempt (refused ones are answered, not run); note a failure."""
        state, call_id, refused = self._attempt(request)
        if refused is not None:
            return refused
        try:
            return handler(request)
        except CONTROL_FLOW:
            raise
        except Exception as exc:
            state.layers.attempt_failed(call_id, exc)
            raise

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Async :meth:`wrap_tool_call`."""
        state, call_id, refused = self._attempt(request)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except CONTROL_FLOW:
            raise
        except Exception as exc:
            state.layers.attempt_failed(call_id, exc)
            raise
