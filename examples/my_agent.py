"""Your own agent under the contract's probes: ``agent-contract check --agent``.

``build_agent(model)`` is the team's factory: their ``create_agent`` call, their
``@tool`` tools adopted unchanged (effects declared), their contract, their stock
middleware and checkpointer. From this folder::

    agent-contract check --agent my_agent:build_agent --quiet

prints the boundary table and this per-tool table (and exits 0)::

    per tool on build_agent (- = not probed):
    tool          valid_call  missing_required  wrong_type  extra_field  out_of_range  tool_error  secret_redacted  repeated_calls  tool_call_budget  slow_call
    ------------  ----------  ----------------  ----------  -----------  ------------  ----------  ---------------  --------------  ----------------  ---------
    order_status  holds       holds             holds       holds        -             holds       holds            holds           holds             holds
    search_faq    holds       holds             holds       holds        holds         holds       holds            -               -                 -
    cancel_order  holds       holds             holds       holds        -             -           -                -               -                 -

The same probes in pytest: ``test_my_agent.py`` (``pytest examples/test_my_agent.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from agent_contract import Budget, Contract
from agent_contract_langchain import ContractMiddleware, from_langchain_tool

CANCELLED: dict[str, str] = {}


@tool
def order_status(order_id: str) -> str:
    """The status of an order."""
    return f"{order_id}: shipped"


@tool
def search_faq(query: Annotated[str, Field(min_length=3)], limit: int = 3) -> list[str]:
    """Search the help center."""
    return [f"how to {query}"][:limit]


@tool
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    CANCELLED[order_id] = "cancelled"
    return f"{order_id} cancelled"


# The team's contract: tools, effects, budget. Built once per application, and that same
# object given to the middleware and to run_graph (docs/MULTI_AGENT.md, "One Contract per
# application"): a Contract built per factory call is another run's contract.
CONTRACT = Contract(
    [
        from_langchain_tool(order_status, effect="read", timeout_seconds=1.0),
        from_langchain_tool(search_faq, effect="read"),
        from_langchain_tool(
            cancel_order,
            effect="write",
            preview=lambda context, order_id: {"cancel": order_id},
            verify=lambda context, order_id: CANCELLED.get(order_id),
        ),
    ],
    budget=Budget(max_tool_calls=5, max_identical_calls=2),
)


def build_agent(model: Any) -> Any:
    """The team's agent on ``model``."""
    contract_mw = ContractMiddleware(CONTRACT)
    return create_agent(
        model,
        tools=[order_status, search_faq, cancel_order],
        system_prompt="You are the support agent.",
        middleware=contract_mw.around(ToolCallLimitMiddleware(run_limit=20)),
        checkpointer=InMemorySaver(),
    )
