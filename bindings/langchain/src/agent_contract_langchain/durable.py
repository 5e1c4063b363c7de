"""LangGraph checkpointers whose failures are typed and whose values are sealed, on SQLite
or PostgreSQL, and the ``langchain`` harness's durable runner over them.

``sqlite_checkpointer(path)`` opens LangGraph's ``SqliteSaver`` on a private SQLite file,
its values sealed and read with an allowlist of types (:mod:`.sealed`), and
``async_sqlite_checkpointer(path)`` its ``AsyncSqliteSaver`` in the running event loop
(for ``arun_agent`` / ``aresume_agent`` in that same loop: an async saver belongs to the
loop that opened it). A file that is not a database, is locked past the timeout, or
otherwise cannot be read raises :class:`~agent_contract.errors.CheckpointError` when it
is opened, instead of a LangGraph or sqlite3 error later, and never silently starts a
fresh thread.

``postgres_checkpointer(url, key=...)`` and ``async_postgres_checkpointer(url, key=...)``
do the same with LangGraph's ``PostgresSaver`` / ``AsyncPostgresSaver`` on a
``postgresql://`` store (:mod:`agent_contract.stores`; the ``postgres`` extra): its tables
(``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``, ``checkpoint_migrations``)
are set up on open, every channel value is sealed in ``checkpoint_blobs`` (none left as
plain JSON in a ``checkpoints`` row, where LangGraph would keep strings and numbers), the
key stays in the data folder, and an unreachable server fails at open, before anything
runs, naming the store without its password. :func:`checkpointer_for` opens the right one
for a :class:`~agent_contract.stores.Store`.

**The durable runner.** This module is the runner
(:func:`~agent_contract_langchain.plugin.sqlite_agent_runner` hands it on when it is used,
so that the plugin module imports no framework): :func:`run`, :func:`resume`,
:func:`forget` and :func:`kept`, on either store (:func:`checkpointer_for`: the data
folder's ``checkpoints.sqlite3``, or the PostgreSQL database). When a run pauses, the
paused checkpoint's seal is added to the run's snapshot (which the app stores
authenticated); a resume first checks that seal
(:func:`~agent_contract_langchain.sealed.check_paused`: on PostgreSQL over the row, the
blobs it names and its writes), so a deleted, rolled-back or edited checkpoint, and one
added under it before any decision was recorded (a graft), is refused before LangGraph
reads anything. A finished run's checkpoints are dropped (:func:`forget`); :func:`kept`
lists the threads the store holds, for ``agent-contract gc``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.approval import Approval
from agent_contract.datafolder import BUSY_TIMEOUT_SECONDS, lock_timeout, private_file
from agent_contract.errors import (
    PAUSE_REASONS,
    CheckpointError,
    ConfigurationError,
    DependencyMissingError,
)
from agent_contract.model import Model
from agent_contract.runtime import Checkpoint, Contract, RunInput, RunInterrupted, RunResult
from agent_contract.sealing import folder_key
from agent_contract.stores import Store, connection_options, parse_store_url, redacted_url
from agent_contract.tampering import CHECKPOINT_STORE

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
    "async_postgres_checkpointer",
    "async_sqlite_checkpointer",
    "checkpointer_for",
    "forget",
    "kept",
    "postgres_checkpointer",
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
_SETUP_POLL_SECONDS: Final = 0.05
"""How often a checkpointer's set-up that lost a race (SQLite) or waits for the setup lock
(PostgreSQL) tries again, in seconds."""


@contextmanager
def _typed(what: str, target: Path, kind: type[sqlite3.Error]) -> Iterator[None]:
    """Raise a ``kind`` error of the block as a :class:`CheckpointError` saying ``what``
    (chained with ``from``), naming the file."""
    try:
        yield
    except kind as exc:
        raise CheckpointError(f"{what}: {exc}", path=str(target)) from exc


def _setup_raced(exc: sqlite3.OperationalError, deadline: float) -> bool:
    """Whether a failed ``setup()`` (LangGraph's ``PRAGMA journal_mode=WAL`` and ``CREATE
    TABLE IF NOT EXISTS``) lost a race with another process setting up the same new file
    and may be tried again: SQLite answers "database is locked" at once there, without
    waiting out the busy timeout. ``setup()`` is idempotent; it is tried again until
    ``deadline`` (``time.monotonic()``)."""
    text = str(exc).lower()
    return ("locked" in text or "busy" in text) and time.monotonic() < deadline


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
        deadline = time.monotonic() + lock_timeout()
        with _typed(_CORRUPT, target, sqlite3.DatabaseError):
            while True:
                try:
                    saver.setup()
                    break
                except sqlite3.OperationalError as exc:
                    if not _setup_raced(exc, deadline):
                        raise
                time.sleep(_SETUP_POLL_SECONDS)
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
        deadline = time.monotonic() + lock_timeout()
        with _typed(_CORRUPT, target, sqlite3.DatabaseError):
            while True:
                try:
                    await saver.setup()
                    break
                except sqlite3.OperationalError as exc:
                    if not _setup_raced(exc, deadline):
                        raise
                await asyncio.sleep(_SETUP_POLL_SECONDS)
            await (await conn.execute("SELECT COUNT(*) FROM checkpoints")).fetchone()
            await conn.execute("BEGIN IMMEDIATE")  # a locked file is noticed here (see above)
            await conn.rollback()
        yield saver
    finally:
        await conn.close()


# -- PostgreSQL ---------------------------------------------------------------------------


def _postgres_modules() -> tuple[Any, Any]:
    """``(psycopg, langgraph.checkpoint.postgres)``.

    Raises:
        DependencyMissingError: either is not installed.
    """
    try:
        import psycopg
        from langgraph.checkpoint import postgres
    except ImportError as exc:
        raise DependencyMissingError(
            "agent-contract-langchain[postgres]",
            f"a postgresql:// store keeps LangGraph's checkpoints with PostgresSaver ({exc})",
        ) from exc
    return psycopg, postgres


_INLINE: Final = (str, int, float, bool)
"""The values ``PostgresSaver`` keeps in the checkpoint's plain JSONB (with ``None``)."""


