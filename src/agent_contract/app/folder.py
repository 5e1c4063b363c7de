"""The demo's data folder: where it is, its key, its stores, its tools, and the records of
its runs.

The folder is ``--data-dir DIR``, else ``$AGENT_CONTRACT_DATA_DIR``, else
``$XDG_DATA_HOME/agent-contract``, else ``~/.local/share/agent-contract``. It is private
(``0700``, files ``0600``, no symlinks: :mod:`agent_contract.datafolder`) and holds:

- ``store.key``: the key every stored record is sealed with (:mod:`agent_contract.sealing`);
  approval tokens are keyed with it too;
- ``orders.sqlite3``: orders and refunds, created with sample data by an explicit first
  ``run`` or by ``agent-contract init``; ``approve`` and ``resume`` never create it;
- ``runs.sqlite3``: paused runs (encrypted, sealed snapshots, with the secrets the run was
  given) and finished runs' summaries;
- whatever a harness's durable runner keeps (the LangChain binding's sealed
  ``checkpoints.sqlite3``), pruned when its run finishes;
- ``locks/``: a lock file while a run is being resumed (removed afterwards).

With a PostgreSQL store (``--store postgresql://...`` or ``$AGENT_CONTRACT_STORE``:
:mod:`agent_contract.stores`) the folder holds the key file only: the orders, the runs,
the checkpoints and the resume locks (advisory locks) are in the database, and no SQLite
file is written. A second process or machine with the same URL and a copy of the key
file approves and resumes the same runs.

Retention: a finished run's checkpoints are dropped when it finishes; its summary stays
in ``runs.sqlite3`` until ``agent-contract gc`` (default: summaries older than
:data:`GC_DAYS` days; paused runs are kept until they are decided).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..budget import Budget
from ..datafolder import DataFolderError, private_folder
from ..errors import (
    PAUSE_REASONS,
    CheckpointError,
    ConfigurationError,
    DependencyMissingError,
    ToolError,
)
from ..faults import crashpoint
from ..registry import durable_runner, harness_names
from ..runstore import FINISHED_PREFIX, RunStore
from ..runtime import Contract, RunInterrupted, RunResult
from ..sealing import store_key, subkey
from ..stores import STORE_ENV, Database, Store, open_store
from ..tools import ToolSpec
from ..trace import TraceSink
from .builtin_tools import calculator_tool, policy_lookup_tool
from .builtin_tools.order_data import has_tables
from .builtin_tools.orders import OrderStore, lookup_order_tool, refund_order_tool
from .signals import deferred_signals

__all__ = [
    "APPROVAL_LABEL",
    "DATA_DIR_ENV",
    "GC_DAYS",
    "ORDERS_FILE",
    "RUNS_FILE",
    "STORE_HELP",
    "DemoFolder",
    "add_store_argument",
    "data_dir",
    "demo_tools",
    "folder_problem",
]

DATA_DIR_ENV: Final = "AGENT_CONTRACT_DATA_DIR"
"""The environment variable naming the data folder."""
ORDERS_FILE: Final = "orders.sqlite3"
RUNS_FILE: Final = "runs.sqlite3"
GC_DAYS: Final = 30
"""``agent-contract gc`` removes finished runs' summaries older than this many days."""
APPROVAL_LABEL: Final = "approval/v1"
"""The sub-key label approval tokens are keyed with."""


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder (see the module doc for the order of precedence).

    Raises:
        ConfigurationError: the path exists and is not a folder, or passes through a
            file (a usage error, exit 2).
    """
    if explicit:
        folder, source = Path(explicit), "--data-dir"
    elif os.environ.get(DATA_DIR_ENV):
        folder, source = Path(os.environ[DATA_DIR_ENV]), f"${DATA_DIR_ENV}"
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        folder, source = Path(base) / "agent-contract", "the default data folder"
    problem = folder_problem(folder)
    if problem is not None:
        raise ConfigurationError(f"{source}: {problem}")
    return folder


def folder_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` can never be a data folder (it is a file, or a part of its path
    is), or ``None``. A missing folder is not a problem here (``run`` creates it)."""
    here = Path(folder)
    if here.exists() and not here.is_dir():
        return f"{str(here)!r} exists and is not a folder"
    while here != here.parent:
        here = here.parent
        if here.exists():
            if here.is_dir():
                return None
            return f"{str(folder)!r} cannot be a folder: {str(here)!r} in its path is a file"
    return None


def demo_tools(folder: Path | Store | None = None, *, create: bool = True) -> list[ToolSpec]:
    """The demo agent's tools; the order tools use the store's order database
    (``folder/orders.sqlite3`` for a folder path; a :class:`~agent_contract.stores.Store`'s
    ``database("orders")``), created with the sample orders when missing, unless
    ``create`` is false."""
    where = folder if isinstance(folder, Store) else Store.sqlite(folder or data_dir())
    return _tools(OrderStore(where.database("orders"), create=create))


