"""agent-contract bound to LangChain: ``create_agent`` middleware, a scripted chat model,
message and tool mappings, and a harness that returns the core ``RunResult``.

The names below load their module (and LangChain) on first use, so the core's registry
can read this package's harnesses and commands (:mod:`agent_contract_langchain.plugin`,
:mod:`agent_contract_langchain.commands`) without importing LangChain.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from agent_contract.lazy import lazy_names as _lazy_names

if _TYPE_CHECKING:
    from .chat_model import ContractChatModel
    from .gate import ContractGate
    from .harness import MODES, arun_agent, arun_graph, build_agent, run_agent, run_graph
    from .messages import (
        ai_message_to_completion,
        completion_to_ai_message,
        from_langchain,
        from_langchain_messages,
        to_langchain,
        to_langchain_messages,
    )
    from .middleware import ContractMiddleware
    from .providers import build_chat_model
    from .resuming import aresume_agent, aresume_graph, resume_agent, resume_graph
    from .run_config import contract_config, recursion_limit
    from .stops import is_stop_message, stop_of
    from .tools import (
        from_langchain_tool,
        graph_tool,
        graph_tools,
        to_langchain_tool,
        to_langchain_tools,
        to_tool_message,
    )

__all__ = [
    "MODES",
    "ContractChatModel",
    "ContractGate",
    "ContractMiddleware",
    "ai_message_to_completion",
    "aresume_agent",
    "aresume_graph",
    "arun_agent",
    "arun_graph",
    "build_agent",
    "build_chat_model",
    "completion_to_ai_message",
    "contract_config",
    "from_langchain",
    "from_langchain_messages",
    "from_langchain_tool",
    "graph_tool",
    "graph_tools",
    "is_stop_message",
    "recursion_limit",
    "resume_agent",
    "resume_graph",
    "run_agent",
    "run_graph",
    "stop_of",
    "to_langchain",
    "to_langchain_messages",
    "to_langchain_tool",
    "to_langchain_tools",
    "to_tool_message",
]

_HOMES: dict[str, str] = {
    "MODES": "harness",
    "ContractChatModel": "chat_model",
    "ContractGate": "gate",
    "ContractMiddleware": "middleware",
    "ai_message_to_completion": "messages",
    "aresume_agent": "resuming",
    "aresume_graph": "resuming",
    "arun_agent": "harness",
    "arun_graph": "harness",
    "build_agent": "harness",
    "build_chat_model": "providers",
    "completion_to_ai_message": "messages",
    "contract_config": "run_config",
    "from_langchain": "messages",
    "from_langchain_messages": "messages",
    "from_langchain_tool": "tools",
    "graph_tool": "tools",
    "graph_tools": "tools",
    "is_stop_message": "stops",
    "recursion_limit": "run_config",
    "resume_agent": "resuming",
    "resume_graph": "resuming",
    "run_agent": "harness",
    "run_graph": "harness",
    "stop_of": "stops",
    "to_langchain": "messages",
    "to_langchain_messages": "messages",
    "to_langchain_tool": "tools",
    "to_langchain_tools": "tools",
    "to_tool_message": "tools",
}


__getattr__, __dir__ = _lazy_names(__name__, _HOMES, __all__)
