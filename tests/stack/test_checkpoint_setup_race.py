"""Several processes opening the LangChain harness's checkpoint file for the first time at
once (a crowd of `agent-contract run --harness langchain` on a new data folder): SQLite
answers the losers of the race to switch a new file to WAL mode with "database is
locked" at once, without waiting out the busy timeout, so one of them used to stop with
a CheckpointError (exit 8) although nothing was wrong. LangGraph's ``setup()`` is
idempotent; the checkpointer now tries it again until the lock timeout."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.datafolder import LOCK_TIMEOUT_ENV
from agent_contract.errors import CheckpointError
from agent_contract.sealing import folder_key
from agent_contract_langchain.durable import async_sqlite_checkpointer, sqlite_checkpointer

PROCESSES = 8
ROUNDS = 6


def _open(path: str, key: bytes, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        with sqlite_checkpointer(path, key=key) as saver:
            saver.conn.execute("SELECT COUNT(*) FROM writes").fetchone()
        results.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the test
        results.put(f"{type(exc).__name__}: {exc}")


def test_a_crowd_opening_a_new_checkpoint_file_all_get_it(tmp_path: Path) -> None:
    """When it fails: a process lost the race to set up a new checkpoint file and was
    refused (``database is locked``) instead of waiting its turn."""
    ctx = multiprocessing.get_context("fork")
    outcomes: list[str] = []
    for round_ in range(ROUNDS):
        folder = tmp_path / f"round{round_}"
        folder.mkdir(mode=0o700)
        key = folder_key(folder)
        barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
        path = str(folder / "checkpoints.sqlite3")
        procs = [
            ctx.Process(target=_open, args=(path, key, barrier, results)) for _ in range(PROCESSES)
        ]
        for proc in procs:
            proc.start()
        outcomes += [results.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
    assert outcomes == ["ok"] * (PROCESSES * ROUNDS)


def _lost_race_once(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """Make ``SqliteSaver.setup`` answer "database is locked" ``times`` times first."""
    calls = [0]
    real = SqliteSaver.setup

    def setup(self: SqliteSaver) -> None:
        calls[0] += 1
        if calls[0] <= times:
            raise sqlite3.OperationalError("database is locked")
        real(self)

    monkeypatch.setattr(SqliteSaver, "setup", setup)
    return calls


def test_a_lost_setup_race_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _lost_race_once(monkeypatch, times=2)
    with sqlite_checkpointer(tmp_path / "checkpoints.sqlite3", key=b"k" * 32) as saver:
        assert saver.is_setup
    assert calls == [3]


def test_a_lock_held_past_the_timeout_is_a_checkpoint_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.2")
    calls = _lost_race_once(monkeypatch, times=10**9)
    with (
        pytest.raises(CheckpointError, match="corrupt or locked: database is locked"),
        sqlite_checkpointer(tmp_path / "checkpoints.sqlite3", key=b"k" * 32),
    ):
        pass
    assert calls[0] >= 1


def test_another_error_is_not_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]

    def setup(self: SqliteSaver) -> None:
        calls[0] += 1
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(SqliteSaver, "setup", setup)
    with (
        pytest.raises(CheckpointError, match="disk I/O error"),
        sqlite_checkpointer(tmp_path / "checkpoints.sqlite3", key=b"k" * 32),
    ):
        pass
    assert calls == [1]


async def test_the_async_checkpointer_tries_a_lost_race_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    calls = [0]
    real = AsyncSqliteSaver.setup

    async def setup(self: AsyncSqliteSaver) -> None:
        calls[0] += 1
        if calls[0] == 1:
            raise sqlite3.OperationalError("database is locked")
        await real(self)

    monkeypatch.setattr(AsyncSqliteSaver, "setup", setup)
    async with async_sqlite_checkpointer(tmp_path / "c.sqlite3", key=b"k" * 32) as saver:
        assert saver.is_setup
    assert calls == [2]
