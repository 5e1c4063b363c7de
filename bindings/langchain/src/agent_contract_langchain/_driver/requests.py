"""A LangChain model or tool-call request as the contract reads it: the names of the
tools offered, and the arguments the model sees apart from the ones LangChain injects."""

from __future__ import annotations

import contextlib
import inspect
import weakref
from typing import Any, Final

from agent_contract.runtime import ChildScopeRefused, RunState, Stop, Terms
from agent_contract.text import copy_json

__all__ = [
    "allowed_tools",
    "check_child_offer",
    "injected_arguments",
    "tool_name",
    "visible_arguments",
    "with_visible_arguments",
]


def tool_name(tool: Any) -> str:
    """The name of a tool in a request: a BaseTool's ``name``, or a tool dict's
    (``{"function": {"name"}}`` or ``{"name"}``); ``""`` for a nameless provider tool."""
    if isinstance(tool, dict):
        function = tool.get("function", tool)
        return str(function.get("name", "")) if isinstance(function, dict) else ""
    return str(getattr(tool, "name", ""))


def allowed_tools(contract: Any, tools: Any) -> list[Any]:
    """The registered, allowlisted tools among ``tools``, each name once (first wins);
    nameless provider-side tool dicts are left out (fail closed)."""
    kept: dict[str, Any] = {}
    for candidate in tools:
        name = tool_name(candidate)
        if name and name not in kept and contract.is_allowed(name):
            kept[name] = candidate
    return list(kept.values())


def check_child_offer(state: RunState, contract: Terms, tools: Any) -> None:
    """Refuse a child agent whose model is offered tools its contract registers none
    of: the child was given a contract that is not its own (the parent's, typically),
    and every call it makes would be refused as an unknown tool while the run goes on.

    Raises:
        ChildScopeRefused: in a child scope, the model is offered named tools and the
            contract registers none of them (the run halts with ``middleware_stop``).
    """
    scope = state.view.scope
    if scope is None:
        return
    offered = sorted({name for name in map(tool_name, tools or ()) if name})
    if not offered or any(name in contract.registry for name in offered):
        return
    error = ChildScopeRefused(
        f"agent {scope.agent!r}, started inside tool call {scope.call_path[-1]!r} of "
        f"a contract run, is offered the tools {offered} and its Contract registers "
        f"none of them (it registers {contract.registry.names()}): it was given a "
        "Contract that is not its own (the parent agent's?). It is refused: give it "
        "ContractMiddleware(contract.child(name, tools=[...], allowlist=[...])) "
        "built from the run's Contract with the child's tools (see docs/MULTI_AGENT.md)",
        agent=scope.agent,
        call_id=scope.call_path[-1],
    )
    state.halt(Stop(reason="middleware_stop", detail=str(error)))
    raise error


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
    hidden = parameters - _model_visible_names(tool)
    return {k: v for k, v in arguments.items() if k in hidden}


def _model_visible_names(tool: Any) -> set[str]:
    """The argument names ``tool``'s schema shows the model. ``BaseTool.args`` raises
    ``KeyError`` for a JSON Schema dict without ``properties`` (an object schema that
    allows any keys); its properties are then none."""
    try:
        return set(getattr(tool, "args", {}) or {})
    except KeyError:
        schema = getattr(tool, "args_schema", None)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        return set(properties) if isinstance(properties, dict) else set()


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
