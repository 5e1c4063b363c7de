"""Authenticating stored state: one secret key per data folder, HMAC-SHA256 seals.

Stored state is input: a run store or a checkpoint file edited between ``run`` and
``approve`` must be refused, not obeyed. The data folder holds a 32-byte random key,
:data:`KEY_FILE`, readable by its owner only (``0600``). Each store derives its own
sub-key (:func:`subkey`: an HMAC of the key with a label such as ``runs/v1``) and seals
what it writes (:func:`seal`); what it reads is checked before it is used
(:func:`verify`). Approval tokens are keyed the same way (``approval/v1``).

The key file is made atomically (a private temporary file, then ``os.link``, which fails
if another process linked its key first), so a crowd of processes starting on a new
folder agrees on one key. It is read with ``O_NOFOLLOW`` and must be a regular file of
32 bytes, owned by the current user, not readable by group or others.

What a store keeps is also encrypted (:func:`encrypt`, :func:`decrypt`), so no value a
run was given (``--secret``) is stored as it is in any spelling: AES-256-GCM from the
``cryptography`` library (authenticated encryption) under a sub-key, with a random 96-bit
nonce per value; the store's HMAC seal is computed over the result as well.

What this protects against: another local user, or anything else that can write the
data folder's files but not read its key. It does not protect against the owner's own
account. Losing the key makes the stored runs unreadable: they are refused (fail
closed), never trusted. A key is never made where sealed state already exists (a
non-empty ``*.sqlite3`` file in the folder holding sealed rows; with a PostgreSQL store,
a sealed table of the database holding a row: :func:`store_key`): a lost key is its own
error (reason ``"missing_key"``) that names the key file and says where to get it back
(a backup; for a PostgreSQL store, the folder of the process that made the rows), never a
fresh key whose seals every stored row then fails.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sqlite3
import stat
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Final

from .datafolder import DataFolderError, private_folder
from .stores import Store, table_names

__all__ = [
    "KEY_BYTES",
    "KEY_FILE",
    "NONCE_BYTES",
    "POSTGRES_SEALED_TABLES",
    "SEALED_SUFFIX",
    "SEALED_TABLES",
    "decrypt",
    "encrypt",
    "folder_key",
    "seal",
    "store_key",
    "subkey",
    "verify",
]

KEY_FILE: Final = "store.key"
"""The key's file name in the data folder."""
SEALED_SUFFIX: Final = ".sqlite3"
"""The files a data folder may seal rows in (the run store, the checkpoints)."""
SEALED_TABLES: Final = ("runs", "run_versions", "checkpoints", "writes")
"""The tables whose rows are sealed with the folder's key: the run store's ``runs`` and
``run_versions`` and a sealed checkpointer's ``checkpoints`` and ``writes``. A file with none of them holding a
row (the demo's order store, a new empty file) is not sealed state."""
POSTGRES_SEALED_TABLES: Final = (*SEALED_TABLES, "checkpoint_writes", "checkpoint_blobs")
"""The tables of a PostgreSQL store whose rows are sealed: :data:`SEALED_TABLES` and
LangGraph's ``PostgresSaver`` tables (``checkpoints``, ``checkpoint_writes``,
``checkpoint_blobs``) that the sealed checkpointer writes."""
KEY_BYTES: Final = 32
"""The key's size in bytes."""
NONCE_BYTES: Final = 12
"""The random nonce in front of every :func:`encrypt` output (AES-GCM's 96 bits)."""


def folder_key(folder: str | os.PathLike[str], *, create: bool = True) -> bytes:
    """The data folder's key, created on first use when ``create``.

    A key is created only in a folder that holds no sealed state yet (no non-empty file
    ending in :data:`SEALED_SUFFIX` holding sealed rows): a new key could authenticate
    none of it. (With a PostgreSQL store use :func:`store_key`, which checks the
    database too.)

    Raises:
        DataFolderError: the key file is missing (``create=False``: reason
            ``"missing"``; beside sealed state: reason ``"missing_key"``, naming the key
            file and the stored files), a symlink, not ours, readable by others, or not
            :data:`KEY_BYTES` long.
    """
    where = private_folder(folder)
    return _key(where, create=create, sealed=lambda: _sealed_state(where))


