"""``agent-contract check`` on a team's stack (issue 10, item 1): a factory that adds a
stock limit middleware gets a verdict (it once ran past 300 s at 3 GB); a scenario past
its wall-clock limit is ``timed_out``, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_contract.conformance import SCENARIOS
from agent_contract.conformance.runner import run_scenario

FACTORY = textwrap.dedent(
    """
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolCallLimitMiddleware
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_contract_langchain.chat_model import ContractChatModel
    from agent_contract_langchain.middleware import ContractMiddleware
    from agent_contract_langchain.resuming import run_options
    from agent_contract_langchain.tools import to_langchain_tools


    def make_harness():
        def harness(model, tools, options):
            contract = options.contract(tools)
            contract_mw = ContractMiddleware(contract)
            graph = create_agent(
                ContractChatModel(model=model),
                tools=to_langchain_tools(contract.registry),
                middleware=contract_mw.around(ToolCallLimitMiddleware(run_limit=20)),
                checkpointer=InMemorySaver(),
            )
            return run_options(graph, contract, options, mode="invoke")

        return harness
    """
)


OPT_OUT = ("--allow-unchecked", "write_approval,checkpoint_integrity")
"""The factory has no crash/restart hook and no durable store: its crash and
checkpoint-integrity scenarios are opted out, visibly."""


@pytest.mark.children_run_plain
def test_check_on_a_factory_with_a_stock_limit_gives_a_verdict(tmp_path: Path) -> None:
    (tmp_path / "team_agent.py").write_text(FACTORY, encoding="utf-8")
    cli = Path(sys.executable).parent / "agent-contract"
    env = {**os.environ, "AGENT_CONTRACT_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [str(cli), "check", "--harness", "team_agent:make_harness", *OPT_OUT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,  # a safety net for a hang, not a timing assertion
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "team_agent:make_harness" in done.stdout
    assert "not checked (allowed)" in done.stdout


def test_a_scenario_past_its_wall_clock_limit_is_timed_out() -> None:
    release = threading.Event()

    def hangs(model: Any, tools: Any, options: Any) -> Any:
        release.wait(30)
        raise RuntimeError("released")

    scenario = next(s for s in SCENARIOS if s.name == "direct_answer")
    try:
        outcome = run_scenario(scenario, hangs, "hangs", seconds=0.05)
    finally:
        release.set()
    assert outcome.observation.stop_reason == "timed_out"
    assert not outcome.holds
    assert "0.05 s" in outcome.observation.emitted
