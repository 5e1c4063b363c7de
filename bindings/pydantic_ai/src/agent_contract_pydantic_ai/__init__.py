"""agent-contract bound to PydanticAI: the contract as a capability and a toolset of a stock
``Agent``, any agent-contract model as a ``FunctionModel``, approval through deferred tools,
and a harness that returns the core ``RunResult``.

The names below load their module (and PydanticAI) on first use, so the core's registry can
read this package's harnesses (:mod:`agent_contract_pydantic_ai.plugin`) without importing
PydanticAI.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from agent_contract.lazy import lazy_names as _lazy_names

if _TYPE_CHECKING:
    from .capability import ContractCapability, ContractStopped
    from .driving import MODES, adrive_agent, build_agent, drive_agent
    from .harness import arun_agent, resume_agent, run_agent
    from .messages import (
        completion_to_response,
        from_pydantic_messages,
        response_to_completion,
        to_pydantic_messages,
    )
    from .model import contract_model
    from .tools import ContractToolset

__all__ = [
    "MODES",
    "ContractCapability",
    "ContractStopped",
    "ContractToolset",
    "adrive_agent",
    "arun_agent",
    "build_agent",
    "completion_to_response",
    "contract_model",
    "drive_agent",
    "from_pydantic_messages",
    "response_to_completion",
    "resume_agent",
    "run_agent",
    "to_pydantic_messages",
]

_HOMES: dict[str, str] = {
    "MODES": "driving",
    "ContractCapability": "capability",
    "ContractStopped": "capability",
    "ContractToolset": "tools",
    "adrive_agent": "driving",
    "arun_agent": "harness",
    "build_agent": "driving",
    "completion_to_response": "messages",
    "contract_model": "model",
    "drive_agent": "driving",
    "from_pydantic_messages": "messages",
    "response_to_completion": "messages",
    "resume_agent": "harness",
    "run_agent": "harness",
    "to_pydantic_messages": "messages",
}


__getattr__, __dir__ = _lazy_names(__name__, _HOMES, __all__)
