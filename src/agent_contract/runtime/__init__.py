"""The runtime: every rule of the contract, behind one seam.

:class:`Contract` is the configuration; :meth:`Contract.start` gives a
:class:`RunState`, whose docstring is the driver protocol; :class:`RunInput` is what a
run is started with (it builds the Contract and starts the run). The modules behind it, one
phase each: :mod:`~agent_contract.runtime.response` (the response contract),
:mod:`~agent_contract.runtime.planning` (admitting a batch),
:mod:`~agent_contract.runtime.execution` (running a call),
:mod:`~agent_contract.runtime.writes` (preview, approval, idempotency, verification),
:mod:`~agent_contract.runtime.ledger` (the call-ID ledger, the one path every result
takes), :mod:`~agent_contract.runtime.snapshot` (pausing across processes) and
:mod:`~agent_contract.runtime.records` (what a run reports). They share one
:class:`~agent_contract.runtime.run.Run` (what a run holds); drivers never touch it.
"""

from .answers import AnswerFormat
from .contract import Contract
from .execution import AsyncInvoke, Invoke
from .input import Decider, RunInput
from .interruption import interruptible
from .ledger import PlannedCall
from .planning import BatchPlan, call_key
from .records import RunInterrupted, RunResult, Stop, ToolCallRecord
from .response import (
    Commentary,
    ResponseShape,
    ResponseVerdict,
    Violation,
    ViolationCode,
    validate_response,
)
from .snapshot import SNAPSHOT_VERSION
from .state import Checkpoint, RunState

__all__ = [
    "SNAPSHOT_VERSION",
    "AnswerFormat",
    "AsyncInvoke",
    "BatchPlan",
    "Checkpoint",
    "Commentary",
    "Contract",
    "Decider",
    "Invoke",
    "PlannedCall",
    "ResponseShape",
    "ResponseVerdict",
    "RunInput",
    "RunInterrupted",
    "RunResult",
    "RunState",
    "Stop",
    "ToolCallRecord",
    "Violation",
    "ViolationCode",
    "call_key",
    "interruptible",
    "validate_response",
]
