"""Tampering with a stored run, for proving that a store refuses what it did not write.

Stored state is input (:mod:`agent_contract.sealing`): a row of the run store
(:mod:`agent_contract.runstore`) that was forged, edited, rolled back or grafted from
another run must be refused when the store is reopened, before anything runs, and the
run's pending approval must not be used up. This module holds the one copy of how such a
row is made, as another local user could (plain SQL on the file, no key):

- ``forged``: a row the store's key did not seal (plain JSON text, sealed with another
  key);
- ``edited``: a sealed row with one byte of an authenticated field changed (the run
  store's ``harness`` column, stored as it is: a store that skips the seal reads it; the
  encrypted snapshot is left alone, since decrypting would refuse an edit there anyway);
- ``rolled_back``: an older sealed row of the same run put back over the newest one
  (the version record left as it is);
- ``grafted``: the sealed row of another run put in place of the paused run's.

:func:`tamper_checkpoints` does the same four to a paused LangGraph checkpoint in a data
folder's ``checkpoints.sqlite3`` (``SqliteSaver``'s tables) or a PostgreSQL store's
``PostgresSaver`` tables (plain SQL through :mod:`agent_contract.stores`, no framework
import; :func:`restore_checkpoints` undoes it), for a harness whose framework keeps checkpoints of its own
(:meth:`TamperPlan.reopen_checkpoints`). :func:`copy_rows` and :func:`put_back` copy a
thread's rows out of a data folder's SQLite files and put them back (the rollback tests
use them on the LangGraph checkpoint file too). A :class:`TamperPlan` is the contract suite's checkpoint-integrity hook
(:attr:`~agent_contract.runtime.input.RunInput.tamper`, capability ``durable_store``):
:func:`~agent_contract.harnesses.settle_approvals` hands the paused snapshot to
:meth:`TamperPlan.reopen`, which stores it in a fresh scratch store with the harness's
run store, tampers with the row, reopens the store, notes the refusal, undoes the
tampering and returns the snapshot the untampered store reads back. The scratch store is
a temporary data folder's SQLite files, or, when the plan's store is PostgreSQL
(``agent-contract check --store postgresql://...``), a new schema of that database
(:func:`~agent_contract.stores.scratch_store`), dropped afterwards: the same plain SQL
tampers with the rows on either.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, closing
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from .errors import CheckpointError
from .runstore import RunStore
from .sealing import seal
from .stores import STORE_ENV, Connection, Database, Store, open_store, scratch_store

__all__ = [
    "CHECKPOINTS_FILE",
    "CHECKPOINT_STORE",
    "CHECKPOINT_TABLES",
    "PG_CHECKPOINT_COLUMNS",
    "RUNS_FILE",
    "RUN_TABLES",
    "TAMPERINGS",
    "OpenStore",
    "Rows",
    "SnapshotStore",
    "TamperPlan",
    "copy_rows",
    "put_back",
    "restore_checkpoints",
    "scenario_store",
    "tamper_checkpoints",
]

TAMPERINGS: Final[tuple[str, ...]] = ("forged", "edited", "rolled_back", "grafted")
"""The tamperings a :class:`TamperPlan` makes (see the module doc)."""
RUNS_FILE: Final = "runs.sqlite3"
"""The run store's file in a data folder."""
RUN_TABLES: Final[Mapping[str, tuple[str, ...]]] = {RUNS_FILE: ("runs",)}
"""Where a paused run's own row lives, by file and table (not its version record: a
row put back with its record would be the newest again)."""

CHECKPOINTS_FILE: Final = "checkpoints.sqlite3"
"""A LangGraph ``SqliteSaver``'s file in a data folder (the LangChain binding's sealed
checkpointer keeps a paused graph there)."""
CHECKPOINT_STORE: Final = "checkpoints"
"""The LangGraph checkpoints' store name (:meth:`~agent_contract.stores.Store.database`:
``checkpoints.sqlite3``, or ``PostgresSaver``'s tables in a PostgreSQL store)."""
CHECKPOINT_TABLES: Final[Mapping[str, tuple[str, ...]]] = {
    CHECKPOINTS_FILE: ("checkpoints", "writes")
}
"""Where a paused graph's own rows live: its checkpoints and their pending writes."""

Rows = dict[str, list[tuple[Any, ...]]]
"""A thread's rows, by ``"<file>/<table>"``, as plain SQL reads them."""
_R = TypeVar("_R")


