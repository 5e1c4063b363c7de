"""Where stored state lives: a store URL, and one transaction API over SQLite and PostgreSQL.

A data folder's stored state (the run store, the demo's order store, a binding's
checkpoints) lives in one of two places, named by a **store URL**:

- ``sqlite:///PATH``: SQLite files in the folder ``PATH`` (``runs.sqlite3``,
  ``orders.sqlite3``, ...; ``sqlite:///relative/folder`` or ``sqlite:////absolute/folder``,
  as SQLAlchemy reads it), the embedded default: the data folder itself
  (:mod:`agent_contract.datafolder` keeps the files private and holds up under a crowd);
- ``postgresql://...`` (or ``postgres://``): one PostgreSQL database, any libpq URL
  (``postgresql://user@host:5432/db``, ``postgresql:///db?host=/run/postgresql``); every
  store keeps its tables there (``runs``, ``run_versions``, ``orders``, ``refunds``, and
  LangGraph's ``checkpoint*`` tables). Give each deployment a database (or a schema, with
  ``?options=-csearch_path%3D...``) of its own. Needs the ``postgres`` extra
  (``agent-contract[postgres]``: psycopg 3).

The **key files stay in the data folder** (:mod:`agent_contract.sealing`): with
PostgreSQL the folder holds the key and nothing else, and a second process (or machine)
that shares the URL and a copy of the key files reads and resumes the same runs. The key
is never stored in the database.

:func:`open_store` picks the URL: ``--store URL``, else ``$AGENT_CONTRACT_STORE``, else the
data folder. A :class:`Store` hands each store its :class:`Database`, whose
:meth:`Database.transaction` is the one way to read and write:

- a write transaction on SQLite is ``BEGIN IMMEDIATE`` (one writer per file); on
  PostgreSQL it takes the transaction-level advisory lock named by ``lock`` (say
  ``"run:<thread id>"``) when given, so two writers of the same thing wait for each other
  and two writers of different things do not; unique constraints stay the final word (an
  idempotency key is a primary key on both);
- statements use ``?`` placeholders on both (translated to psycopg's ``%s``);
- a lock held past :func:`~agent_contract.datafolder.lock_timeout`, an unreachable
  server, a refused login: :class:`~agent_contract.datafolder.DataFolderError` (reason
  ``"locked"``, ``"unavailable"``, ...), naming the store without its password.

:meth:`Database.session_lock` is the lock a resume holds while it decides and writes
(one process at a time per run): an OS file lock in the data folder on SQLite, a
session-level advisory lock on PostgreSQL; either is released when its holder exits,
even when it is killed.

**Connections are pooled and bounded** on PostgreSQL: each process keeps, per store URL,
at most :func:`pool_size` connections (``$AGENT_CONTRACT_STORE_POOL``, default
:data:`DEFAULT_POOL_SIZE`), in two ``psycopg_pool`` pools: half of them (rounded down) for
the session locks of resumes, the rest for transactions, so a resume that holds a lock
connection always gets a transaction connection once another transaction ends (no
deadlock between the two). Waiting for a free connection is bounded by
:func:`~agent_contract.datafolder.lock_timeout`: past it, :class:`DataFolderError`
(reason ``"locked"``, or ``"unavailable"`` when connecting failed meanwhile). A child
made by ``os.fork`` makes pools of its own; the pools are closed at interpreter exit.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import importlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from .datafolder import (
    FILE_MODE,
    DataFolderError,
    check_file,
    connect,
    failure,
    lock_timeout,
    private_folder,
    transaction,
)
from .errors import CheckpointError, ConfigurationError, DependencyMissingError

__all__ = [
    "DEFAULT_POOL_SIZE",
    "SCRATCH_SCHEMA_PREFIX",
    "STORE_ENV",
    "STORE_POOL_ENV",
    "Connection",
    "Cursor",
    "Database",
    "Dialect",
    "Store",
    "column_names",
    "connection_options",
    "open_store",
    "parse_store_url",
    "pool_size",
    "redacted_url",
    "scratch_schema",
    "scratch_store",
    "table_names",
]

STORE_ENV: Final = "AGENT_CONTRACT_STORE"
"""The environment variable naming the store URL (``--store`` wins over it)."""

STORE_POOL_ENV: Final = "AGENT_CONTRACT_STORE_POOL"
"""The environment variable bounding a process's PostgreSQL connections per store URL
(:func:`pool_size`)."""

DEFAULT_POOL_SIZE: Final = 10
"""The most PostgreSQL connections a process opens to one store URL, unless
``$AGENT_CONTRACT_STORE_POOL`` says otherwise."""

_POOL_SIZES: Final = range(2, 1001)

Dialect = Literal["sqlite", "postgresql"]

_SCHEMES: Final[dict[str, Dialect]] = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
}


class Cursor(Protocol):
    """What :meth:`Connection.execute` returns (sqlite3's and psycopg's cursors alike)."""

    @property
    def rowcount(self) -> int:
        """How many rows the statement changed."""

    def fetchone(self) -> Any:
        """The next row (a tuple), or ``None``."""

    def fetchall(self) -> list[Any]:
        """The remaining rows (tuples)."""


class Connection(Protocol):
    """A connection inside one :meth:`Database.transaction`."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        """Run one statement with ``?`` placeholders."""

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]], /) -> Any:
        """Run one statement for each row of parameters."""


_QUERY_PASSWORD: Final = re.compile(r"(?i)(^|&)(password=)[^&]*")


def redacted_url(url: str) -> str:
    """``url`` without its password (in the user part or a ``password=`` parameter), for
    messages and traces."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # not a URL a person could act on: show its scheme only
        return url.partition("://")[0] + "://***"
    if password is not None:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if parts.query:
        parts = parts._replace(query=_QUERY_PASSWORD.sub(r"\1\2***", parts.query))
    return urlunsplit(parts)


