"""``check --agent`` on a tree of agents whose child Contract's allowlist withdraws a
registered tool: the reason names that allowlist and the agent (not "a middleware")."""

from __future__ import annotations

import pytest

from agent_contract.conformance.agent import render_agent_text, run_agent_check
from agent_contract_langchain.agent_check.probes import agent_probes

TEAM = "tests.agents.child_allowlist:build_team"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_tool_a_child_allowlist_withdraws_names_the_allowlist_and_the_agent() -> None:
    probes = agent_probes(TEAM)
    (researcher,) = probes.agents
    assert researcher.name == "researcher"
    assert researcher.tools == ("search",)
    reason = researcher.not_probed["wipe"]
    assert "withdrawn from the model by the allowlist of the Contract of agent 'researcher'" in (
        reason
    )
    assert "(allowlist: ['search'])" in reason
    assert "middleware withdraws" not in reason
    text = render_agent_text(run_agent_check(probes))
    assert "wipe: withdrawn from the model by the allowlist of the Contract of agent" in text
