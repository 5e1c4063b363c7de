"""``agent-contract check --store postgresql://...`` runs the run store's half of the
checkpoint-integrity scenarios on PostgreSQL too (issue 28): the paused run's row is saved,
tampered with by plain SQL and reopened in a fresh schema of the given database (not in a
temporary SQLite ``runs.sqlite3``), on every harness the check runs, and the schema is
dropped afterwards, even when the tampering fails. Without ``--store`` (or with a
``sqlite:///`` URL) the rows stay in a fresh temporary data folder, as before.

A throwaway server per test session (``postgres_url``: a new database per test).
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from agent_contract import stores, tampering
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.stores import STORE_ENV, Store, scratch_schema, scratch_store
from agent_contract.tampering import TAMPERINGS, TamperPlan

SCRATCH = "agent_contract_suite_"


def query(url: str, text: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(text, params).fetchall()]


def execute(url: str, text: str) -> None:
    with psycopg.connect(url) as conn:  # committed when the block ends
        conn.execute(text)


def scratch_schemas(url: str) -> list[str]:
    """The scratch schemas left in the database of ``url``."""
    rows = query(url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", f"{SCRATCH}%")
    return sorted(str(r[0]) for r in rows)


@dataclass
class Seen:
    """What one tampering of a run-store row saw, while its scratch store was open."""

    dialect: str
    schema: str | None = None
    runs_rows: int = 0
    folder: Path | None = None
    sqlite_files: list[str] = field(default_factory=list)


@dataclass
class Spy:
    """Records each run-store tampering (``tampering._tampered``) and every SQLite file a
    store opened during the test."""

    url: str | None
    seen: list[Seen] = field(default_factory=list)
    sqlite_opened: list[Path] = field(default_factory=list)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Spy:
    """A spy on the run store's tampering (and on SQLite connects), with the system's
    temporary directory moved under ``tmp_path`` (to see what is left there)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    recorder = Spy(url=None)
    real_tampered = tampering._tampered
    real_connect = stores.connect

    def tampered(store: Any, where: Store, *args: Any, **kwargs: Any) -> Any:
        undo = real_tampered(store, where, *args, **kwargs)
        seen = Seen(dialect=where.dialect, folder=where.folder)
        seen.sqlite_files = sorted(str(p) for p in where.folder.rglob("*.sqlite3"))
        if where.dialect == "postgresql":
            with where.database("runs").transaction(write=False) as conn:
                seen.schema = str(conn.execute("SELECT current_schema()").fetchone()[0])
            count = sql.SQL("SELECT COUNT(*) FROM {}.runs").format(sql.Identifier(seen.schema))
            with psycopg.connect(str(recorder.url)) as plain:  # the database, not the store
                seen.runs_rows = plain.execute(count).fetchone()[0]
        recorder.seen.append(seen)
        return undo

    def connect(path: Path, *args: Any, **kwargs: Any) -> Any:
        recorder.sqlite_opened.append(Path(path))
        return real_connect(path, *args, **kwargs)

    monkeypatch.setattr(tampering, "_tampered", tampered)
    monkeypatch.setattr(stores, "connect", connect)
    return recorder


def scenario(kind: str) -> Any:
    from agent_contract.conformance import SCENARIOS

    (found,) = [s for s in SCENARIOS if s.name == f"checkpoint_{kind}_refused"]
    return found


def run(kind: str, harness: str) -> Any:
    from agent_contract.conformance import run_scenario
    from agent_contract.registry import load_harness

    return run_scenario(scenario(kind), load_harness(harness), harness)


def assert_on_postgres(spy: Spy, url: str) -> None:
    """Every run-store tampering ran in a scratch schema of ``url``'s database (its rows
    there), no SQLite file was made or opened, and no schema or folder is left."""
    assert spy.seen, "the run store's row was never tampered with"
    for seen in spy.seen:
        assert seen.dialect == "postgresql"
        assert seen.schema is not None
        assert seen.schema.startswith(SCRATCH)
        assert seen.runs_rows >= 1  # the paused run's row (and a graft's other run)
        assert seen.sqlite_files == []
        assert seen.folder is not None
        assert not seen.folder.exists()  # the scratch folder (its key) is removed
    assert spy.sqlite_opened == []
    assert scratch_schemas(url) == []
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


# -- each harness the check runs -------------------------------------------------------------


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_the_offline_run_store_rows_are_tampered_with_on_postgresql(
    kind: str, postgres_url: str, spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STORE_ENV, postgres_url)
    spy.url = postgres_url
    outcome = run(kind, "offline")
    assert outcome.holds, outcome.problems  # refused on PostgreSQL; the write ran once
    assert_on_postgres(spy, postgres_url)
    assert len(spy.seen) == 1


@pytest.mark.parametrize(
    "harness", ["langchain", "langchain-async", "pydantic-ai", "pydantic-ai-async"]
)
@pytest.mark.parametrize("kind", ["forged", "rolled_back"])
def test_the_bindings_run_store_rows_are_tampered_with_on_postgresql(
    harness: str, kind: str, postgres_url: str, spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LangChain harnesses' run-store rows and their checkpoints (each in a scratch
    schema of its own), and the Pydantic AI harnesses' run-store rows, on PostgreSQL."""
    monkeypatch.setenv(STORE_ENV, postgres_url)
    spy.url = postgres_url
    outcome = run(kind, harness)
    assert outcome.holds, outcome.problems
    assert_on_postgres(spy, postgres_url)