def _store(where: Path | Store) -> Store:
    """``where`` as a store: a data folder path is its SQLite files."""
    return where if isinstance(where, Store) else Store.sqlite(where)


def _tables(db: Database, names: tuple[str, ...]) -> tuple[str, ...]:
    """Which of ``names`` exist in ``db`` (none when its SQLite file is missing)."""
    present = db.tables()
    return tuple(t for t in names if t in present)


def copy_rows(
    folder: Path | Store, thread_id: str, tables: Mapping[str, tuple[str, ...]] = RUN_TABLES
) -> Rows:
    """Every row of ``thread_id`` in ``tables`` (by file name, ``runs.sqlite3``: of the
    data folder ``folder``, or of a :class:`~agent_contract.stores.Store`'s databases,
    PostgreSQL's tables included; a missing file or table is skipped), as plain SQL sees
    them."""
    store = _store(folder)
    saved: Rows = {}
    for name, names in tables.items():
        db = store.database(name.removesuffix(".sqlite3"))
        present = _tables(db, names)
        if not present:
            continue
        with db.transaction(write=False, create=False) as conn:
            for table in present:
                sql = f"SELECT * FROM {table} WHERE thread_id = ?"  # noqa: S608 - fixed names
                saved[f"{name}/{table}"] = [
                    tuple(row) for row in conn.execute(sql, (thread_id,)).fetchall()
                ]
    return saved


def put_back(folder: Path | Store, thread_id: str, saved: Rows) -> None:
    """Replace ``thread_id``'s rows with the ``saved`` copy (from :func:`copy_rows`, of
    the same ``folder`` or store), as another local user (or anyone who can write the
    database but not read the key) could."""
    store = _store(folder)
    for where, rows in saved.items():
        name, table = where.split("/")
        with store.database(name.removesuffix(".sqlite3")).transaction(create=False) as conn:
            conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))  # noqa: S608
            for row in rows:
                marks = ",".join("?" * len(row))
                conn.execute(f"INSERT INTO {table} VALUES ({marks})", row)  # noqa: S608


class SnapshotStore(Protocol):
    """Where a harness keeps a paused run's snapshot (:class:`~agent_contract.runstore.RunStore`
    is one)."""

    def save(self, thread_id: str, snapshot: Mapping[str, Any], *, harness: str = ...) -> None:
        """Store ``snapshot`` as the thread's newest version.

        Raises:
            CheckpointError: the store cannot be written.
        """

    def load(self, thread_id: str) -> tuple[str, dict[str, Any]]:
        """``(harness column, snapshot)`` of the thread, once the store has checked it.

        Raises:
            CheckpointError: the row cannot be trusted or read.
        """


OpenStore = Callable[[Database], SnapshotStore]
"""``open_store(database) -> store``: opens the run store on ``database``
(``Store.database("runs")``: a scratch data folder's ``runs.sqlite3``, or a scratch schema
of a PostgreSQL database; the key is its store folder's, read or made there), as
``RunStore(database)``. The tampering edits the rows with plain SQL, so the store keeps
:class:`~agent_contract.runstore.RunStore`'s tables (a RunStore, or a subclass or wrapper
of one)."""


def _flipped(text: str) -> str:
    """``text`` with the character in its middle changed (it stays text)."""
    at = len(text) // 2
    other = "A" if text[at] != "A" else "B"
    return text[:at] + other + text[at + 1 :]


def _tampered(
    store: SnapshotStore,
    where: Store,
    thread_id: str,
    snapshot: dict[str, Any],
    kind: str,
    *,
    harness: str,
) -> Rows:
    """Store ``snapshot`` under ``thread_id`` with ``store`` (a run store on ``where``'s
    ``runs`` database: SQLite or PostgreSQL), then tamper with its row (``kind``) with
    plain SQL there; returns the rows that undo the tampering."""
    store.save(thread_id, snapshot, harness=harness)
    if kind == "rolled_back":
        older = copy_rows(where, thread_id)
        store.save(thread_id, snapshot, harness=harness)  # a newer version of the run
        newest = copy_rows(where, thread_id)
        put_back(where, thread_id, older)
        return newest
    other = f"{thread_id}-other"
    if kind == "grafted":
        store.save(other, snapshot, harness=harness)  # another run, sealed by the store
    original = copy_rows(where, thread_id)
    with where.database("runs").transaction(create=False) as conn:
        if kind == "forged":
            text = json.dumps(snapshot, ensure_ascii=False, sort_keys=True)
            mac = seal(secrets.token_bytes(32), thread_id, harness, text)
            conn.execute(
                "UPDATE runs SET snapshot = ?, mac = ? WHERE thread_id = ?", (text, mac, thread_id)
            )
        elif kind == "edited":
            (stored,) = conn.execute(
                "SELECT harness FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            conn.execute(
                "UPDATE runs SET harness = ? WHERE thread_id = ?", (_flipped(stored), thread_id)
            )
        else:  # grafted: the other run's sealed row under the paused run's id
            conn.execute(
                "UPDATE runs SET (harness, snapshot, mac) = (SELECT harness, snapshot, mac "
                "FROM runs WHERE thread_id = ?) WHERE thread_id = ?",
                (other, thread_id),
            )
    return original


