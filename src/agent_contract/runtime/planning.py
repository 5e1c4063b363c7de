"""Planning a batch of tool calls before any of it runs.

Batch checks (deadline, trace size, tool-call budget, identical repeats) admit or
refuse the batch whole; a refused batch gives every call a bound error and a stop. In
an admitted batch each call is checked alone: registered (``unknown_tool``),
allowlisted (``not_allowed``), each argument within ``Budget.max_argument_chars`` and
the arguments valid (``invalid_arguments``); write calls are
previewed and then wait for approval (:func:`~agent_contract.runtime.writes.plan_write`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import budget as budget_checks
from ..approval import PendingApproval
from ..budget import Breach
from ..canonical import canonical_bytes
from ..errors import ErrorKind
from ..messages import ToolCall
from .ledger import PlannedCall, refusal
from .records import Stop
from .run import Run
from .writes import plan_write

__all__ = ["BatchPlan", "call_key", "plan_batch"]


def call_key(name: str, arguments: Any, *, canonical: str | None = None) -> str:
    """Identity of a call for repeat detection: the name and a hash of the arguments'
    canonical form (RFC 8785, :func:`agent_contract.canonical.canonical_bytes`).

    Key order does not matter (``{"a":1,"b":2}`` and ``{"b":2,"a":1}`` give one key), nor
    how a number is written (``3``, ``3.0`` and ``3e0`` are one JSON number). Never
    raises. The hash keeps argument values (possibly secrets) out of a stored run.

    Args:
        canonical: the canonical text of ``arguments`` when the caller has it already
            (:attr:`~agent_contract.messages.ToolCall.canonical_arguments`), so it is not
            computed again.
    """
    data = canonical.encode("utf-8") if canonical is not None else canonical_bytes(arguments)
    return f"{name}:{hashlib.sha256(data).hexdigest()[:16]}"


@dataclass(frozen=True, kw_only=True)
class BatchPlan:
    """The verdict on a batch of tool calls, in issue order."""

    calls: tuple[PlannedCall, ...]
    """Every call of the batch, in the order the model issued them."""
    stop: Stop | None = None
    """Set when the batch was refused whole (budget, repeats, deadline)."""

    @property
    def runnable(self) -> tuple[PlannedCall, ...]:
        """The calls that may run now (not refused, not waiting for approval)."""
        return tuple(p for p in self.calls if p.refusal is None and p.approval is None)

    @property
    def pending(self) -> tuple[PendingApproval, ...]:
        """The write calls waiting for a human decision."""
        return tuple(p.approval for p in self.calls if p.approval is not None)


def plan_batch(run: Run, calls: Sequence[ToolCall]) -> BatchPlan:
    """Judge ``calls`` (see the module doc) and charge an admitted batch to the run's
    usage. The caller holds the run's lock and opens the plan in the ledger."""
    contract = run.contract
    keys = [call_key(c.name, c.arguments, canonical=c.canonical_arguments) for c in calls]
    breach = budget_checks.check_before_tool_calls(
        contract.budget,
        run.counters,
        run.trace.size_bytes,
        [(c.id, k) for c, k in zip(calls, keys, strict=True)],
    )
    if breach is not None:
        refused = tuple(_refuse_for_breach(run, c, breach) for c in calls)
        return BatchPlan(calls=refused, stop=Stop(reason=breach.reason, detail=breach.message))
    budget_checks.admit_tool_calls(run.counters, keys)
    return BatchPlan(calls=tuple(_plan_one(run, c) for c in calls))


def _refuse_for_breach(run: Run, call: ToolCall, breach: Breach) -> PlannedCall:
    kind: ErrorKind = "repeated_call" if call.id in breach.call_ids else "budget_exceeded"
    message = (
        breach.message
        if kind == "repeated_call" or breach.reason != "repeated_call"
        else (f"not run: the batch was refused ({breach.message})")
    )
    return PlannedCall(call=call, refusal=refusal(call, kind, message, run.contract.redaction))


def _plan_one(run: Run, call: ToolCall) -> PlannedCall:
    contract = run.contract
    spec = contract.registry.get(call.name)

    def refused(kind: ErrorKind, message: str) -> PlannedCall:
        return PlannedCall(call=call, refusal=refusal(call, kind, message, contract.redaction))

    if spec is None:
        offered = ", ".join(contract.offered_names())
        return refused(
            "unknown_tool", f"unknown tool {call.name!r}; available: {offered or 'none'}"
        )
    if not contract.is_allowed(call.name):
        return refused("not_allowed", f"tool {call.name!r} is not allowed in this run")
    oversized = budget_checks.check_argument_sizes(contract.budget, call.arguments)
    if oversized is not None:
        return refused("invalid_arguments", f"invalid arguments for {call.name!r}: {oversized}")
    problem = spec.validate(call.arguments)
    if problem is not None:
        return refused("invalid_arguments", f"invalid arguments for {call.name!r}: {problem}")
    if spec.effect == "write":
        return plan_write(run, call, spec)
    # Validated arguments are shared with the issued call and never mutated: every
    # handler gets its own deep copy (the default invoke, writes, isolation).
    return PlannedCall(call=call, spec=spec, arguments=call.arguments)
