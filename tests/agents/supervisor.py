"""A langgraph-supervisor team as its docs teach it (no agent-contract import): two
workers built with ``create_agent`` and a supervisor that hands off to them.

``create_supervisor`` builds the supervisor with ``create_react_agent`` (no middleware
slot) and returns a ``StateGraph``; the factory compiles it. ``agent-contract check
--agent tests.agents.supervisor:build_team`` probes each worker and lists the
supervisor's handoff tools as not probed, with the reason.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph_supervisor import create_supervisor


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by id (e.g. A-1001)."""
    return f"order {order_id}: shipped"


def build_team(model: Any) -> Any:
    """The supervisor and its two workers on ``model``."""
    math = create_agent(model, tools=[add], name="math", system_prompt="You add numbers.")
    orders = create_agent(
        model, tools=[lookup_order], name="orders", system_prompt="You look orders up."
    )
    return create_supervisor(
        [math, orders], model=model, prompt="Route each question to one worker."
    ).compile()
