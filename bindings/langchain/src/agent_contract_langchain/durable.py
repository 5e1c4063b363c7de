"""A file-backed LangGraph checkpointer whose failures are typed.

``sqlite_checkpointer(path)`` opens LangGraph's ``SqliteSaver`` on a private SQLite file,
its values sealed and read with an allowlist of types (:mod:`.sealed`), and
``async_sqlite_checkpointer(path)`` its ``AsyncSqliteSaver`` in the running event loop
(for ``arun_agent`` / ``aresume_agent`` in that same loop: an async saver belongs to the
loop that opened it). A file that is not a database, is locked past the timeout, or
otherwise cannot be read raises :class:`~agent_contract.errors.CheckpointError` when it
is opened, instead of a LangGraph or sqlite3 error later, and never silently starts a
fresh thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.datafolder import BUSY_TIMEOUT_SECONDS, lock_timeout, private_file
from agent_contract.errors import CheckpointError
from agent_contract.sealing import folder_key

from .sealed import SealedSerializer

__all__ = ["LOCK_TIMEOUT_SECONDS", "async_sqlite_checkpointer", "sqlite_checkpointer"]

LOCK_TIMEOUT_SECONDS: Final = BUSY_TIMEOUT_SECONDS
"""How long a checkpointer waits for another process's lock, in seconds."""


def _prepare(path: str | Path, key: bytes | None) -> tuple[Path, SealedSerializer]:
    """The checkpoint file, created private when missing (symlinks refused), and the
    serializer sealed with ``key`` (default: the key of the file's folder)."""
    target = Path(path)
    private_file(target)
    return target, SealedSerializer(key if key is not None else folder_key(target.parent))


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
def sqlite_checkpointer(path: str | Path, *, key: bytes | None = None) -> Iterator[SqliteSaver]:
    """A ``SqliteSaver`` on ``path`` (created private if missing), closed on exit. Its rows
    are sealed and read with an allowlist (:class:`SealedSerializer`, keyed with ``key``,
    default the data folder's key); it waits up to
    :func:`~agent_contract.datafolder.lock_timeout` seconds for another process's lock.

    Raises:
        CheckpointError: the file is corrupt, locked, unsafe or cannot be opened.
    """
    target, serde = _prepare(path, key)
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
    path: str | Path, *, key: bytes | None = None
) -> AsyncIterator[Any]:
    """An ``AsyncSqliteSaver`` on ``path`` (created if missing), opened in the running
    event loop and closed on exit; drive the graph in the same loop (``arun_agent``,
    ``aresume_agent``).

    Raises:
        CheckpointError: the file is corrupt, locked, or cannot be opened.
    """
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    target, serde = _prepare(path, key)
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
