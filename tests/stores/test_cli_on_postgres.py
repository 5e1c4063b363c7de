"""The issue's Done-when on the offline harness, through the real CLI: a run paused by
one data folder is approved from another that holds only a copy of the first one's key
file, both on one PostgreSQL store; the refund is applied once, a second approval
applies nothing, and neither folder gets a SQLite file."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app import cli
from agent_contract.app.demo import DATA_DIR_ENV
from agent_contract.sealing import KEY_FILE
from agent_contract.stores import STORE_ENV


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _refunds(url: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return list(conn.execute("SELECT order_id, amount_cents FROM refunds").fetchall())


def _run_id(out: str) -> str:
    """The run id in ``run``'s hint (``decide with: agent-contract approve RUN ...``)."""
    return next(line.split()[4] for line in out.splitlines() if line.startswith("decide with"))


def _with_password(url: str) -> str:
    """``url`` with a password in its user part (the throwaway server trusts local
    connections, so any password logs in): the hints must never print it."""
    return url.replace("@/", ":hunter2@/", 1)


@pytest.fixture(autouse=True)
def _no_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "unused"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def test_any_folder_with_the_key_approves_a_run_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    """When it fails: a run paused on PostgreSQL cannot be approved by another process
    that shares only the URL and the key file, a write is applied twice, or SQLite
    files are written beside the key."""
    url = _with_password(postgres_url)
    a, b = tmp_path / "A", tmp_path / "B"
    code, out, err = _cli(
        "run", "refund order A-1001", "--caller", "alice", "--store", url, "--data-dir", str(a)
    )
    assert code == 7, out + err
    assert "--store" in out
    assert "hunter2" not in out + err
    run_id = _run_id(out)
    assert _refunds(postgres_url) == []
    b.mkdir(mode=0o700)
    shutil.copy2(a / KEY_FILE, b / KEY_FILE)

    code, out, err = _cli(
        "approve", run_id, "--decision", "approve", "--store", url, "--data-dir", str(b), "--json"
    )
    assert code == 0, out + err
    assert json.loads(out)["stop_reason"] == "answered"
    assert _refunds(postgres_url) == [("A-1001", 12900)]

    code, out, err = _cli(
        "approve", run_id, "--decision", "approve", "--store", url, "--data-dir", str(b)
    )
    assert code == 8, out + err
    assert "already finished" in err
    assert _refunds(postgres_url) == [("A-1001", 12900)]

    for folder in (a, b):
        assert sorted(p.name for p in folder.iterdir()) == [KEY_FILE]


def test_the_environment_names_the_store_and_gc_runs_on_it(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$AGENT_CONTRACT_STORE`` selects the store for every command, ``gc`` included,
    and a folder without the key is refused with the missing-key advice, never given a
    new key beside the sealed rows."""
    monkeypatch.setenv(STORE_ENV, postgres_url)
    a = tmp_path / "A"
    code, out, err = _cli("run", "refund order A-1001", "--caller", "alice", "--data-dir", str(a))
    assert code == 7, out + err
    run_id = _run_id(out)
    code, out, err = _cli("gc", "--json", "--data-dir", str(a))
    assert code == 0, out + err
    assert json.loads(out)["paused_kept"] == 1

    other = tmp_path / "C"
    other.mkdir(mode=0o700)
    code, out, err = _cli("approve", run_id, "--decision", "approve", "--data-dir", str(other))
    assert code == 8, out + err
    assert KEY_FILE in err
    assert "copy the key files" in err
    assert not (other / KEY_FILE).exists()
    assert _refunds(postgres_url) == []

    code, out, err = _cli("approve", run_id, "--decision", "approve", "--data-dir", str(a))
    assert code == 0, out + err
    code, out, err = _cli("gc", "--json", "--older-than", "0", "--data-dir", str(a))
    assert code == 0, out + err
    assert json.loads(out)["summaries_removed"] == 1
    assert sorted(p.name for p in a.iterdir()) == [KEY_FILE]
