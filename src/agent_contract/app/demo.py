"""The demo agent behind ``agent-contract run`` and ``agent-contract approve``.

Tools: ``calculator``, ``policy_lookup``, ``lookup_order`` and ``refund_order`` (a
write). The order database and the stored runs live in the data folder:

- ``--data-dir DIR`` on the command line, else
- ``$AGENT_CONTRACT_DATA_DIR``, else
- ``$XDG_DATA_HOME/agent-contract``, else ``~/.local/share/agent-contract``.

Files there: ``orders.sqlite3`` (orders and refunds, created with sample data on first
use), ``runs.sqlite3`` (snapshots of runs paused for approval, by thread id, with the
harness that ran them) and whatever a harness's durable runner keeps (the LangChain
binding's ``checkpoints.sqlite3``, LangGraph's checkpointer).

A run goes through the registered harness's
:class:`~agent_contract.harnesses.DurableRunner` (``--harness NAME``; the core's is
``offline``), so a binding's harness runs the demo without the app naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..approval import Approval, DecisionKind
from ..budget import Budget
from ..errors import PAUSE_REASONS, ApprovalError, CheckpointError, ConfigurationError
from ..faults import crashpoint
from ..registry import durable_runner
from ..runtime import Contract, RunInterrupted, RunResult
from ..testing import DemoModel
from ..tools import ToolSpec
from .builtin_tools import calculator_tool, policy_lookup_tool
from .builtin_tools.orders import OrderStore, lookup_order_tool, refund_order_tool
from .signals import deferred_signals
from .store import FINISHED_PREFIX, RunStore

__all__ = [
    "DATA_DIR_ENV",
    "AmbiguousEditError",
    "DemoRun",
    "approve_demo",
    "data_dir",
    "demo_tools",
    "resume_demo",
    "run_demo",
    "start_demo",
]

DATA_DIR_ENV: Final = "AGENT_CONTRACT_DATA_DIR"
"""The environment variable naming the data folder."""


class AmbiguousEditError(ConfigurationError):
    """``--decision edit`` without ``--call-id`` while more than one write waits: one set
    of edited arguments cannot be meant for every pending call (a usage error, exit 2;
    nothing is recorded)."""


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder (see the module doc for the order of precedence).

    Raises:
        ConfigurationError: the path exists and is not a folder.
    """
    if explicit:
        folder = Path(explicit)
    elif os.environ.get(DATA_DIR_ENV):
        folder = Path(os.environ[DATA_DIR_ENV])
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        folder = Path(base) / "agent-contract"
    if folder.exists() and not folder.is_dir():
        raise ConfigurationError(f"the data folder {str(folder)!r} exists and is not a folder")
    return folder


def demo_tools(folder: Path | None = None) -> list[ToolSpec]:
    """The demo agent's tools; the order tools use ``folder/orders.sqlite3``."""
    store = OrderStore((folder or data_dir()) / "orders.sqlite3")
    return [
        calculator_tool(),
        policy_lookup_tool(),
        lookup_order_tool(store),
        refund_order_tool(store),
    ]


@dataclass(frozen=True, kw_only=True)
class DemoRun:
    """A demo run and where its state lives."""

    result: RunResult
    thread_id: str
    """The id to pass to ``approve`` (the run id)."""
    folder: Path
    """The data folder."""


def _store(folder: Path) -> RunStore:
    return RunStore(folder / "runs.sqlite3")


def _record(store: RunStore, result: RunResult, harness: str) -> None:
    """Store a paused run's snapshot (``pending_approval``, ``interrupted``), or mark the
    run finished. A signal that comes meanwhile waits until the record is written."""
    if result.stop_reason in PAUSE_REASONS and result.snapshot is not None:
        with deferred_signals():
            store.save(result.run_id, result.snapshot, harness=harness)
        return
    crashpoint("before_finish_record")
    with deferred_signals():
        store.finish(result.run_id, result.to_dict(), harness=harness)


@contextmanager
def _recorded(store: RunStore, harness: str) -> Iterator[None]:
    """Store the run an interruption paused (see :class:`RunInterrupted`), then let
    the interruption go on."""
    try:
        yield
    except RunInterrupted as exc:
        _record(store, exc.result, harness)
        raise


