"""LangChain's and LangGraph's exceptions, translated into the contract's at one boundary.

:func:`framework_errors` wraps every call a driver makes into a compiled graph
(``invoke``, ``ainvoke``, ``stream``, ``get_state``): an exception the framework raises
becomes the contract exception that says what went wrong, chained with ``from`` and
matched most specific first, so callers handle one vocabulary
(:mod:`agent_contract.errors`). Exceptions of the contract itself, and anything that is
not the framework's, pass through unchanged.

:data:`FRAMEWORK_ERRORS` is the table. Every exception class LangGraph and LangChain
define is listed, either mapped or passed through on purpose; a test fails when a new
release adds one the table does not decide. Entries name classes by module and name, so
an older release that lacks one still imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from agent_contract.errors import (
    AgentContractError,
    CheckpointError,
    ConfigurationError,
    ModelError,
)

__all__ = ["FRAMEWORK_ERRORS", "ErrorMapping", "framework_errors", "resolved"]

ErrorMapping = tuple[str, str, type[AgentContractError] | None, str]
"""``(module, class name, contract exception or None to pass it through, why)``."""

_GRAPH = "langgraph.errors"
_CHANNELS = "langgraph.checkpoint.base"
_CORE = "langchain_core.exceptions"
_PASS = None

FRAMEWORK_ERRORS: Final[tuple[ErrorMapping, ...]] = (
    ("sqlite3", "DatabaseError", CheckpointError, "the LangGraph checkpoint cannot be read"),
    (
        _GRAPH,
        "GraphRecursionError",
        ConfigurationError,
        "the graph reached its recursion_limit before the contract's budget stopped the "
        "run; raise recursion_limit above twice max_model_steps",
    ),
    (_GRAPH, "InvalidUpdateError", ConfigurationError, "the graph is wired wrongly"),
    (_GRAPH, "EmptyInputError", ConfigurationError, "the graph was invoked with no input"),
    (
        _GRAPH,
        "UnknownInterruptError",
        CheckpointError,
        "the resume does not match the thread's pending interrupts",
    ),
    (_GRAPH, "TaskNotFound", CheckpointError, "the thread's checkpoint names a lost task"),
    (_GRAPH, "NodeCancelledError", _PASS, "a node's own failure, raised as it is"),
    (_GRAPH, "NodeTimeoutError", _PASS, "a node timeout you configured, raised as it is"),
    (_CHANNELS, "EmptyChannelError", _PASS, "LangGraph's internal signal; it never escapes"),
    (_GRAPH, "GraphDrained", _PASS, "LangGraph's control flow; it never escapes a run"),
    (_GRAPH, "NodeInterrupt", _PASS, "LangGraph's control flow; it never escapes a run"),
    (_GRAPH, "GraphInterrupt", _PASS, "LangGraph's control flow; it never escapes a run"),
    (_GRAPH, "ParentCommand", _PASS, "LangGraph's control flow; it never escapes a run"),
    (_GRAPH, "GraphBubbleUp", _PASS, "LangGraph's control flow; it never escapes a run"),
    (_CORE, "ContextOverflowError", ModelError, "the input exceeds the model's context"),
    (_CORE, "ModelRefusalError", ModelError, "the model declined to answer"),
    (_CORE, "ModelAuthenticationError", ModelError, "the model provider refused the key"),
    (_CORE, "ModelPermissionDeniedError", ModelError, "the model provider denied the request"),
    (_CORE, "ModelInvalidRequestError", ModelError, "the model provider rejected the request"),
    (_CORE, "ModelNotFoundError", ModelError, "the model does not exist"),
    (_CORE, "ModelRateLimitError", ModelError, "the model provider's rate limit was hit"),
    (_CORE, "ModelAPIError", ModelError, "the model provider failed"),
    (_CORE, "ModelConnectionError", ModelError, "the model provider cannot be reached"),
    (_CORE, "ModelTimeoutError", ModelError, "the model request timed out"),
    (_CORE, "ModelError", ModelError, "the model failed"),
    (_CORE, "OutputParserException", ModelError, "the model's output cannot be parsed"),
    (_CORE, "TracerException", _PASS, "a callback handler's own failure, raised as it is"),
    (_CORE, "LangChainException", _PASS, "LangChain's base class; its subclasses decide"),
)
"""Most specific first (a subclass before its base)."""


def resolved() -> list[tuple[type[BaseException], type[AgentContractError] | None, str]]:
    """:data:`FRAMEWORK_ERRORS` with each class looked up; classes this release of the
    framework does not define (or a framework that is not installed) are left out."""
    found = []
    for module_name, name, target, why in FRAMEWORK_ERRORS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        kind = getattr(module, name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append((kind, target, why))
    return found


_RESOLVED: Final = resolved()


@contextmanager
def framework_errors() -> Iterator[None]:
    """Translate what a graph call raises (see the module doc).

    Raises:
        CheckpointError: the checkpoint cannot be read, or a resume does not fit it.
        ConfigurationError: the graph is wired or driven wrongly.
        ModelError: a LangChain model exception escaped the model call.
    """
    try:
        yield
    except AgentContractError:
        raise
    except Exception as exc:
        for kind, target, why in _RESOLVED:
            if isinstance(exc, kind):
                if target is None:
                    raise
                raise target(f"{why}: {exc}") from exc
        raise
