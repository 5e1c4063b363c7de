"""The data folder at rest: private, no symlinks, and SQLite that holds up under a crowd.

Stored state is input, and the data folder may sit somewhere other users can reach (a
shared ``/tmp``). Every store (the run store, the order store, a binding's
checkpointer) opens its files through here:

- **Private.** A folder this module creates is ``0700`` and a file ``0600``, whatever the
  umask (the mode is set after creation). An existing folder must be a real folder owned
  by the current user and not writable by group or others (else
  :class:`DataFolderError`); its mode is left as it is.
- **No symlinks.** A path inside the folder that is a symlink (or anything other than a
  regular file) is refused, as are SQLite's ``-wal``, ``-shm`` and ``-journal``
  companions; files are created with ``O_NOFOLLOW | O_EXCL``. (SQLite opens the file by
  name afterwards; the folder is private, so only its owner could swap one in between.)
- **Crowds.** :func:`connect` sets a busy timeout (a share of :func:`lock_timeout`, 30 s
  in all by default) and puts
  a new database in WAL mode once; :func:`transaction` starts every transaction that may
  write with ``BEGIN IMMEDIATE`` (a deferred read-then-write transaction fails at once in
  WAL, whatever the timeout) and retries a locked start a bounded number of times with
  jittered backoff.
- **Clear errors.** A folder that cannot be written (read-only), a file that is not a
  database, a lock held past the timeout: :class:`DataFolderError` (a
  :class:`~agent_contract.errors.CheckpointError`, exit 8), naming the path.
"""

from __future__ import annotations

import errno
import os
import random
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from .errors import CheckpointError

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "FILE_MODE",
    "FOLDER_MODE",
    "LOCK_RETRIES",
    "LOCK_TIMEOUT_ENV",
    "DataFolderError",
    "check_file",
    "connect",
    "failure",
    "lock_timeout",
    "private_file",
    "private_folder",
    "transaction",
]

FOLDER_MODE: Final = 0o700
"""Mode of a folder this module creates."""
FILE_MODE: Final = 0o600
"""Mode of a file this module creates."""
BUSY_TIMEOUT_SECONDS: Final = 30.0
"""How long, in all, a store waits for another process's lock before it gives up
(default; ``$AGENT_CONTRACT_LOCK_TIMEOUT`` sets another number of seconds)."""
LOCK_TIMEOUT_ENV: Final = "AGENT_CONTRACT_LOCK_TIMEOUT"
LOCK_RETRIES: Final = 5
"""How often :func:`transaction` retries a start that still found the database locked
(each attempt waits a share of :func:`lock_timeout` in SQLite's busy handler)."""


def lock_timeout() -> float:
    """The total lock wait in seconds: ``$AGENT_CONTRACT_LOCK_TIMEOUT`` when it is a
    positive number, else :data:`BUSY_TIMEOUT_SECONDS`."""
    try:
        value = float(os.environ.get(LOCK_TIMEOUT_ENV, ""))
    except ValueError:
        return BUSY_TIMEOUT_SECONDS
    return value if value > 0 else BUSY_TIMEOUT_SECONDS


_SQLITE_COMPANIONS: Final = ("-wal", "-shm", "-journal")


class DataFolderError(CheckpointError):
    """The data folder or a file in it cannot be used safely: a symlink, a folder owned
    by someone else or writable by others, a read-only folder, a file that is not a
    database, a lock held past the timeout.

    Attributes:
        reason: ``"unsafe"`` (a symlink, another user's, open to others), ``"readonly"``,
            ``"corrupt"`` (not a database), ``"locked"`` (held past the timeout),
            ``"missing"``, ``"missing_key"`` (the key file is gone beside sealed state:
            restore it), ``"not_a_folder"`` (the folder's path is, or passes through,
            a file) or ``"other"``.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "unsafe") -> None:
        self.reason = reason
        super().__init__(message, path=path)


def private_folder(path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """``path`` as a private folder: created ``0700`` when missing (and ``create``), with
    any missing parent folders, each ``0700`` too (as the XDG base directory
    specification asks of ``$XDG_DATA_HOME``); when it exists, checked (a real folder,
    ours, not writable by group or others).

    Args:
        create: create the folder when it is missing; ``False`` (a command that only
            reads stored state: ``approve``, ``resume``, ``gc``) raises instead, so a
            mistyped path never becomes a new, empty data folder.

    Raises:
        DataFolderError: see above; the folder is missing (``create=False``, reason
            ``"missing"``); a part of the path is a file, not a folder (reason
            ``"not_a_folder"``); or the folder cannot be created.
    """
    folder = Path(path)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            raise DataFolderError(
                f"the data folder {str(folder)!r} does not exist (it is not created here)",
                path=str(folder),
                reason="missing",
            ) from None
        _make_folders(folder)
        info = os.lstat(folder)
    except NotADirectoryError:
        raise _through_a_file(folder) from None
    except OSError as exc:
        raise failure(exc, f"cannot reach the data folder {str(folder)!r}", folder) from exc
    if stat.S_ISLNK(info.st_mode):
        raise DataFolderError(
            f"the data folder {str(folder)!r} is a symlink; use the real folder", path=str(folder)
        )
    if not stat.S_ISDIR(info.st_mode):
        raise DataFolderError(
            f"the data folder {str(folder)!r} is not a folder",
            path=str(folder),
            reason="not_a_folder",
        )
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise DataFolderError(
            f"the data folder {str(folder)!r} belongs to another user (uid {info.st_uid})",
            path=str(folder),
        )
    if info.st_mode & 0o022:
        raise DataFolderError(
            f"the data folder {str(folder)!r} is writable by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}); use a private folder (chmod 700)",
            path=str(folder),
        )
    return folder


def _make_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each ``0700`` whatever the umask (a
    folder another process makes meanwhile is left to the caller's check).

    Raises:
        DataFolderError: a part of the path is a file, or a folder cannot be created.
    """
    missing: list[Path] = []
    here = folder
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    if here.exists() and not here.is_dir():
        raise _through_a_file(folder)
    for part in reversed(missing):
        try:
            os.mkdir(part, FOLDER_MODE)
            os.chmod(part, FOLDER_MODE)  # whatever the umask
        except FileExistsError:
            continue  # another process made it meanwhile: checked by the caller
        except NotADirectoryError:
            raise _through_a_file(folder) from None
        except OSError as exc:
            raise failure(exc, f"cannot create the data folder {str(folder)!r}", folder) from exc


