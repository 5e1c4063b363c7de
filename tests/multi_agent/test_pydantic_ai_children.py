"""PydanticAI's agent delegation (a tool that runs another ``Agent``) under one
contract: with ``ContractCapability.child`` the inner agent is a child scope of the
tool call (the run's budget, its own allowlist, one trace); an inner agent run under a
fresh run of its own, or with a ContractToolset and no capability, is refused out of
the run (never silently outside, never a tool failure the parent's model reads)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent

from agent_contract import Budget, Contract
from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.runtime import ChildScopeRefused, RunResult, RunState
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolSpec
from agent_contract_pydantic_ai import (
    ContractCapability,
    ContractToolset,
    contract_model,
    drive_agent,
)

MODES = ("run_sync", "run", "stream")
RUNS: list[str] = []
PARAMETERS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def _search(q: str) -> str:
    RUNS.append(q)
    return f"result {q}"


def _wipe(q: str) -> str:
    RUNS.append(f"wipe {q}")
    return "wiped"


SEARCH = ToolSpec(name="search", description="Search.", parameters=PARAMETERS, handler=_search)
WIPE = ToolSpec(name="wipe", description="Wipe.", parameters=PARAMETERS, handler=_wipe)


@pytest.fixture(autouse=True)
def _reset() -> None:
    RUNS.clear()


class Team:
    """A parent Agent whose ``ask`` tool runs the researcher Agent (``how``: as a child
    scope, under a fresh run of its own, or with no capability at all)."""

    def __init__(self, how: str, parent: list[Any], child: list[Any], budget: Budget) -> None:
        async def ask(q: str) -> str:
            if how == "child":
                capabilities = [ContractCapability.child(self.child)]
            elif how == "fresh":
                capabilities = [ContractCapability(self.child.start())]
            else:
                capabilities = []
            out = await self.researcher.run(q, capabilities=capabilities)
            return str(out.output)

        ask_spec = ToolSpec(name="ask", description="Ask.", parameters=PARAMETERS, handler=ask)
        self.contract = Contract([ask_spec], budget=budget)
        self.child = self.contract.child("researcher", tools=[SEARCH, WIPE], allowlist=["search"])
        self.child_fake = FakeModel(child)
        self.researcher = Agent(
            contract_model(self.child_fake), toolsets=[ContractToolset(self.child)]
        )
        self.parent_fake = FakeModel(parent)
        self.agent = Agent(
            contract_model(self.parent_fake), toolsets=[ContractToolset(self.contract)]
        )

    def run(self, mode: str) -> tuple[RunResult, RunState]:
        state = self.contract.start()
        messages = [Message(role="user", content="go")]
        return drive_agent(self.agent, state, messages, mode=mode), state  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", MODES)
def test_a_delegated_agent_is_a_child_scope_and_two_delegations_work(mode: str) -> None:
    team = Team(
        "child",
        [tool_call("ask", {"q": "1"}), tool_call("ask", {"q": "2"}), "done"],
        [tool_call("search", {"q": "a"}), "found a", tool_call("wipe", {"q": "b"}), "no"],
        Budget(),
    )
    result, state = team.run(mode)
    assert (result.stop_reason, result.output) == ("answered", "done")
    assert RUNS == ["a"]  # wipe is outside the researcher's allowlist: never ran
    assert result.usage.model_steps == 7
    assert [(c.name, c.status, c.scope.agent if c.scope else None) for c in result.tool_calls] == [
        ("ask", "success", None),
        ("search", "success", "researcher"),
        ("ask", "success", None),
        ("wipe", "error", "researcher"),
    ]
    asks = [
        e["id"] for e in state.view.trace.events if e["type"] == "tool_call" and "scope" not in e
    ]
    assert [v.scope.call_path for v in state.view.children() if v.scope] == [
        (asks[0],),
        (asks[1],),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_delegated_agent_past_the_runs_budget_ends_the_run(mode: str) -> None:
    team = Team(
        "child",
        [tool_call("ask", {"q": "1"}), "done"],
        [tool_call("search", {"q": "a"}), tool_call("search", {"q": "b"}), "found"],
        Budget(max_tool_calls=2),
    )
    result, _state = team.run(mode)
    assert result.stop_reason == "max_tool_calls"
    assert RUNS == ["a"]
    assert len(team.parent_fake.calls) == 1  # the parent never read the stop as data
    (ask,) = result.own_tool_calls()
    assert (ask.error_kind, ask.outcome) == ("interrupted", "unknown")


@pytest.mark.parametrize("mode", MODES)
def test_a_delegated_agent_under_a_fresh_run_is_refused(mode: str) -> None:
    """Before: the inner run spent its own budget (3 tool calls against 2) silently."""
    team = Team(
        "fresh",
        [tool_call("ask", {"q": "1"}), "done"],
        [tool_call("search", {"q": "a"}), tool_call("search", {"q": "b"}), "found"],
        Budget(max_tool_calls=2),
    )
    with pytest.raises(
        ChildScopeRefused,
        match=r"agent 'researcher' started.*run of its own.*ContractCapability\.child",
    ):
        team.run(mode)
    assert RUNS == []
    assert team.child_fake.calls == []
    assert len(team.parent_fake.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_delegated_agent_without_a_capability_is_refused_out_of_the_run(mode: str) -> None:
    """Before: a ``tool_error`` the parent's model read, and the run answered."""
    team = Team(
        "plain",
        [tool_call("ask", {"q": "1"}), "done"],
        [tool_call("search", {"q": "a"}), "found"],
        Budget(),
    )
    with pytest.raises(ConfigurationError, match=r"inside tool call.*ContractCapability\.child"):
        team.run(mode)
    assert RUNS == []
    assert len(team.parent_fake.calls) == 1


def test_contract_capability_child_needs_a_contract_tool_call() -> None:
    contract = Contract([SEARCH])
    with pytest.raises(ConfigurationError, match="only inside a contract tool call"):
        ContractCapability.child(contract.child("researcher"))
