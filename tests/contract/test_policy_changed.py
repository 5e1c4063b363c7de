"""On resume, an approved write is re-checked against the current contract before it
runs (issue 11, input 4): a contract whose allowlist no longer has the tool, whose schema
now refuses the approved arguments, or whose budget shrank below what the run used stops
the run with ``policy_changed``; nothing runs, and the decision stays recorded. On the
offline loop and on LangChain's invoke, ainvoke and stream."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract import Approval, Budget, Contract, resume, run
from agent_contract.conformance.fixtures import Probe, echo_tool, transfer_tool
from agent_contract.exitcodes import EXIT_APPROVAL_REFUSED, EXIT_CODES
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_calls
from agent_contract_langchain import resume_agent, run_agent

DRIVERS = ["offline", "invoke", "ainvoke", "stream"]


def _contract(
    probe: Probe, *, maximum: int | None = None, allow: bool = True, max_calls: int = 10
) -> Contract:
    write = transfer_tool(probe)
    if maximum is not None:
        parameters = copy.deepcopy(dict(write.parameters))
        parameters["properties"]["amount"]["maximum"] = maximum
        write = dataclasses.replace(write, parameters=parameters)
    return Contract(
        [write, echo_tool(probe)],
        allowlist=None if allow else ["echo"],
        budget=Budget(deadline_seconds=30.0, max_tool_calls=max_calls),
    )


def _pause_then_resume(driver: str, later: dict[str, Any]) -> tuple[RunResult, Probe, list[Any]]:
    model = FakeModel(
        [
            tool_calls(
                ("echo", {"text": "hi"}, "c_echo"),
                ("transfer", {"to": "bob", "amount": 10}, "c_pay"),
            ),
            "sent",
        ],
        stateless=True,
    )
    saver = InMemorySaver()
    first = _contract(Probe())
    if driver == "offline":
        paused = run(model, first, "pay bob 10")
    else:
        paused = run_agent(model, first, "pay bob 10", checkpointer=saver, mode=driver)  # type: ignore[arg-type]
    assert paused.stop_reason == "pending_approval"
    assert paused.snapshot is not None
    approval = Approval.for_pending(paused.pending_approvals[0], "approve", decided_by="ann")
    probe = Probe()
    current = _contract(probe, **later)
    stored: list[Any] = []
    if driver == "offline":
        done = resume(model, current, paused.snapshot, [approval], checkpoint=stored.append)
    else:
        done = resume_agent(
            model,
            current,
            paused.snapshot,
            [approval],
            checkpointer=saver,
            checkpoint=stored.append,
            mode=driver,  # type: ignore[arg-type]
        )
    return done, probe, stored


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(
    ("later", "kind", "why"),
    [
        pytest.param({"allow": False}, "not_allowed", "no longer in the allowlist", id="allowlist"),
        pytest.param({"maximum": 5}, "invalid_arguments", "10 is greater than", id="schema"),
        pytest.param({"max_calls": 1}, "budget_exceeded", "max_tool_calls is now 1", id="budget"),
    ],
)
def test_an_approved_write_that_no_longer_fits_never_runs(
    driver: str, later: dict[str, Any], kind: str, why: str
) -> None:
    done, probe, stored = _pause_then_resume(driver, later)
    assert probe.write_calls == 0
    assert probe.writes == {}
    assert done.stop_reason == "policy_changed"
    assert done.output is None
    assert why in done.stop_detail
    assert [(c.id, c.status, c.error_kind) for c in done.tool_calls] == [
        ("c_echo", "success", None),
        ("c_pay", "error", kind),
    ]
    # The human's decision is kept: in the trace, and in the snapshot stored before it.
    (decided,) = done.trace.of_type("approval_decided")
    assert (decided["decision"], decided["decided_by"]) == ("approve", "ann")
    assert stored
    assert stored[-1]["decisions"]["c_pay"]["decision"] == "approve"
    assert "policy_changed" not in json.dumps(stored[-1]["decisions"])


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_unchanged_contract_runs_the_write(driver: str) -> None:
    done, probe, _ = _pause_then_resume(driver, {})
    assert done.stop_reason == "answered"
    assert probe.write_calls == 1


def test_policy_changed_exits_as_a_refused_decision() -> None:
    assert EXIT_CODES["policy_changed"] == EXIT_APPROVAL_REFUSED
