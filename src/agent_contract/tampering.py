"""Tampering with a stored run, for proving that a store refuses what it did not write.

Stored state is input (:mod:`agent_contract.sealing`): a row of the run store
(:mod:`agent_contract.runstore`) that was forged, edited, rolled back or grafted from
another run must be refused when the store is reopened, before anything runs, and the
run's pending approval must not be used up. This module holds the one copy of how such a
row is made, as another local user could (plain SQL on the file, no key):

- ``forged``: a row the store's key did not seal (plain JSON text, sealed with another
  key);
- ``edited``: a sealed row with one byte of its stored text changed;
- ``rolled_back``: an older sealed row of the same run put back over the newest one
  (the version record left as it is);
- ``grafted``: the sealed row of another run put in place of the paused run's.

:func:`copy_rows` and :func:`put_back` copy a thread's rows out of a data folder's
SQLite files and put them back (the rollback tests use them on the LangGraph checkpoint
file too). A :class:`TamperPlan` is the contract suite's checkpoint-integrity hook
(:attr:`~agent_contract.runtime.input.RunInput.tamper`, capability ``durable_store``):
:func:`~agent_contract.harnesses.settle_approvals` hands the paused snapshot to
:meth:`TamperPlan.reopen`, which stores it in a fresh data folder with the harness's
store, tampers with the row, reopens the store, notes the refusal, undoes the tampering
and returns the snapshot the untampered store reads back.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import tempfile
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, Final, Protocol

from .errors import CheckpointError
from .runstore import ENCRYPTED_PREFIX, RunStore
from .sealing import seal

__all__ = [
    "RUNS_FILE",
    "RUN_TABLES",
    "TAMPERINGS",
    "OpenStore",
    "Rows",
    "SnapshotStore",
    "TamperPlan",
    "copy_rows",
    "put_back",
]

TAMPERINGS: Final[tuple[str, ...]] = ("forged", "edited", "rolled_back", "grafted")
"""The tamperings a :class:`TamperPlan` makes (see the module doc)."""
RUNS_FILE: Final = "runs.sqlite3"
"""The run store's file in a data folder."""
RUN_TABLES: Final[Mapping[str, tuple[str, ...]]] = {RUNS_FILE: ("runs",)}
"""Where a paused run's own row lives, by file and table (not its version record: a
row put back with its record would be the newest again)."""

Rows = dict[str, list[tuple[Any, ...]]]
"""A thread's rows, by ``"<file>/<table>"``, as plain SQL reads them."""


def copy_rows(
    folder: Path, thread_id: str, tables: Mapping[str, tuple[str, ...]] = RUN_TABLES
) -> Rows:
    """Every row of ``thread_id`` in ``tables`` (by file of ``folder``; a missing file is
    skipped), as plain SQL sees them."""
    saved: Rows = {}
    for name, names in tables.items():
        if not (folder / name).exists():
            continue
        with closing(sqlite3.connect(folder / name)) as conn:
            for table in names:
                sql = f"SELECT * FROM {table} WHERE thread_id = ?"  # noqa: S608 - fixed names
                saved[f"{name}/{table}"] = conn.execute(sql, (thread_id,)).fetchall()
    return saved


def put_back(folder: Path, thread_id: str, saved: Rows) -> None:
    """Replace ``thread_id``'s rows with the ``saved`` copy (from :func:`copy_rows`), as
    another local user could."""
    for where, rows in saved.items():
        name, table = where.split("/")
        with closing(sqlite3.connect(folder / name)) as conn, conn:
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


OpenStore = Callable[[Path], SnapshotStore]
"""``open_store(path) -> store``: opens the store file ``path`` (in a data folder, whose
key it reads or makes), as ``RunStore(path)``. The tampering edits the file with plain
SQL, so the store keeps :class:`~agent_contract.runstore.RunStore`'s tables (a RunStore,
or a subclass or wrapper of one)."""


def _flipped(text: str) -> str:
    """``text`` with one character in its middle changed (an encrypted value stays
    valid base64; a plain one stays text)."""
    at = len(ENCRYPTED_PREFIX) + (len(text) - len(ENCRYPTED_PREFIX)) // 2
    other = "A" if text[at] != "A" else "B"
    return text[:at] + other + text[at + 1 :]