def _through_a_file(folder: Path) -> DataFolderError:
    """The error for a data folder path that passes through a regular file."""
    here = folder
    while here != here.parent and not (here.exists() and not here.is_dir()):
        here = here.parent
    blocker = f" ({str(here)!r} is a file)" if here != here.parent else ""
    return DataFolderError(
        f"the data folder {str(folder)!r} cannot be used: a part of its path is not a "
        f"folder{blocker}",
        path=str(folder),
        reason="not_a_folder",
    )


def check_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` exists as a regular file (``False``: it does not exist).

    Raises:
        DataFolderError: it (or a SQLite companion of it) is a symlink or not a regular
            file.
    """
    target = Path(path)
    for candidate in (target, *(Path(f"{target}{s}") for s in _SQLITE_COMPANIONS)):
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            if candidate == target:
                return False
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            raise DataFolderError(
                f"{str(candidate)!r} in the data folder is {kind}; it is refused",
                path=str(candidate),
            )
    return True


def private_file(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` as an empty ``0600`` file if it is missing (``O_EXCL |
    O_NOFOLLOW``), after checking its folder; an existing one is checked.

    Raises:
        DataFolderError: as :func:`private_folder` and :func:`check_file`, or the file
            cannot be created (a read-only folder).
    """
    target = Path(path)
    private_folder(target.parent)
    if check_file(target):
        return target
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, FILE_MODE)
    except FileExistsError:
        check_file(target)  # another process made it meanwhile
        return target
    except OSError as exc:
        raise failure(exc, f"cannot create {str(target)!r}", target) from exc
    try:
        os.fchmod(fd, FILE_MODE)  # whatever the umask
    finally:
        os.close(fd)
    return target


def connect(path: str | os.PathLike[str], *, create: bool = True) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` in the data folder (autocommit: use
    :func:`transaction`), with the busy timeout; a new file is created private and put in
    WAL mode.

    Args:
        create: create the file when it is missing; ``False`` raises instead.

    Raises:
        DataFolderError: the file is missing (``create=False``), unsafe, or cannot be
            opened.
    """
    target = Path(path)
    existed = check_file(target)
    if not existed:
        if not create:
            raise DataFolderError(
                f"{str(target)!r} does not exist", path=str(target), reason="missing"
            )
        private_file(target)
    try:
        conn = sqlite3.connect(
            target,
            timeout=lock_timeout() / (LOCK_RETRIES + 1),
            isolation_level=None,
            check_same_thread=False,
        )
    except (sqlite3.Error, OSError) as exc:
        raise failure(exc, f"cannot open {str(target)!r}", target) from exc
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise failure(exc, repr(str(target)), target) from exc
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool = True) -> Iterator[sqlite3.Connection]:
    """One transaction on ``conn`` (from :func:`connect`): ``BEGIN IMMEDIATE`` when it may
    write (retried up to :data:`LOCK_RETRIES` times with jittered backoff when it finds
    the database locked past the busy timeout), a plain ``BEGIN`` for a read. Committed
    on success, rolled back on any exception (which then propagates).

    Raises:
        sqlite3.OperationalError: still locked after the retries (the caller names it).
    """
    for attempt in range(LOCK_RETRIES + 1):
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            break
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == LOCK_RETRIES:
                raise
            time.sleep(random.uniform(0.05, 0.25) * (attempt + 1))  # noqa: S311 - jitter
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def failure(exc: BaseException, what: str, path: str | os.PathLike[str]) -> DataFolderError:
    """A :class:`DataFolderError` for ``exc`` (an ``OSError`` or ``sqlite3.Error`` met
    while doing ``what`` on ``path``), its reason named in words a person can act on."""
    text = str(exc)
    readonly = isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    if readonly or "readonly" in text or "read-only" in text:
        reason, why = "readonly", f"the data folder is read-only ({text})"
    elif "not a database" in text or "malformed" in text:
        reason, why = "corrupt", f"the file is not a database or is corrupt ({text})"
    elif "locked" in text or "busy" in text:
        reason, why = "locked", f"it is locked by another process ({text})"
    else:
        reason, why = "other", text
    return DataFolderError(f"{what}: {why}", path=str(path), reason=reason)