def _tools(store: OrderStore) -> list[ToolSpec]:
    """The demo agent's tools, the order tools on ``store``."""
    return [
        calculator_tool(),
        policy_lookup_tool(),
        lookup_order_tool(store),
        refund_order_tool(store),
    ]


def _check_readable(database: Database) -> None:
    """Check that the existing order store opens as a database with its tables (one
    read; no write lock taken, nothing created): ``approve`` and ``resume`` check it
    before a decision is recorded, so a store that can never be used leaves the run
    paused.

    Raises:
        DataFolderError: missing (a SQLite file, or PostgreSQL's tables: reason
            ``"missing"``), unsafe, not a database (reason ``"corrupt"``), cannot be
            opened or reached, or locked past the timeout (reason ``"locked"``).
    """
    with database.transaction(write=False, create=False) as db:
        present = has_tables(db, database.dialect)
    if not present and database.dialect == "postgresql":
        raise DataFolderError(
            f"the store {database.where} has no order tables", path=database.where, reason="missing"
        )


def _has_runs(store: Store) -> bool:
    """Whether ``store`` holds a run store: ``runs.sqlite3``, or PostgreSQL's ``runs``
    table (a read; nothing created).

    Raises:
        DataFolderError: the file is unsafe, or the database cannot be read.
    """
    database = store.database("runs")
    if store.dialect == "sqlite":
        return database.exists()
    return "runs" in database.tables()


