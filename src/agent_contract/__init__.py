"""agent-contract: the framework-independent contract of a tool-calling agent loop.

A model only proposes tool calls; the runtime owns everything else. This package is
the neutral core (it never imports LangChain): the data types, the rules in
:mod:`agent_contract.runtime`, and the offline reference loop :func:`run`.
"""

from .budget import Budget
from .errors import (
    ERROR_KINDS,
    STOP_REASONS,
    AgentContractError,
    CheckpointError,
    ConfigurationError,
    DependencyMissingError,
    InvalidArgumentsError,
    ModelError,
    NotFoundError,
    ScriptExhaustedError,
    ToolError,
    TransientError,
    UnauthorizedError,
)
from .executor import ToolExecutor
from .loop import run
from .messages import Completion, Message, ToolCall, Usage
from .model import Model
from .results import ToolResult, serialize_result
from .runtime import Contract, RunResult, RunState, Stop, ToolCallRecord, validate_response
from .tools import ToolContext, ToolRegistry, ToolSpec
from .trace import RedactionPolicy, Trace

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "STOP_REASONS",
    "AgentContractError",
    "Budget",
    "CheckpointError",
    "Completion",
    "ConfigurationError",
    "Contract",
    "DependencyMissingError",
    "InvalidArgumentsError",
    "Message",
    "Model",
    "ModelError",
    "NotFoundError",
    "RedactionPolicy",
    "RunResult",
    "RunState",
    "ScriptExhaustedError",
    "Stop",
    "ToolCall",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Trace",
    "TransientError",
    "UnauthorizedError",
    "Usage",
    "__version__",
    "run",
    "serialize_result",
    "validate_response",
]