class _Boxed:
    """A channel value ``PostgresSaver`` would keep inline (``None``, a string, a number,
    a boolean), handed to it boxed so that it goes to the blobs table, sealed, instead
    (:meth:`_SealedBlobs._dump_blobs` unboxes it before it is serialized)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _boxed(checkpoint: Any) -> Any:
    """``checkpoint`` with each value ``PostgresSaver`` would store inline boxed."""
    values = checkpoint.get("channel_values") or {}
    boxed = {k: _Boxed(v) if v is None or isinstance(v, _INLINE) else v for k, v in values.items()}
    return {**checkpoint, "channel_values": boxed}


class _SealedBlobs:
    """What the sealed PostgreSQL savers add to LangGraph's: every channel value goes to
    ``checkpoint_blobs`` through the serializer (sealed and encrypted); none is left as
    plain JSON in the ``checkpoints`` row, which then holds only ids, versions and
    metadata (covered by the paused run's seal: :mod:`.sealed`)."""

    serde: Any

    def _dump_blobs(
        self, thread_id: str, checkpoint_ns: str, values: dict[str, Any], versions: Any
    ) -> Any:
        plain = {k: v.value if isinstance(v, _Boxed) else v for k, v in values.items()}
        return super()._dump_blobs(thread_id, checkpoint_ns, plain, versions)  # type: ignore[misc]


@functools.cache
def _saver_classes() -> tuple[type, type]:
    """The sealed ``PostgresSaver`` and ``AsyncPostgresSaver`` (made on first use, so
    that importing this module needs no PostgreSQL package)."""
    _postgres_modules()
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class SealedPostgresSaver(_SealedBlobs, PostgresSaver):
        """``PostgresSaver`` with every channel value sealed in the blobs table."""

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return super().put(config, _boxed(checkpoint), metadata, new_versions)

    class AsyncSealedPostgresSaver(_SealedBlobs, AsyncPostgresSaver):
        """``AsyncPostgresSaver`` with every channel value sealed in the blobs table."""

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return await super().aput(config, _boxed(checkpoint), metadata, new_versions)

    return SealedPostgresSaver, AsyncSealedPostgresSaver


_SETUP_LOCK: Final = "agent-contract:checkpoints-setup"
"""The advisory lock a saver's ``setup()`` (LangGraph's migrations) runs under, so two
processes opening a new database do not both create its tables."""
_READY: Final = "SELECT count(*) FROM checkpoints WHERE false"


def _setup_lock_id() -> int:
    return int.from_bytes(
        hashlib.sha256(_SETUP_LOCK.encode("utf-8")).digest()[:8], "big", signed=True
    )


def _pg_serde(url: str, key: bytes, allowed_types: Iterable[type | str]) -> SealedSerializer:
    """The serializer (``allowed_types`` checked first), the URL checked as a store URL.

    Raises:
        ConfigurationError: not a ``postgresql://`` URL, or an ``allowed_types`` entry is
            refused.
    """
    if parse_store_url(url)[0] != "postgresql":
        raise ConfigurationError(f"not a PostgreSQL store URL: {redacted_url(url)!r}")
    entries = allowed_types if isinstance(allowed_types, str | type) else tuple(allowed_types)
    return SealedSerializer(key, allowed_types=entries)


def _pg_failure(what: str, url: str, exc: BaseException) -> CheckpointError:
    """A :class:`CheckpointError` saying ``what`` happened to the store ``url`` (named
    without its password), with the server's first line."""
    where = redacted_url(url)
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CheckpointError(f"{what} {where}: {detail}", path=where)


def _set_up(saver: Any, conn: Any) -> None:
    """Run the saver's migrations once the setup lock is held (polled, so that no waiting
    session keeps a snapshot open while another creates the indexes concurrently), then
    check the tables are readable."""
    lock = _setup_lock_id()
    deadline = time.monotonic() + lock_timeout()
    while not conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,)).fetchone()[
        "pg_try_advisory_lock"
    ]:
        if time.monotonic() > deadline:
            raise TimeoutError("another process holds the checkpoint tables' setup lock")
        time.sleep(_SETUP_POLL_SECONDS)
    try:
        saver.setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))
    conn.execute(_READY).fetchone()


