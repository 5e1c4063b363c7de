"""A tool call whose arguments are JSON text holding an object (what the wire carries,
and what a model client may pass on unparsed) gets one verdict on every harness: the
contract's rule (:func:`~agent_contract.runtime.response.validate_response`) parses it,
and the call runs, on the offline loop, LangChain's invoke/ainvoke/stream and
PydanticAI's three modes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_contract.loop import run
from agent_contract.runtime import Contract, RunResult
from agent_contract.testing import FakeModel, tool_calls
from agent_contract_pydantic_ai import run_agent

from .conftest import Ran, Stack, budget, echo_spec

HARNESSES = (
    "offline",
    "langchain-invoke",
    "langchain-ainvoke",
    "langchain-stream",
    "pydantic-ai-run_sync",
    "pydantic-ai-run",
    "pydantic-ai-stream",
)


def _run(harness: str, model: FakeModel, contract: Contract) -> RunResult:
    if harness == "offline":
        return run(model, contract, "hi")
    family, mode = harness.rsplit("-", 1)
    if family == "langchain":
        return Stack(model, contract).run(mode=mode)
    return run_agent(model, contract, "hi", mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("harness", HARNESSES)
def test_json_text_arguments_run_on_every_harness(harness: str) -> None:
    """When it fails: LangChain carried the JSON-text call in ``invalid_tool_calls``,
    which ``create_agent`` never routes to the tools, and the run ended
    ``middleware_stop`` ("model ended the run before the contract decided") where the
    offline loop and PydanticAI ran the call."""
    ran = Ran()
    contract = Contract([echo_spec(ran)], budget=budget())
    model = FakeModel(
        [
            tool_calls(("echo", json.dumps({"a": 1}), "t1"), ("echo", {"a": 2}, "t2")),
            "done",
        ]
    )
    result = _run(harness, model, contract)
    assert (result.stop_reason, result.output) == ("answered", "done"), result.stop_detail
    # (read calls of one batch may run concurrently: the order they ran in is not fixed)
    assert sorted(ran.calls, key=str) == [("echo", {"a": 1}), ("echo", {"a": 2})]
    assert [(c.id, c.status) for c in result.tool_calls] == [
        ("t1", "success"),
        ("t2", "success"),
    ]
    answers = [(m.tool_call_id, m.content) for m in model.last_messages() if m.role == "tool"]
    assert [i for i, _ in answers] == ["t1", "t2"]
    assert all("echo" in json.dumps(c) for _, c in answers)


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize(
    "arguments", [json.dumps(json.dumps({"a": 1})), "[1, 2]"], ids=["json-string", "list"]
)
def test_json_text_of_a_non_object_is_refused_alike(harness: str, arguments: Any) -> None:
    """The other side of the rule: JSON text of anything but an object is
    ``arguments_not_object`` (stop ``invalid_response``) everywhere, and nothing runs."""
    ran = Ran()
    contract = Contract([echo_spec(ran)], budget=budget())
    model = FakeModel([tool_calls(("echo", arguments, "t1")), "done"])
    result = _run(harness, model, contract)
    assert result.stop_reason == "invalid_response"
    assert "must be a JSON object" in (result.stop_detail or "")
    assert ran.calls == []
