"""Deprecated: the rules moved to :mod:`agent_contract.runtime` (kept for one release).

``Decision`` is now :class:`~agent_contract.runtime.ResponseVerdict`; ``restore_run``
is :meth:`~agent_contract.runtime.Contract.restore`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._deprecated import moved
from .messages import Message
from .runtime import (
    SNAPSHOT_VERSION,
    BatchPlan,
    Contract,
    PlannedCall,
    RunResult,
    RunState,
    Stop,
    ToolCallRecord,
    Violation,
    ViolationCode,
    call_key,
    validate_response,
)
from .runtime import ResponseVerdict as Decision
from .runtime.execution import ISOLATION_GRACE_SECONDS

moved(__name__, "agent_contract.runtime")

__all__ = [
    "ISOLATION_GRACE_SECONDS",
    "SNAPSHOT_VERSION",
    "BatchPlan",
    "Contract",
    "Decision",
    "PlannedCall",
    "RunResult",
    "RunState",
    "Stop",
    "ToolCallRecord",
    "Violation",
    "ViolationCode",
    "call_key",
    "restore_run",
    "validate_response",
]


def restore_run(
    contract: Contract, snapshot: Mapping[str, Any], *, context: Mapping[str, Any] | None = None
) -> tuple[RunState, list[Message]]:
    """Deprecated: ``contract.restore(snapshot, context=context)``."""
    return contract.restore(snapshot, context=context)