_TAG_BYTES: Final = 32
"""The leading authentication tag of a sealed checkpoint value (HMAC-SHA256)."""
_NEWEST: Final = (
    "SELECT * FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)


def _insert(conn: sqlite3.Connection, table: str, row: tuple[Any, ...]) -> None:
    marks = ",".join("?" * len(row))
    conn.execute(f"INSERT INTO {table} VALUES ({marks})", row)  # noqa: S608 - fixed names


def _grafted_thread(thread_id: str) -> str:
    """The other thread whose copy of the paused checkpoint ``grafted`` puts in place."""
    return f"{thread_id}-other"


def _grafts(
    newest: Sequence[Any], writes: Sequence[Sequence[Any]], thread_id: str
) -> list[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
    """The rows ``grafted`` inserts, as ``(checkpoint row, its writes)`` in insert order:
    a copy of ``thread_id``'s newest checkpoint row ``newest`` under
    :func:`_grafted_thread`, then the same checkpoint as a newer one of ``thread_id``
    whose parent is the paused one, each with a copy of ``writes`` (the paused
    checkpoint's). Both savers' layouts: a checkpoint row starts ``thread_id,
    checkpoint_ns, checkpoint_id, parent_checkpoint_id``, a write row ``thread_id,
    checkpoint_ns, checkpoint_id``; the other columns are copied as they are."""
    checkpoint_id = newest[2]
    newer = f"{checkpoint_id}0"  # sorts after the paused id
    return [
        (
            (thread, newest[1], at, parent, *newest[4:]),
            [(thread, write[1], at, *write[3:]) for write in writes],
        )
        for thread, at, parent in (
            (_grafted_thread(thread_id), checkpoint_id, newest[3]),
            (thread_id, newer, checkpoint_id),
        )
    ]


def _check_kind(kind: str) -> None:
    """Raises ValueError unless ``kind`` is one of :data:`TAMPERINGS`."""
    if kind not in TAMPERINGS:
        raise ValueError(f"unknown tampering {kind!r}; expected one of {TAMPERINGS}")


def _checkpoint_file(where: Path | Store) -> Path:
    """The SQLite checkpoint file of ``where`` (a data folder, or a SQLite store)."""
    if isinstance(where, Store):
        return where.sqlite_file(CHECKPOINT_STORE)
    return where / CHECKPOINTS_FILE


def tamper_checkpoints(where: Path | Store, thread_id: str, kind: str) -> Rows:
    """Tamper with ``thread_id``'s paused LangGraph checkpoint, as another user of the
    store could, with plain SQL and no key: in a data folder's (or SQLite store's)
    ``checkpoints.sqlite3`` (``SqliteSaver``'s tables: a checkpoint row is ``thread_id,
    checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata``), or
    in a PostgreSQL store's ``PostgresSaver`` tables (:func:`_tamper_postgres`):

    - ``forged``: the newest checkpoint's value under a tag another key made (its leading
      32 bytes replaced);
    - ``edited``: the newest checkpoint's plain JSON metadata changed (a field added: the
      value's tag does not cover it, the paused run's seal does);
    - ``rolled_back``: the newest checkpoint and its writes removed, so the older one it
      grew from is the newest again;
    - ``grafted``: a sealed checkpoint of another thread of the same graph (a copy of the
      paused one, under thread ``<thread_id>-other``) put under the paused one as its
      newest, with its pending writes.

    Returns:
        The thread's rows before the tampering (:func:`restore_checkpoints` undoes it).

    Raises:
        ValueError: ``kind`` is not one of :data:`TAMPERINGS`.
        CheckpointError: the thread has no checkpoint.
    """
    _check_kind(kind)
    if isinstance(where, Store) and where.dialect == "postgresql":
        return _tamper_postgres(where.database(CHECKPOINT_STORE), thread_id, kind)
    path = _checkpoint_file(where)
    original = copy_rows(path.parent, thread_id, {path.name: CHECKPOINT_TABLES[CHECKPOINTS_FILE]})
    with closing(sqlite3.connect(path)) as conn, conn:
        newest = conn.execute(_NEWEST, (thread_id,)).fetchone()
        if newest is None:
            raise CheckpointError(f"no checkpoint row of thread {thread_id!r} to tamper with")
        checkpoint_id, value, metadata = newest[2], bytes(newest[5]), newest[6]
        where_row = "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?"
        if kind == "forged":
            forged = secrets.token_bytes(_TAG_BYTES) + value[_TAG_BYTES:]
            conn.execute(
                f"UPDATE checkpoints SET checkpoint = ? {where_row}",  # noqa: S608 - fixed text
                (forged, thread_id, checkpoint_id),
            )
        elif kind == "edited":
            edited = {**json.loads(metadata), "note": "edited outside agent-contract"}
            conn.execute(
                f"UPDATE checkpoints SET metadata = ? {where_row}",  # noqa: S608 - fixed text
                (json.dumps(edited).encode("utf-8"), thread_id, checkpoint_id),
            )
        elif kind == "rolled_back":
            conn.execute(f"DELETE FROM checkpoints {where_row}", (thread_id, checkpoint_id))  # noqa: S608
            conn.execute(f"DELETE FROM writes {where_row}", (thread_id, checkpoint_id))  # noqa: S608
        else:  # grafted
            writes = conn.execute(
                f"SELECT * FROM writes {where_row}",  # noqa: S608 - fixed text
                (thread_id, checkpoint_id),
            ).fetchall()
            for checkpoint, its_writes in _grafts(newest, writes, thread_id):
                _insert(conn, "checkpoints", checkpoint)
                for write in its_writes:
                    _insert(conn, "writes", write)
    return original


# -- LangGraph's PostgresSaver tables --------------------------------------------------------

PG_CHECKPOINT_COLUMNS: Final[Mapping[str, tuple[str, ...]]] = {
    "checkpoints": (
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "type",
        "checkpoint",
        "metadata",
    ),
    "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "version", "type", "blob"),
    "checkpoint_writes": (
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "task_path",
        "idx",
        "channel",
        "type",
        "blob",
    ),
}
"""``PostgresSaver``'s tables of a paused graph and the columns copied (``checkpoint`` and
``metadata`` are JSONB: copied as text, put back cast)."""
_JSONB: Final = frozenset({"checkpoint", "metadata"})


def _pg_select(table: str) -> str:
    columns = ", ".join(f"{c}::text" if c in _JSONB else c for c in PG_CHECKPOINT_COLUMNS[table])
    return f"SELECT {columns} FROM {table}"  # noqa: S608 - fixed names


def _pg_insert(conn: Connection, table: str, row: Sequence[Any]) -> None:
    names = PG_CHECKPOINT_COLUMNS[table]
    marks = ", ".join("?::jsonb" if c in _JSONB else "?" for c in names)
    conn.execute(
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})",  # noqa: S608 - fixed names
        tuple(row),
    )