async def _aset_up(saver: Any, conn: Any) -> None:
    """:func:`_set_up` on an async connection."""
    lock = _setup_lock_id()
    deadline = time.monotonic() + lock_timeout()
    while True:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,))).fetchone()
        if row["pg_try_advisory_lock"]:
            break
        if time.monotonic() > deadline:
            raise TimeoutError("another process holds the checkpoint tables' setup lock")
        await asyncio.sleep(_SETUP_POLL_SECONDS)
    try:
        await saver.setup()
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))
    await (await conn.execute(_READY)).fetchone()


def _saver_connection(url: str) -> dict[str, Any]:
    """The options of a saver's connection: what ``PostgresSaver`` needs (autocommit,
    rows as dicts, no prepared statements: safe behind a transaction pooler) and the
    store's timeouts (:func:`~agent_contract.stores.connection_options`)."""
    from psycopg.rows import dict_row

    return {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        **connection_options(url),
    }


_PG_OPEN: Final = "cannot open the checkpoint store"
_PG_SETUP: Final = "cannot set up or read the checkpoint tables of"


@contextmanager
def postgres_checkpointer(
    url: str, *, key: bytes, allowed_types: Iterable[type | str] = ()
) -> Iterator[Any]:
    """LangGraph's ``PostgresSaver`` on the database ``url`` (one connection, closed on
    exit), its tables set up (``checkpoints``, ``checkpoint_blobs``,
    ``checkpoint_writes``, ``checkpoint_migrations``). Every channel value and pending
    write is sealed, encrypted and read with an allowlist (:class:`SealedSerializer`,
    keyed with ``key``, the data folder's key: it is never stored in the database); none
    is left as plain JSON in a ``checkpoints`` row (LangGraph keeps strings, numbers and
    ``None`` there: these go to the blobs table, sealed, too). An unreachable server, a
    refused login or tables that cannot be read fail here, before the graph runs.

    Args:
        url: a ``postgresql://`` store URL (:mod:`agent_contract.stores`).
        allowed_types: as :func:`sqlite_checkpointer`.

    Raises:
        ConfigurationError: not a PostgreSQL URL, or an ``allowed_types`` entry is refused.
        DependencyMissingError: ``langgraph-checkpoint-postgres`` or psycopg is missing.
        CheckpointError: the server cannot be reached, refused the login, or the tables
            cannot be set up or read (the message names the store without its password).
    """
    serde = _pg_serde(url, key, allowed_types)
    psycopg, _ = _postgres_modules()
    saver_class, _ = _saver_classes()
    try:
        conn = psycopg.connect(url, **_saver_connection(url))
    except psycopg.Error as exc:
        raise _pg_failure(_PG_OPEN, url, exc) from exc
    try:
        saver = saver_class(conn, serde=serde)
        try:
            _set_up(saver, conn)
        except (psycopg.Error, TimeoutError) as exc:
            raise _pg_failure(_PG_SETUP, url, exc) from exc
        yield saver
    finally:
        conn.close()