def parse_store_url(url: str) -> tuple[Dialect, str]:
    """``(dialect, target)`` of a store URL: the folder path for ``sqlite:///PATH``, the
    URL itself for PostgreSQL.

    Raises:
        ConfigurationError: not a store URL (another scheme, a SQLite URL without a path
            or with a host), with the accepted forms in the message.
    """
    scheme, sep, rest = url.partition("://")
    dialect = _SCHEMES.get(scheme.lower()) if sep else None
    forms = "sqlite:///PATH (a folder) or postgresql://[user[:password]@][host][:port]/db"
    if dialect is None:
        raise ConfigurationError(f"not a store URL: {redacted_url(url)!r}; use {forms}")
    if dialect == "postgresql":
        return dialect, url
    host, slash, path = rest.partition("/")
    if host or not slash or not path.strip("/"):
        raise ConfigurationError(
            f"a SQLite store URL names a folder: sqlite:///PATH (three slashes, then the "
            f"path), not {url!r}"
        )
    return dialect, path


@dataclass(frozen=True)
class Store:
    """Where a data folder's state lives (see the module doc).

    Attributes:
        folder: the data folder: the key files, and (SQLite) the database files unless
            the URL names another folder.
        url: the store URL (``sqlite:///...`` or ``postgresql://...``).
    """

    folder: Path
    url: str

    @classmethod
    def sqlite(cls, folder: str | os.PathLike[str]) -> Store:
        """The embedded default: SQLite files in ``folder``, its key there too."""
        path = Path(folder)
        return cls(path, f"sqlite:///{path.absolute()}")

    @property
    def dialect(self) -> Dialect:
        """``"sqlite"`` or ``"postgresql"``."""
        return parse_store_url(self.url)[0]

    @property
    def where(self) -> str:
        """The store as messages name it: the SQLite folder, or the URL without password."""
        dialect, target = parse_store_url(self.url)
        return target if dialect == "sqlite" else redacted_url(target)

    def sqlite_file(self, name: str) -> Path:
        """The SQLite file of store ``name`` (``"runs"``: ``runs.sqlite3``).

        Raises:
            ConfigurationError: this is a PostgreSQL store.
        """
        dialect, target = parse_store_url(self.url)
        if dialect != "sqlite":
            raise ConfigurationError(f"the store {self.where} is not SQLite (no {name} file)")
        return Path(target) / f"{name}.sqlite3"

    def database(self, name: str) -> Database:
        """The database of store ``name`` (``"runs"``, ``"orders"``, ``"checkpoints"``):
        its SQLite file, or the one PostgreSQL database."""
        return Database(self, name)


