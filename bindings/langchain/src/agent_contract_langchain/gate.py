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
middleware invented is never judged an answer.

On the tool side it reports every execution as an attempt
(:meth:`~agent_contract.runtime.layers.LayerOps.record_attempt`): a retry is charged to the
tool-call budget, a write never runs twice, arguments another layer rewrote are
validated (and recorded) before they run, and an attempt that raised is noted (a
timeout makes the call's outcome unknown) before the exception goes back to the retry
layer.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.config import get_config

from agent_contract.runtime import RunState
from agent_contract.text import copy_json

from .control import CONTROL_FLOW
from .messages import from_langchain_messages
from .run_config import RunNotes, notes_for, run_state_in
from .stops import stop_message
from .tools import to_tool_message

if TYPE_CHECKING:
    from .middleware import ContractMiddleware

__all__ = [
    "ContractGate",
    "allowed_tools",
    "injected_arguments",
    "is_gate_refusal",
    "tool_name",
    "visible_arguments",
    "with_visible_arguments",
]

_GATE_REFUSAL = "agent_contract_gate"
"""Artifact key marking a ToolMessage the gate answered an attempt with."""


def tool_name(tool: Any) -> str:
    """The name of a tool in a request: a BaseTool's ``name``, or a tool dict's
    (``{"function": {"name"}}`` or ``{"name"}``); ``""`` for a nameless provider tool."""
    if isinstance(tool, dict):
        function = tool.get("function", tool)
        return str(function.get("name", "")) if isinstance(function, dict) else ""
    return str(getattr(tool, "name", ""))


_PARAMETERS: Final[weakref.WeakKeyDictionary[Any, frozenset[str]]] = weakref.WeakKeyDictionary()
"""The parameter names of a tool's function, by function (asked on every call)."""


def _parameters(func: Any) -> frozenset[str] | None:
    """The names of ``func``'s parameters (``None`` when it has no signature)."""
    try:
        return _PARAMETERS[func]
    except (KeyError, TypeError):  # not seen yet, or not weakly referable
        pass
    try:
        names = frozenset(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return None
    with contextlib.suppress(TypeError):
        _PARAMETERS[func] = names
    return names


def injected_arguments(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments LangChain injected (``ToolRuntime``, ``InjectedState``, ...) among
    ``arguments``: the tool function's parameters the model does not see. (langchain
    1.0's tool node injects them before ``wrap_tool_call``; later ones after it.)"""
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    parameters = _parameters(func) if func is not None else None
    if parameters is None:
        return {}
    hidden = parameters - set(getattr(tool, "args", {}) or {})
    return {k: v for k, v in arguments.items() if k in hidden}


def visible_arguments(tool: Any, arguments: Any) -> dict[str, Any]:
    """``arguments`` without the injected ones: what the model sent (or an editor)."""
    if not isinstance(arguments, dict):
        return {}
    injected = injected_arguments(tool, arguments)
    return {k: v for k, v in arguments.items() if k not in injected}


def with_visible_arguments(request: Any, arguments: dict[str, Any]) -> Any:
    """``request`` (a tool-call request) with the model-visible arguments replaced (an
    approved write runs with the decided ones, an edit's included); the injected ones
    are kept."""
    call = dict(request.tool_call)
    injected = injected_arguments(request.tool, dict(call.get("args") or {}))
    call["args"] = {**injected, **copy_json(arguments)}
    return request.override(tool_call=call)


def allowed_tools(contract: Any, tools: Any) -> list[Any]:
    """The registered, allowlisted tools among ``tools``, each name once (first wins);
    nameless provider-side tool dicts are left out (fail closed)."""
    kept: dict[str, Any] = {}
    for candidate in tools:
        name = tool_name(candidate)
        if name and name not in kept and contract.is_allowed(name):
            kept[name] = candidate
    return list(kept.values())


def is_gate_refusal(message: Any) -> bool:
    """True for a ToolMessage the gate answered a refused attempt with."""
    return (
        isinstance(message, ToolMessage)
        and isinstance(message.artifact, dict)
        and (_GATE_REFUSAL in message.artifact)
    )


class ContractGate(AgentMiddleware):
    """The inner half of :class:`~agent_contract_langchain.middleware.ContractMiddleware`
    (see the module doc). Build it with ``ContractMiddleware.inner()``."""

    def __init__(self, outer: ContractMiddleware) -> None:
        super().__init__()
        self.outer = outer
        self.contract = outer.contract

    @property
    def name(self) -> str:
        """Middleware name used by ``create_agent``."""
        return f"{self.outer.name}Gate"

    # -- model -------------------------------------------------------------------------

    def _before(
        self, request: ModelRequest[Any]
    ) -> tuple[RunState, RunNotes, ModelResponse[Any] | None, ModelRequest[Any]]:
        self.outer.gate_seen = True
        state = run_state_in(get_config(), self.contract)
        notes = notes_for(state)
        # The history boundary again, on what the model really gets: a middleware
        # between the two halves may have trimmed or rewritten the messages.
        stop = state.check_before_model_call(from_langchain_messages(request.messages))
        if stop is not None:
            state.halt(stop)
            return state, notes, ModelResponse(result=[stop_message(state, stop)]), request
        tools = allowed_tools(self.contract, request.tools)
        notes.provider_error = None
        notes.provider_calls += 1
        return state, notes, None, request.override(tools=tools)

    @staticmethod
    def _vouch(notes: RunNotes, response: ModelResponse[Any] | AIMessage) -> Any:
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
        _, notes, early, request = self._before(request)
        if early is not None:
            return early
        try:
            response = handler(request)
        except Exception as exc:
            notes.provider_error = type(exc).__name__
            raise
        return self._vouch(notes, response)  # type: ignore[no-any-return]

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        _, notes, early, request = self._before(request)
        if early is not None:
            return early
        try:
            response = await handler(request)
        except Exception as exc:
            notes.provider_error = type(exc).__name__
            raise
        return self._vouch(notes, response)  # type: ignore[no-any-return]

    # -- tools -------------------------------------------------------------------------

    def _attempt(self, request: Any) -> tuple[RunState, str, ToolMessage | None]:
        state = run_state_in(request.runtime.config, self.contract)
        call_id = str(request.tool_call.get("id") or "")
        arguments = visible_arguments(request.tool, request.tool_call.get("args"))
        refused = state.layers.record_attempt(
            call_id, arguments, by="a middleware inside the contract"
        )
        if refused is None:
            return state, call_id, None
        message = to_tool_message(refused, self.contract.redaction)
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
