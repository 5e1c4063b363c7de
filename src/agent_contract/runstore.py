"""Durable storage of paused runs: one authenticated row per thread (and a sealed record of
its newest version), in the store's database (:mod:`agent_contract.stores`): the data
folder's ``runs.sqlite3``, or the ``runs`` and ``run_versions`` tables of a PostgreSQL
database, with the same seals, encryption and refusals on both.

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

**Stored state cannot go back in time.** A seal proves who wrote a row, not that it is
the newest: a copy of a paused run's row, taken before a human rejected its write and
put back afterwards, carries a valid seal. So every row also carries its version (a
counter inside the sealed text, :data:`VERSION_FIELD`), and a second table,
``run_versions``, holds the newest version of each thread, sealed with the same key
(thread id, version, and the harness column it was written with). :meth:`RunStore.save`
bumps both in one transaction; :meth:`RunStore.load_run` refuses a row whose version is
not the newest one recorded (an older row put back: ``restored``), a row newer than the
record (the record was deleted or rolled back: ``deleted``), and a version record that
fails its seal. What this does not cover: rolling back a thread's row *and* its version
record together (restoring ``runs.sqlite3`` or the PostgreSQL database as a whole, or the
whole folder, from an earlier copy): nothing left in the folder is newer than what was put back.
A row written before versions existed (no :data:`VERSION_FIELD`) counts as version 0:
it is read while no version record of its thread exists.

Reading fails closed: a missing thread, a locked or corrupt file, a row whose seal does
not match (an edited store, a forged row, another folder's key) and a store written by
an older version without seals raise :class:`~agent_contract.errors.CheckpointError`;
nothing ever starts afresh in place of a run that cannot be read. Files are private
(:mod:`agent_contract.datafolder`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .datafolder import BUSY_TIMEOUT_SECONDS, DataFolderError, private_folder
from .errors import CheckpointError
from .sealing import decrypt, encrypt, seal, store_key, subkey, verify
from .stores import Connection, Database, Store, column_names, table_names

__all__ = [
    "CIPHER_LABEL",
    "ENCRYPTED_PREFIX",
    "FINISHED_PREFIX",
    "LOCK_TIMEOUT_SECONDS",
    "RUNS_LABEL",
    "SECRETS_FIELD",
    "VERSIONS_LABEL",
    "VERSION_FIELD",
    "RollbackError",
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
VERSION_FIELD: Final = "_agent_contract_version"
"""The stored row's field holding its version (1 for the first save of a thread, then
one more per save; inside the encrypted, sealed text)."""
VERSIONS_LABEL: Final = "runs-versions/v1"
"""The seal's first part in a ``run_versions`` row (under the ``runs/v1`` sub-key)."""
_COLUMNS: Final = ("thread_id", "harness", "snapshot", "updated_at", "mac")
_EPOCH: Final = {"sqlite": "REAL", "postgresql": "DOUBLE PRECISION"}
"""The column type of epoch seconds (PostgreSQL's ``REAL`` is 4 bytes: whole seconds lost)."""


