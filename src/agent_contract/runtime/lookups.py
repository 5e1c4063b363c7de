"""The lookups a driver may read (a mixin of :class:`~agent_contract.runtime.RunState`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..approval import Approval, PendingApproval
from ..budget import RunCounters, RunUsage
from ..messages import Message
from ..results import ToolResult
from . import snapshot
from .ledger import PlannedCall
from .records import Stop
from .run import Run
from .terms import Terms

if TYPE_CHECKING:
    from ..trace import Trace

__all__ = ["RunLookups"]


class RunLookups:
    """The lookups of the driver protocol (see :class:`~agent_contract.runtime.RunState`)."""

    _run: Run

    @property
    def contract(self) -> Terms:
        """The run's contract."""
        return self._run.contract

    @property
    def run_id(self) -> str:
        """The run's id (the LangGraph thread id of a durable LangChain run)."""
        return self._run.run_id

    @property
    def caller(self) -> str | None:
        """The identity the run acts for (tools read it from their ToolContext)."""
        return self._run.caller

    @property
    def context(self) -> dict[str, Any]:
        """Application values handed to context-aware tools."""
        return self._run.context

    @property
    def counters(self) -> RunCounters:
        """What the run has used so far, checked against the budget (live)."""
        return self._run.counters

    @property
    def trace(self) -> Trace:
        """The run's redacted, timed trace."""
        return self._run.trace

    def usage(self) -> RunUsage:
        """What the run has used so far (model steps, tool calls, active seconds)."""
        with self._run.lock:
            return self._run.counters.usage()

    @property
    def halted(self) -> Stop | None:
        """The stop given to :meth:`halt`, or ``None`` while the run goes on."""
        with self._run.lock:
            return self._run.halted

    def planned_call(self, tool_call_id: str) -> PlannedCall | None:
        """The call with this id in the open batch (an edit with its new arguments), or
        ``None`` (never planned, or its batch is closed)."""
        with self._run.lock:
            return self._run.ledger.planned(tool_call_id)

    def result_for(self, tool_call_id: str) -> ToolResult | None:
        """The result bound to ``tool_call_id``, if any."""
        with self._run.lock:
            return self._run.ledger.answered.get(tool_call_id)

    def decision_for(self, tool_call_id: str) -> Approval | None:
        """The recorded decision on a write call, if any."""
        with self._run.lock:
            recorded = self._run.decisions.get(tool_call_id)
            return Approval.from_dict(recorded) if recorded is not None else None

    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """Write calls of the open batch still waiting for a result."""
        with self._run.lock:
            return tuple(p.approval for p in self._run.ledger.waiting() if p.approval is not None)

    def batch_messages(self) -> list[Message] | None:
        """Tool messages answering the open batch in issue order, or ``None`` while a
        call of it still waits (for a decision or a result)."""
        with self._run.lock:
            return self._run.ledger.batch_messages()

    def snapshot(self, transcript: Sequence[Message]) -> dict[str, Any]:
        """The run's whole state as JSON data, to resume it in another process (see
        :func:`agent_contract.runtime.snapshot.dump`)."""
        with self._run.lock:
            return snapshot.dump(self._run, transcript)
