"""Error paths that no scenario reaches: each asserts the typed, fail-closed outcome, so
it fails if the guard is removed."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract import Contract, ToolContext, ToolSpec, run
from agent_contract.app.builtin_tools.orders import OrderStore
from agent_contract.app.demo import approve_demo, start_demo
from agent_contract.approval import Approval
from agent_contract.errors import (
    ApprovalError,
    CheckpointError,
    ConfigurationError,
    InvalidArgumentsError,
)
from agent_contract.executor import run_isolated
from agent_contract.messages import ToolCall
from agent_contract.results import ToolResult
from agent_contract.runstore import RUNS_LABEL, RunStore
from agent_contract.runtime import Stop
from agent_contract.sealing import folder_key, seal, subkey
from agent_contract.testing import FakeModel, tool_call
from agent_contract.trace import RedactionPolicy
from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.harness import run_agent
from agent_contract_langchain.resuming import resume_agent
from agent_contract_langchain.tools import to_tool_message

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _exit_abruptly(code: int) -> None:
    os._exit(code)


def writer() -> ToolSpec:
    return ToolSpec(
        name="send",
        description="A write.",
        parameters=TEXT,
        handler=lambda ctx, text: {"sent": text},
        effect="write",
        preview=lambda ctx, text: {"would_send": text},
        verify=lambda ctx, text: None,
    )


def test_checkpointer_on_a_path_that_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "dir.sqlite3").mkdir()
    with pytest.raises(CheckpointError), sqlite_checkpointer(tmp_path / "dir.sqlite3"):
        pass


def test_resume_of_a_thread_with_no_pending_approval_is_refused() -> None:
    contract = Contract([writer()])
    saver = InMemorySaver()
    done = run_agent(FakeModel(["hello"]), contract, "hi", checkpointer=saver)
    assert done.stop_reason == "answered"
    paused = run(FakeModel([tool_call("send", {"text": "x"})]), contract, "go")
    snapshot = {**dict(paused.snapshot or {}), "run_id": done.run_id}
    with pytest.raises(CheckpointError, match="no pending approval"):
        resume_agent(FakeModel(["ok"]), contract, snapshot, [], checkpointer=saver)


def test_ending_a_run_with_a_write_still_waiting_answers_it_as_an_error() -> None:
    contract = Contract([writer()])
    state = contract.start()
    plan = state.plan_tool_calls([ToolCall(id="c1", name="send", arguments={"text": "x"})])
    assert plan.pending
    result = state.finish(Stop(reason="deadline", detail="test"), messages=[])
    assert [(c.status, c.error_kind) for c in result.tool_calls] == [("error", "tool_error")]


def test_a_tool_message_and_a_snapshot_never_hold_the_artifact() -> None:
    result = ToolResult(
        tool_call_id="c1", name="t", status="success", content="ok", artifact={"big": "x"}
    )
    message = to_tool_message(result)
    assert set(message.artifact) == {"agent_contract"}
    assert "artifact" not in result.to_dict()


def test_a_decision_dict_without_fields_is_an_approval_error() -> None:
    with pytest.raises(ApprovalError, match="not a decision"):
        Approval.from_dict({"decision": "approve"})


def test_refund_amount_that_is_not_whole_cents(tmp_path: Path) -> None:
    store = OrderStore(tmp_path / "orders.sqlite3")
    context = ToolContext(run_id="r", tool_call_id="c", caller="alice")
    with pytest.raises(InvalidArgumentsError, match="whole number of cents"):
        store.preview_refund(context, "A-1001", 100.0, "float from a lax schema")  # type: ignore[arg-type]


def test_approve_names_a_call_that_is_not_pending(tmp_path: Path) -> None:
    demo = start_demo("refund order A-1001", caller="alice", folder=tmp_path)
    with pytest.raises(ApprovalError, match="no pending call"):
        approve_demo(demo.thread_id, "approve", call_id="call_9_9", folder=tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="forkserver is POSIX")
def test_an_isolated_process_that_dies_is_an_error_not_a_hang() -> None:
    # The child exits at once; the limit is a hang guard far above a loaded machine's
    # start-up time (10 s timed out under a parallel full run, reported as a timeout).
    invocation = run_isolated(_exit_abruptly, (3,), {}, 120.0)
    assert isinstance(invocation.error, RuntimeError)
    assert "died" in str(invocation.error)


def test_a_stored_snapshot_that_is_not_an_object_is_corrupt(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    store.save("t1", {"x": 1})
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:
        db.execute("UPDATE runs SET snapshot = '[1, 2]' WHERE thread_id = 't1'")
    with pytest.raises(CheckpointError, match="failed authentication"):
        store.load("t1")  # edited outside agent-contract: refused before it is parsed
    key = subkey(folder_key(tmp_path), RUNS_LABEL)
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:  # the same text, sealed
        db.execute(
            "UPDATE runs SET mac = ? WHERE thread_id = 't1'",
            (seal(key, "t1", "offline", "[1, 2]"),),
        )
    with pytest.raises(CheckpointError, match="corrupt"):
        store.load("t1")


def test_an_int_too_long_for_json_is_a_placeholder_in_the_trace() -> None:
    value: Any = RedactionPolicy().redact_value({"n": 10**5000})
    assert value == {"n": "<int that cannot be written as JSON>"}


def test_a_write_waiting_for_approval_cannot_be_executed_directly() -> None:
    ran: list[str] = []
    spec = ToolSpec(
        name="send",
        description="A write.",
        parameters=TEXT,
        handler=lambda ctx, text: ran.append(text),
        effect="write",
        preview=lambda ctx, text: {"would_send": text},
        verify=lambda ctx, text: None,
    )
    state = Contract([spec]).start()
    plan = state.plan_tool_calls([ToolCall(id="c1", name="send", arguments={"text": "x"})])
    with pytest.raises(ConfigurationError, match="after a human decision"):
        state.execute(plan.calls[0])
    with pytest.raises(ConfigurationError, match="after a human decision"):
        state.submit(plan.calls[0])
    assert ran == []
