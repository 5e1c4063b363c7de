"""The demo agent behind ``agent-contract run`` and ``agent-contract approve``.

Tools: ``calculator``, ``policy_lookup``, ``lookup_order`` and ``refund_order`` (a
write). The order database and the stored runs live in the data folder (see
:mod:`agent_contract.app.folder`: where it is, what it holds, how it is protected).

A run goes through the registered harness's
:class:`~agent_contract.harnesses.DurableRunner` (``--harness NAME``; the core's is
``offline``), so a binding's harness runs the demo without the app naming it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..approval import Approval, DecisionKind
from ..budget import Budget
from ..errors import PAUSE_REASONS, ApprovalError
from ..model import Model
from ..registry import durable_runner
from ..runstore import FINISHED_PREFIX, RunStore
from ..runtime import RunInput, RunResult
from ..testing import DemoModel
from ..trace import TraceSink
from .decisions import AmbiguousEditError, held_budget, repeated_decision
from .folder import DATA_DIR_ENV, DemoFolder, data_dir, demo_tools

__all__ = [
    "DATA_DIR_ENV",
    "AmbiguousEditError",
    "DemoRun",
    "approve_demo",
    "data_dir",
    "demo_tools",
    "resume_demo",
    "start_demo",
]


@dataclass(frozen=True, kw_only=True)
class DemoRun:
    """A demo run and where its state lives."""

    result: RunResult
    thread_id: str
    """The id to pass to ``approve`` (the run id)."""
    folder: Path
    """The data folder."""


def start_demo(
    text: str,
    *,
    harness: str = "offline",
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    caller: str | None = None,
    folder: str | os.PathLike[str] | None = None,
    store: str | None = None,
    model: Model | None = None,
    trace_sink: TraceSink | None = None,
) -> DemoRun:
    """Run the demo agent on ``text`` with the registered harness ``harness``, on
    ``model`` (default: the deterministic :class:`~agent_contract.testing.DemoModel`;
    ``run --model openai-compatible`` passes a real one). A run that pauses is resumed
    (``approve``, ``resume``) on the demo model.

    The demo's front door (``agent-contract run`` calls it): it builds the run's
    :class:`~agent_contract.runtime.RunInput` (``text``, ``budget``, ``secrets``,
    ``caller``), which the harness's durable runner takes. A run that pauses for
    approval is stored under its run id in the store: ``store`` (a store URL, ``run
    --store``), else ``$AGENT_CONTRACT_STORE``, else the data folder ``folder``'s SQLite
    files (:func:`~agent_contract.stores.open_store`); the folder holds the key either
    way. ``trace_sink`` (``run --otel``) receives the run's trace events as they are
    recorded.

    Raises:
        DependencyMissingError: the harness's binding or framework is not installed.
        ConfigurationError: no such harness, or it cannot run durably.
        CheckpointError: the data folder's stores cannot be read.
    """
    options = RunInput(user=text, budget=budget, secrets=tuple(secrets), caller=caller)
    where = DemoFolder.open(folder, store_url=store)
    runner = durable_runner(harness)
    contract = where.contract(
        budget=options.budget,
        secrets=options.secret_values,
        create_orders=True,
        trace_sink=trace_sink,
    )
    runs = where.runs()
    with where.recorded(runs, harness, options.secret_values):
        result = runner.run(model or DemoModel(), contract, options, store=where.store)
    if result.stop_reason in PAUSE_REASONS:
        where.record(runs, result, harness, options.secret_values)
    else:
        where.prune(result.run_id, harness)  # nothing to resume: its checkpoints go
    return DemoRun(result=result, thread_id=result.run_id, folder=where.path)


def approve_demo(
    thread_id: str,
    decision: DecisionKind,
    *,
    arguments: dict[str, Any] | None = None,
    call_id: str | None = None,
    reason: str = "",
    decided_by: str = "",
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    folder: str | os.PathLike[str] | None = None,
    store: str | None = None,
    trace_sink: TraceSink | None = None,
) -> RunResult:
    """Decide the pending approval(s) of a stored run and resume it in this process.

    Args:
        thread_id: the run id printed by ``run``.
        decision: ``approve``, ``reject`` or ``edit``.
        arguments: for ``edit``, the arguments to run with.
        call_id: which pending call; default: every pending call of the run (an
            ``edit`` needs it when more than one call waits).
        budget: limits for the rest of the run; they can tighten, never loosen, the
            limits the run started with (stored in its snapshot), so a budget holds
            across resumes whatever the approver passes.
        store: the store URL (``approve --store``; default ``$AGENT_CONTRACT_STORE``,
            else the data folder's SQLite files); with PostgreSQL, ``folder`` needs only
            a copy of the key file of the folder that ran the run.
        trace_sink: receives the resumed run's events as they are recorded (``approve
            --otel``); the events restored from the stored run are not sent again.

    Only one process at a time resumes a run (:meth:`RunStore.exclusive`).

    Raises:
        CheckpointError: no such paused run, a store that cannot be read, or another
            process resuming the same run right now.
        ApprovalError: the run already finished, no such pending call, or a decision
            that does not fit (nothing is recorded then).
        AmbiguousEditError: an ``edit`` without ``call_id`` while several calls wait.
    """
    where = DemoFolder.open(folder, create=False, store_url=store)
    runs = where.runs()
    with runs.exclusive(thread_id):
        # Load under the lock: a concurrent approve that got here first has recorded its
        # decision, so this one is checked against it (and refused if it differs).
        return _approve_locked(
            runs,
            where,
            thread_id,
            decision,
            arguments=arguments,
            call_id=call_id,
            reason=reason,
            decided_by=decided_by,
            budget=budget,
            secrets=secrets,
            trace_sink=trace_sink,
        )


def resume_demo(
    thread_id: str,
    *,
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    folder: str | os.PathLike[str] | None = None,
    store: str | None = None,
    trace_sink: TraceSink | None = None,
) -> RunResult:
    """Continue a stored run with no new decision: a run ``interrupted`` (Ctrl-C,
    SIGTERM) goes on from where it stopped, and a write already approved before the
    interruption is settled by verification, not repeated. A write still waiting for a
    decision pauses the run again (``pending_approval``: decide it with
    :func:`approve_demo`).

    ``store``, ``trace_sink``: as :func:`approve_demo`.

    Raises:
        CheckpointError, ApprovalError: as :func:`approve_demo`.
    """
    where = DemoFolder.open(folder, create=False, store_url=store)
    runs = where.runs()
    with runs.exclusive(thread_id):
        return _approve_locked(
            runs, where, thread_id, None, budget=budget, secrets=secrets, trace_sink=trace_sink
        )


def _approve_locked(
    store: RunStore,
    where: DemoFolder,
    thread_id: str,
    decision: DecisionKind | None,
    *,
    budget: Budget | None,
    secrets: Sequence[str],
    arguments: dict[str, Any] | None = None,
    call_id: str | None = None,
    reason: str = "",
    decided_by: str = "",
    trace_sink: TraceSink | None = None,
) -> RunResult:
    """Resume the stored run ``thread_id`` (its lock held) with ``decision`` on its
    pending calls (``call_id``'s only, if given), or with none (``None``: go on from
    an interruption); see :func:`approve_demo`."""
    stored = store.load_run(thread_id)
    harness, snapshot = stored.harness, stored.snapshot
    # The secrets the run was given at ``run`` (kept encrypted with it) and any given
    # now: redacted from everything the rest of the run stores and prints.
    secrets = tuple(dict.fromkeys((*stored.secrets, *secrets)))
    if harness.startswith(FINISHED_PREFIX):
        stop = snapshot.get("finished", {}).get("stop_reason", "?")
        raise ApprovalError(f"run {thread_id!r} already finished ({stop}); nothing to resume")
    budget = held_budget(snapshot.get("budget"), budget)
    contract = where.contract(budget=budget, secrets=secrets, create_orders=False)
    # Restored here to check the decision only; the runner restores the run itself, so
    # this restore sends nothing to the sink (it would be a second, empty resumed run).
    state, _ = contract.restore(snapshot)
    pending = [p for p in state.view.pending_approvals() if call_id in (None, p.tool_call_id)]
    if decision is not None and not pending:
        repeated_decision(thread_id, snapshot, decision, arguments, call_id)
    elif call_id is not None and not pending:
        raise ApprovalError(
            f"run {thread_id!r} has no pending call {call_id!r}", tool_call_id=call_id
        )
    if decision == "edit" and call_id is None and len(pending) > 1:
        waiting = ", ".join(p.tool_call_id for p in pending)
        raise AmbiguousEditError(
            f"run {thread_id!r} has {len(pending)} pending calls ({waiting}); an edit "
            "decides one call: pass --call-id"
        )
    approvals = [
        Approval.for_pending(p, decision, arguments=arguments, reason=reason, decided_by=decided_by)
        for p in pending
        if decision is not None
    ]

    def checkpoint(data: dict[str, Any]) -> None:
        store.save(thread_id, data, harness=harness, secrets=secrets)

    if trace_sink is not None:
        contract = where.contract(
            budget=budget, secrets=secrets, create_orders=False, trace_sink=trace_sink
        )
    runner = durable_runner(harness)
    with where.recorded(store, harness, secrets):
        result = runner.resume(
            DemoModel(), contract, snapshot, approvals, checkpoint=checkpoint, store=where.store
        )
    where.record(store, result, harness, secrets)
    return result
