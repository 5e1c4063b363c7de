"""A file-backed LangGraph checkpointer whose failures are typed, and the ``langchain``
harness's durable runner over it.

``sqlite_checkpointer(path)`` opens LangGraph's ``SqliteSaver`` on a private SQLite file,
its values sealed and read with an allowlist of types (:mod:`.sealed`), and
``async_sqlite_checkpointer(path)`` its ``AsyncSqliteSaver`` in the running event loop
(for ``arun_agent`` / ``aresume_agent`` in that same loop: an async saver belongs to the
loop that opened it). A file that is not a database, is locked past the timeout, or
otherwise cannot be read raises :class:`~agent_contract.errors.CheckpointError` when it
is opened, instead of a LangGraph or sqlite3 error later, and never silently starts a
fresh thread.

**The durable runner.** This module is the runner
(:func:`~agent_contract_langchain.plugin.sqlite_agent_runner` hands it on when it is used,
so that the plugin module imports no framework): :func:`run`, :func:`resume`,
:func:`forget` and :func:`kept`. A run keeps its graph in ``folder/checkpoints.sqlite3``
(sealed values, an allowlist of types: :mod:`.sealed`). When it pauses, the paused
checkpoint's seal is added to the run's snapshot (which the app stores authenticated); a
resume first checks that seal (:func:`~agent_contract_langchain.sealed.check_paused`), so
a deleted, rolled-back or edited checkpoint, and one added under it before any decision
was recorded (a graft), is refused before LangGraph reads anything. A
finished run's checkpoints are dropped (:func:`forget`); :func:`kept` lists the threads
the file holds, for ``agent-contract gc``.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.approval import Approval
from agent_contract.datafolder import BUSY_TIMEOUT_SECONDS, lock_timeout, private_file
from agent_contract.errors import PAUSE_REASONS, CheckpointError
from agent_contract.model import Model
from agent_contract.runtime import Checkpoint, Contract, RunInput, RunInterrupted, RunResult
from agent_contract.sealing import folder_key
from agent_contract.stores import Store

from .harness import run_agent_input
from .resuming import resume_or_reconcile
from .sealed import (
    RESUMED_KEY,
    SEAL_KEY,
    SealedSerializer,
    allowed_type_keys,
    check_paused,
    seal_paused,
)

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_STORE",
    "LOCK_TIMEOUT_SECONDS",
    "async_sqlite_checkpointer",
    "forget",
    "kept",
    "resume",
    "run",
    "sqlite_checkpointer",
]

LOCK_TIMEOUT_SECONDS: Final = BUSY_TIMEOUT_SECONDS
"""How long a checkpointer waits for another process's lock, in seconds."""


def _prepare(
    path: str | Path, key: bytes | None, allowed_types: Iterable[type | str]
) -> tuple[Path, SealedSerializer]:
    """The checkpoint file, created private when missing (symlinks refused), and the
    serializer sealed with ``key`` (default: the key of the file's folder) that also
    stores the team's ``allowed_types``."""
    entries = allowed_types if isinstance(allowed_types, str | type) else tuple(allowed_types)
    allowed_type_keys(entries)  # a refused entry is refused before any file is made
    target = Path(path)
    private_file(target)
    return target, SealedSerializer(
        key if key is not None else folder_key(target.parent), allowed_types=entries
    )


_CANNOT_OPEN: Final = "cannot open checkpoint file"
_CORRUPT: Final = "checkpoint file is corrupt or locked"


@contextmanager
def _typed(what: str, target: Path, kind: type[sqlite3.Error]) -> Iterator[None]:
    """Raise a ``kind`` error of the block as a :class:`CheckpointError` saying ``what``
    (chained with ``from``), naming the file."""
    try:
        yield
    except kind as exc:
        raise CheckpointError(f"{what}: {exc}", path=str(target)) from exc


@contextmanager
def sqlite_checkpointer(
    path: str | Path, *, key: bytes | None = None, allowed_types: Iterable[type | str] = ()
) -> Iterator[SqliteSaver]:
    """A ``SqliteSaver`` on ``path`` (created private if missing), closed on exit. Its rows
    are sealed and read with an allowlist (:class:`SealedSerializer`, keyed with ``key``,
    default the data folder's key); it waits up to
    :func:`~agent_contract.datafolder.lock_timeout` seconds for another process's lock.

    Args:
        allowed_types: the team's own classes its graph state may hold (pydantic v2
            models, dataclasses, enums, named tuples), as class objects or
            ``"module.Name"`` strings; any other such type is refused before the graph
            runs (:class:`~agent_contract_langchain.sealed.TypeNotAllowedError`).

    Raises:
        ConfigurationError: an ``allowed_types`` entry is refused
            (:func:`~agent_contract_langchain.sealed.allowed_type_keys`).
        CheckpointError: the file is corrupt, locked, unsafe or cannot be opened.
    """
    target, serde = _prepare(path, key, allowed_types)
    with _typed(_CANNOT_OPEN, target, sqlite3.Error):
        conn = sqlite3.connect(target, timeout=lock_timeout(), check_same_thread=False)
    try:
        saver = SqliteSaver(conn, serde=serde)
        with _typed(_CORRUPT, target, sqlite3.DatabaseError):
            saver.setup()
            conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()
            # SqliteSaver runs in WAL mode, where another connection's write lock does
            # not block readers: without this probe a locked file is only noticed when
            # the graph stores its next checkpoint, after the tools (a write) have run.
            conn.execute("BEGIN IMMEDIATE")
            conn.rollback()
        yield saver
    finally:
        conn.close()


