"""A deepagents agent as its docs teach it (no agent-contract import): ``create_deep_agent``
with the team's tool, a planning middleware and one sub-agent of its own.

``create_deep_agent`` calls ``create_agent`` several times: the general-purpose
sub-agent, the team's ``researcher`` (each built twice: deepagents rebuilds them once the
main stack is known) and the main agent, whose tools come mostly from middleware
(``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``, ``execute``
from ``FilesystemMiddleware``, ``write_todos`` from ``TodoListMiddleware``, ``task`` from
``SubAgentMiddleware``). ``agent-contract check --agent tests.agents.deep:build_deep_agent``
probes each agent.
"""

from __future__ import annotations

from typing import Any

from deepagents import create_deep_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_core.tools import tool

ORDERS = {"A-1001": "shipped", "A-1002": "processing"}


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by id (e.g. A-1001)."""
    return f"order {order_id}: {ORDERS.get(order_id, 'unknown')}"


RESEARCHER = {
    "name": "researcher",
    "description": "Looks orders up and writes a short note about them.",
    "system_prompt": "You research orders. Be brief.",
    "tools": [lookup_order],
}


def build_deep_agent(model: Any) -> Any:
    """The team's deep agent on ``model``."""
    return create_deep_agent(
        model=model,
        tools=[lookup_order],
        system_prompt="You are the shop's back-office agent.",
        middleware=[TodoListMiddleware()],
        subagents=[RESEARCHER],
    )


def build_filesystem_agent_under_contract(model: Any) -> Any:
    """``create_agent`` with deepagents' filesystem tools and LangChain's to-do list under
    a contract that registers the team's tool only: the contract's allowlist withdraws
    every middleware tool from the model."""
    from deepagents.middleware.filesystem import FilesystemMiddleware
    from langchain.agents import create_agent

    from agent_contract import Contract
    from agent_contract_langchain import ContractMiddleware, from_langchain_tool

    contract_mw = ContractMiddleware(Contract([from_langchain_tool(lookup_order, effect="read")]))
    return create_agent(
        model,
        tools=[lookup_order],
        middleware=contract_mw.around(FilesystemMiddleware(), TodoListMiddleware()),
    )
