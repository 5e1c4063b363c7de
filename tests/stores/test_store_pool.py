"""PostgreSQL connections are pooled and bounded (issue 28, "approvals at production
scale"): a process opens at most ``$AGENT_CONTRACT_STORE_POOL`` connections to a store
URL however many transactions and resumes run at once; a wait for a free connection past
the lock timeout is a ``DataFolderError`` (reason ``"locked"``); a bad pool size is a
``ConfigurationError``; session locks still exclude a second holder; a forked child
makes pools of its own; and the pools close at exit without a warning.

Connections are counted by the server (``pg_stat_activity``), from an observer
connection of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_contract.datafolder import LOCK_TIMEOUT_ENV, DataFolderError
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.stores import (
    DEFAULT_POOL_SIZE,
    STORE_POOL_ENV,
    Database,
    Store,
    pool_size,
)

psycopg = pytest.importorskip("psycopg")

THREADS = 24
ROUNDS = 6


def _database(tmp_path: Path, url: str) -> Database:
    return Store(tmp_path / "data", url).database("runs")


class _Observer:
    """A connection of the test's own that samples the server's count of the test
    database's other sessions (the store's connections) while the store works."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def count(self) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchone()
        return int(row[0])

    def advisory_locks(self) -> int:
        row = self._conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
        ).fetchone()
        return int(row[0])

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.most = max(self.most, self.count())
            self._stop.wait(0.005)

    def __enter__(self) -> _Observer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.most = max(self.most, self.count())

    def close(self) -> None:
        self._conn.close()


@pytest.fixture
def observer(postgres_url: str) -> Iterator[_Observer]:
    seen = _Observer(postgres_url)
    yield seen
    seen.close()


def test_the_pool_size_is_ten_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(STORE_POOL_ENV, raising=False)
    assert pool_size() == DEFAULT_POOL_SIZE == 10
    monkeypatch.setenv(STORE_POOL_ENV, " 24 ")
    assert pool_size() == 24


@pytest.mark.parametrize("value", ["abc", "0", "1", "-4", "2.5", "1001", "ten"])
def test_a_bad_pool_size_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(STORE_POOL_ENV, value)
    with pytest.raises(ConfigurationError, match=STORE_POOL_ENV) as caught:
        pool_size()
    assert repr(value.strip()) in str(caught.value)


def test_a_bad_pool_size_fails_the_first_transaction(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str
) -> None:
    monkeypatch.setenv(STORE_POOL_ENV, "many")
    with (
        pytest.raises(ConfigurationError, match=STORE_POOL_ENV),
        _database(tmp_path, postgres_url).transaction(),
    ):
        pass


def test_many_transactions_and_resumes_stay_within_the_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str, observer: _Observer
) -> None:
    """24 threads, each writing 6 times under a transaction lock and holding a resume's
    session lock while it writes: the server never sees more than the pool's 6
    connections from this process, and every write lands."""
    monkeypatch.setenv(STORE_POOL_ENV, "6")
    db = _database(tmp_path, postgres_url)
    with db.transaction() as conn:
        conn.execute(
            "CREATE TABLE hits (worker integer, round integer, PRIMARY KEY (worker, round))"
        )

    def work(worker: int) -> int:
        busy = 0
        for round_ in range(ROUNDS):
            try:
                with db.session_lock(f"resume:{worker % 4}", busy="busy"):
                    with db.transaction(lock=f"run:{worker % 4}") as conn:
                        conn.execute("INSERT INTO hits VALUES (?, ?)", (worker, round_))
                    continue
            except CheckpointError as exc:
                if str(exc) != "busy" or isinstance(exc, DataFolderError):
                    raise
                busy += 1
            with db.transaction(lock=f"run:{worker % 4}") as conn:
                conn.execute("INSERT INTO hits VALUES (?, ?)", (worker, round_))
        return busy

    with observer, ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(work, range(THREADS)))

    with db.transaction(write=False) as conn:
        rows = conn.execute("SELECT count(*) FROM hits").fetchone()
    assert rows[0] == THREADS * ROUNDS
    assert 1 <= observer.most <= 6
    assert observer.advisory_locks() == 0  # every session lock was let go


def test_a_wait_for_a_connection_past_the_timeout_is_locked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str
) -> None:
    """Pool size 2: one connection for transactions, one for resume locks. While each is
    in use, another thread's wait ends after the lock timeout as ``locked``."""
    monkeypatch.setenv(STORE_POOL_ENV, "2")
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.3")
    db = _database(tmp_path, postgres_url)

    def other(action: str) -> BaseException | None:
        try:
            if action == "transaction":
                with db.transaction(write=False):
                    pass
            else:
                with db.session_lock("resume:other", busy="busy"):
                    pass
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            return exc
        return None

    with db.transaction(write=False), ThreadPoolExecutor(1) as pool:
        waited = pool.submit(other, "transaction").result()
    assert isinstance(waited, DataFolderError)
    assert waited.reason == "locked"
    assert "1 connections this process keeps for transactions" in str(waited)
    assert f"${STORE_POOL_ENV}=2" in str(waited)

    with db.session_lock("resume:mine", busy="busy"), ThreadPoolExecutor(1) as pool:
        waited = pool.submit(other, "lock").result()
        # a lock holder still gets a transaction connection: no deadlock between pools
        with db.transaction() as conn:
            assert conn.execute("SELECT 1").fetchone()[0] == 1
    assert isinstance(waited, DataFolderError)
    assert waited.reason == "locked"
    assert "for resume locks" in str(waited)

    with db.transaction(write=False), db.session_lock("resume:again", busy="busy"):
        pass  # both connections came back