def _tampered(
    store: SnapshotStore,
    folder: Path,
    thread_id: str,
    snapshot: dict[str, Any],
    kind: str,
    *,
    harness: str,
) -> Rows:
    """Store ``snapshot`` under ``thread_id`` with ``store``, then tamper with its row
    (``kind``); returns the rows that undo the tampering."""
    store.save(thread_id, snapshot, harness=harness)
    if kind == "rolled_back":
        older = copy_rows(folder, thread_id)
        store.save(thread_id, snapshot, harness=harness)  # a newer version of the run
        newest = copy_rows(folder, thread_id)
        put_back(folder, thread_id, older)
        return newest
    other = f"{thread_id}-other"
    if kind == "grafted":
        store.save(other, snapshot, harness=harness)  # another run, sealed by the store
    original = copy_rows(folder, thread_id)
    with closing(sqlite3.connect(folder / RUNS_FILE)) as conn, conn:
        if kind == "forged":
            text = json.dumps(snapshot, ensure_ascii=False, sort_keys=True)
            mac = seal(secrets.token_bytes(32), thread_id, harness, text)
            conn.execute(
                "UPDATE runs SET snapshot = ?, mac = ? WHERE thread_id = ?", (text, mac, thread_id)
            )
        elif kind == "edited":
            (stored,) = conn.execute(
                "SELECT snapshot FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            conn.execute(
                "UPDATE runs SET snapshot = ? WHERE thread_id = ?", (_flipped(stored), thread_id)
            )
        else:  # grafted: the other run's sealed row under the paused run's id
            conn.execute(
                "UPDATE runs SET (harness, snapshot, mac) = (SELECT harness, snapshot, mac "
                "FROM runs WHERE thread_id = ?) WHERE thread_id = ?",
                (other, thread_id),
            )
    return original


class TamperPlan:
    """A request to tamper once with a paused run's stored row (one of :data:`TAMPERINGS`)
    and reopen the store (the contract suite's checkpoint-integrity hook).

    Args:
        kind: the tampering's name.

    Raises:
        ValueError: ``kind`` is not one of :data:`TAMPERINGS`.
    """

    def __init__(self, kind: str) -> None:
        if kind not in TAMPERINGS:
            raise ValueError(f"unknown tampering {kind!r}; expected one of {TAMPERINGS}")
        self.kind = kind
        self.reopened = 0
        """How many times the store was reopened after the tampering (a harness that
        honours the plan: 1)."""
        self.refusals: list[str] = []
        """What the reopened store raised, ``"<ErrorType>: <message>"`` per refusal."""
        self.accepted = 0
        """How many times the reopened store read the tampered row (a store that checks
        what it reads: 0)."""

    def reopen(
        self, snapshot: Mapping[str, Any], *, open_store: OpenStore = RunStore, harness: str
    ) -> dict[str, Any]:
        """Store ``snapshot`` (a paused run's) in a fresh data folder with ``open_store``,
        tamper with its row, and load it from the reopened store. A refusal
        (:class:`~agent_contract.errors.CheckpointError`) is noted, the tampering undone,
        and the snapshot the untampered store reads back is returned; a tampered row the
        store read is noted in :attr:`accepted` and what it read is returned (the run goes
        on from it, as it would).

        Args:
            harness: the harness column the row is stored with.

        Raises:
            CheckpointError: the untampered row cannot be read back either.
        """
        self.reopened += 1
        thread_id = str(snapshot.get("run_id") or "run")
        with tempfile.TemporaryDirectory(prefix="agent-contract-tamper-") as tmp:
            path = Path(tmp) / RUNS_FILE
            undo = _tampered(
                open_store(path),
                path.parent,
                thread_id,
                dict(snapshot),
                self.kind,
                harness=harness,
            )
            try:
                _, loaded = open_store(path).load(thread_id)
            except CheckpointError as exc:
                self.refusals.append(f"{type(exc).__name__}: {exc}")
            else:
                self.accepted += 1
                return loaded
            put_back(path.parent, thread_id, undo)
            return open_store(path).load(thread_id)[1]