def _pg_copy(conn: Connection, thread_id: str) -> Rows:
    """Every row of ``thread_id`` in ``PostgresSaver``'s tables, by ``"postgresql/<table>"``."""
    return {
        f"postgresql/{table}": [
            tuple(r)
            for r in conn.execute(
                _pg_select(table) + " WHERE thread_id = ?", (thread_id,)
            ).fetchall()
        ]
        for table in PG_CHECKPOINT_COLUMNS
    }


def _tamper_postgres(database: Database, thread_id: str, kind: str) -> Rows:
    """:func:`tamper_checkpoints` on ``PostgresSaver``'s tables: the sealed values are the
    ``checkpoint_blobs`` rows the checkpoint's ``channel_versions`` name (the
    ``checkpoints`` row is plain JSONB), so ``forged`` replaces the tag of the newest
    checkpoint's ``messages`` blob (the first blob by channel when it has none)."""
    with database.transaction(lock=f"checkpoints:{thread_id}") as conn:
        original = _pg_copy(conn, thread_id)
        newest = conn.execute(
            _pg_select("checkpoints") + " WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        if newest is None:
            raise CheckpointError(f"no checkpoint row of thread {thread_id!r} to tamper with")
        checkpoint_id, metadata = newest[2], newest[6]
        where_row = "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?"
        if kind == "forged":
            blob = conn.execute(
                "SELECT b.channel, b.version, b.blob FROM checkpoints c "
                "CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v "
                "JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = "
                "c.checkpoint_ns AND b.channel = v.key AND b.version = v.value "
                "WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.checkpoint_id = ? "
                "AND b.blob IS NOT NULL ORDER BY b.channel <> 'messages', b.channel LIMIT 1",
                (thread_id, checkpoint_id),
            ).fetchone()
            if blob is None:
                raise CheckpointError(f"no sealed value of thread {thread_id!r} to forge")
            channel, version, value = blob[0], blob[1], bytes(blob[2])
            conn.execute(
                "UPDATE checkpoint_blobs SET blob = ? WHERE thread_id = ? AND checkpoint_ns = '' "
                "AND channel = ? AND version = ?",
                (secrets.token_bytes(_TAG_BYTES) + value[_TAG_BYTES:], thread_id, channel, version),
            )
        elif kind == "edited":
            edited = {**json.loads(metadata), "note": "edited outside agent-contract"}
            conn.execute(
                f"UPDATE checkpoints SET metadata = ?::jsonb {where_row}",  # noqa: S608
                (json.dumps(edited), thread_id, checkpoint_id),
            )
        elif kind == "rolled_back":
            conn.execute(f"DELETE FROM checkpoints {where_row}", (thread_id, checkpoint_id))  # noqa: S608
            conn.execute(f"DELETE FROM checkpoint_writes {where_row}", (thread_id, checkpoint_id))  # noqa: S608
        else:  # grafted: another thread's copy, and the same checkpoint as the newest
            writes = [w for w in original["postgresql/checkpoint_writes"] if w[2] == checkpoint_id]
            for blob_row in original["postgresql/checkpoint_blobs"]:
                _pg_insert(conn, "checkpoint_blobs", (_grafted_thread(thread_id), *blob_row[1:]))
            for checkpoint, its_writes in _grafts(newest, writes, thread_id):
                _pg_insert(conn, "checkpoints", checkpoint)
                for write in its_writes:
                    _pg_insert(conn, "checkpoint_writes", write)
    return original


def restore_checkpoints(where: Path | Store, thread_id: str, saved: Rows) -> None:
    """Undo :func:`tamper_checkpoints`: drop the ``<thread_id>-other`` thread a graft
    made and put ``thread_id``'s ``saved`` rows back in place of its own."""
    other = f"{thread_id}-other"
    if isinstance(where, Store) and where.dialect == "postgresql":
        with where.database(CHECKPOINT_STORE).transaction(lock=f"checkpoints:{thread_id}") as conn:
            for table in PG_CHECKPOINT_COLUMNS:
                conn.execute(
                    f"DELETE FROM {table} WHERE thread_id IN (?, ?)",  # noqa: S608 - fixed names
                    (thread_id, other),
                )
            for key, rows in saved.items():
                for row in rows:
                    _pg_insert(conn, key.split("/")[1], row)
        return
    path = _checkpoint_file(where)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (other,))
        conn.execute("DELETE FROM writes WHERE thread_id = ?", (other,))
    put_back(path.parent, thread_id, saved)