def store_key(store: Store, *, create: bool = True) -> bytes:
    """The key of ``store``'s data folder (``store.folder``), created on first use when
    ``create``, and only where no sealed state exists: on SQLite as :func:`folder_key`
    (the data folder's files, and those of the folder the URL names when it is another
    one); on PostgreSQL no key is made while the database holds a row in one of
    :data:`POSTGRES_SEALED_TABLES` (those rows were sealed with the key of the folder
    that made them: copy its key file here instead).

    Raises:
        DataFolderError: as :func:`folder_key`; beside a PostgreSQL store holding sealed
            rows, reason ``"missing_key"`` (naming the key file, the tables, and saying
            to copy the key files from the folder that made them); the database cannot
            be read (reason ``"unavailable"``, ``"locked"``, ...: nothing is created).
    """
    where = private_folder(store.folder)
    if store.dialect == "sqlite":
        other = store.sqlite_file("runs").parent

        def files() -> tuple[list[str], str]:
            found, advice = _sealed_state(where)
            if other.absolute() != where.absolute() and other.is_dir():
                found += [str(other / name) for name in _sealed_files(other)]
            return found, advice

        return _key(where, create=create, sealed=files)
    return _key(where, create=create, sealed=lambda: _sealed_tables(store))


def _key(where: Path, *, create: bool, sealed: Callable[[], tuple[list[str], str]]) -> bytes:
    """The key in folder ``where``, made when missing, ``create`` and ``sealed()``
    (``(what holds sealed state, how to get the key back)``) names nothing.

    Raises:
        DataFolderError: see :func:`folder_key`.
    """
    path = where / KEY_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        if not create:
            raise DataFolderError(
                f"the data folder has no key ({str(path)!r}); its stored runs cannot be "
                "authenticated",
                path=str(path),
                reason="missing",
            ) from None
    found, advice = sealed()
    if found:
        raise DataFolderError(
            f"the data folder's key {str(path)!r} is missing, but {', '.join(found)} holds "
            f"sealed state that only that key can authenticate: {advice} and run the "
            "command again; a new key is not created here (it could read none of the "
            "stored runs). A folder written by an older agent-contract without "
            "authentication never had a key: finish or discard its runs with that "
            "version, or use a new folder",
            path=str(path),
            reason="missing_key",
        )
    _create(path)
    try:
        return _read(path)
    except FileNotFoundError as exc:  # pragma: no cover - removed between create and read
        raise DataFolderError(f"the key file {str(path)!r} vanished", path=str(path)) from exc


def _sealed_state(folder: Path) -> tuple[list[str], str]:
    """What in data folder ``folder`` holds sealed rows, and how to get its key back."""
    found = _sealed_files(folder)
    names = [f"the folder ({', '.join(found)})"] if found else []
    return names, f"restore {KEY_FILE} from a backup into the folder (mode 0600)"


def _sealed_tables(store: Store) -> tuple[list[str], str]:
    """The tables of PostgreSQL ``store`` that hold sealed rows, and how to get the key.

    Raises:
        DataFolderError: the database cannot be read.
    """
    with store.database("runs").transaction(write=False) as db:
        present = sorted(table_names(db, "postgresql") & set(POSTGRES_SEALED_TABLES))
        holding = [
            table
            for table in present
            if db.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None  # noqa: S608 - fixed names
        ]
    found = [f"the store {store.where} (tables {', '.join(holding)})"] if holding else []
    return found, (
        f"copy the key files ({KEY_FILE}) from the data folder of the process that made "
        "those rows into this folder (mode 0600)"
    )


def _sealed_files(folder: Path) -> list[str]:
    """The names of the files in ``folder`` that hold sealed rows (sorted): SQLite files
    (``*``:data:`SEALED_SUFFIX`) with a row in one of :data:`SEALED_TABLES`. A file that
    is not SQLite counts as sealed (it may be; fail closed)."""
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(SEALED_SUFFIX):
            try:
                size = entry.lstat().st_size
            except OSError:
                continue
            if size > 0 and _holds_sealed_rows(entry):
                found.append(entry.name)
    return sorted(found)


