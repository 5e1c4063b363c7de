"""A throwaway PostgreSQL server for the tests and the benchmarks (repository-only).

:func:`throwaway_cluster` runs ``initdb`` into a temporary folder and starts the server
with ``pg_ctl`` on a unix socket in that folder only (``listen_addresses = ''``: nothing
listens on a network port), trusting local connections; it yields a
:class:`Cluster` whose :meth:`Cluster.new_database` makes an empty database per test, and
stops and removes the cluster on exit. Under root (PostgreSQL refuses to run as root) the
server runs as the ``postgres`` user, which owns the folder.

The server binaries are found on ``$PATH``, under ``$AGENT_CONTRACT_PG_BIN``, or in
Debian's ``/usr/lib/postgresql/<version>/bin`` (the ``postgresql`` package);
:func:`server_binaries` returns ``None`` when there are none.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["BIN_ENV", "Cluster", "server_binaries", "throwaway_cluster"]

BIN_ENV: Final = "AGENT_CONTRACT_PG_BIN"
"""An environment variable naming the folder of ``initdb`` and ``pg_ctl``."""
_PORT: Final = 5432  # the socket's name only (nothing listens on TCP)


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None`` when none is found."""
    candidates: list[str] = []
    if os.environ.get(BIN_ENV):
        candidates.append(os.environ[BIN_ENV])
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


@dataclass(frozen=True)
class Cluster:
    """A running throwaway server: its socket folder, superuser and first database."""

    socket_dir: Path
    user: str

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL of ``database`` on this server (unix socket)."""
        return f"postgresql://{self.user}@/{database}?host={self.socket_dir}&port={_PORT}"

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database and return its URL.

        Raises:
            psycopg.Error: the server refused.
        """
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _runuser() -> str:
    """util-linux's ``runuser``: on ``PATH``, or in ``/usr/sbin`` or ``/sbin`` (a root
    shell's ``PATH`` may leave the sbin folders out).

    Raises:
        FileNotFoundError: it is nowhere (then the server cannot run as ``postgres``).
    """
    found = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
    if found is None:
        raise FileNotFoundError(
            "runuser (util-linux) is not on PATH, in /usr/sbin or in /sbin: as root, the "
            "throwaway PostgreSQL server runs as the postgres user through it"
        )
    return found


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` user when this process is root.

    Raises:
        FileNotFoundError: root, and no ``runuser``.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return [_runuser(), "-u", "postgres", "--", *command]
    return command


@contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    """Start a new server in a temporary folder; stop it and remove the folder on exit.

    Raises:
        FileNotFoundError: no server binaries (:func:`server_binaries`).
        subprocess.CalledProcessError: ``initdb`` or ``pg_ctl`` failed (its output in
            the error's ``output``).
    """
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl) found")
    root = Path(tempfile.mkdtemp(prefix="agent-contract-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    user = "postgres"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    else:
        import getpass

        user = getpass.getuser()

    def run(command: list[str]) -> None:
        subprocess.run(  # noqa: S603 - our own fixed commands
            _as_server_user(command),
            check=True,
            capture_output=True,
            text=True,
            cwd=root,
        )

    try:
        run([str(binaries / "initdb"), "-D", str(data), "-U", user, "--auth=trust", "-E", "UTF8"])
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={sockets} -c port={_PORT} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        run(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "server.log"),
                "-w",
                "start",
            ]
        )
        try:
            yield Cluster(sockets, user)
        finally:
            run([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
