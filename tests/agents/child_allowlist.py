"""An agent wrapped as a tool whose child Contract's allowlist withdraws one of its
registered tools (``wipe``): ``check --agent`` names that allowlist and the agent."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import StructuredTool, tool

from agent_contract import Contract
from agent_contract_langchain import ContractMiddleware, from_langchain_tool


@tool
def search(q: str) -> str:
    """Search the archive."""
    return f"result {q}"


@tool
def wipe(q: str) -> str:
    """Wipe the archive (registered for the researcher, never allowlisted)."""
    return "wiped"


def build_team(model: Any) -> Any:
    """A parent agent with ``ask_researcher``, whose researcher's child Contract
    registers ``search`` and ``wipe`` and allowlists ``search`` only."""
    holder: dict[str, Any] = {}

    def ask(question: str) -> str:
        out = holder["researcher"].invoke({"messages": [{"role": "user", "content": question}]})
        return str(out["messages"][-1].content)

    ask_tool = StructuredTool.from_function(
        func=ask, name="ask_researcher", description="Ask the researcher."
    )
    contract = Contract([from_langchain_tool(ask_tool, effect="read")])
    researcher = contract.child(
        "researcher",
        tools=[
            from_langchain_tool(search, effect="read"),
            from_langchain_tool(wipe, effect="read"),
        ],
        allowlist=["search"],
    )
    holder["researcher"] = create_agent(
        model,
        tools=[search, wipe],
        middleware=ContractMiddleware(researcher).around(),
        name="researcher",
    )
    return create_agent(model, tools=[ask_tool], middleware=ContractMiddleware(contract).around())
