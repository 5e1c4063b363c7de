"""The runtime: every rule of the contract, behind one seam.

:class:`Contract` is the configuration; :meth:`Contract.start` gives a
:class:`RunState`, whose docstring is the driver protocol (ten operations, and a
read-only :class:`RunView` of the run); :class:`LayerOps` is its opt-in extension for a
driver inside a framework's layers; :class:`RunInput` is what a run is started with (it
builds the Contract and starts the run). The modules behind it, one phase each:
:mod:`~agent_contract.runtime.response` (the response contract),
:mod:`~agent_contract.runtime.history` (the transcript a model gets),
:mod:`~agent_contract.runtime.judging` (a response, for a run),
:mod:`~agent_contract.runtime.planning` (admitting a batch),
:mod:`~agent_contract.runtime.execution` (running a call),
:mod:`~agent_contract.runtime.attempts` (a framework's executions of a call),
:mod:`~agent_contract.runtime.writes` (preview, approval, idempotency, verification),
:mod:`~agent_contract.runtime.ledger` (the call-ID ledger, the one path every result
takes), :mod:`~agent_contract.runtime.snapshot` (pausing across processes),
:mod:`~agent_contract.runtime.ending` (the stop and the result) and
:mod:`~agent_contract.runtime.records` (what a run reports). They share one
:class:`~agent_contract.runtime.run.Run` (what a run holds); drivers never touch it.

The modules form a DAG, counting imports inside functions and under ``TYPE_CHECKING``
(``tests/test_layers.py``): the data at the bottom (``records``, ``answers``,
``response``, ``ledger``, ``terms``, ``history``, then ``run``), the rules taking a
``Run`` in the middle, ``view`` and ``layers``, then ``state`` (``RunState``), with
``interruption`` and ``contract`` (``Contract``) on top. No module names a type of a
module above it.
"""

from .answers import AnswerFormat
from .contract import Contract
from .execution import AsyncInvoke, Invoke
from .input import Decider, ResumeOptions, RunInput, RunOptions
from .interruption import interruptible
from .layers import LayerOps
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
from .run import ChildScopeRefused
from .snapshot import SNAPSHOT_VERSION
from .state import Checkpoint, RunState
from .terms import Terms
from .view import RunView

__all__ = [
    "SNAPSHOT_VERSION",
    "AnswerFormat",
    "AsyncInvoke",
    "BatchPlan",
    "Checkpoint",
    "ChildScopeRefused",
    "Commentary",
    "Contract",
    "Decider",
    "Invoke",
    "LayerOps",
    "PlannedCall",
    "ResponseShape",
    "ResponseVerdict",
    "ResumeOptions",
    "RunInput",
    "RunInterrupted",
    "RunOptions",
    "RunResult",
    "RunState",
    "RunView",
    "Stop",
    "Terms",
    "ToolCallRecord",
    "Violation",
    "ViolationCode",
    "call_key",
    "interruptible",
    "validate_response",
]
