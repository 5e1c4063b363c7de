"""A read-only view of one run: :class:`RunView`, what ``RunState.view`` gives.

Every lookup a driver may make is here (:attr:`RunView.PROTOCOL`), each under the run's
lock and changing nothing; the operations that change a run are
:class:`~agent_contract.runtime.RunState`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..approval import Approval, PendingApproval
from ..budget import RunCounters, RunUsage
from ..messages import Message
from ..results import ToolResult
from . import snapshot
from .ledger import PlannedCall
from .records import Stop
from .run import Run, Scope
from .terms import Terms

if TYPE_CHECKING:
    from ..trace import Trace

__all__ = ["RunView"]


class RunView:
    """A read-only view of one run (``RunState.view``).

    The lookups a driver may read: ``run_id``, ``contract`` (the run's contract, read
    through its :class:`~agent_contract.runtime.terms.Terms`), ``halted``, ``usage()``,
    ``planned_call(tool_call_id)``, ``result_for(tool_call_id)``,
    ``decision_for(tool_call_id)``, ``pending_approvals()``, ``pending_stop()`` (the
    ``pending_approval`` pause every driver pauses with), ``batch_messages()``,
    ``snapshot(transcript)``, and the run's tree of agents: ``scope`` (this child
    scope's agent and call path, ``None`` for the top agent) and ``children()`` (the
    child scopes opened inside its tool calls).

    Also public, to inspect a run (tests, reports), not to drive one: ``caller``,
    ``context``, ``counters``, ``trace``.
    """

    PROTOCOL: ClassVar[frozenset[str]] = frozenset(
        {
            "run_id",
            "contract",
            "halted",
            "usage",
            "planned_call",
            "result_for",
            "decision_for",
            "pending_approvals",
            "pending_stop",
            "batch_messages",
            "snapshot",
            "scope",
            "children",
        }
    )
    """Every lookup a driver may read (the class docstring explains each)."""

    def __init__(self, run: Run) -> None:
        self._run = run

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
        """The stop given to :meth:`RunState.halt`, or ``None`` while the run goes on
        (in a child scope: its own stop, else the stop that ended the whole run)."""
        with self._run.lock:
            return self._run.stopped()

    @property
    def scope(self) -> Scope | None:
        """Where this scope sits in the run's tree of agents (its agent and call path);
        ``None`` for the run's top agent."""
        return self._run.scope

    def children(self) -> tuple[RunView, ...]:
        """The views of the child scopes opened inside this scope's tool calls, in the
        order they opened (each child's own ``children()`` go one level deeper)."""
        with self._run.lock:
            return tuple(RunView(child) for child in self._run.children)

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

    def pending_stop(self) -> Stop | None:
        """The ``pending_approval`` stop while write calls of the open batch wait for a
        decision, else ``None``. Every driver pauses with this one stop."""
        pending = self.pending_approvals()
        if not pending:
            return None
        waiting = ", ".join(f"{p.name} [{p.tool_call_id}]" for p in pending)
        return Stop(reason="pending_approval", detail=f"waiting for approval of {waiting}")

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
