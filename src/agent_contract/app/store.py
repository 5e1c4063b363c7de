"""Durable storage of paused runs: one SQLite file, one authenticated row per thread.

A paused run (``pending_approval``, ``interrupted``) is stored as its JSON snapshot under
a thread id; a finished run keeps its summary. Every row is sealed with an HMAC-SHA256
of the thread id, the harness column and the snapshot text, keyed with the data folder's
key (:mod:`agent_contract.sealing`, sub-key ``runs/v1``), and checked before anything in
it is used.

The snapshot text is stored encrypted (:func:`agent_contract.sealing.encrypt`, sub-key
``runs-cipher/v1``; the seal covers the stored text), and a run's ``--secret`` values are
kept inside it (:meth:`RunStore.save`'s ``secrets``) so that ``approve`` and ``resume``
redact them without being given them again: the file's bytes never hold a run's secret,
in any spelling, nor any other stored value as it is. Whoever can read the folder's key
can decrypt the rows (like the seals, this guards against those who can read or write the
stores but not the key, not against the owner's account). A sealed row of plain JSON text
(what a holder of the key may write) is read as well.

Reading fails closed: a missing thread, a locked or corrupt file, a row whose seal does
not match (an edited store, a forged row, another folder's key) and a store written by
an older version without seals raise :class:`~agent_contract.errors.CheckpointError`;
nothing ever starts afresh in place of a run that cannot be read. Files are private
(:mod:`agent_contract.datafolder`).
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..datafolder import (
    BUSY_TIMEOUT_SECONDS,
    FILE_MODE,
    DataFolderError,
    connect,
    failure,
    private_folder,
    transaction,
)
from ..errors import CheckpointError
from ..sealing import decrypt, encrypt, folder_key, seal, subkey, verify

__all__ = [
    "CIPHER_LABEL",
    "ENCRYPTED_PREFIX",
    "FINISHED_PREFIX",
    "LOCK_TIMEOUT_SECONDS",
    "RUNS_LABEL",
    "SECRETS_FIELD",
    "RunStore",
    "StoredRun",
]

LOCK_TIMEOUT_SECONDS: Final = BUSY_TIMEOUT_SECONDS
"""How long a store call waits for another process's lock by default, in seconds (see
:func:`agent_contract.datafolder.lock_timeout`)."""

FINISHED_PREFIX: Final = "finished:"
"""Harness column prefix of a thread whose run has ended (see :meth:`RunStore.finish`)."""
RUNS_LABEL: Final = "runs/v1"
"""The sub-key label the run store seals its rows with."""
CIPHER_LABEL: Final = "runs-cipher/v1"
"""The sub-key label the run store encrypts its snapshots with."""
ENCRYPTED_PREFIX: Final = "enc1:"
"""How an encrypted snapshot text starts (then the base64 of nonce and ciphertext)."""
SECRETS_FIELD: Final = "_agent_contract_secrets"
"""The stored row's field holding the run's secrets (inside the encrypted text)."""
_COLUMNS: Final = ("thread_id", "harness", "snapshot", "updated_at", "mac")


@dataclass(frozen=True)
class StoredRun:
    """A stored run, as :meth:`RunStore.load_run` reads it."""

    harness: str
    """The harness column (``finished:<harness>`` once the run ended)."""
    snapshot: dict[str, Any]
    """The snapshot (or ``{"finished": summary}``)."""
    secrets: tuple[str, ...]
    """The secrets the run was given, to redact when it goes on."""


class RunStore:
    """Paused runs in a SQLite file (created on first use, private).

    Args:
        path: the database file, in the data folder.
        key: the data folder's key (default: read from, or created in, ``path``'s folder).

    Raises:
        CheckpointError: the file cannot be opened, is locked or corrupt, or was written
            by an older version without seals.
    """

    def __init__(self, path: str | Path, *, key: bytes | None = None) -> None:
        self.path = Path(path)
        folder = private_folder(self.path.parent)
        root = key if key is not None else folder_key(folder)
        self._key = subkey(root, RUNS_LABEL)
        self._cipher = subkey(root, CIPHER_LABEL)
        with self._db(write=False) as db:
            columns = tuple(row[1] for row in db.execute("PRAGMA table_info(runs)"))
        if not columns:  # a new store (a crowd of readers takes no write lock here)
            self._create()
            with self._db(write=False) as db:
                columns = tuple(row[1] for row in db.execute("PRAGMA table_info(runs)"))
        if columns != _COLUMNS:
            raise CheckpointError(
                f"the run store {str(self.path)!r} was written by an older agent-contract "
                "without authentication (or is not a run store); its runs are refused. "
                "Finish or discard them with that version, or use a new data folder",
                path=str(self.path),
            )

    def _create(self) -> None:
        """Create the ``runs`` table if it is missing."""
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS runs (thread_id TEXT PRIMARY KEY, harness TEXT NOT "
                "NULL, snapshot TEXT NOT NULL, updated_at REAL NOT NULL, mac TEXT NOT NULL)"
            )

    @contextmanager
    def _db(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction (a write one unless ``write`` is false), its failures named
        (locked, read-only, corrupt).

        Raises:
            CheckpointError: the store is corrupt; a :class:`DataFolderError` when it is
                locked past the timeout, read-only or unsafe.
        """
        try:
            conn = connect(self.path)
        except DataFolderError as exc:
            raise self._named(exc) from exc
        try:
            with transaction(conn, write=write) as db:
                yield db
        except sqlite3.DatabaseError as exc:
            raise self._named(failure(exc, repr(str(self.path)), self.path)) from exc
        finally:
            conn.close()

    def _named(self, exc: DataFolderError) -> CheckpointError:
        """``exc`` in the run store's words."""
        where = str(self.path)
        if exc.reason == "corrupt":
            return CheckpointError(f"run store is corrupt: {exc}", path=where)
        if exc.reason == "locked":
            return DataFolderError(
                f"run store is locked or unreadable: {exc}", path=where, reason="locked"
            )
        if exc.reason == "readonly":
            return DataFolderError(
                f"run store cannot be written: {exc}", path=where, reason="readonly"
            )
        return exc

    def _seal(self, thread_id: str, harness: str, text: str) -> str:
        return seal(self._key, thread_id, harness, text)

    def save(
        self,
        thread_id: str,
        snapshot: Mapping[str, Any],
        *,
        harness: str = "offline",
        secrets: Sequence[str] = (),
    ) -> None:
        """Store (or replace) the snapshot of ``thread_id``, encrypted and sealed, with
        the run's ``secrets`` (kept for :meth:`load_run`, encrypted with it).

        Raises:
            CheckpointError: the store is locked, read-only or corrupt.
        """
        record = dict(snapshot)
        if secrets:
            record[SECRETS_FIELD] = sorted(set(secrets))
        text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        stored = ENCRYPTED_PREFIX + base64.b64encode(
            encrypt(self._cipher, text.encode("utf-8"))
        ).decode("ascii")
        mac = self._seal(thread_id, harness, stored)
        with self._db() as db:
            db.execute(
                "INSERT INTO runs (thread_id, harness, snapshot, updated_at, mac) VALUES "
                "(?,?,?,?,?) ON CONFLICT(thread_id) DO UPDATE SET harness = excluded.harness, "
                "snapshot = excluded.snapshot, updated_at = excluded.updated_at, "
                "mac = excluded.mac",
                (thread_id, harness, stored, time.time(), mac),
            )

    def decode(self, stored: str) -> str:
        """The snapshot text of a stored (sealed, already checked) column value:
        decrypted, or as it is when it is plain JSON text.

        Raises:
            ValueError: an encrypted value that does not decode.
        """
        if not stored.startswith(ENCRYPTED_PREFIX):
            return stored
        try:
            blob = base64.b64decode(stored[len(ENCRYPTED_PREFIX) :], validate=True)
            return decrypt(self._cipher, blob).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"an encrypted snapshot does not decode: {exc}") from exc

    def finish(self, thread_id: str, summary: Mapping[str, Any], *, harness: str) -> None:
        """Mark ``thread_id`` finished, keeping the result summary; it cannot be resumed.

        Raises:
            CheckpointError: the store is locked, read-only or corrupt.
        """
        self.save(thread_id, {"finished": dict(summary)}, harness=f"{FINISHED_PREFIX}{harness}")

    def load(self, thread_id: str) -> tuple[str, dict[str, Any]]:
        """``(harness, snapshot)`` of ``thread_id``, once its seal is checked (see
        :meth:`load_run`).

        Raises:
            CheckpointError: as :meth:`load_run`.
        """
        run = self.load_run(thread_id)
        return run.harness, run.snapshot

    def load_run(self, thread_id: str) -> StoredRun:
        """The stored run ``thread_id``, once its seal is checked, decrypted.

        Raises:
            CheckpointError: no such thread, the store is locked or corrupt, the row's
                seal does not match, or the snapshot does not parse.
        """
        with self._db(write=False) as db:
            row = db.execute(
                "SELECT harness, snapshot, mac FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        if row is None:
            raise CheckpointError(
                f"no paused run {thread_id!r} in {self.path}", path=str(self.path)
            )
        harness, text, mac = row
        if not (
            isinstance(harness, str)
            and isinstance(text, str)
            and verify(self._key, mac, thread_id, harness, text)
        ):
            raise CheckpointError(
                f"the stored run {thread_id!r} failed authentication: the run store was "
                "changed outside agent-contract (or sealed with another key); it is refused",
                path=str(self.path),
            )
        try:
            snapshot = json.loads(self.decode(text))
        except ValueError as exc:
            raise CheckpointError(
                f"snapshot of {thread_id!r} is corrupt", path=str(self.path)
            ) from exc
        if not isinstance(snapshot, dict):
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=str(self.path))
        secrets = snapshot.pop(SECRETS_FIELD, [])
        if not (isinstance(secrets, list) and all(isinstance(x, str) for x in secrets)):
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=str(self.path))
        return StoredRun(harness, snapshot, tuple(secrets))

    def threads(self) -> dict[str, tuple[str, float]]:
        """``{thread_id: (harness column, updated_at)}`` of every stored run (unchecked:
        for housekeeping, never to resume).

        Raises:
            CheckpointError: the store is locked or corrupt.
        """
        with self._db(write=False) as db:
            rows = db.execute("SELECT thread_id, harness, updated_at FROM runs").fetchall()
        return {str(t): (str(h), float(u)) for t, h, u in rows}

    def forget(self, thread_ids: list[str]) -> int:
        """Delete the rows of ``thread_ids``; returns how many were deleted.

        Raises:
            CheckpointError: the store is locked, read-only or corrupt.
        """
        with self._db() as db:
            return sum(
                db.execute("DELETE FROM runs WHERE thread_id = ?", (t,)).rowcount
                for t in thread_ids
            )

    @contextmanager
    def exclusive(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's lock for a resume: one process at a time decides and writes.

        An OS file lock (``flock``) on a private file in ``locks/`` next to the store:
        released by the kernel when the holder exits, even if it is killed, so a crash
        never leaves a stale lock behind. The holder removes the file before it lets go
        (a process that opened the old file checks, once it holds the lock, that the file
        is still the one in place, and tries again otherwise), so lock files do not pile
        up, one per thread ever resumed.

        Raises:
            CheckpointError: another process holds the lock (a concurrent ``approve``),
                or the lock file cannot be made.
        """
        folder = private_folder(self.path.parent / "locks")
        name = hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]
        path = folder / f"{name}.lock"
        fd = self._lock(path, thread_id)
        try:
            yield
        finally:
            with suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)  # releases the flock

    def _lock(self, path: Path, thread_id: str) -> int:
        """An open, locked file descriptor on ``path`` (the file in place)."""
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        for _ in range(100):
            try:
                fd = os.open(path, flags, FILE_MODE)
            except OSError as exc:
                raise failure(exc, f"cannot make the lock file {str(path)!r}", path) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                raise CheckpointError(
                    f"run {thread_id!r} is being resumed by another process; try again "
                    "when it has finished",
                    path=str(self.path),
                ) from exc
            try:
                same = os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)  # the holder removed it meanwhile: lock the new one
        raise CheckpointError(f"cannot lock run {thread_id!r}", path=str(self.path))
