"""The trace cap holds for refused arguments (issue 12): a model that sends megabytes of
arguments the schema refuses gets a bound refusal, and the trace and the report keep
only a redacted, cut copy of them, on the offline loop and on LangChain."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_contract import Contract, run
from agent_contract.app.builtin_tools import calculator_tool
from agent_contract.budget import Budget
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract.trace import RAW_ARGUMENTS_CHARS
from agent_contract_langchain.harness import run_agent

CAP = 100_000
SECRET = "sk-live-0123456789abcdef"
HUGE = {
    "too_long": {"expression": SECRET + "1+" * 2_000_000 + "1"},
    "extra_key": {"expression": 1, "junk": SECRET + "x" * 4_000_000},
    "huge_key": {"k" * 100_000 + SECRET: "v"},
}


def drive(harness: str, arguments: dict[str, Any]) -> RunResult:
    model = FakeModel([tool_call("calculator", arguments), "done"], stateless=True)
    contract = Contract(
        [calculator_tool()],
        budget=Budget(max_trace_bytes=CAP, deadline_seconds=None),
        secrets=[SECRET],
    )
    if harness == "offline":
        return run(model, contract, "go")
    return run_agent(model, contract, "go")


@pytest.mark.parametrize("harness", ["offline", "langchain"])
@pytest.mark.parametrize("case", sorted(HUGE))
def test_refused_arguments_stay_under_the_trace_cap(harness: str, case: str) -> None:
    result = drive(harness, HUGE[case])
    assert result.stop_reason == "answered"
    lines = [json.dumps(e, ensure_ascii=False) for e in result.trace.events]
    assert sum(len(line.encode("utf-8")) + 1 for line in lines) < CAP
    (event,) = [e for e in result.trace.events if e["type"] == "tool_call"]
    assert event["decision"] == "refused"
    kept = event["arguments"]
    assert kept["arguments_cut"] is True
    assert kept["arguments_chars"] > RAW_ARGUMENTS_CHARS
    assert len(kept["arguments_text"]) == RAW_ARGUMENTS_CHARS
    (record,) = result.tool_calls
    assert record.arguments == kept
    assert SECRET not in json.dumps(result.trace.events) + json.dumps(kept)


def test_small_refused_arguments_are_kept_whole() -> None:
    result = drive("offline", {"expression": 1})
    (event,) = [e for e in result.trace.events if e["type"] == "tool_call"]
    assert event["decision"] == "refused"
    assert event["arguments"] == {"expression": 1}