@asynccontextmanager
async def async_postgres_checkpointer(
    url: str, *, key: bytes, allowed_types: Iterable[type | str] = ()
) -> AsyncIterator[Any]:
    """LangGraph's ``AsyncPostgresSaver`` on the database ``url``, opened in the running
    event loop and closed on exit (drive the graph in the same loop: ``arun_agent``,
    ``aresume_agent``); sealed and set up as :func:`postgres_checkpointer`.

    Raises:
        ConfigurationError: not a PostgreSQL URL, or an ``allowed_types`` entry is refused.
        DependencyMissingError: ``langgraph-checkpoint-postgres`` or psycopg is missing.
        CheckpointError: as :func:`postgres_checkpointer`.
    """
    serde = _pg_serde(url, key, allowed_types)
    psycopg, _ = _postgres_modules()
    _, saver_class = _saver_classes()
    try:
        conn = await psycopg.AsyncConnection.connect(url, **_saver_connection(url))
    except psycopg.Error as exc:
        raise _pg_failure(_PG_OPEN, url, exc) from exc
    try:
        saver = saver_class(conn, serde=serde)
        try:
            await _aset_up(saver, conn)
        except (psycopg.Error, TimeoutError) as exc:
            raise _pg_failure(_PG_SETUP, url, exc) from exc
        yield saver
    finally:
        await conn.close()


# -- the durable runner ------------------------------------------------------------------

CHECKPOINT_FILE: Final = f"{CHECKPOINT_STORE}.sqlite3"
"""LangGraph's checkpointer file in the data folder (see
:func:`~agent_contract_langchain.plugin.sqlite_agent_runner`)."""


@contextmanager
def checkpointer_for(
    store: Store, *, key: bytes | None = None, allowed_types: Iterable[type | str] = ()
) -> Iterator[Any]:
    """The sealed checkpointer of ``store``: :func:`sqlite_checkpointer` on its
    ``checkpoints.sqlite3`` (SQLite), or :func:`postgres_checkpointer` on its database
    (PostgreSQL), keyed with ``key`` (default: the key of ``store.folder``, made if
    missing, as :func:`sqlite_checkpointer` does).

    Raises:
        ConfigurationError: an ``allowed_types`` entry is refused.
        CheckpointError: the checkpoints cannot be opened (see the two checkpointers).
        DataFolderError: the data folder's key is unsafe.
    """
    if store.dialect == "sqlite":
        with sqlite_checkpointer(
            store.sqlite_file(CHECKPOINT_STORE), key=key, allowed_types=allowed_types
        ) as saver:
            yield saver
        return
    with postgres_checkpointer(
        store.url,
        key=key if key is not None else folder_key(store.folder),
        allowed_types=allowed_types,
    ) as saver:
        yield saver