def run_demo(
    text: str,
    *,
    harness: str = "offline",
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    caller: str | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run the demo model and tools on ``text``; see :func:`start_demo`."""
    return start_demo(
        text, harness=harness, budget=budget, secrets=secrets, caller=caller, folder=folder
    ).result


def start_demo(
    text: str,
    *,
    harness: str = "offline",
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    caller: str | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> DemoRun:
    """Run the demo agent on ``text`` with the registered harness ``harness``.

    A run that pauses for approval is stored in the data folder under its run id.

    Raises:
        DependencyMissingError: the harness's binding or framework is not installed.
        ConfigurationError: no such harness, or it cannot run durably.
        CheckpointError: the data folder's stores cannot be read.
    """
    where = data_dir(folder)
    runner = durable_runner(harness)
    contract = Contract(demo_tools(where), budget=budget, secrets=secrets)
    with _recorded(_store(where), harness):
        result = runner.run(DemoModel(), contract, text, caller=caller, folder=where)
    if result.stop_reason in PAUSE_REASONS:
        _record(_store(where), result, harness)
    return DemoRun(result=result, thread_id=result.run_id, folder=where)


def _held_budget(stored: Any, given: Budget | None) -> Budget | None:
    """The run's stored limits, each tightened (never loosened) by ``given``.

    Raises:
        CheckpointError: the stored limits are not a valid budget.
    """
    if stored is None:
        return given
    try:
        held = Budget(**dict(stored))
    except (ConfigurationError, TypeError, ValueError) as exc:
        raise CheckpointError(f"the stored budget is corrupt: {exc}") from exc
    if given is None:
        return held
    limits: dict[str, Any] = {}
    for name, mine in held.to_dict().items():
        other = getattr(given, name)
        limits[name] = other if mine is None else mine if other is None else min(mine, other)
    return Budget(**limits)


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

    Only one process at a time resumes a run (:meth:`RunStore.exclusive`).

    Raises:
        CheckpointError: no such paused run, a store that cannot be read, or another
            process resuming the same run right now.
        ApprovalError: the run already finished, no such pending call, or a decision
            that does not fit (nothing is recorded then).
        AmbiguousEditError: an ``edit`` without ``call_id`` while several calls wait.
    """
    where = data_dir(folder)
    store = _store(where)
    with store.exclusive(thread_id):
        # Load under the lock: a concurrent approve that got here first has recorded its
        # decision, so this one is checked against it (and refused if it differs).
        return _approve_locked(
            store,
            where,
            thread_id,
            decision,
            arguments=arguments,
            call_id=call_id,
            reason=reason,
            decided_by=decided_by,
            budget=budget,
            secrets=secrets,
        )


def resume_demo(
    thread_id: str,
    *,
    budget: Budget | None = None,
    secrets: Sequence[str] = (),
    folder: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Continue a stored run with no new decision: a run ``interrupted`` (Ctrl-C,
    SIGTERM) goes on from where it stopped, and a write already approved before the
    interruption is settled by verification, not repeated. A write still waiting for a
    decision pauses the run again (``pending_approval``: decide it with
    :func:`approve_demo`).

    Raises:
        CheckpointError, ApprovalError: as :func:`approve_demo`.
    """
    where = data_dir(folder)
    store = _store(where)
    with store.exclusive(thread_id):
        return _approve_locked(
            store,
            where,
            thread_id,
            None,
            arguments=None,
            call_id=None,
            reason="",
            decided_by="",
            budget=budget,
            secrets=secrets,
        )


def _repeated_decision(
    thread_id: str,
    snapshot: dict[str, Any],
    decision: DecisionKind,
    arguments: dict[str, Any] | None,
    call_id: str | None,
) -> None:
    """Accept a decision on a run with nothing pending only as the repeat of the one
    recorded (the same ``approve`` again after an interruption settled the write): the
    run then goes on with no new decision.

    Raises:
        ApprovalError: nothing was decided (``resume`` continues such a run), or the
            decision differs from the one recorded.
    """
    recorded = {
        str(k): v
        for k, v in dict(snapshot.get("decisions") or {}).items()
        if call_id in (None, k) and isinstance(v, dict)
    }
    if not recorded and call_id is not None:
        raise ApprovalError(
            f"run {thread_id!r} has no pending call {call_id!r}", tool_call_id=call_id
        )
    if not recorded:
        raise ApprovalError(
            f"run {thread_id!r} has no pending approval; continue it with: agent-contract resume"
        )
    for cid, data in recorded.items():
        if data.get("decision") != decision or (
            decision == "edit" and data.get("arguments") != arguments
        ):
            raise ApprovalError(
                f"call {cid!r} was already decided ({data.get('decision')}); a different "
                "decision is refused",
                tool_call_id=cid,
            )


def _approve_locked(
    store: RunStore,
    where: Path,
    thread_id: str,
    decision: DecisionKind | None,
    *,
    arguments: dict[str, Any] | None,
    call_id: str | None,
    reason: str,
    decided_by: str,
    budget: Budget | None,
    secrets: Sequence[str],
) -> RunResult:
    harness, snapshot = store.load(thread_id)
    if harness.startswith(FINISHED_PREFIX):
        stop = snapshot.get("finished", {}).get("stop_reason", "?")
        raise ApprovalError(f"run {thread_id!r} already finished ({stop}); nothing to resume")
    budget = _held_budget(snapshot.get("budget"), budget)
    contract = Contract(demo_tools(where), budget=budget, secrets=secrets)
    state, _ = contract.restore(snapshot)
    pending = [p for p in state.pending_approvals() if call_id in (None, p.tool_call_id)]
    if decision is not None and not pending:
        _repeated_decision(thread_id, snapshot, decision, arguments, call_id)
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
        store.save(thread_id, data, harness=harness)

    runner = durable_runner(harness)
    with _recorded(store, harness):
        result = runner.resume(
            DemoModel(), contract, snapshot, approvals, checkpoint=checkpoint, folder=where
        )
    _record(store, result, harness)
    return result