def open_store(folder: str | os.PathLike[str], explicit: str | None = None) -> Store:
    """The store of data folder ``folder``: ``explicit`` (``--store``), else
    ``$AGENT_CONTRACT_STORE``, else SQLite files in ``folder``.

    Raises:
        ConfigurationError: the URL is not a store URL (:func:`parse_store_url`).
    """
    url = explicit or os.environ.get(STORE_ENV) or ""
    if not url:
        return Store.sqlite(folder)
    parse_store_url(url)
    return Store(Path(folder), url)


def _postgres_module(name: str) -> Any:
    """The installed module ``name`` (``"psycopg"``, ``"psycopg_pool"``).

    Raises:
        DependencyMissingError: it is not installed.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise DependencyMissingError(
            name, "a postgresql:// store needs it: pip install 'agent-contract[postgres]'"
        ) from exc


def _psycopg() -> Any:
    """The psycopg module (see :func:`_postgres_module`)."""
    return _postgres_module("psycopg")


_PLACEHOLDER: Final = re.compile(r"\?")


def _adapted(parameters: Sequence[Any]) -> tuple[Any, ...]:
    """``parameters`` with each mapping sent as ``jsonb`` (what psycopg reads a ``jsonb``
    column back as; LangGraph's checkpoint rows carry two), the rest as they are."""
    if not any(isinstance(p, Mapping) for p in parameters):
        return tuple(parameters)
    from psycopg.types.json import Jsonb

    return tuple(Jsonb(dict(p)) if isinstance(p, Mapping) else p for p in parameters)


class _PostgresConnection:
    """A psycopg connection that takes ``?`` placeholders (see :class:`Connection`)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        return self._conn.execute(_PLACEHOLDER.sub("%s", sql), _adapted(parameters))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        with self._conn.cursor() as cursor:
            cursor.executemany(_PLACEHOLDER.sub("%s", sql), [_adapted(r) for r in rows])
        return None


def table_names(conn: Connection, dialect: Dialect) -> frozenset[str]:
    """The names of the tables ``conn`` sees: SQLite's file, or PostgreSQL's current
    schema (a read; nothing created)."""
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        if dialect == "sqlite"
        else "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema()"
    )
    return frozenset(str(row[0]) for row in conn.execute(query).fetchall())


def column_names(conn: Connection, dialect: Dialect, table: str) -> tuple[str, ...]:
    """The columns of ``table`` in their declared order (empty when there is no such
    table; a read)."""
    query = (
        "SELECT name FROM pragma_table_info(?) ORDER BY cid"
        if dialect == "sqlite"
        else "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = ? ORDER BY ordinal_position"
    )
    return tuple(str(row[0]) for row in conn.execute(query, (table,)).fetchall())


def _lock_id(name: str) -> int:
    """A signed 64-bit advisory lock id for ``name`` (stable across processes)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big", signed=True)


def connection_options(url: str) -> dict[str, Any]:
    """The settings of every PostgreSQL connection a store opens on ``url``
    (``psycopg.connect(url, **connection_options(url))``): a connect timeout and a lock
    wait of :func:`~agent_contract.datafolder.lock_timeout` seconds (whole seconds for the
    connect timeout, at least 1), and an idle-in-transaction limit of four times that, so
    a holder that hangs lets go. The URL's own ``options`` (``-csearch_path=...``: a
    schema per deployment) are kept, before these (a keyword argument would replace
    them)."""
    timeout_ms = max(1, int(lock_timeout() * 1000))
    psycopg = _psycopg()
    from psycopg.conninfo import conninfo_to_dict

    try:
        own = str(conninfo_to_dict(url).get("options") or "")
    except psycopg.Error:  # a URL psycopg cannot parse fails at connect, named there
        own = ""
    ours = f"-c lock_timeout={timeout_ms} -c idle_in_transaction_session_timeout={timeout_ms * 4}"
    return {
        "connect_timeout": max(1, int(lock_timeout())),
        "options": f"{own} {ours}".strip(),
    }


def pool_size() -> int:
    """The most PostgreSQL connections one process opens to one store URL:
    ``$AGENT_CONTRACT_STORE_POOL`` (a whole number from 2 to 1000), else
    :data:`DEFAULT_POOL_SIZE`. Half of them (rounded down) hold resumes' session locks,
    the rest run transactions; a process of a deployment needs ``pool_size()``
    connections of the server's ``max_connections`` (plus one per open LangGraph
    checkpointer with the LangChain binding).

    Raises:
        ConfigurationError: the variable is set to anything else.
    """
    raw = os.environ.get(STORE_POOL_ENV, "").strip()
    if not raw:
        return DEFAULT_POOL_SIZE
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value not in _POOL_SIZES:
        raise ConfigurationError(
            f"${STORE_POOL_ENV} must be a whole number from {_POOL_SIZES.start} to "
            f"{_POOL_SIZES.stop - 1} (the most PostgreSQL connections one process opens to "
            f"a store), not {raw!r}"
        )
    return value


class _Failures:
    """The last failed connection attempt of a pair of pools (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[float, BaseException] | None = None

    def note(self, exc: BaseException) -> None:
        with self._lock:
            self._last = (time.monotonic(), exc)

    def since(self, started: float) -> BaseException | None:
        """The last failure at or after ``started`` (``time.monotonic()``), if any."""
        with self._lock:
            last = self._last
        return last[1] if last is not None and last[0] >= started else None


@dataclass(frozen=True)
class _Pools:
    """One process's connections to one store URL: ``transactions`` and ``locks``
    (``psycopg_pool.ConnectionPool``), made with ``size`` and ``timeout``."""

    size: int
    timeout: float
    transactions: Any
    locks: Any
    failures: _Failures

    def close(self) -> None:
        for pool in (self.locks, self.transactions):
            with suppress(Exception):
                pool.close(timeout=1.0)


_POOLS: dict[tuple[str, int], _Pools] = {}
"""The pools by (store URL, process id), the most recently used last."""
_MAX_URLS: Final = 4
"""The most store URLs a process keeps pools for (a test session opens a database per
test: the least recently used URL's pools are closed first)."""
_POOLS_LOCK: Final = threading.Lock()
_CLOSE_AT_EXIT: list[bool] = []


def _close_pools() -> None:
    """Close this process's pools (at interpreter exit; a forked child's copies of its
    parent's pools are left alone: closing them would end the parent's sessions)."""
    pid = os.getpid()
    with _POOLS_LOCK:
        mine = [key for key in _POOLS if key[1] == pid]
        pools = [_POOLS.pop(key) for key in mine]
    for each in pools:
        each.close()


def _unlock_all(conn: Any) -> None:
    """A lock connection's reset on its way back to the pool: no session lock stays
    held by accident (each holder unlocks its own before)."""
    conn.execute("SELECT pg_advisory_unlock_all()")


def _autocommit(conn: Any) -> None:
    conn.autocommit = True


def _pools(url: str, where: str) -> _Pools:
    """This process's pools for ``url``, made on first use (and made again when
    :func:`pool_size` or the lock timeout changed; a process keeps the pools of its
    :data:`_MAX_URLS` most recently used URLs). Before making them, one connection
    is opened and closed at once, so an unreachable server fails fast.

    Raises:
        ConfigurationError: a bad ``$AGENT_CONTRACT_STORE_POOL``.
        DataFolderError: the server cannot be reached or refused (``"unavailable"``).
    """
    size, timeout = pool_size(), lock_timeout()
    pid = os.getpid()
    key = (url, pid)
    psycopg, psycopg_pool = _psycopg(), _postgres_module("psycopg_pool")
    with _POOLS_LOCK:
        current = _POOLS.pop(key, None)
        if current is not None and (current.size, current.timeout) == (size, timeout):
            _POOLS[key] = current  # the most recently used last
            return current
        # settings changed, or a new URL past the most a process keeps: close the pools
        # (their borrowed connections close as they come back)
        stale = [] if current is None else [current]
        mine = [k for k in _POOLS if k[1] == pid]
        stale += [_POOLS.pop(k) for k in mine[: max(0, len(mine) + 1 - _MAX_URLS)]]
        for each in stale:
            each.close()
        options = connection_options(url)
        try:
            psycopg.connect(url, **options).close()
        except psycopg.Error as exc:
            raise _store_failure(where, exc, "unavailable") from exc
        failures = _Failures()

        class _Connection(psycopg.Connection):  # type: ignore[misc,name-defined]
            """A connection whose failed attempts are remembered (to tell an
            unreachable server from a busy pool)."""

            @classmethod
            def connect(cls, *args: Any, **kwargs: Any) -> Any:
                try:
                    return super().connect(*args, **kwargs)
                except psycopg.Error as exc:
                    failures.note(exc)
                    raise

        locks = size // 2
        common: dict[str, Any] = {
            "connection_class": _Connection,
            "kwargs": options,
            "min_size": 0,
            "timeout": timeout,
            "check": psycopg_pool.ConnectionPool.check_connection,
            "max_idle": 60.0,
            "num_workers": 2,
            "open": True,
        }
        pools = _Pools(
            size=size,
            timeout=timeout,
            transactions=psycopg_pool.ConnectionPool(
                url, max_size=size - locks, name="agent-contract-transactions", **common
            ),
            locks=psycopg_pool.ConnectionPool(
                url,
                max_size=locks,
                name="agent-contract-locks",
                configure=_autocommit,
                reset=_unlock_all,
                **common,
            ),
            failures=failures,
        )
        _POOLS[key] = pools
        if not _CLOSE_AT_EXIT:
            atexit.register(_close_pools)
            _CLOSE_AT_EXIT.append(True)
        return pools


def _store_failure(where: str, exc: BaseException, reason: str) -> DataFolderError:
    words = {
        "locked": "it is locked by another process past the timeout",
        "unavailable": "the database server cannot be reached or refused the connection",
    }.get(reason, "the database failed")
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DataFolderError(f"store {where}: {words} ({detail})", path=where, reason=reason)


@dataclass(frozen=True)
class Database:
    """The database of one store (see :meth:`Store.database`)."""

    store: Store
    name: str

    @property
    def dialect(self) -> Dialect:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.store.dialect

    @property
    def where(self) -> str:
        """The database as messages name it (a file path, or the URL without password)."""
        if self.dialect == "sqlite":
            return str(self.store.sqlite_file(self.name))
        return self.store.where

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        """The driver's error classes a statement may raise inside
        :meth:`transaction` (``sqlite3.Error``, or psycopg's ``Error``), to catch them
        without importing the driver of the other dialect.

        Raises:
            DependencyMissingError: a PostgreSQL store without psycopg installed.
        """
        if self.dialect == "sqlite":
            return (sqlite3.Error,)
        return (_psycopg().Error,)

    @staticmethod
    def unique_violation(exc: BaseException) -> bool:
        """Whether ``exc`` (or an error in its ``__cause__`` chain) is a
        unique-constraint violation: a concurrent insert of the same primary key
        (SQLite's ``IntegrityError`` on a UNIQUE/PRIMARY KEY, PostgreSQL's SQLSTATE
        23505)."""
        error: BaseException | None = exc
        for _ in range(16):  # a cause chain is short; never loop on a cycle
            if error is None:
                return False
            if getattr(error, "sqlstate", None) == "23505":
                return True
            if isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error):
                return True
            error = error.__cause__
        return False

    def exists(self) -> bool:
        """Whether the database is there (SQLite: the file exists; PostgreSQL: always,
        the server holds it; a store checks its tables).

        Raises:
            DataFolderError: the SQLite file is a symlink or not a regular file.
        """
        if self.dialect == "sqlite":
            return check_file(self.store.sqlite_file(self.name))
        return True

    def tables(self) -> frozenset[str]:
        """The names of the database's tables (none when its SQLite file is missing; a
        read: nothing created, no write lock taken).

        Raises:
            DataFolderError: as :meth:`transaction` (unsafe file, unreachable server).
        """
        if not self.exists():
            return frozenset()
        with self.transaction(write=False, create=False) as conn:
            return table_names(conn, self.dialect)

    @contextmanager
    def transaction(
        self, *, write: bool = True, lock: str | None = None, create: bool = True
    ) -> Iterator[Connection]:
        """One transaction, committed on success and rolled back on any exception.

        Args:
            write: a transaction that may write (SQLite: ``BEGIN IMMEDIATE``).
            lock: PostgreSQL: the name of a transaction-level advisory lock to take first
                (writers of the same name wait for each other; SQLite's write lock covers
                the whole file anyway).
            create: SQLite: create a missing file (else :class:`DataFolderError`, reason
                ``"missing"``).

        Raises:
            DataFolderError: locked past the timeout (``"locked"``), read-only, corrupt,
                unsafe, missing, or (PostgreSQL) the server cannot be reached or refused
                the login (``"unavailable"``); an error of the statements themselves
                propagates as sqlite3's or psycopg's.
        """
        if self.dialect == "sqlite":
            yield from self._sqlite(write=write, create=create)
        else:
            yield from self._postgres(write=write, lock=lock)

    def _sqlite(self, *, write: bool, create: bool) -> Iterator[Connection]:
        path = self.store.sqlite_file(self.name)
        conn = connect(path, create=create)
        try:
            with transaction(conn, write=write) as db:
                yield db
        except sqlite3.DatabaseError as exc:
            raise failure(exc, repr(str(path)), path) from exc
        finally:
            conn.close()

    def _postgres(self, *, write: bool, lock: str | None) -> Iterator[Connection]:
        psycopg = _psycopg()
        pools, conn = self._borrow("transactions")
        try:
            try:
                with conn.transaction():
                    if lock is not None and write:
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id(lock),))
                    yield _PostgresConnection(conn)
            except psycopg.errors.LockNotAvailable as exc:
                raise self._failure(exc, "locked") from exc
            except psycopg.errors.QueryCanceled as exc:  # a lock wait past the timeout
                raise self._failure(exc, "locked") from exc
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected) as exc:
                raise self._failure(exc, "locked") from exc
            except psycopg.OperationalError as exc:
                raise self._failure(exc, "unavailable") from exc
        finally:
            # the pool rolls back a connection left in a transaction and drops a broken
            # or closed one (psycopg_pool's _reset_connection/_return_connection)
            pools.transactions.putconn(conn)

    def _borrow(self, which: Literal["transactions", "locks"]) -> tuple[_Pools, Any]:
        """A connection from this process's pool ``which`` for the store's URL, with the
        lock and statement timeouts set (:func:`connection_options`); give it back with
        ``putconn``.

        Raises:
            ConfigurationError: a bad ``$AGENT_CONTRACT_STORE_POOL``.
            DataFolderError: every connection of the pool stayed in use past the lock
                timeout (``"locked"``), or the server cannot be reached or refused
                (``"unavailable"``).
        """
        psycopg_pool = _postgres_module("psycopg_pool")
        for _ in range(3):  # a pool closed meanwhile (its settings changed): the new one
            pools = _pools(self.store.url, self.where)
            pool = getattr(pools, which)
            started = time.monotonic()
            try:
                return pools, pool.getconn(timeout=pools.timeout)
            except psycopg_pool.PoolClosed:
                continue
            except psycopg_pool.PoolTimeout as exc:
                failed = pools.failures.since(started)
                if failed is not None:
                    raise self._failure(failed, "unavailable") from exc
                use = "resume locks" if which == "locks" else "transactions"
                raise DataFolderError(
                    f"store {self.where}: all {pool.max_size} connections this process keeps "
                    f"for {use} stayed in use past the timeout of {pools.timeout:g} s "
                    f"(${STORE_POOL_ENV}={pools.size} bounds the process's connections; "
                    "raise it if the server allows more, or run fewer at once)",
                    path=self.where,
                    reason="locked",
                ) from exc
        raise DataFolderError(
            f"store {self.where}: its connection pool kept closing", path=self.where, reason="other"
        )

    def _failure(self, exc: BaseException, reason: str) -> DataFolderError:
        return _store_failure(self.where, exc, reason)

    @contextmanager
    def session_lock(self, name: str, *, busy: str) -> Iterator[None]:
        """Hold the lock ``name`` until the block ends, or fail at once if another
        process holds it (a resume: one process at a time decides and writes a run).

        On PostgreSQL the lock is a session-level advisory lock on a connection of the
        process's lock pool (:func:`pool_size`), unlocked before the connection goes
        back; a connection that cannot unlock is closed instead (which releases it).

        Args:
            busy: the message when another process holds it.

        Raises:
            CheckpointError: another process holds the lock (message ``busy``), or the
                lock cannot be taken (a lock file that cannot be made, a server that
                cannot be reached: :class:`DataFolderError`, as is a pool whose lock
                connections all stay in use past the lock timeout).
        """
        if self.dialect == "sqlite":
            with _file_lock(self.store.sqlite_file(self.name).parent / "locks", name, busy):
                yield
            return
        psycopg = _psycopg()
        lock_id = _lock_id(name)
        pools, conn = self._borrow("locks")
        held = False
        try:
            try:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_id,)).fetchone()
            except psycopg.OperationalError as exc:
                raise self._failure(exc, "unavailable") from exc
            held = bool(row and row[0])
            if not held:
                raise CheckpointError(busy, path=self.where)
            yield
        finally:
            try:
                if held:
                    row = conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,)).fetchone()
                    if not (row and row[0]):
                        conn.close()
            except psycopg.Error:  # the block's outcome stands: closing releases the lock
                conn.close()
            except BaseException:
                conn.close()
                raise
            finally:
                pools.locks.putconn(conn)