def _sealed(result: RunResult, saver: Any, key: bytes) -> RunResult:
    """``result`` with its paused checkpoint's seal in the snapshot (a finished run's
    result as it is)."""
    if result.stop_reason not in PAUSE_REASONS or result.snapshot is None:
        return result
    snapshot = {**result.snapshot, SEAL_KEY: seal_paused(saver, result.run_id, key)}
    return dataclasses.replace(result, snapshot=snapshot)


def run(model: Model, contract: Contract, options: RunInput, *, store: Store) -> RunResult:
    """:func:`~agent_contract_langchain.harness.run_agent_input` with the store's sealed
    checkpointer (:func:`checkpointer_for`).

    Raises:
        CheckpointError: the checkpoints cannot be opened.
        RunInterrupted: a signal interrupted the run (its snapshot sealed).
    """
    key = folder_key(store.folder)
    with checkpointer_for(store, key=key) as saver:
        try:
            result = run_agent_input(model, contract, options, checkpointer=saver)
        except RunInterrupted as exc:
            raise RunInterrupted(_sealed(exc.result, saver, key), exc.cause) from exc.cause
        return _sealed(result, saver, key)


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
    with checkpointer_for(store, key=key) as saver:
        check_paused(saver, run_id, sealed, key, resumed=bool(snapshot.get(RESUMED_KEY)))

        def keep(data: dict[str, Any]) -> None:
            # The graph has not moved yet; from here on it may (a crash can leave it
            # further on), and the stored run says so.
            checkpoint({**data, SEAL_KEY: sealed, RESUMED_KEY: True})

        try:
            result = resume_or_reconcile(
                model, contract, snapshot, approvals, checkpointer=saver, checkpoint=keep
            )
        except RunInterrupted as exc:
            raise RunInterrupted(_sealed(exc.result, saver, key), exc.cause) from exc.cause
        return _sealed(result, saver, key)


def _holds_checkpoints(store: Store) -> bool:
    """Whether ``store`` has checkpoints to look at (SQLite: the file exists;
    PostgreSQL: the ``checkpoints`` table does), so that :func:`forget` and :func:`kept`
    make nothing in a store that has none."""
    database = store.database(CHECKPOINT_STORE)
    if store.dialect == "sqlite":
        return database.exists()
    with database.transaction(write=False) as conn:
        row = conn.execute("SELECT to_regclass('checkpoints') IS NOT NULL").fetchone()
    return bool(row and row[0])


def forget(run_id: str, *, store: Store) -> None:
    """Drop every checkpoint, blob and pending write of thread ``run_id`` (a finished
    run).

    Raises:
        CheckpointError: the checkpoints cannot be opened.
        DataFolderError: (PostgreSQL) the server cannot be reached.
    """
    if not _holds_checkpoints(store):
        return
    with checkpointer_for(store) as saver:
        saver.delete_thread(run_id)


def kept(*, store: Store) -> list[str]:
    """The thread ids the store's checkpoints are kept for, sorted.

    Raises:
        CheckpointError: the checkpoints cannot be opened.
        DataFolderError: (PostgreSQL) the server cannot be reached.
    """
    if not _holds_checkpoints(store):
        return []
    sql = "SELECT DISTINCT thread_id FROM checkpoints"
    if store.dialect == "sqlite":
        with checkpointer_for(store) as saver:
            rows = saver.conn.execute(sql).fetchall()
        return sorted(str(row[0]) for row in rows)
    with store.database(CHECKPOINT_STORE).transaction(write=False) as conn:
        rows = conn.execute(sql).fetchall()
    return sorted(str(row[0]) for row in rows)
