"""The LangChain binding's checkpoints on PostgreSQL (issue 28): LangGraph's
``PostgresSaver`` / ``AsyncPostgresSaver`` under the sealed serializer, the paused
checkpoint's seal over its row, blobs and writes, and the four checkpoint tamperings
refused before anything runs, the approval kept for a clean resume.

A throwaway server per test session (``postgres_url``: a new database per test). The
demo's run store and order store follow ``$AGENT_CONTRACT_STORE`` where they support it;
the refunds are counted wherever they are (the data folder's ``orders.sqlite3`` or the
database's ``refunds`` table).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_contract.app.demo import approve_demo, start_demo
from agent_contract.errors import ApprovalError, CheckpointError, ConfigurationError
from agent_contract.runtime import RunInput
from agent_contract.sealing import folder_key
from agent_contract.stores import STORE_ENV, Store
from agent_contract.tampering import TAMPERINGS, restore_checkpoints, tamper_checkpoints
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import durable
from agent_contract_langchain.durable import async_postgres_checkpointer, postgres_checkpointer
from agent_contract_langchain.sealed import check_paused, seal_paused


@pytest.fixture
def pg_store(postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A data folder whose store is a new PostgreSQL database (``$AGENT_CONTRACT_STORE``)."""
    monkeypatch.setenv(STORE_ENV, postgres_url)
    return Store(tmp_path / "data", postgres_url)


def query(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]


def refund_count(store: Store) -> int:
    """The refund rows, wherever the order store keeps them."""
    count = 0
    orders = store.folder / "orders.sqlite3"
    if orders.exists():
        with closing(sqlite3.connect(orders)) as conn:
            count += conn.execute("SELECT COUNT(*) FROM refunds").fetchone()[0]
    if query(store.url, "SELECT to_regclass('refunds') IS NOT NULL")[0][0]:
        count += query(store.url, "SELECT COUNT(*) FROM refunds")[0][0]
    return count


def pause(store: Store) -> str:
    demo = start_demo(
        "refund order A-1001", harness="langchain", caller="alice", folder=store.folder
    )
    assert demo.result.stop_reason == "pending_approval"
    return demo.thread_id


# -- what the database holds ------------------------------------------------------------


def test_a_paused_run_keeps_no_value_in_plain_text(pg_store: Store) -> None:
    thread = pause(pg_store)
    rows = query(
        pg_store.url,
        "SELECT checkpoint -> 'channel_values', checkpoint::text FROM checkpoints "
        "WHERE thread_id = %s",
        thread,
    )
    assert rows
    # PostgresSaver keeps strings, numbers and None inline: the sealed saver keeps none.
    assert all(values == {} for values, _ in rows)
    blobs = query(
        pg_store.url, "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = %s", thread
    )
    writes = query(
        pg_store.url, "SELECT type, blob FROM checkpoint_writes WHERE thread_id = %s", thread
    )
    assert blobs
    assert writes
    for typ, blob in blobs + writes:
        if blob is not None:
            assert typ.startswith("sealed2:")
            assert b"A-1001" not in bytes(blob)  # encrypted
    assert not any("A-1001" in text for _, text in rows)
    assert not list(pg_store.folder.glob("checkpoints*"))  # no checkpoint file


