"""Approval under ``ainvoke`` with ``AsyncSqliteSaver`` (issue 10, item 10): one event
loop owns the saver; the run pauses in one process and resumes in another; a saver bound
to another loop is a typed refusal before anything runs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_contract.errors import ConfigurationError
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain.durable import async_sqlite_checkpointer
from agent_contract_langchain.harness import run_agent

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    from agent_contract.approval import Approval, PendingApproval
    from agent_contract.runtime import Contract
    from agent_contract.testing import FakeModel, tool_call, tool_calls
    from agent_contract.tools import ToolSpec
    from agent_contract_langchain.durable import async_sqlite_checkpointer
    from agent_contract_langchain.harness import arun_agent
    from agent_contract_langchain.resuming import aresume_agent

    folder = Path(sys.argv[2])
    ledger = folder / "payments.jsonl"

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
        async with async_sqlite_checkpointer(folder / "checkpoints.sqlite3") as saver:
            result = await arun_agent(FakeModel(script, stateless=True), contract, "pay them",
                                      run_id="run-async-1", checkpointer=saver)
        (folder / "snapshot.json").write_text(json.dumps(result.snapshot))
        print(json.dumps({"stop": result.stop_reason, "paid": len(paid())}))

    async def resume():
        snapshot = json.loads((folder / "snapshot.json").read_text())
        pending = [PendingApproval.from_dict(p["approval"]) for p in snapshot["batch"]]
        decisions = [Approval.for_pending(pending[0], "approve"),
                     Approval.for_pending(pending[1], "reject", reason="not eve")]
        async with async_sqlite_checkpointer(folder / "checkpoints.sqlite3") as saver:
            result = await aresume_agent(FakeModel(script, stateless=True), contract,
                                         snapshot, decisions, checkpointer=saver)
        records = [(r.name, r.status, r.error_kind) for r in result.tool_calls]
        print(json.dumps({"stop": result.stop_reason, "paid": len(paid()),
                          "records": records, "harness": result.harness}))

    asyncio.run(start() if sys.argv[1] == "start" else resume())
    """
)


def child(script: Path, step: str, folder: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(script), step, str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.children_run_plain
def test_an_approval_under_ainvoke_resumes_in_a_new_process(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    started = child(script, "start", tmp_path)
    assert started == {"stop": "pending_approval", "paid": 0}
    resumed = child(script, "resume", tmp_path)
    assert resumed == {
        "stop": "answered",
        "paid": 1,
        "records": [["pay", "success", None], ["pay", "error", "rejected"]],
        "harness": "langchain-ainvoke",
    }


def test_a_saver_of_another_event_loop_is_refused_before_anything_runs(tmp_path: Path) -> None:
    async def opened_elsewhere() -> None:
        async with async_sqlite_checkpointer(tmp_path / "cp.sqlite3") as saver:
            model = FakeModel([tool_call("nothing", {}), "done"])
            with pytest.raises(ConfigurationError, match="another event loop"):
                # run_agent's ainvoke runs on a loop of its own: not the saver's.
                await asyncio.to_thread(
                    run_agent, model, [], "hi", mode="ainvoke", checkpointer=saver
                )
            assert model.calls == []

    asyncio.run(opened_elsewhere())