@contextmanager
def _file_lock(folder: Path, name: str, busy: str) -> Iterator[None]:
    """An OS file lock (``flock``) on a private file in ``folder``, released by the kernel
    when the holder exits, even if it is killed. The holder removes the file before it
    lets go (a process that opened the old file checks, once it holds the lock, that the
    file is still the one in place, and tries again otherwise), so lock files do not pile
    up.

    Raises:
        CheckpointError: another process holds it (``busy``), or the file cannot be made.
    """
    private_folder(folder)
    path = folder / f"{hashlib.sha256(name.encode('utf-8')).hexdigest()[:32]}.lock"
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
            raise CheckpointError(busy, path=str(path)) from exc
        try:
            same = os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)  # the holder removed it meanwhile: lock the new one
            continue
        try:
            yield
        finally:
            with suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)  # releases the flock
        return
    raise CheckpointError(f"cannot take the lock {name!r}", path=str(path))


# -- scratch stores: a fresh place per contract-suite scenario ------------------------------

SCRATCH_SCHEMA_PREFIX: Final = "agent_contract_suite_"
"""The name prefix of a scratch schema (:func:`scratch_schema`): ``<prefix><12 hex>``."""


def _with_search_path(url: str, schema: str) -> str:
    """``url`` with ``-csearch_path=<schema>`` added to its ``options`` parameter (after
    the URL's own options, so it wins over a ``search_path`` they set), or as a new one."""
    setting = f"-csearch_path%3D{schema}"
    base, mark, query = url.partition("?")
    parts = query.split("&") if mark and query else []
    for at, part in enumerate(parts):
        if part.lower().startswith("options="):
            parts[at] = f"{part}%20{setting}"
            break
    else:
        parts.append(f"options={setting}")
    return f"{base}?{'&'.join(parts)}"