def test_check_store_runs_the_run_store_rows_on_postgresql(
    postgres_url: str, spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agent-contract check --harness offline --store URL``: the checkpoint-integrity
    row holds, every tampering's row was in a scratch schema of that database, and
    nothing is left there."""
    from agent_contract.app import cli

    monkeypatch.delenv(STORE_ENV, raising=False)
    spy.url = postgres_url
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["check", "--harness", "offline", "--store", postgres_url, "--format", "json", "--quiet"],
        out=out,
        err=err,
    )
    assert code == 0, err.getvalue()
    assert '"checkpoint_integrity"' in out.getvalue()
    assert len(spy.seen) == len(TAMPERINGS)
    assert_on_postgres(spy, postgres_url)
    assert STORE_ENV not in os.environ


# -- without --store, or with a sqlite:/// URL: a fresh SQLite folder, as before ----------------


@pytest.mark.parametrize("url", [None, "sqlite:///{tmp}/named"])
def test_without_a_postgresql_store_the_rows_stay_in_a_fresh_sqlite_folder(
    url: str | None, spy: Spy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if url is None:
        monkeypatch.delenv(STORE_ENV, raising=False)
    else:
        monkeypatch.setenv(STORE_ENV, url.format(tmp=tmp_path))
    outcome = run("grafted", "offline")
    assert outcome.holds, outcome.problems
    (seen,) = spy.seen
    assert seen.dialect == "sqlite"
    assert seen.folder is not None
    assert seen.folder.parent == Path(tempfile.gettempdir())
    assert seen.sqlite_files == [str(seen.folder / "runs.sqlite3")]
    assert not seen.folder.exists()
    assert not (tmp_path / "named").exists()  # a sqlite:/// URL's folder is not written


# -- the scratch schema ---------------------------------------------------------------------


def test_the_scratch_schema_is_dropped_when_the_tampering_fails(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []

    def broken(store: Any, where: Store, *args: Any, **kwargs: Any) -> Any:
        made.extend(scratch_schemas(postgres_url))
        raise CheckpointError("the store broke mid-tampering")

    monkeypatch.setattr(tampering, "_tampered", broken)
    plan = TamperPlan("forged", store=Store(tmp_path, postgres_url))
    with pytest.raises(CheckpointError, match="mid-tampering"):
        plan.reopen({"run_id": "run-1"}, harness="offline")
    assert len(made) == 1
    assert made[0].startswith(SCRATCH)
    assert scratch_schemas(postgres_url) == []
    assert list(tmp_path.iterdir()) == []  # the base store's folder is never written


def test_a_scratch_schema_is_made_in_the_database_and_wins_over_the_urls_search_path(
    postgres_url: str, tmp_path: Path
) -> None:
    execute(postgres_url, "CREATE SCHEMA tenant")
    joiner = "&" if "?" in postgres_url else "?"
    base = Store(tmp_path, f"{postgres_url}{joiner}options=-csearch_path%3Dtenant")
    with scratch_schema(base) as store:
        (name,) = scratch_schemas(postgres_url)
        assert re.fullmatch(rf"{SCRATCH}[0-9a-f]{{12}}", name)
        assert store.folder == tmp_path
        with store.database("runs").transaction() as conn:
            assert conn.execute("SELECT current_schema()").fetchone()[0] == name
            conn.execute("CREATE TABLE probe (x INTEGER)")
    assert scratch_schemas(postgres_url) == []  # dropped with its table
    assert query(postgres_url, "SELECT to_regclass('tenant.probe')") == [(None,)]


def test_scratch_stores_refuse_what_has_no_schema(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigurationError, match="not PostgreSQL"),
        scratch_schema(Store.sqlite(tmp_path)),
    ):
        pass
    with (
        pytest.raises(ConfigurationError, match="plain lower-case name"),
        scratch_schema(Store(tmp_path, "postgresql:///db"), prefix='x"; DROP'),
    ):
        pass
    with scratch_store(Store.sqlite(tmp_path / "base")) as store:
        assert store.dialect == "sqlite"
        assert store.folder.is_dir()
        folder = store.folder
    assert not folder.exists()
    assert not (tmp_path / "base").exists()


# -- a run store that skips its checks is caught on PostgreSQL too --------------------------


@pytest.mark.parametrize("name", ["store_load_unverified", "store_load_verified"])
def test_a_store_that_skips_its_checks_is_caught_on_postgresql(
    name: str, postgres_url: str, spy: Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mutant run store (``load`` skips the seal and version checks) reads the
    tampered PostgreSQL rows, so the row is broken; its twin (the stock load) holds."""
    from agent_contract.conformance import SCENARIOS, run_scenario
    from tests.mutants.harnesses import CORE_MUTANTS, CORE_TWINS

    monkeypatch.setenv(STORE_ENV, postgres_url)
    spy.url = postgres_url
    (build,) = [m.build for m in (*CORE_MUTANTS, *CORE_TWINS) if m.name == name]
    outcomes = [
        run_scenario(s, build(), name) for s in SCENARIOS if s.boundary == "checkpoint_integrity"
    ]
    held = [o.holds for o in outcomes]
    assert held == [name == "store_load_verified"] * len(TAMPERINGS)
    assert_on_postgres(spy, postgres_url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://h/db", "postgresql://h/db?options=-csearch_path%3Ds"),
        ("postgresql:///db?host=/run", "postgresql:///db?host=/run&options=-csearch_path%3Ds"),
        (
            "postgresql://h/db?options=-csearch_path%3Dtenant&sslmode=require",
            "postgresql://h/db?options=-csearch_path%3Dtenant%20-csearch_path%3Ds&sslmode=require",
        ),
    ],
)
def test_the_scratch_search_path_comes_after_the_urls_own_options(url: str, expected: str) -> None:
    assert stores._with_search_path(url, "s") == expected
