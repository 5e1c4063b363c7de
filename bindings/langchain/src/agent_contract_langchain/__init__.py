"""agent-contract bound to LangChain: ``create_agent`` middleware, a scripted chat model,
message and tool mappings, and a harness that returns the core ``RunResult``."""

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