@asynccontextmanager
async def async_sqlite_checkpointer(
    path: str | Path, *, key: bytes | None = None, allowed_types: Iterable[type | str] = ()
) -> AsyncIterator[Any]:
    """An ``AsyncSqliteSaver`` on ``path`` (created if missing), opened in the running
    event loop and closed on exit; drive the graph in the same loop (``arun_agent``,
    ``aresume_agent``). ``allowed_types``: as :func:`sqlite_checkpointer`.

    Raises:
        ConfigurationError: an ``allowed_types`` entry is refused.
        CheckpointError: the file is corrupt, locked, or cannot be opened.
    """
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    target, serde = _prepare(path, key, allowed_types)
    with _typed(_CANNOT_OPEN, target, sqlite3.Error):
        conn = await aiosqlite.connect(target, timeout=lock_timeout())
    try:
        saver = AsyncSqliteSaver(conn, serde=serde)
        with _typed(_CORRUPT, target, sqlite3.DatabaseError):
            await saver.setup()
            await (await conn.execute("SELECT COUNT(*) FROM checkpoints")).fetchone()
            await conn.execute("BEGIN IMMEDIATE")  # a locked file is noticed here (see above)
            await conn.rollback()
        yield saver
    finally:
        await conn.close()


# -- the durable runner ------------------------------------------------------------------

CHECKPOINT_STORE: Final = "checkpoints"
"""The checkpoints' store name (:meth:`~agent_contract.stores.Store.database`)."""
CHECKPOINT_FILE: Final = f"{CHECKPOINT_STORE}.sqlite3"
"""LangGraph's checkpointer file in the data folder (see
:func:`~agent_contract_langchain.plugin.sqlite_agent_runner`)."""


def _sealed(result: RunResult, conn: Any, key: bytes) -> RunResult:
    """``result`` with its paused checkpoint's seal in the snapshot (a finished run's
    result as it is)."""
    if result.stop_reason not in PAUSE_REASONS or result.snapshot is None:
        return result
    snapshot = {**result.snapshot, SEAL_KEY: seal_paused(conn, result.run_id, key)}
    return dataclasses.replace(result, snapshot=snapshot)


def run(model: Model, contract: Contract, options: RunInput, *, store: Store) -> RunResult:
    """:func:`~agent_contract_langchain.harness.run_agent_input` with the sealed
    checkpointer (:func:`sqlite_checkpointer` on ``folder/checkpoints.sqlite3``).

    Raises:
        CheckpointError: the checkpoint file cannot be opened.
        RunInterrupted: a signal interrupted the run (its snapshot sealed).
    """
    key = folder_key(store.folder)
    with sqlite_checkpointer(store.sqlite_file(CHECKPOINT_STORE), key=key) as saver:
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
    store: Store,
) -> RunResult:
    """Check the paused checkpoint's seal, then
    :func:`~agent_contract_langchain.resuming.resume_or_reconcile`.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the checkpoint is not the one the run paused on, or cannot be
            read.
        RunInterrupted: a signal interrupted the run (its snapshot sealed).
    """
    key = folder_key(store.folder, create=False)
    run_id = str(snapshot.get("run_id", ""))
    sealed = snapshot.get(SEAL_KEY)
    with sqlite_checkpointer(store.sqlite_file(CHECKPOINT_STORE), key=key) as saver:
        check_paused(saver.conn, run_id, sealed, key, resumed=bool(snapshot.get(RESUMED_KEY)))

        def keep(data: dict[str, Any]) -> None:
            # The graph has not moved yet; from here on it may (a crash can leave it
            # further on), and the stored run says so.
            checkpoint({**data, SEAL_KEY: sealed, RESUMED_KEY: True})

        try:
            result = resume_or_reconcile(
                model, contract, snapshot, approvals, checkpointer=saver, checkpoint=keep
            )
        except RunInterrupted as exc:
            raise RunInterrupted(_sealed(exc.result, saver.conn, key), exc.cause) from exc.cause
        return _sealed(result, saver.conn, key)


def forget(run_id: str, *, store: Store) -> None:
    """Drop every checkpoint and pending write of thread ``run_id`` (a finished run)."""
    path = store.sqlite_file(CHECKPOINT_STORE)
    if not path.exists():
        return
    with sqlite_checkpointer(path) as saver:
        saver.delete_thread(run_id)


def kept(*, store: Store) -> list[str]:
    """The thread ids the store's checkpoints are kept for."""
    path = store.sqlite_file(CHECKPOINT_STORE)
    if not path.exists():
        return []
    with sqlite_checkpointer(path) as saver:
        rows = saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return sorted(str(row[0]) for row in rows)
