"""Ctrl-C, SIGTERM and SystemExit during a run (issue 12 item 3): never a tool's error;
the run pauses ``interrupted``, is stored, and resumes. The same signals at the write
path's named crash points, in child processes, are in ``test_crash_points.py``.

A tool here interrupts its own run: its handler sends SIGINT or SIGTERM to this process
(the signal reaches the main thread while it waits for the tool) or raises
``KeyboardInterrupt`` / ``SystemExit`` itself, then waits until the test releases it.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_contract import exitcodes
from agent_contract.app.builtin_tools.orders import OrderStore
from agent_contract.app.signals import raising_signals
from agent_contract.executor import ToolExecutor
from agent_contract.loop import resume as resume_offline
from agent_contract.loop import run as run_offline
from agent_contract.results import ToolOutput
from agent_contract.runtime import Contract, RunInterrupted, RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.harness import run_agent
from agent_contract_langchain.resuming import resume_agent


class Interrupting:
    """A read tool whose handler interrupts the run, then waits to be released."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.release = threading.Event()
        self.calls = 0

    def handler(self, text: str = "") -> str:
        self.calls += 1
        if self.calls == 1:
            if self.how == "SIGINT":
                os.kill(os.getpid(), signal.SIGINT)
            elif self.how == "SIGTERM":
                os.kill(os.getpid(), signal.SIGTERM)
            elif self.how == "KeyboardInterrupt":
                raise KeyboardInterrupt
            else:
                raise SystemExit(3)
            # LangChain's sync runner waits for a running tool thread before the
            # interruption reaches the run: keep the wait short (the result is real then).
            self.release.wait(timeout=1.0)
        return f"read {text}"

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="read",
            description="Reads.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            handler=self.handler,
        )


def calls_of(result: RunResult) -> list[dict[str, Any]]:
    """Every call of a paused run with its result: the report's records, then the open
    batch's answered calls (a pause keeps its batch open, to resume it)."""
    calls = [
        {
            "id": c.id,
            "status": c.status,
            "error_kind": c.error_kind,
            "outcome": c.outcome,
            "side_effects_possible": c.side_effects_possible,
        }
        for c in result.tool_calls
    ]
    seen = {c["id"] for c in calls}
    answered = dict((result.snapshot or {}).get("answered", {}))
    for call_id, data in answered.items():
        if call_id not in seen:
            calls.append(
                {
                    "id": call_id,
                    "status": data["status"],
                    "error_kind": data.get("error_kind"),
                    "outcome": data.get("outcome"),
                    "side_effects_possible": data.get("side_effects_possible"),
                }
            )
    return calls


