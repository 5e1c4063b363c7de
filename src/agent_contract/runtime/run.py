"""What one run holds: :class:`Run` (with the :class:`AttemptLog` of each call a framework
ran), shared by :class:`~agent_contract.runtime.RunState` (the drivers' facade) and the
runtime's phases (planning, execution, writes, snapshots).

Drivers never touch it: they call RunState's operations, which take the run's lock and
hand the :class:`Run` to the phase that does the work. It is the bottom of the phases:
it knows the contract only as its :class:`~agent_contract.runtime.terms.Terms`, and no
phase.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..budget import RunCounters
from ..errors import ConfigurationError
from ..results import ToolResult, error_result
from ..trace import ScopedTrace, Trace
from .history import CheckedHistory
from .ledger import CallLedger
from .records import Scope, Stop, ToolCallRecord
from .terms import Terms

__all__ = ["AttemptLog", "ChildScopeRefused", "Run", "Scope", "child_writes_refusal"]


@dataclass(kw_only=True)
class AttemptLog:
    """The attempts of one call (the rules that fill it: :mod:`.attempts`)."""

    count: int = 0
    """Attempts reported so far."""
    timed_out: int = 0
    """Attempts that raised ``TimeoutError``."""
    errors: list[str] = field(default_factory=list)
    """Type names of what the failed attempts raised, in order."""
    refusal: ToolResult | None = None
    """The refusal of the last attempt, when the contract refused it."""
    last_error: BaseException | None = None
    """What the last failed attempt raised (a layer may turn it into a message)."""
    unrun: bool = False
    """Another layer answered the call and no attempt reached the tool."""


class ChildScopeRefused(ConfigurationError):
    """A child agent's contract does not descend from its run's contract (see
    :meth:`Run.open_child`): the child scope is refused and the run halts. A driver
    lets it through a tool call (never a tool's failure the model reads). ``agent``
    names the child agent, ``call_id`` the parent's tool call (``None`` when unknown).
    """

    def __init__(self, message: str, *, agent: str, call_id: str | None) -> None:
        super().__init__(message)
        self.agent = agent
        self.call_id = call_id


def child_writes_refusal(contract: Terms, agent: str) -> str | None:
    """Why ``contract`` may not be the contract of child agent ``agent``, or ``None``:
    it allowlists a write tool. A write waits for a human decision, which pauses the
    run, and a child scope cannot pause: its agent runs inside its parent's tool call,
    and a run resumes at its top agent (a child's write would wait for nobody, or end
    the run with an error). The message names the agent, the write tools and the fix.
    """
    writes = [
        spec.name
        for spec in contract.registry
        if spec.effect == "write" and contract.is_allowed(spec.name)
    ]
    if not writes:
        return None
    return (
        f"child agent {agent!r} would be offered the write tools {writes}: a write waits "
        "for a human approval, which pauses the run, and a child agent's calls cannot "
        "pause (the child runs inside its parent's tool call; a run resumes at its top "
        "agent). Leave them out of the child's allowlist (contract.child(name, "
        "tools=..., allowlist=[<its read tools>])) and give the write to the top agent: "
        "register it with the run's Contract, so the parent calls it, previewed and "
        "approved (see docs/MULTI_AGENT.md)"
    )


@dataclass(eq=False, kw_only=True)
class Run:
    """The mutable state of one run. Build it with :meth:`create`.

    Every change happens with :attr:`lock` held (the phases document which of their
    functions expect it held); tool calls of a batch may finish concurrently.
    """

    contract: Terms
    """The run's contract (the :class:`~agent_contract.runtime.Contract` it was started
    under), read through its terms."""
    run_id: str
    """The run's id."""
    caller: str | None
    """The identity the run acts for."""
    context: dict[str, Any]
    """Application values handed to context-aware tools."""
    counters: RunCounters
    """What the run has used, checked against the budget."""
    trace: Trace
    """The run's trace (timed by :attr:`counters`)."""
    ledger: CallLedger
    """The call-ID ledger: every result goes through :meth:`CallLedger.record`."""
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Human decisions on write calls, by ``tool_call_id`` (as ``Approval.to_dict``)."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Held around every change."""
    halted: Stop | None = None
    """The stop a driver recorded inside a framework (``RunState.halt``)."""
    answer: str | None = None
    """The answer that came with an ``answered`` halt."""
    structured: Any = None
    """The structured answer's value that came with an ``answered`` halt."""
    attempts: dict[str, AttemptLog] = field(default_factory=dict)
    """Executions a framework reported per call id (see :mod:`.attempts`); not stored."""
    history: CheckedHistory = field(default_factory=CheckedHistory)
    """What the run knows of the history its model was last sent: its tool-call ids (a
    new call may not reuse one) and the clean prefix checked last; not stored."""
    parent: Run | None = None
    """For a child scope: the scope (or the run) whose tool call started it; ``None``
    for a run's top agent."""
    scope: Scope | None = None
    """For a child scope: its agent and call path; ``None`` for a run's top agent."""
    children: list[Run] = field(default_factory=list)
    """The child scopes opened inside this scope's tool calls, in the order they
    opened."""
    facade: Any = None
    """The :class:`~agent_contract.runtime.RunState` wrapping this run (set once, by
    it), so a child scope looked up again is the same object."""
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    """The run's named secrets, ``name -> value`` (its contract's
    ``named_secrets``; a child scope shares its run's): a tool gets the values of those
    it declared through its ``ToolContext.secret``; never stored in a snapshot."""

    @classmethod
    def create(
        cls,
        contract: Terms,
        *,
        run_id: str,
        caller: str | None,
        context: dict[str, Any],
    ) -> Run:
        """A fresh run with an empty trace and ledger (nothing is traced yet)."""
        counters = RunCounters(clock=contract.clock)
        trace = _trace(contract, run_id, counters, ())
        return cls(
            contract=contract,
            run_id=run_id,
            caller=caller,
            context=context,
            counters=counters,
            trace=trace,
            ledger=CallLedger(contract.redaction, trace),
            secrets=dict(contract.named_secrets),
        )

    def stopped(self) -> Stop | None:
        """The stop that ends this scope: its own halt, else the nearest ancestor's
        (a child's non-answer stop halts the whole run, see ``RunState.halt``)."""
        run: Run | None = self
        while run is not None:
            if run.halted is not None:
                return run.halted
            run = run.parent
        return None

    def open_child(self, contract: Terms, *, call_id: str, agent: str) -> Run:
        """The child scope for an agent started inside this scope's call ``call_id``
        under ``contract`` (the same one when asked again for that call and contract).

        A child keeps its own ledger, history, attempts and decisions (its calls are
        its own), and shares the run's counters (budgets are the run's), trace (its
        events carry a ``scope`` field), lock, id, caller, context and secrets. The caller
        holds no lock; this takes the run's.

        Raises:
            ChildScopeRefused: ``contract`` is neither the run's contract nor made
                from it through ``Contract.child`` (the run's budget, redaction and secrets
                would not hold in the child), or it allowlists a write tool
                (:func:`child_writes_refusal`: the run's own Contract given to a child).
        """
        with self.lock:
            for child in self.children:
                scope = child.scope
                if (
                    scope is not None
                    and child.contract is contract
                    and scope.call_path[-1] == call_id
                ):
                    return child
            refusal = self._refusal(contract, call_id=call_id, agent=agent)
            if refusal is not None:
                raise ChildScopeRefused(refusal, agent=agent, call_id=call_id)
            path = (*self.scope.call_path, call_id) if self.scope is not None else (call_id,)
            scope = Scope(agent=agent, call_path=path)
            trace = ScopedTrace(self.trace, scope.to_dict())
            child = Run(
                contract=contract,
                run_id=self.run_id,
                caller=self.caller,
                context=self.context,
                counters=self.counters,
                trace=trace,
                ledger=CallLedger(contract.redaction, trace),
                lock=self.lock,
                parent=self,
                scope=scope,
                secrets=self.secrets,
            )
            self.children.append(child)
            trace.record("child_started", agent=agent, tools_offered=contract.offered_names())
            return child

    def _refusal(self, contract: Terms, *, call_id: str, agent: str) -> str | None:
        """Why ``contract`` may not be a child scope's contract here, or ``None``: it
        must be the run's top contract or made from it by ``Contract.child`` (or from
        a child of it), so it holds the run's budget, redaction and secrets."""
        writes = child_writes_refusal(contract, agent)
        if writes is not None:
            return f"{writes}; it is refused (agent {agent!r}, inside tool call {call_id!r})"
        top = self
        while top.parent is not None:
            top = top.parent
        root = top.contract
        if contract is root:
            return None  # the run's own (its tools must be the child's: the gate checks)
        ancestor = contract.derived_from
        while ancestor is not None and ancestor is not root:
            ancestor = ancestor.derived_from
        if ancestor is root:
            return None
        where = f"agent {agent!r} runs inside tool call {call_id!r} of run {self.run_id!r}"
        fix = (
            "build it with contract.child(name, tools=..., allowlist=...) from the run's "
            "Contract and give the child agent ContractMiddleware(that child) (see "
            "docs/MULTI_AGENT.md)"
        )
        if contract.derived_from is not None:
            why = (
                "under a child Contract of another Contract, not of the run's: the "
                "run's budget, redaction and secrets would not hold in it"
            )
        else:
            why = (
                "under a Contract of its own (not made from the run's Contract): the "
                "run's budget, redaction and secrets would not hold in it"
            )
        return f"{where} {why}; it is refused: {fix}"

    def restore_trace(self, counters: RunCounters, events: Sequence[Mapping[str, Any]]) -> None:
        """Take over a stored run's counters and trace (the ledger writes to it too).

        Raises:
            ValueError: an event is not a well-formed trace event.
        """
        self.counters = counters
        self.trace = self.ledger.trace = _trace(self.contract, self.run_id, counters, events)

    def record(self, result: ToolResult) -> ToolResult:
        """:meth:`CallLedger.record` with the lock held, of ``result`` as
        :meth:`after_child_stop` amends it."""
        with self.lock:
            return self.ledger.record(self.after_child_stop(result))

    def child_stop(self, call_id: str) -> tuple[Scope, Stop] | None:
        """The first child scope opened inside this scope's call ``call_id`` that
        halted without answering (its own stop, a deeper child's, or a sibling's stop
        that reached it at its next step), with that stop; ``None`` when every child of
        the call answered, or the call started none. The caller holds the lock."""
        for child in self.children:
            scope, stop = child.scope, child.halted
            if scope is None or scope.call_path[-1] != call_id:
                continue
            if stop is not None and stop.reason != "answered":
                return scope, stop
        return None

    def after_child_stop(self, result: ToolResult) -> ToolResult:
        """``result``, or, for the result of a call whose child agent was stopped
        (:meth:`child_stop`), an error of kind ``interrupted`` with outcome ``unknown``
        and side effects possible that names the child and its stop: the delegating
        call did not complete (whether its tool returned the child's last message or
        raised the child's stop), and its child may have run tools. A call that did not
        run is kept as it is. The caller holds the lock."""
        if result.outcome == "not_run":
            return result
        stopped = self.child_stop(result.tool_call_id)
        if stopped is None:
            return result
        scope, stop = stopped
        return error_result(
            result.tool_call_id,
            result.name,
            "interrupted",
            f"child agent {scope.agent!r}, started by this call, was stopped "
            f"({stop.reason}: {stop.detail}) before it answered; the call did not "
            "complete: its outcome is unknown and side effects are possible",
            redaction=self.contract.redaction,
            outcome="unknown",
            side_effects_possible=True,
            duration_seconds=result.duration_seconds,
        )

    def tree_records(self) -> list[ToolCallRecord]:
        """The report records of this scope and every child scope under it, in tree
        order: each of this scope's calls (in issue order) followed by the records of
        the child scopes it started (in the order they opened, each likewise), every
        child's record carrying its :class:`Scope`. A child whose parent call has no
        record (never expected once the run has ended) follows at the end. The caller
        holds the lock."""
        out: list[ToolCallRecord] = []
        placed: set[int] = set()
        for record in self.ledger.records:
            out.append(record)
            for index, child in enumerate(self.children):
                if child.scope is not None and child.scope.call_path[-1] == record.id:
                    placed.add(index)
                    out.extend(child._scoped_records())
        for index, child in enumerate(self.children):
            if index not in placed:
                out.extend(child._scoped_records())
        return out

    def _scoped_records(self) -> list[ToolCallRecord]:
        """:meth:`tree_records` of a child scope, its own records stamped with its scope."""
        return [
            replace(record, scope=self.scope) if record.scope is None else record
            for record in self.tree_records()
        ]


def _trace(
    contract: Terms, run_id: str, counters: RunCounters, events: Sequence[Mapping[str, Any]]
) -> Trace:
    """A trace with the contract's redaction and sink, timed by the run's counters
    (active seconds, across resumes)."""
    return Trace(
        contract.redaction,
        events,
        run_id=run_id,
        sink=contract.trace_sink,
        clock=counters.elapsed,
    )