def scenario_store() -> Store | None:
    """The store the contract suite's durable-store scenarios keep their tampered rows in:
    the one ``$AGENT_CONTRACT_STORE`` names (``agent-contract check --store URL`` sets it
    while the suite runs), else None (fresh SQLite folders). Its folder is the system's
    temporary directory and is never written (:meth:`TamperPlan.scratch` makes a folder
    of its own per reopening).

    Raises:
        ConfigurationError: ``$AGENT_CONTRACT_STORE`` is not a store URL.
    """
    if not os.environ.get(STORE_ENV):
        return None
    return open_store(Path(tempfile.gettempdir()))


class TamperPlan:
    """A request to tamper once with a paused run's stored row (one of :data:`TAMPERINGS`)
    and reopen the store (the contract suite's checkpoint-integrity hook).

    Args:
        kind: the tampering's name.
        store: the store the tampered rows are kept in (``agent-contract check --store``):
            PostgreSQL: each :meth:`reopen` (and a LangChain suite harness's checkpoints)
            in a fresh schema of its database, dropped after; None (the default) or
            SQLite: in a fresh temporary data folder's SQLite files, removed after
            (:func:`~agent_contract.stores.scratch_store`: nothing is written to the
            store itself, only to its database's scratch schema).

    Raises:
        ValueError: ``kind`` is not one of :data:`TAMPERINGS`.
    """

    def __init__(self, kind: str, *, store: Store | None = None) -> None:
        _check_kind(kind)
        self.kind = kind
        self.store = store
        """Where the scratch stores are made (see the class doc; None: SQLite)."""
        self.reopened = 0
        """How many times the store was reopened after the tampering (a harness that
        honours the plan: 1)."""
        self.refusals: list[str] = []
        """What the reopened store raised, ``"<ErrorType>: <message>"`` per refusal."""
        self.accepted = 0
        """How many times the reopened store read the tampered row (a store that checks
        what it reads: 0)."""

    def scratch(self, *, prefix: str = "agent-contract-tamper-") -> AbstractContextManager[Store]:
        """A fresh, empty store in :attr:`store` for one reopening: a new temporary data
        folder (``<prefix>...``: the key files, and on SQLite the database files) and, on
        PostgreSQL, a new schema of its database; both removed on exit, the block raising
        included (:func:`~agent_contract.stores.scratch_store`).

        Raises:
            DataFolderError: the folder cannot be made, or the PostgreSQL server cannot
                be reached or refused the schema.
        """
        return scratch_store(self.store, prefix=prefix)

    def reopen(
        self, snapshot: Mapping[str, Any], *, open_store: OpenStore = RunStore, harness: str
    ) -> dict[str, Any]:
        """Store ``snapshot`` (a paused run's) in a fresh scratch store (:meth:`scratch`:
        a temporary data folder's ``runs.sqlite3``, or a new schema of :attr:`store`'s
        PostgreSQL database) with ``open_store``, tamper with its row, and load it from
        the reopened store. A refusal (:class:`~agent_contract.errors.CheckpointError`)
        is noted, the tampering undone, and the snapshot the untampered store reads back
        is returned; a tampered row the store read is noted in :attr:`accepted` and what
        it read is returned (the run goes on from it, as it would). The scratch store is
        removed before this returns or raises.

        Args:
            harness: the harness column the row is stored with.

        Raises:
            CheckpointError: the untampered row cannot be read back either.
            DataFolderError: the scratch store cannot be made or reached.
        """
        self.reopened += 1
        thread_id = str(snapshot.get("run_id") or "run")
        with self.scratch() as where:
            database = where.database("runs")
            undo = _tampered(
                open_store(database),
                where,
                thread_id,
                dict(snapshot),
                self.kind,
                harness=harness,
            )

            def load() -> dict[str, Any]:
                return open_store(database).load(thread_id)[1]

            return self._read_tampered(load, lambda: put_back(where, thread_id, undo))

    def reopen_checkpoints(
        self, where: Path | Store, thread_id: str, resume: Callable[[], _R]
    ) -> _R:
        """Tamper with ``thread_id``'s paused LangGraph checkpoint in ``where`` (a data
        folder, or a store: :func:`tamper_checkpoints`), then carry the decisions in with
        ``resume()`` (the harness's resume over its checkpointer there). A refusal
        (:class:`~agent_contract.errors.CheckpointError`) is noted, the tampering undone
        (:func:`restore_checkpoints`) and ``resume()`` called again; a resume that went
        on from the tampered rows is noted in :attr:`accepted` and its result returned.

        Raises:
            CheckpointError: the thread has no checkpoint, or the untampered resume
                refuses too.
        """
        self.reopened += 1
        undo = tamper_checkpoints(where, thread_id, self.kind)
        return self._read_tampered(resume, lambda: restore_checkpoints(where, thread_id, undo))

    def _read_tampered(self, read: Callable[[], _R], put_right: Callable[[], None]) -> _R:
        """``read()`` from the tampered store: a refusal
        (:class:`~agent_contract.errors.CheckpointError`) is noted in :attr:`refusals`,
        the tampering undone (``put_right()``) and ``read()`` called again; a read that
        went on from the tampered rows is noted in :attr:`accepted` and its result
        returned.

        Raises:
            CheckpointError: the read after ``put_right()`` refuses too.
        """
        try:
            result = read()
        except CheckpointError as exc:
            self.refusals.append(f"{type(exc).__name__}: {exc}")
        else:
            self.accepted += 1
            return result
        put_right()
        return read()
