"""Store URLs (agent_contract.stores): parsing, precedence, and one transaction API over
SQLite and PostgreSQL (a throwaway server: tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_contract.datafolder import DataFolderError
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.stores import STORE_ENV, Store, open_store, parse_store_url, redacted_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///data", ("sqlite", "data")),
        ("sqlite:////abs/data", ("sqlite", "/abs/data")),
        ("postgresql://u@h/db", ("postgresql", "postgresql://u@h/db")),
        ("postgres://u@h/db", ("postgresql", "postgres://u@h/db")),
    ],
)
def test_store_urls_parse(url: str, expected: tuple[str, str]) -> None:
    assert parse_store_url(url) == expected


@pytest.mark.parametrize(
    "url", ["", "data", "mysql://h/db", "sqlite://host/data", "sqlite:///", "sqlite:data"]
)
def test_other_text_is_refused_with_the_forms(url: str) -> None:
    with pytest.raises(ConfigurationError, match="sqlite:///"):
        parse_store_url(url)


def test_a_password_never_reaches_a_message() -> None:
    assert redacted_url("postgresql://ops:hunter2@db:5432/runs") == (
        "postgresql://ops:***@db:5432/runs"
    )
    assert redacted_url("postgresql://db/runs?sslmode=require&password=hunter2") == (
        "postgresql://db/runs?sslmode=require&password=***"
    )
    with pytest.raises(ConfigurationError) as caught:
        parse_store_url("mysql://ops:hunter2@db/runs")
    assert "hunter2" not in str(caught.value)


def test_precedence_flag_then_environment_then_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert open_store(tmp_path) == Store.sqlite(tmp_path)
    monkeypatch.setenv(STORE_ENV, "postgresql://env/db")
    assert open_store(tmp_path).url == "postgresql://env/db"
    assert open_store(tmp_path, "postgresql://flag/db").url == "postgresql://flag/db"
    assert open_store(tmp_path).folder == tmp_path
    monkeypatch.setenv(STORE_ENV, "nonsense")
    with pytest.raises(ConfigurationError):
        open_store(tmp_path)


def test_transactions_on_both_stores(tmp_path: Path, store_url: str | None) -> None:
    db = open_store(tmp_path, store_url).database("probe")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v DOUBLE PRECISION)")
    with db.transaction(lock="k:a") as conn:
        conn.execute("INSERT INTO t VALUES (?, ?)", ("a", 1.5))

    def fails_inside() -> None:
        with db.transaction(lock="k:b") as conn:
            conn.execute("INSERT INTO t VALUES (?, ?)", ("b", 2.0))
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        fails_inside()
    with db.transaction(write=False) as conn:
        assert conn.execute("SELECT k, v FROM t ORDER BY k").fetchall() == [("a", 1.5)]
    written = {p.name for p in tmp_path.iterdir()}
    assert ("probe.sqlite3" in written) == (store_url is None)
    assert store_url is None or not written


def test_a_session_lock_is_held_once(tmp_path: Path, store_url: str | None) -> None:
    db = open_store(tmp_path, store_url).database("runs")
    with db.session_lock("run:1", busy="being resumed"):
        with (
            pytest.raises(CheckpointError, match="being resumed"),
            db.session_lock("run:1", busy="being resumed"),
        ):
            pass
        with db.session_lock("run:2", busy="other"):
            pass
    with db.session_lock("run:1", busy="free again"):
        pass


def test_an_unreachable_server_is_named_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql://ops:hunter2@/db?host={tmp_path}&port=1"
    with (
        pytest.raises(DataFolderError) as caught,
        open_store(tmp_path, url).database("runs").transaction(),
    ):
        pass
    assert caught.value.reason == "unavailable"
    assert "hunter2" not in str(caught.value)


def test_runuser_is_found_in_sbin_or_named_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """devtools/postgres.py runs the throwaway server as ``postgres`` through runuser: found
    in /usr/sbin or /sbin when PATH leaves them out, and a clear error when it is nowhere."""
    import shutil

    from devtools import postgres

    seen: list[str | None] = []

    def which(name: str, path: str | None = None) -> str | None:
        seen.append(path)
        return "/usr/sbin/runuser" if path == "/usr/sbin:/sbin" else None

    monkeypatch.setattr(shutil, "which", which)
    assert postgres._runuser() == "/usr/sbin/runuser"
    assert seen == [None, "/usr/sbin:/sbin"]
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    with pytest.raises(FileNotFoundError, match="runuser"):
        postgres._runuser()
