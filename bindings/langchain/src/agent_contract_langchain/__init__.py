"""agent-contract bound to LangChain: ``create_agent`` middleware, a scripted chat model,
message and tool mappings, and a harness that returns the core ``RunResult``.

The names below load their module (and LangChain) on first use, so the core's registry
can read this package's harnesses and commands (:mod:`agent_contract_langchain.plugin`,
:mod:`agent_contract_langchain.commands`) without importing LangChain.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from .chat_model import ContractChatModel
    from .harness import MODES, build_agent, run_agent, run_graph
    from .messages import (
        ai_message_to_completion,
        completion_to_ai_message,
        from_langchain,
        from_langchain_messages,
        to_langchain,
        to_langchain_messages,
    )
    from .middleware import ContractContext, ContractMiddleware
    from .tools import to_langchain_tool, to_langchain_tools, to_tool_message

__all__ = [
    "MODES",
    "ContractChatModel",
    "ContractContext",
    "ContractMiddleware",
    "ai_message_to_completion",
    "build_agent",
    "completion_to_ai_message",
    "from_langchain",
    "from_langchain_messages",
    "run_agent",
    "run_graph",
    "to_langchain",
    "to_langchain_messages",
    "to_langchain_tool",
    "to_langchain_tools",
    "to_tool_message",
]

_HOMES: dict[str, str] = {
    "MODES": "harness",
    "ContractChatModel": "chat_model",
    "ContractContext": "middleware",
    "ContractMiddleware": "middleware",
    "ai_message_to_completion": "messages",
    "build_agent": "harness",
    "completion_to_ai_message": "messages",
    "from_langchain": "messages",
    "from_langchain_messages": "messages",
    "run_agent": "harness",
    "run_graph": "harness",
    "to_langchain": "messages",
    "to_langchain_messages": "messages",
    "to_langchain_tool": "tools",
    "to_langchain_tools": "tools",
    "to_tool_message": "tools",
}


def __getattr__(name: str) -> _Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
