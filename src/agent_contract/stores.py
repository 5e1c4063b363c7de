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
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
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
    "STORE_ENV",
    "Connection",
    "Cursor",
    "Database",
    "Dialect",
    "Store",
    "column_names",
    "connection_options",
    "open_store",
    "parse_store_url",
    "redacted_url",
    "table_names",
]

STORE_ENV: Final = "AGENT_CONTRACT_STORE"
"""The environment variable naming the store URL (``--store`` wins over it)."""

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


def _psycopg() -> Any:
    """The psycopg module.

    Raises:
        DependencyMissingError: it is not installed.
    """
    try:
        import psycopg
    except ImportError as exc:
        raise DependencyMissingError(
            "psycopg", "a postgresql:// store needs it: pip install 'agent-contract[postgres]'"
        ) from exc
    return psycopg


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
        conn = self._connect(psycopg)
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
            conn.close()

    def _connect(self, psycopg: Any) -> Any:
        """A new connection with the lock and statement timeouts set.

        Raises:
            DataFolderError: the server cannot be reached or refused (``"unavailable"``).
        """
        try:
            return psycopg.connect(self.store.url, **connection_options(self.store.url))
        except psycopg.Error as exc:
            raise self._failure(exc, "unavailable") from exc

    def _failure(self, exc: BaseException, reason: str) -> DataFolderError:
        words = {
            "locked": "it is locked by another process past the timeout",
            "unavailable": "the database server cannot be reached or refused the connection",
        }.get(reason, "the database failed")
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return DataFolderError(
            f"store {self.where}: {words} ({detail})", path=self.where, reason=reason
        )

    @contextmanager
    def session_lock(self, name: str, *, busy: str) -> Iterator[None]:
        """Hold the lock ``name`` until the block ends, or fail at once if another
        process holds it (a resume: one process at a time decides and writes a run).

        Args:
            busy: the message when another process holds it.

        Raises:
            CheckpointError: another process holds the lock (message ``busy``), or the
                lock cannot be taken (a lock file that cannot be made, a server that
                cannot be reached).
        """
        if self.dialect == "sqlite":
            with _file_lock(self.store.sqlite_file(self.name).parent / "locks", name, busy):
                yield
            return
        psycopg = _psycopg()
        conn = self._connect(psycopg)
        try:
            conn.autocommit = True
            held = conn.execute("SELECT pg_try_advisory_lock(%s)", (_lock_id(name),)).fetchone()
            if not (held and held[0]):
                raise CheckpointError(busy, path=self.where)
            yield
        finally:
            conn.close()  # the server releases the session's lock


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

__all__ += ["SCRATCH_SCHEMA_PREFIX", "scratch_schema", "scratch_store"]

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