class RollbackError(CheckpointError):
    """A stored run is not the newest version the store recorded for it (exit 8).

    Attributes:
        thread_id: the run.
        found: ``"restored"`` (the row is older than the version record: an older copy
            was put back), ``"deleted"`` (the row is newer than the record: the record
            was deleted or rolled back) or ``"forged"`` (the record fails its seal).
        row_version: the row's version (0: a row without one).
        newest_version: the version the record holds (0: no record).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        thread_id: str,
        found: str,
        row_version: int,
        newest_version: int,
    ) -> None:
        super().__init__(message, path=path)
        self.thread_id = thread_id
        self.found = found
        self.row_version = row_version
        self.newest_version = newest_version


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
    """Paused runs in the store's database (tables created on first use; a SQLite file
    is private).

    Args:
        location: the run store's :class:`~agent_contract.stores.Database`
            (``Store.database("runs")``), or the path of a SQLite file (``runs.sqlite3``
            in a data folder: the same as ``Store.sqlite(folder).database("runs")``).
        key: the data folder's key (default: read from, or created in, the data
            folder: :func:`~agent_contract.sealing.folder_key`).

    Raises:
        CheckpointError: the store cannot be opened, is locked, unreachable or corrupt,
            or was written by an older version without seals.
    """

    def __init__(
        self, location: Database | str | os.PathLike[str], *, key: bytes | None = None
    ) -> None:
        if isinstance(location, Database):
            self.database = location
        else:
            path = Path(location)
            if not path.name.endswith(".sqlite3"):
                raise CheckpointError(
                    f"a run store file is named NAME.sqlite3, not {str(path)!r}", path=str(path)
                )
            self.database = Store.sqlite(path.parent).database(path.name[: -len(".sqlite3")])
        self.where = self.database.where
        if self.database.dialect == "sqlite":
            private_folder(self.database.store.sqlite_file(self.database.name).parent)
        root = key if key is not None else store_key(self.database.store)
        self._key = subkey(root, RUNS_LABEL)
        self._cipher = subkey(root, CIPHER_LABEL)
        columns, versioned = self._layout()
        if not columns:  # a new store (a crowd of readers takes no write lock here)
            self._create()
            columns, versioned = self._layout()
        if columns != _COLUMNS:
            raise CheckpointError(
                f"the run store {self.where!r} was written by an older agent-contract "
                "without authentication (or is not a run store); its runs are refused. "
                "Finish or discard them with that version, or use a new data folder",
                path=self.where,
            )
        if not versioned:  # a store from before versions: add the table
            self._create()

    @property
    def path(self) -> Path:
        """The SQLite file (``runs.sqlite3``).

        Raises:
            ConfigurationError: the store is PostgreSQL (no file).
        """
        return self.database.store.sqlite_file(self.database.name)

    def _layout(self) -> tuple[tuple[str, ...], bool]:
        """``(columns of runs, whether run_versions exists)`` (a read: no lock taken)."""
        with self._db(write=False) as db:
            columns = column_names(db, self.database.dialect, "runs")
            versioned = "run_versions" in table_names(db, self.database.dialect)
        return columns, versioned

    def _create(self) -> None:
        """Create the ``runs`` and ``run_versions`` tables where they are missing."""
        epoch = _EPOCH[self.database.dialect]
        with self._db(lock="runs:schema") as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS runs (thread_id TEXT PRIMARY KEY, harness TEXT NOT "
                f"NULL, snapshot TEXT NOT NULL, updated_at {epoch} NOT NULL, mac TEXT NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS run_versions (thread_id TEXT PRIMARY KEY, "
                f"version INTEGER NOT NULL, harness TEXT NOT NULL, updated_at {epoch} NOT NULL, "
                "mac TEXT NOT NULL)"
            )

    @contextmanager
    def _db(self, *, write: bool = True, lock: str | None = None) -> Iterator[Connection]:
        """One transaction (a write one unless ``write`` is false; on PostgreSQL, under
        the advisory lock ``lock`` when given), its failures named (locked, read-only,
        corrupt, unavailable).

        Raises:
            CheckpointError: the store is corrupt; a :class:`DataFolderError` when it is
                locked past the timeout, read-only, unsafe or unreachable.
        """
        try:
            with self.database.transaction(write=write, lock=lock) as db:
                yield db
        except DataFolderError as exc:
            raise self._named(exc) from exc

    def _named(self, exc: DataFolderError) -> CheckpointError:
        """``exc`` in the run store's words."""
        where = self.where
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
        if exc.reason == "unavailable":
            return DataFolderError(
                f"run store cannot be reached: {exc}", path=where, reason="unavailable"
            )
        return exc

    def _seal(self, thread_id: str, harness: str, text: str) -> str:
        return seal(self._key, thread_id, harness, text)

    def _newest(self, db: Connection, thread_id: str) -> tuple[int, str, float]:
        """``(version, harness column, updated_at)`` of the thread's version record, its
        seal checked (``updated_at``, epoch seconds, is not sealed: it only dates the
        record in a refusal's message); ``(0, "", 0.0)`` when it has none.

        Raises:
            RollbackError: the record fails its seal (``found="forged"``).
        """
        row = db.execute(
            "SELECT version, harness, updated_at, mac FROM run_versions WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        if row is None:
            return 0, "", 0.0
        version, harness, updated, mac = row
        if not (
            isinstance(version, int)
            and isinstance(harness, str)
            and isinstance(updated, int | float)
            and not isinstance(version, bool)
            and verify(self._key, mac, VERSIONS_LABEL, thread_id, str(version), harness)
        ):
            raise RollbackError(
                f"the version record of run {thread_id!r} failed authentication: the run "
                "store was changed outside agent-contract; the run is refused",
                path=self.where,
                thread_id=thread_id,
                found="forged",
                row_version=-1,
                newest_version=-1,
            )
        return version, harness, float(updated)

    def save(
        self,
        thread_id: str,
        snapshot: Mapping[str, Any],
        *,
        harness: str = "offline",
        secrets: Sequence[str] = (),
    ) -> None:
        """Store (or replace) the snapshot of ``thread_id``, encrypted and sealed, with
        the run's ``secrets`` (kept for :meth:`load_run`, encrypted with it), as the
        thread's next version (the row's and the version record's, in one transaction).

        Raises:
            CheckpointError: the store is locked, read-only or corrupt.
            RollbackError: the thread's version record fails its seal (nothing is
                written over it).
        """
        record = dict(snapshot)
        if secrets:
            record[SECRETS_FIELD] = sorted(set(secrets))
        with self._db(lock=f"run:{thread_id}") as db:
            # Read the newest version and write the next one in one write transaction:
            # two savers of a thread cannot write the same version.
            version = self._newest(db, thread_id)[0] + 1
            record[VERSION_FIELD] = version
            text = json.dumps(record, ensure_ascii=False, sort_keys=True)
            stored = ENCRYPTED_PREFIX + base64.b64encode(
                encrypt(self._cipher, text.encode("utf-8"))
            ).decode("ascii")
            now = time.time()
            db.execute(
                "INSERT INTO runs (thread_id, harness, snapshot, updated_at, mac) VALUES "
                "(?,?,?,?,?) ON CONFLICT(thread_id) DO UPDATE SET harness = excluded.harness, "
                "snapshot = excluded.snapshot, updated_at = excluded.updated_at, "
                "mac = excluded.mac",
                (thread_id, harness, stored, now, self._seal(thread_id, harness, stored)),
            )
            db.execute(
                "INSERT INTO run_versions (thread_id, version, harness, updated_at, mac) "
                "VALUES (?,?,?,?,?) ON CONFLICT(thread_id) DO UPDATE SET "
                "version = excluded.version, harness = excluded.harness, "
                "updated_at = excluded.updated_at, mac = excluded.mac",
                (
                    thread_id,
                    version,
                    harness,
                    now,
                    seal(self._key, VERSIONS_LABEL, thread_id, str(version), harness),
                ),
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
            RollbackError: the row is not the newest version recorded for the thread
                (see the module doc).
        """
        with self._db(write=False) as db:
            row = db.execute(
                "SELECT harness, snapshot, mac FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            newest = self._newest(db, thread_id)
        if row is None:
            raise CheckpointError(f"no paused run {thread_id!r} in {self.where}", path=self.where)
        harness, text, mac = row
        if not (
            isinstance(harness, str)
            and isinstance(text, str)
            and verify(self._key, mac, thread_id, harness, text)
        ):
            raise CheckpointError(
                f"the stored run {thread_id!r} failed authentication: the run store was "
                "changed outside agent-contract (or sealed with another key); it is refused",
                path=self.where,
            )
        try:
            snapshot = json.loads(self.decode(text))
        except ValueError as exc:
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=self.where) from exc
        if not isinstance(snapshot, dict):
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=self.where)
        secrets = snapshot.pop(SECRETS_FIELD, [])
        if not (isinstance(secrets, list) and all(isinstance(x, str) for x in secrets)):
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=self.where)
        version = snapshot.pop(VERSION_FIELD, 0)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise CheckpointError(f"snapshot of {thread_id!r} is corrupt", path=self.where)
        self._check_newest(thread_id, harness, version, newest)
        return StoredRun(harness, snapshot, tuple(secrets))

    def _check_newest(
        self, thread_id: str, harness: str, version: int, newest: tuple[int, str, float]
    ) -> None:
        """Refuse a row that is not the newest version recorded (see the module doc).

        Raises:
            RollbackError: ``found="restored"`` or ``"deleted"``.
        """
        latest, latest_harness, when = newest
        if version == latest:
            return
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))
        if version < latest:
            state = (
                "finished"
                if latest_harness.startswith(FINISHED_PREFIX)
                else "paused or in progress"
            )
            raise self._rollback(
                f"the stored run {thread_id!r} is an older copy put back in the run store: "
                f"the row is version {version} ({harness.removeprefix(FINISHED_PREFIX)}), but the "
                f"store recorded version {latest} ({latest_harness.removeprefix(FINISHED_PREFIX)}: "
                f"{state}, written {stamp}); decisions made "
                "since cannot be undone by restoring a row, so the run is refused",
                thread_id,
                "restored",
                version,
                latest,
            )
        recorded = f"version {latest}" if latest else "no version record"
        raise self._rollback(
            f"the stored run {thread_id!r} is version {version}, but the run store holds "
            f"{recorded} for it: a newer record was deleted or rolled back outside "
            "agent-contract, so the run is refused",
            thread_id,
            "deleted",
            version,
            latest,
        )

    def _rollback(
        self, message: str, thread_id: str, found: str, version: int, latest: int
    ) -> RollbackError:
        """The refusal of ``thread_id``'s row, version ``version``, when the store
        recorded ``latest`` (``found``: ``"restored"`` or ``"deleted"``)."""
        return RollbackError(
            message,
            path=self.where,
            thread_id=thread_id,
            found=found,
            row_version=version,
            newest_version=latest,
        )

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
            removed = 0
            for t in thread_ids:
                removed += db.execute("DELETE FROM runs WHERE thread_id = ?", (t,)).rowcount
                # Its version record goes too: a copy of the row put back later has a
                # version and no record, and is refused.
                db.execute("DELETE FROM run_versions WHERE thread_id = ?", (t,))
            return removed

    @contextmanager
    def exclusive(self, thread_id: str) -> Iterator[None]:
        """Hold the thread's lock for a resume: one process at a time decides and writes
        (:meth:`~agent_contract.stores.Database.session_lock`: an OS file lock in
        ``locks/`` next to a SQLite store, a session-level advisory lock on PostgreSQL;
        either is released when its holder exits, even if it is killed, so a crash never
        leaves a stale lock behind).

        Raises:
            CheckpointError: another process holds the lock (a concurrent ``approve``),
                or the lock cannot be taken (a lock file that cannot be made, a server
                that cannot be reached).
        """
        busy = (
            f"run {thread_id!r} is being resumed by another process; try again when it has finished"
        )
        # Not the name save() locks (``run:<id>``): PostgreSQL's session and transaction
        # advisory locks share one space, and the holder saves while it holds this one.
        with self.database.session_lock(f"resume:{thread_id}", busy=busy):
            yield
