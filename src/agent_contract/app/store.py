"""Durable storage of paused runs: one SQLite file, one row per thread.

A paused run (``pending_approval``) is stored as its JSON snapshot under a thread id.
Reading fails closed: a missing thread, a locked or corrupt file, or a snapshot that
does not parse raise :class:`~agent_contract.errors.CheckpointError`; nothing ever
starts afresh in place of a run that cannot be read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ..errors import CheckpointError

__all__ = ["FINISHED_PREFIX", "LOCK_TIMEOUT_SECONDS", "RunStore"]

LOCK_TIMEOUT_SECONDS: Final = 1.0
FINISHED_PREFIX: Final = "finished:"
"""Harness column prefix of a thread whose run has ended (see :meth:`RunStore.finish`)."""


class RunStore:
    """Paused runs in a SQLite file (created on first use).

    Args:
        path: the database file.

    Raises:
        CheckpointError: the file cannot be opened, is locked or is corrupt.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS runs (thread_id TEXT PRIMARY KEY, harness TEXT NOT "
                "NULL, snapshot TEXT NOT NULL, updated_at REAL NOT NULL)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_SECONDS, isolation_level=None)
        except sqlite3.Error as exc:
            raise CheckpointError(f"cannot open run store: {exc}", path=str(self.path)) from exc
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise CheckpointError(
                f"run store is locked or unreadable: {exc}", path=str(self.path)
            ) from exc
        except sqlite3.DatabaseError as exc:
            raise CheckpointError(f"run store is corrupt: {exc}", path=str(self.path)) from exc
        finally:
            db.close()

    def save(
        self, thread_id: str, snapshot: Mapping[str, Any], *, harness: str = "offline"
    ) -> None:
        """Store (or replace) the snapshot of ``thread_id``.

        Raises:
            CheckpointError: the store is locked or corrupt.
        """
        text = json.dumps(snapshot, ensure_ascii=False, sort_keys=True)
        with self._connect() as db:
            db.execute(
                "INSERT INTO runs (thread_id, harness, snapshot, updated_at) VALUES (?,?,?,?) "
                "ON CONFLICT(thread_id) DO UPDATE SET harness = excluded.harness, "
                "snapshot = excluded.snapshot, updated_at = excluded.updated_at",
                (thread_id, harness, text, time.time()),
            )

    @contextmanager
    def exclusive(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's lock for a resume: one process at a time decides and writes.

        An OS file lock (``flock``) next to the store: released by the kernel when the
        holder exits, even if it is killed, so a crash never leaves a stale lock behind.

        Raises:
            CheckpointError: another process holds the lock (a concurrent ``approve``).
        """
        import fcntl  # POSIX; the CLI's durable approval flow needs it

        folder = self.path.parent / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]
        with (folder / f"{name}.lock").open("a+") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise CheckpointError(
                    f"run {thread_id!r} is being resumed by another process; try again "
                    "when it has finished",
                    path=str(self.path),
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def finish(self, thread_id: str, summary: Mapping[str, Any], *, harness: str) -> None:
        """Mark ``thread_id`` finished, keeping the result summary; it cannot be resumed.

        Raises:
            CheckpointError: the store is locked or corrupt.
        """
        self.save(thread_id, {"finished": dict(summary)}, harness=f"{FINISHED_PREFIX}{harness}")

    def load(self, thread_id: str) -> tuple[str, dict[str, Any]]:
        """``(harness, snapshot)`` of ``thread_id``.

        Raises:
            CheckpointError: no such thread, the store is locked or corrupt, or the
                snapshot does not parse.
        """
        with self._connect() as db:
            row = db.execute(
                "SELECT harness, snapshot FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        if row is None:
            raise CheckpointError(
                f"no paused run {thread_id!r} in {self.path}", path=str(self.path)
            )
        try:
            snapshot = json.loads(row[1])
        except ValueError as exc:
            raise CheckpointError(
                f"snapshot of {thread_id!r} is corrupt", path=str(self.path)
            ) from exc
        if not isinstance(snapshot, dict):
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=str(self.path))
        return str(row[0]), snapshot
