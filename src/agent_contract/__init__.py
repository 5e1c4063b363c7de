"""agent-contract: the framework-independent contract of a tool-calling agent loop.

A model only proposes tool calls; the runtime owns everything else. This package is
the neutral core (it never imports LangChain): the data types, the rules in
:mod:`agent_contract.runtime`, the trace in :mod:`agent_contract.trace`, and the offline
reference loop :func:`run` / :func:`resume`. The conformance kit is
:mod:`agent_contract.conformance`, the command line :mod:`agent_contract.app`; harnesses
are found by name in :mod:`agent_contract.harnesses`.

This module only hands names on; each lives in the module its docstring names.
"""

from .approval import Approval, PendingApproval
from .budget import Budget, RunUsage
from .errors import (
    ERROR_KINDS,
    STOP_REASONS,
    AgentContractError,
    ApprovalError,
    CheckpointError,
    ConfigurationError,
    DependencyMissingError,
    ErrorKind,
    InvalidArgumentsError,
    ModelError,
    NotFoundError,
    ScriptExhaustedError,
    StopReason,
    ToolError,
    TransientError,
    UnauthorizedError,
)
from .executor import ToolExecutor
from .loop import resume, run
from .messages import Completion, Message, TokenUsage, ToolCall
from .model import Model
from .results import ToolOutput, ToolResult, serialize_result
from .runtime import (
    Contract,
    ResponseVerdict,
    RunResult,
    RunState,
    Stop,
    ToolCallRecord,
    validate_response,
)
from .tools import ToolContext, ToolRegistry, ToolSpec
from .trace import JsonlSink, MemorySink, RedactionPolicy, Trace, TraceEvent, TraceSink

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "STOP_REASONS",
    "AgentContractError",
    "Approval",
    "ApprovalError",
    "Budget",
    "CheckpointError",
    "Completion",
    "ConfigurationError",
    "Contract",
    "DependencyMissingError",
    "ErrorKind",
    "InvalidArgumentsError",
    "JsonlSink",
    "MemorySink",
    "Message",
    "Model",
    "ModelError",
    "NotFoundError",
    "PendingApproval",
    "RedactionPolicy",
    "ResponseVerdict",
    "RunResult",
    "RunState",
    "RunUsage",
    "ScriptExhaustedError",
    "Stop",
    "StopReason",
    "TokenUsage",
    "ToolCall",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Trace",
    "TraceEvent",
    "TraceSink",
    "TransientError",
    "UnauthorizedError",
    "__version__",
    "resume",
    "run",
    "serialize_result",
    "validate_response",
]