def test_the_seal_covers_the_blobs_and_writes(pg_store: Store) -> None:
    thread = pause(pg_store)
    key = folder_key(pg_store.folder)
    with postgres_checkpointer(pg_store.url, key=key) as saver:
        sealed = seal_paused(saver, thread, key)
        check_paused(saver, thread, sealed, key)  # as paused: accepted
        cid = sealed["checkpoint_id"]
        versions = query(
            pg_store.url,
            "SELECT checkpoint -> 'channel_versions' ->> 'messages' FROM checkpoints "
            "WHERE thread_id = %s AND checkpoint_id = %s",
            thread,
            cid,
        )[0][0]
        # a sealed blob re-tagged by its owner would still be a changed row: the seal
        # of the paused checkpoint covers the blob the checkpoint reads
        with psycopg.connect(pg_store.url) as conn:
            conn.execute(
                "UPDATE checkpoint_blobs SET blob = blob || '\\x00'::bytea WHERE thread_id = %s "
                "AND channel = 'messages' AND version = %s",
                (thread, versions),
            )
        with pytest.raises(CheckpointError, match="gone or was changed"):
            check_paused(saver, thread, sealed, key)
        with psycopg.connect(pg_store.url) as conn:
            conn.execute(
                "UPDATE checkpoint_blobs SET blob = substring(blob from 1 for length(blob) - 1) "
                "WHERE thread_id = %s AND channel = 'messages' AND version = %s",
                (thread, versions),
            )
        check_paused(saver, thread, sealed, key)
        with psycopg.connect(pg_store.url) as conn:  # a pending write edited
            conn.execute(
                "UPDATE checkpoint_writes SET channel = channel || 'x' WHERE thread_id = %s "
                "AND checkpoint_id = %s",
                (thread, cid),
            )
        with pytest.raises(CheckpointError, match="pending write"):
            check_paused(saver, thread, sealed, key)


REFUSED = {
    "forged": "paused checkpoint .* is gone or was changed",
    "edited": "paused checkpoint .* is gone or was changed",
    "rolled_back": "paused checkpoint .* is gone or was changed",
    "grafted": "newer than the one it paused on",
}


@pytest.mark.parametrize("kind", TAMPERINGS)
def test_a_tampered_checkpoint_is_refused_and_the_approval_kept(kind: str, pg_store: Store) -> None:
    thread = pause(pg_store)
    undo = tamper_checkpoints(pg_store, thread, kind)
    with pytest.raises(CheckpointError, match=REFUSED[kind]):
        approve_demo(thread, "approve", folder=pg_store.folder)
    assert refund_count(pg_store) == 0  # nothing ran
    restore_checkpoints(pg_store, thread, undo)
    assert query(
        pg_store.url, "SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", f"{thread}-other"
    ) == [(0,)]
    result = approve_demo(thread, "approve", folder=pg_store.folder)  # not used up
    assert result.stop_reason == "answered"
    assert refund_count(pg_store) == 1
    with pytest.raises(ApprovalError, match="already finished"):
        approve_demo(thread, "approve", folder=pg_store.folder)
    assert refund_count(pg_store) == 1
    assert durable.kept(store=pg_store) == []  # a finished run's checkpoints are dropped


def test_tampering_a_thread_without_checkpoints_says_so(pg_store: Store) -> None:
    with postgres_checkpointer(pg_store.url, key=folder_key(pg_store.folder)):
        pass  # the tables exist, empty
    with pytest.raises(CheckpointError, match="no checkpoint row"):
        tamper_checkpoints(pg_store, "run-none", "forged")


# -- opening ------------------------------------------------------------------------------


def test_an_unreachable_server_fails_at_open_without_its_password(tmp_path: Path) -> None:
    url = "postgresql://ops:hunter2@127.0.0.1:1/nothing"
    with (
        pytest.raises(CheckpointError, match="cannot open the checkpoint store") as caught,
        postgres_checkpointer(url, key=bytes(32)),
    ):
        pass
    assert "hunter2" not in str(caught.value)
    assert caught.value.path == "postgresql://ops:***@127.0.0.1:1/nothing"
    model = FakeModel([tool_call("nothing", {}), "done"])
    store = Store(tmp_path / "data", url)
    with pytest.raises(CheckpointError, match="cannot open"):
        durable.run(model, _contract(), RunInput(user="hi"), store=store)
    assert model.calls == []  # refused before the model (and any tool) ran


def test_a_sqlite_url_is_not_a_postgresql_checkpointer(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigurationError, match="not a PostgreSQL store URL"),
        postgres_checkpointer(f"sqlite:///{tmp_path}", key=bytes(32)),
    ):
        pass