@contextmanager
def scratch_schema(store: Store, *, prefix: str = SCRATCH_SCHEMA_PREFIX) -> Iterator[Store]:
    """``store`` in a new, empty schema of its PostgreSQL database: yields a
    :class:`Store` with the same folder whose URL sets ``search_path`` to the schema
    (``<prefix><12 random hex digits>``), so every store's tables are made there; on exit
    (the block raising included) the schema is dropped with everything in it.

    Args:
        prefix: the schema name's prefix (lower-case letters, digits and ``_``).

    Raises:
        ConfigurationError: ``store`` is not PostgreSQL, or ``prefix`` is not a plain
            lower-case name.
        DataFolderError: the server cannot be reached, or refused the ``CREATE SCHEMA``
            or the ``DROP SCHEMA`` (reason ``"unavailable"``, ``"locked"``, ...).
    """
    if store.dialect != "postgresql":
        raise ConfigurationError(f"the store {store.where} is not PostgreSQL (no schema)")
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", prefix):
        raise ConfigurationError(f"a scratch schema prefix is a plain lower-case name: {prefix!r}")
    name = f"{prefix}{os.urandom(6).hex()}"
    database = store.database("scratch")
    with database.transaction() as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield Store(store.folder, _with_search_path(store.url, name))
    finally:
        with database.transaction() as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


@contextmanager
def scratch_store(
    base: Store | None = None, *, prefix: str = "agent-contract-scratch-"
) -> Iterator[Store]:
    """A fresh, empty store for one scenario, removed on exit (the block raising
    included): a new private temporary data folder (``<prefix>...`` in the system's
    temporary directory: the key files, and on SQLite the database files) and, when
    ``base`` is PostgreSQL, a new schema of ``base``'s database
    (:func:`scratch_schema`); with ``base`` None or SQLite, SQLite files in that folder
    (whatever folder a ``sqlite:///`` URL names: nothing is written there).

    Raises:
        DataFolderError: the folder cannot be made, or as :func:`scratch_schema`.
    """
    import tempfile  # only the contract suite makes scratch stores

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        folder = Path(tmp)
        if base is None or base.dialect == "sqlite":
            yield Store.sqlite(folder)
            return
        with scratch_schema(Store(folder, base.url)) as store:
            yield store
