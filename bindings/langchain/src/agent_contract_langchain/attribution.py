"""Whose exception is it: the model's, or a team's middleware's.

:func:`raising_layer` names the layer that raised: the innermost traceback frame that
runs a method of a tool (a ``BaseTool``) or of an ``AgentMiddleware`` that is not this
binding's own, so a tool's own exception is the tool's, not that of a middleware that
only passed it on (deepagents' ``FilesystemMiddleware`` wraps every tool call);
:func:`raising_middleware` names the middleware when that layer is one, and
:func:`model_failure` gives the stop for an exception raised inside the contract's
model hook: ``invalid_response`` when LangChain's structured-output parser refused the
reply, ``model_error`` only when the provider call raised, else ``middleware_stop``
naming the team's middleware (its exception's type, never its text).
:data:`NOT_A_MODEL_FAILURE` is what the hook lets through instead.
"""

from __future__ import annotations

from typing import Final

from langchain.agents.middleware.types import AgentMiddleware
from langchain.agents.structured_output import StructuredOutputError
from langchain_core.tools import BaseTool

from agent_contract.errors import ConfigurationError, ScriptExhaustedError
from agent_contract.runtime import Stop

from .control import CONTROL_FLOW
from .run_config import RunNotes

__all__ = [
    "NOT_A_MODEL_FAILURE",
    "model_failure",
    "model_hook_failure",
    "raising_layer",
    "raising_middleware",
]

NOT_A_MODEL_FAILURE: Final[tuple[type[BaseException], ...]] = (
    ScriptExhaustedError,
    ConfigurationError,
    NotImplementedError,
    *CONTROL_FLOW,
)
"""Raised through, not turned into a stop: a dry script (a test bug), miswiring
(e.g. a sync-only middleware under ``ainvoke``: LangChain raises NotImplementedError),
or LangGraph's control flow; a model failure is anything else."""

_OURS = "agent_contract_langchain."


def raising_layer(exc: BaseException) -> tuple[str, str] | None:
    """``("tool", name)`` or ``("middleware", name)``: the innermost traceback frame of
    ``exc`` that runs a method of a LangChain tool or of an ``AgentMiddleware`` (not this
    binding's), else None (the exception came from neither, e.g. LangGraph itself)."""
    found: tuple[str, str] | None = None
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, AgentMiddleware) and not type(owner).__module__.startswith(_OURS):
            found = ("middleware", str(getattr(owner, "name", type(owner).__name__)))
        elif isinstance(owner, BaseTool):
            found = ("tool", str(owner.name))
        tb = tb.tb_next
    return found


def raising_middleware(exc: BaseException) -> str | None:
    """The name of the middleware (not this binding's) whose hook raised ``exc`` (see
    :func:`raising_layer`); None when a tool raised it inside that hook (the middleware
    only passed it on) or no middleware is in the traceback."""
    layer = raising_layer(exc)
    return layer[1] if layer is not None and layer[0] == "middleware" else None


def model_hook_failure(exc: BaseException, notes: RunNotes, calls_before: int) -> Stop:
    """The stop for ``exc``, raised inside the contract's model hook: the model's
    (``model_error``) when the provider call raised (the gate noted it after
    ``calls_before`` provider calls), else the team's middleware's (``middleware_stop``,
    naming it and the exception's type)."""
    if notes.provider_calls > calls_before and notes.provider_error is not None:
        return Stop.model_error(exc)
    where = raising_middleware(exc)
    owner = f"the middleware {where!r}" if where else "a middleware (not the model)"
    return Stop(
        reason="middleware_stop",
        detail=f"{owner} raised {type(exc).__name__}; the model did not fail",
    )


def model_failure(exc: Exception, notes: RunNotes, calls_before: int) -> Stop:
    """The stop for ``exc``, a failure (not :data:`NOT_A_MODEL_FAILURE`) raised inside
    the contract's model hook: ``invalid_response`` for a structured answer LangChain's
    own parser refused (the model's reply is not the structure asked for), else
    :func:`model_hook_failure`."""
    if isinstance(exc, StructuredOutputError):
        return Stop(
            reason="invalid_response",
            detail=f"the structured answer is not the structure asked for ({type(exc).__name__})",
        )
    return model_hook_failure(exc, notes, calls_before)