def test_forget_and_kept_make_no_tables_in_an_empty_database(pg_store: Store) -> None:
    assert durable.kept(store=pg_store) == []
    durable.forget("run-x", store=pg_store)
    assert query(pg_store.url, "SELECT to_regclass('checkpoints')") == [(None,)]


def test_two_savers_set_up_a_new_database_at_once(postgres_url: str) -> None:
    async def both() -> None:
        async def one() -> None:
            async with async_postgres_checkpointer(postgres_url, key=bytes(32)):
                pass

        await asyncio.gather(one(), one(), one())

    asyncio.run(both())
    (count,) = query(postgres_url, "SELECT COUNT(*) FROM checkpoint_migrations")[0]
    assert count > 1


def _contract() -> Any:
    from agent_contract.runtime import Contract

    return Contract([])


# -- the async saver, across processes ------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    from agent_contract.approval import Approval, PendingApproval
    from agent_contract.runtime import Contract
    from agent_contract.sealing import folder_key
    from agent_contract.testing import FakeModel, tool_calls
    from agent_contract.tools import ToolSpec
    from agent_contract_langchain.durable import async_postgres_checkpointer
    from agent_contract_langchain.harness import arun_agent
    from agent_contract_langchain.resuming import aresume_agent

    step, folder, url = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    ledger = folder / "payments.jsonl"
    key = folder_key(folder)

    def paid():
        if not ledger.exists():
            return []
        return [json.loads(line) for line in ledger.read_text().splitlines()]

    def pay(context, to, amount):
        with ledger.open("a") as out:
            out.write(json.dumps({"key": context.idempotency_key, "to": to}) + "\\n")
        return {"paid": amount, "to": to}

    def verify(context, to, amount):
        return next((p for p in paid() if p["key"] == context.idempotency_key), None)

    spec = ToolSpec(
        name="pay", description="Pay someone.", effect="write",
        parameters={"type": "object", "properties": {"to": {"type": "string"},
                    "amount": {"type": "integer"}}, "required": ["to", "amount"]},
        handler=pay, preview=lambda context, to, amount: {"pay": amount, "to": to},
        verify=verify,
    )
    contract = Contract([spec])
    script = [tool_calls(("pay", {"to": "bob", "amount": 5}), ("pay", {"to": "eve", "amount": 7})),
              "done"]

    async def start():
        async with async_postgres_checkpointer(url, key=key) as saver:
            result = await arun_agent(FakeModel(script, stateless=True), contract, "pay them",
                                      run_id="run-async-pg", checkpointer=saver)
        (folder / "snapshot.json").write_text(json.dumps(result.snapshot))
        print(json.dumps({"stop": result.stop_reason, "paid": len(paid())}))

    async def resume():
        snapshot = json.loads((folder / "snapshot.json").read_text())
        pending = [PendingApproval.from_dict(p["approval"]) for p in snapshot["batch"]]
        decisions = [Approval.for_pending(pending[0], "approve"),
                     Approval.for_pending(pending[1], "reject", reason="not eve")]
        async with async_postgres_checkpointer(url, key=key) as saver:
            result = await aresume_agent(FakeModel(script, stateless=True), contract,
                                         snapshot, decisions, checkpointer=saver)
        records = [(r.name, r.status, r.error_kind) for r in result.tool_calls]
        print(json.dumps({"stop": result.stop_reason, "paid": len(paid()),
                          "records": records, "harness": result.harness}))

    asyncio.run(start() if step == "start" else resume())
    """
)


def child(script: Path, step: str, folder: Path, url: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(script), step, str(folder), url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_an_approval_under_ainvoke_resumes_in_a_new_process(
    tmp_path: Path, postgres_url: str
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    folder = tmp_path / "data"
    started = child(script, "start", folder, postgres_url)
    assert started == {"stop": "pending_approval", "paid": 0}
    assert query(postgres_url, "SELECT COUNT(*) FROM checkpoints")[0][0] > 0
    resumed = child(script, "resume", folder, postgres_url)
    assert resumed == {
        "stop": "answered",
        "paid": 1,
        "records": [["pay", "success", None], ["pay", "error", "rejected"]],
        "harness": "langchain-ainvoke",
    }
    assert not list(folder.glob("*.sqlite3"))


def test_a_schema_named_in_the_url_holds_the_tables(postgres_url: str) -> None:
    """``?options=-csearch_path%3D...`` (a schema per deployment) is kept next to the
    store's own lock settings."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA deploy_a")
    url = postgres_url + "&options=-csearch_path%3Ddeploy_a"
    with postgres_checkpointer(url, key=bytes(32)) as saver:
        timeout = saver.conn.execute("SHOW lock_timeout").fetchone()["lock_timeout"]
    assert timeout != "0"  # the store's lock wait is set too
    assert query(postgres_url, "SELECT to_regclass('deploy_a.checkpoints') IS NOT NULL") == [
        (True,)
    ]
    assert query(postgres_url, "SELECT to_regclass('public.checkpoints')") == [(None,)]