@dataclass(frozen=True)
class DemoFolder:
    """An opened data folder: its path, its key and where its state lives (see the
    module doc)."""

    path: Path
    key: bytes
    store: Store

    @classmethod
    def open(
        cls,
        explicit: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        store_url: str | None = None,
    ) -> DemoFolder:
        """The data folder, made private and given a key when new.

        Args:
            create: make the folder (and its key) when missing, as ``run`` does;
                ``False`` (``approve``, ``resume``, ``gc``: commands that only use what
                a ``run`` stored) refuses a missing folder, or one with no run store,
                and creates nothing there, so a mistyped path is an error, never a new,
                empty data folder.
            store_url: where the folder's state lives (``--store``; default
                ``$AGENT_CONTRACT_STORE``, else SQLite files in the folder:
                :func:`~agent_contract.stores.open_store`).

        Raises:
            CheckpointError: the folder is unsafe (a symlink, another user's, writable by
                others), read-only, or its key file is; with ``create`` false, it is
                missing or holds no stored runs (a :class:`DataFolderError`, reason
                ``"missing"``).
            ConfigurationError: the path exists and is not a folder, or passes through
                a file.
        """
        folder = data_dir(explicit)
        if create:
            path = private_folder(folder)
            store = open_store(path, store_url)
            return cls(path, store_key(store), store)
        hint = (
            f"is --data-dir or ${DATA_DIR_ENV} mistyped? Only `agent-contract run` creates "
            "a data folder"
        )
        try:
            path = private_folder(folder, create=False)
        except DataFolderError as exc:
            if exc.reason != "missing":
                raise
            raise DataFolderError(
                f"the data folder {str(folder)!r} does not exist: {hint}",
                path=str(folder),
                reason="missing",
            ) from None
        store = open_store(path, store_url)
        if not _has_runs(store):
            if store.dialect == "sqlite":
                missing, where = f"no {RUNS_FILE}", str(store.sqlite_file("runs"))
            else:
                missing, where = "its store has no runs table", store.where
            raise DataFolderError(
                f"{str(path)!r} holds no stored runs ({missing}): {hint}"
                + ("" if store.dialect == "sqlite" else " (or is --store mistyped?)"),
                path=where,
                reason="missing",
            )
        # (a run store without a key: refused by it)
        return cls(path, store_key(store), store)

    def runs(self) -> RunStore:
        """The run store (``runs.sqlite3``, or the PostgreSQL store's ``runs`` tables)."""
        return RunStore(self.store.database("runs"), key=self.key)

    def contract(
        self,
        *,
        budget: Budget | None,
        secrets: Sequence[str],
        create_orders: bool,
        trace_sink: TraceSink | None = None,
    ) -> Contract:
        """The demo's contract: its tools on this folder, approval tokens keyed with
        this folder's key, its runs' events sent to ``trace_sink`` (None: nowhere).

        Raises:
            CheckpointError: ``create_orders`` is false and the order store is missing,
                corrupt (not a database) or cannot be opened; or the
                order store is a symlink or not a regular file.
        """
        orders = self.store.database("orders")
        present = orders.exists()  # a symlink or other unsafe file: refused here
        if not create_orders and not present:
            raise CheckpointError(
                f"the order store {orders.where!r} is missing: the paused run's orders are "
                "gone, so nothing is approved or written (it is never re-created here)",
                path=orders.where,
            )
        if not create_orders:
            try:
                _check_readable(orders)
            except DataFolderError as exc:
                if exc.reason != "locked":  # busy: the tool reports it (transient)
                    raise DataFolderError(
                        f"the order store cannot be used, so nothing is decided or written "
                        f"and the run stays paused: {exc}",
                        path=orders.where,
                        reason=exc.reason,
                    ) from exc
        order_store = OrderStore(orders, create=create_orders)
        if create_orders and orders.dialect == "postgresql":
            # Make a new database's tables now, outside the tools' time limits (a run that
            # never touches an order creates no SQLite file: that one stays lazy); a
            # failure is left to the tool calls, which report it in their own words.
            with suppress(ToolError):
                order_store.ensure()
        return Contract(
            _tools(order_store),
            budget=budget,
            secrets=secrets,
            signing_key=subkey(self.key, APPROVAL_LABEL),
            trace_sink=trace_sink,
        )

    def record(
        self, store: RunStore, result: RunResult, harness: str, secrets: Sequence[str] = ()
    ) -> None:
        """Store a paused run's snapshot (``pending_approval``, ``interrupted``) with the
        run's ``secrets`` (encrypted: :class:`RunStore`), or mark the run finished and
        prune what its harness kept for it. A signal that comes meanwhile waits until
        the record is written."""
        if result.stop_reason in PAUSE_REASONS and result.snapshot is not None:
            with deferred_signals():
                store.save(result.run_id, result.snapshot, harness=harness, secrets=secrets)
            return
        crashpoint("before_finish_record")
        with deferred_signals():
            store.finish(result.run_id, result.to_dict(), harness=harness)
        self.prune(result.run_id, harness)

    def prune(self, run_id: str, harness: str) -> None:
        """Drop what ``harness``'s durable runner keeps for a finished run (its
        checkpoints), if it keeps anything."""
        runner = durable_runner(harness)
        forget = getattr(runner, "forget", None)
        if callable(forget):
            forget(run_id, store=self.store)

    def collect(self, *, older_than_seconds: float, now: float) -> dict[str, int]:
        """``agent-contract gc``: delete the summaries of runs that finished at least
        ``older_than_seconds`` before ``now`` (epoch seconds), and whatever a harness
        still keeps for any finished run (checkpoints a crash left between the finish
        record and the prune). Paused runs are never touched.

        Returns:
            ``{"finished": N, "summaries_removed": N, "paused_kept": N,
            "unrecorded_kept": N}`` (see :meth:`_unrecorded`).

        Raises:
            CheckpointError: a store cannot be used (locked, read-only, unsafe).
        """
        store = self.runs()
        threads = store.threads()
        finished = {t: v for t, v in threads.items() if v[0].startswith(FINISHED_PREFIX)}
        for thread_id, (column, _) in finished.items():
            self.prune(thread_id, column[len(FINISHED_PREFIX) :])
        old = [t for t, (_, updated) in finished.items() if now - updated >= older_than_seconds]
        return {
            "finished": len(finished),
            "summaries_removed": store.forget(old),
            "paused_kept": len(threads) - len(finished),
            "unrecorded_kept": len(self._unrecorded(set(threads))),
        }

    def _unrecorded(self, recorded: set[str]) -> set[str]:
        """Threads a harness keeps state for that the run store has no record of (a run
        in progress, or one that crashed before it was recorded): reported by ``gc``,
        never deleted (nothing tells the two apart)."""
        found: set[str] = set()
        for name in harness_names():
            try:
                runner = durable_runner(name)
            except (ConfigurationError, DependencyMissingError):
                continue
            kept = getattr(runner, "kept", None)
            if not callable(kept):
                continue
            try:
                found |= set(kept(store=self.store)) - recorded
            except ConfigurationError:
                continue  # a runner that cannot keep state in this kind of store kept none
        return found

    @contextmanager
    def recorded(
        self, store: RunStore, harness: str, secrets: Sequence[str] = ()
    ) -> Iterator[None]:
        """Store the run an interruption paused (see :class:`RunInterrupted`), with its
        ``secrets``, then let the interruption go on."""
        try:
            yield
        except RunInterrupted as exc:
            self.record(store, exc.result, harness, secrets)
            raise


STORE_HELP: Final = (
    "where runs, approvals, orders and checkpoints are stored: sqlite:///FOLDER (SQLite "
    "files; default: the data folder) or postgresql://[user[:password]@]host[:port]/db "
    "(one database shared by every process and machine; the data folder then holds only "
    f"the key file, which each of them needs a copy of); default ${STORE_ENV}"
)
"""The ``--store`` option's help."""


def add_store_argument(parser: Any) -> None:
    """Add ``--store URL`` (see :data:`STORE_HELP`) to the ``argparse`` parser ``parser``."""
    parser.add_argument("--store", default=None, metavar="URL", help=STORE_HELP)