@pytest.fixture
def signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise in the main thread, as under the command line."""
    with raising_signals():
        yield


HOWS = ["SIGINT", "SIGTERM", "KeyboardInterrupt", "SystemExit"]


@pytest.fixture
def pool() -> Iterator[ToolExecutor]:
    """A tool pool of the test's own: an interruption can cut a worker thread's start
    short (it then waits idle, unknown to the interpreter's exit hook), and shutting the
    pool down ends it (the command line does the same on an interrupted exit)."""
    executor = ToolExecutor()
    yield executor
    executor.shutdown()


def interrupt(
    harness: str, folder: Path, how: str, pool: ToolExecutor
) -> tuple[Interrupting, Contract, FakeModel, RunResult]:
    tool = Interrupting(how)
    contract = Contract([tool.spec()], executor=pool)
    model = FakeModel([tool_call("read", {"text": "a"}), "the answer"], stateless=True)

    def go() -> None:
        if harness == "offline":
            run_offline(model, contract, "go", caller="alice")
        else:
            with sqlite_checkpointer(folder / "checkpoints.sqlite3") as saver:
                run_agent(model, contract, "go", caller="alice", checkpointer=saver)

    with pytest.raises(RunInterrupted) as caught:
        go()
    tool.release.set()
    return tool, contract, model, caught.value.result


@pytest.mark.usefixtures("signals")
@pytest.mark.parametrize("how", HOWS)
def test_an_interrupted_run_pauses_interrupted_and_resumes(
    harness: str, folder: Path, how: str, pool: ToolExecutor
) -> None:
    tool, contract, model, result = interrupt(harness, folder, how, pool)
    assert result.stop_reason == "interrupted"
    assert result.stop_detail == f"interrupted by {how}"
    assert result.output is None
    (call,) = calls_of(result)
    # Never the tool's error: the interruption is recorded with an unknown outcome, or
    # (when LangGraph's runner waited for the tool's thread) the tool's real result.
    interrupted = (call["error_kind"], call["outcome"], call["side_effects_possible"]) == (
        "interrupted",
        "unknown",
        True,
    )
    if harness == "offline" or how in ("KeyboardInterrupt", "SystemExit"):
        assert interrupted
    else:
        assert interrupted or (call["status"], call["error_kind"]) == ("success", None)
    assert result.snapshot is not None
    snapshot = json.loads(json.dumps(result.snapshot))  # as stored
    if harness == "offline":
        resumed = resume_offline(model, contract, snapshot)
    else:
        with sqlite_checkpointer(folder / "checkpoints.sqlite3") as saver:
            resumed = resume_agent(model, contract, snapshot, [], checkpointer=saver)
    assert (resumed.stop_reason, resumed.output) == ("answered", "the answer")
    assert [c.id for c in resumed.tool_calls] == [call["id"]]  # not issued twice
    assert tool.calls == 1  # nor run again


@pytest.mark.parametrize("how", ["KeyboardInterrupt", "SystemExit"])
def test_an_interruption_inside_a_handler_is_not_a_tool_error(how: str, pool: ToolExecutor) -> None:
    """Before issue 12 the executor caught BaseException: a SystemExit became
    ``tool_error`` (outcome failed, no side effects) and the run carried on."""
    tool = Interrupting(how)
    model = FakeModel([tool_call("read", {"text": "a"}), "carried on"], stateless=True)
    with pytest.raises(RunInterrupted) as caught:
        run_offline(model, Contract([tool.spec()], executor=pool), "go")
    (call,) = calls_of(caught.value.result)
    assert (call["error_kind"], call["outcome"], call["side_effects_possible"]) == (
        "interrupted",
        "unknown",
        True,
    )
    assert len(model.calls) == 1  # the run did not carry on to the next model step
    assert isinstance(caught.value, KeyboardInterrupt)  # code that stops on Ctrl-C stops


# -- the command line: stored, exit 130/143, then `resume` ------------------------------


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_the_cli_stores_an_interrupted_run_and_resume_continues_it(
    harness: str,
    store_kind: str,
    folder: Path,
    data: Any,
    sig: str,
    invoke: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run`` interrupted while ``lookup_order`` runs: exit 130/143, no traceback, the
    run stored paused; ``resume`` finishes it (the model reads the lookup's unknown
    outcome, or its result when the harness waited for it)."""
    original = OrderStore.lookup
    sent = threading.Event()

    def lookup(self: OrderStore, context: ToolContext, order_id: str) -> ToolOutput:
        if not sent.is_set():
            sent.set()
            os.kill(os.getpid(), signal.Signals[sig])
        return original(self, context, order_id)

    monkeypatch.setattr(OrderStore, "lookup", lookup)
    code, out, err = invoke(
        "run", "look up order A-1001", "--caller", "alice", "--harness", harness, "--json"
    )
    assert code == {"SIGINT": exitcodes.EXIT_INTERRUPTED, "SIGTERM": 143}[sig], err
    assert "Traceback" not in err
    report = json.loads(out)
    assert report["stop_reason"] == "interrupted"
    assert f"agent-contract resume {report['thread_id']}" in err
    harness_column, _ = data.runs()[report["thread_id"]]
    assert harness_column == harness  # stored paused, resumable
    assert [c.get("error_kind") for c in report["tool_calls"]] in ([], [None], ["interrupted"])

    code, out, err = invoke("resume", report["thread_id"], "--json")
    assert code == 0, err
    resumed = json.loads(out)
    assert resumed["stop_reason"] == "answered"
    assert data.runs()[report["thread_id"]][0] == f"finished:{harness}"
    code, _, err = invoke("resume", report["thread_id"])
    assert code == exitcodes.EXIT_APPROVAL_REFUSED
    assert "already finished" in err
