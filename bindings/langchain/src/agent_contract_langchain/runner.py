"""The ``langchain`` harness's durable runner: this module is the runner
(:func:`~agent_contract_langchain.plugin.sqlite_agent_runner` hands it on when it is used,
so that the plugin module imports no framework).

A run keeps its graph in ``folder/checkpoints.sqlite3`` (sealed values, an allowlist of
types: :mod:`.sealed`). When it pauses, the paused checkpoint's seal is added to the
run's snapshot (which the app stores authenticated); a resume first checks that seal
(:func:`~agent_contract_langchain.sealed.check_paused`), so a deleted, rolled-back or
edited checkpoint is refused before LangGraph reads anything. A finished run's
checkpoints are dropped (:func:`forget`); :func:`kept` lists the threads the file holds,
for ``agent-contract gc``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from agent_contract.approval import Approval
from agent_contract.errors import PAUSE_REASONS
from agent_contract.model import Model
from agent_contract.runtime import Checkpoint, Contract, RunInput, RunInterrupted, RunResult
from agent_contract.sealing import folder_key

from .durable import sqlite_checkpointer
from .harness import run_agent_input
from .resuming import resume_or_reconcile
from .sealed import SEAL_KEY, check_paused, seal_paused

__all__ = ["CHECKPOINT_FILE", "forget", "kept", "resume", "run"]

CHECKPOINT_FILE: Final = "checkpoints.sqlite3"
"""LangGraph's checkpointer file in the data folder (see
:func:`~agent_contract_langchain.plugin.sqlite_agent_runner`)."""


def _sealed(result: RunResult, conn: Any, key: bytes) -> RunResult:
    """``result`` with its paused checkpoint's seal in the snapshot (a finished run's
    result as it is)."""
    if result.stop_reason not in PAUSE_REASONS or result.snapshot is None:
        return result
    snapshot = {**result.snapshot, SEAL_KEY: seal_paused(conn, result.run_id, key)}
    return dataclasses.replace(result, snapshot=snapshot)


def run(model: Model, contract: Contract, options: RunInput, *, folder: Path) -> RunResult:
    """:func:`~agent_contract_langchain.harness.run_agent_input` with the sealed
    checkpointer.

    Raises:
        CheckpointError: the checkpoint file cannot be opened.
        RunInterrupted: a signal interrupted the run (its snapshot sealed).
    """
    key = folder_key(folder)
    with sqlite_checkpointer(folder / CHECKPOINT_FILE, key=key) as saver:
        try:
            result = run_agent_input(model, contract, options, checkpointer=saver)
        except RunInterrupted as exc:
            raise RunInterrupted(_sealed(exc.result, saver.conn, key), exc.cause) from exc.cause
        return _sealed(result, saver.conn, key)


def resume(
    model: Model,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval],
    *,
    checkpoint: Checkpoint,
    folder: Path,
) -> RunResult:
    """Check the paused checkpoint's seal, then
    :func:`~agent_contract_langchain.resuming.resume_or_reconcile`.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the checkpoint is not the one the run paused on, or cannot be
            read.
        RunInterrupted: a signal interrupted the run (its snapshot sealed).
    """
    key = folder_key(folder, create=False)
    run_id = str(snapshot.get("run_id", ""))
    sealed = snapshot.get(SEAL_KEY)
    with sqlite_checkpointer(folder / CHECKPOINT_FILE, key=key) as saver:
        check_paused(saver.conn, run_id, sealed, key)

        def keep(data: dict[str, Any]) -> None:
            checkpoint({**data, SEAL_KEY: sealed})  # the graph has not moved yet

        try:
            result = resume_or_reconcile(
                model, contract, snapshot, approvals, checkpointer=saver, checkpoint=keep
            )
        except RunInterrupted as exc:
            raise RunInterrupted(_sealed(exc.result, saver.conn, key), exc.cause) from exc.cause
        return _sealed(result, saver.conn, key)


def forget(run_id: str, *, folder: Path) -> None:
    """Drop every checkpoint and pending write of thread ``run_id`` (a finished run)."""
    path = folder / CHECKPOINT_FILE
    if not path.exists():
        return
    with sqlite_checkpointer(path) as saver:
        saver.delete_thread(run_id)


def kept(*, folder: Path) -> list[str]:
    """The thread ids ``folder/checkpoints.sqlite3`` holds checkpoints for."""
    path = folder / CHECKPOINT_FILE
    if not path.exists():
        return []
    with sqlite_checkpointer(path) as saver:
        rows = saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return sorted(str(row[0]) for row in rows)