def _holds_sealed_rows(path: Path) -> bool:
    """True when the SQLite file ``path`` has a row in one of :data:`SEALED_TABLES`, or
    cannot be read as SQLite (read-only, without creating or changing anything); False
    for a file another process holds locked (it is being written now, so its writer
    had the key)."""
    try:
        with closing(
            sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        ) as db:
            names = table_names(db, "sqlite")
            return any(
                db.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None  # noqa: S608 - fixed names
                for table in SEALED_TABLES
                if table in names
            )
    except sqlite3.OperationalError as exc:
        # Locked by a live writer: a sealed store creates the key before its first sealed
        # row, so a file being written now is not evidence of a lost key.
        text = str(exc).lower()
        return "locked" not in text and "busy" not in text
    except sqlite3.Error:
        return True


def _read(path: Path) -> bytes:
    """The key in ``path``.

    Raises:
        FileNotFoundError: no key yet.
        DataFolderError: the file is unsafe or malformed.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DataFolderError(
            f"the key file {str(path)!r} cannot be opened (a symlink is refused): {exc}",
            path=str(path),
        ) from exc
    try:
        info = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(info.st_mode):
            problem = "is not a regular file"
        elif hasattr(os, "getuid") and info.st_uid != os.getuid():
            problem = f"belongs to another user (uid {info.st_uid})"
        elif info.st_mode & 0o077:
            problem = f"is readable or writable by others (mode {stat.S_IMODE(info.st_mode):o})"
        elif info.st_size != KEY_BYTES:
            problem = f"holds {info.st_size} bytes, not {KEY_BYTES}"
        if problem is not None:
            raise DataFolderError(f"the key file {str(path)!r} {problem}", path=str(path))
        return os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)


def _create(path: Path) -> None:
    """Write a new key next to ``path`` and link it into place (no-op if another
    process linked its key first)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(temporary, flags, 0o600)
    except OSError as exc:
        raise DataFolderError(
            f"cannot create the data folder's key in {str(path.parent)!r}: {exc}",
            path=str(path),
        ) from exc
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process's key won: use it
    except OSError as exc:
        raise DataFolderError(f"cannot store the key {str(path)!r}: {exc}", path=str(path)) from exc
    finally:
        os.unlink(temporary)


def subkey(key: bytes, label: str) -> bytes:
    """The sub-key for ``label`` (e.g. ``runs/v1``): HMAC-SHA256(key, label)."""
    return hmac.new(key, label.encode("utf-8"), hashlib.sha256).digest()


def seal(key: bytes, *parts: bytes | str) -> str:
    """The HMAC-SHA256 (hex) of ``parts``, each length-prefixed (so no two different
    sequences of parts share a seal)."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        mac.update(len(data).to_bytes(8, "big"))
        mac.update(data)
    return mac.hexdigest()


def verify(key: bytes, expected: str | None, *parts: bytes | str) -> bool:
    """Whether ``expected`` is :func:`seal` of ``parts`` (compared in constant time)."""
    if not isinstance(expected, str):
        return False
    return hmac.compare_digest(expected, seal(key, *parts))


def encrypt(key: bytes, data: bytes) -> bytes:
    """``data`` encrypted with ``key`` (a 32-byte sub-key, see :func:`subkey`): a random
    :data:`NONCE_BYTES`-byte nonce, then AES-256-GCM's ciphertext and 16-byte tag
    (``cryptography``'s ``AESGCM``).

    Raises:
        ValueError: ``key`` is not 16, 24 or 32 bytes.
    """
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, data, None)


def decrypt(key: bytes, blob: bytes) -> bytes:
    """What :func:`encrypt` was given, from its output ``blob`` and the same ``key``.

    Raises:
        ValueError: ``blob`` is shorter than a nonce and a tag, or fails authentication
            (changed, or encrypted with another key).
    """
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if len(blob) < NONCE_BYTES + 16:
        raise ValueError("an encrypted value is shorter than its nonce and tag")
    try:
        return AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], None)
    except InvalidTag:
        raise ValueError(
            "an encrypted value fails authentication (changed, or another key)"
        ) from None