# -- the contract suite's checkpoint-integrity boundary on PostgreSQL ------------------------


@pytest.mark.parametrize("harness", ["langchain", "langchain-async"])
@pytest.mark.parametrize("kind", TAMPERINGS)
def test_the_suite_tampers_with_postgresql_checkpoints(
    harness: str, kind: str, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite harnesses keep a tampered scenario's graph in a scratch schema of the
    store's database (sync and async modes): the sealed rows there are tampered with, the
    resume refuses them, and the untampered resume applies the approval once."""
    from agent_contract import tampering
    from agent_contract.conformance import SCENARIOS, run_scenario
    from agent_contract.registry import load_harness

    monkeypatch.setenv(STORE_ENV, postgres_url)
    tampered: list[Any] = []

    def spy(where: Any, thread_id: str, tampering_kind: str) -> Any:
        tampered.append(where)
        return real(where, thread_id, tampering_kind)

    real = tampering.tamper_checkpoints
    monkeypatch.setattr(tampering, "tamper_checkpoints", spy)
    (scenario,) = [s for s in SCENARIOS if s.name == f"checkpoint_{kind}_refused"]
    outcome = run_scenario(scenario, load_harness(harness), harness)
    assert outcome.holds, outcome.problems  # each reopening refused; the write ran once
    (where,) = tampered
    assert isinstance(where, Store)
    assert where.dialect == "postgresql"
    assert "search_path%3Dagent_contract_suite_" in where.url
    schemas = query(
        postgres_url,
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'agent_contract_suite_%%'",
    )
    assert schemas == []  # the scratch schema is dropped


# -- agent-contract check --store --------------------------------------------------------------


def test_check_store_sets_the_store_url_while_the_suite_runs(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_contract.app.check_command import store_for_check

    monkeypatch.delenv(STORE_ENV, raising=False)
    with store_for_check(postgres_url):
        assert os.environ[STORE_ENV] == postgres_url
    assert STORE_ENV not in os.environ
    monkeypatch.setenv(STORE_ENV, "sqlite:///elsewhere")
    with store_for_check(postgres_url):
        assert os.environ[STORE_ENV] == postgres_url
    assert os.environ[STORE_ENV] == "sqlite:///elsewhere"


@pytest.mark.parametrize(
    ("url", "code", "said"),
    [
        ("mysql://h/db", 2, "not a store URL"),
        ("postgresql://ops:hunter2@127.0.0.1:1/nothing", 8, "cannot be reached"),
    ],
)
def test_check_refuses_a_store_it_cannot_use_before_any_scenario(
    url: str, code: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from agent_contract.app import cli
    from agent_contract.conformance import runner

    ran: list[Any] = []
    monkeypatch.setattr(runner, "run_scenario", lambda *a, **k: ran.append(a))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["check", "--harness", "offline", "--store", url], out=out, err=err) == code
    assert said in err.getvalue()
    assert "hunter2" not in err.getvalue()
    assert ran == []