def test_a_session_lock_excludes_a_second_holder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str, observer: _Observer
) -> None:
    monkeypatch.setenv(STORE_POOL_ENV, "4")
    db = _database(tmp_path, postgres_url)
    with db.session_lock("resume:r1", busy="r1 is busy"):
        with ThreadPoolExecutor(1) as pool:
            second = pool.submit(_try_lock, db, "resume:r1").result()
            other = pool.submit(_try_lock, db, "resume:r2").result()
        assert observer.advisory_locks() == 1
    assert isinstance(second, CheckpointError)
    assert not isinstance(second, DataFolderError)
    assert str(second) == "r1 is busy"
    assert other is None
    assert observer.advisory_locks() == 0  # unlocked before the connection went back
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(_try_lock, db, "resume:r1").result() is None


def _try_lock(db: Database, name: str) -> BaseException | None:
    try:
        with db.session_lock(name, busy=f"{name.split(':')[1]} is busy"):
            return None
    except CheckpointError as exc:
        return exc


def _write(db: Database, *statements: str, then_fail: bool = False) -> None:
    with db.transaction() as conn:
        for statement in statements:
            conn.execute(statement)
        if then_fail:
            raise RuntimeError("the caller failed mid-transaction")


def test_a_failed_or_broken_connection_does_not_come_back_dirty(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str, observer: _Observer
) -> None:
    """A statement error rolls the transaction back; a connection the server ended
    while it sat in the pool is replaced: the next transactions work."""
    monkeypatch.setenv(STORE_POOL_ENV, "2")
    db = _database(tmp_path, postgres_url)
    with db.transaction() as conn:
        conn.execute("CREATE TABLE t (x integer PRIMARY KEY)")
    with pytest.raises(db.errors):  # a unique violation
        _write(db, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (1)")
    with db.transaction() as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
        conn.execute("INSERT INTO t VALUES (2)")
    with pytest.raises(RuntimeError, match="mid-transaction"):
        _write(db, "INSERT INTO t VALUES (3)", then_fail=True)
    observer._conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    with db.transaction() as conn:
        assert [r[0] for r in conn.execute("SELECT x FROM t").fetchall()] == [2]
    with db.session_lock("resume:after", busy="busy"):
        pass


def test_a_forked_child_makes_pools_of_its_own(tmp_path: Path, postgres_url: str) -> None:
    db = _database(tmp_path, postgres_url)

    def backend() -> int:
        with db.transaction(write=False) as conn:
            return int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])

    before = backend()
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork beside pool threads
        child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            os.close(read)
            os.write(write, str(backend()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as reader:
        reported = reader.read()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert reported
    assert int(reported) != before
    assert backend() == before  # the parent's connection is untouched and reused


_AT_EXIT = """
import sys
from pathlib import Path
from typing import Any
from agent_contract.stores import Store
db = Store(Path(sys.argv[2]), sys.argv[1]).database("runs")
with db.session_lock("resume:x", busy="busy"), db.transaction() as conn:
    conn.execute("SELECT 1")
print("done")
"""


def test_the_pools_close_at_exit_without_a_warning(tmp_path: Path, postgres_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", _AT_EXIT, postgres_url, str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "done", "")


def test_an_unreachable_server_is_unavailable(tmp_path: Path) -> None:
    url = f"postgresql://nobody@/db?host={tmp_path / 'no-server'}&port=5432"
    with pytest.raises(DataFolderError) as caught, _database(tmp_path, url).transaction():
        pass
    assert caught.value.reason == "unavailable"
    with (
        pytest.raises(DataFolderError) as locked,
        _database(tmp_path, url).session_lock("resume:x", busy="busy"),
    ):
        pass
    assert locked.value.reason == "unavailable"


def test_a_process_keeps_the_pools_of_its_last_four_urls(
    tmp_path: Path, postgres_url: str, postgres_cluster: Any, observer: _Observer
) -> None:
    """A test session opens a database per test: the pools of the least recently used
    URL close (its connections end) once a fifth URL is used."""

    def touch(url: str) -> None:
        with _database(tmp_path, url).transaction(write=False) as conn:
            conn.execute("SELECT 1")

    touch(postgres_url)
    assert observer.count() == 1
    others = [str(postgres_cluster.new_database()) for _ in range(3)]
    for url in others:
        touch(url)
    touch(postgres_url)  # the most recently used again: kept
    assert observer.count() == 1
    touch(str(postgres_cluster.new_database()))
    touch(others[0])  # evicts others[1], not postgres_url
    assert observer.count() == 1
    for url in others[1:]:
        touch(url)  # a fifth and sixth URL since postgres_url was last used
    assert observer.count() == 0
