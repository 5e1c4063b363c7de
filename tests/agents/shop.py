"""A shop's support agent, written as LangChain's docs teach it (no agent-contract import).

Tools read the runtime context (``ToolRuntime``), one updates the graph state with a
``Command``, one places an order (a write); stock middleware limits model and tool calls
and masks e-mail addresses; the agent has a ``context_schema`` and a checkpointer.
``build_shop_agent(model)`` is the factory ``agent-contract check --agent
tests.agents.shop:build_shop_agent`` calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import (
    ModelCallLimitMiddleware,
    PIIMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.tools import InjectedToolCallId, ToolRuntime, tool
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"customer": "c-1", "status": "shipped", "total": 42.0},
    "A-1002": {"customer": "c-2", "status": "processing", "total": 13.5},
}
CATALOG: dict[str, float] = {"mug": 9.5, "tee": 19.0, "cap": 14.0}
PLACED: list[dict[str, Any]] = []


@dataclass
class ShopContext:
    """Who is asking (the graph's runtime context)."""

    customer_id: str
    store: str = "web"


class CartState(AgentState):
    """The agent state, with the cart a tool updates."""

    cart: list[str]


@tool
def lookup_order(order_id: str, runtime: ToolRuntime[ShopContext]) -> str:
    """Look up one of the customer's orders by id (e.g. A-1001)."""
    order = ORDERS.get(order_id)
    if order is None or order["customer"] != runtime.context.customer_id:
        return f"no order {order_id}"
    return f"order {order_id}: {order['status']}, total {order['total']}"


class SearchArgs(BaseModel):
    """Catalog search arguments."""

    query: str = Field(min_length=2, max_length=40, description="words to search for")
    limit: int = Field(default=3, ge=1, le=10, description="how many results")


@tool(args_schema=SearchArgs)
def search_catalog(query: str, limit: int = 3) -> list[str]:
    """Search the catalog."""
    return [name for name in CATALOG if query.lower() in name][:limit]


@tool
def add_to_cart(
    item: Literal["mug", "tee", "cap"], tool_call_id: Annotated[str, InjectedToolCallId]
) -> Command[Any]:
    """Put an item in the cart."""
    return Command(
        update={
            "cart": [item],
            "messages": [ToolMessage(f"added {item}", tool_call_id=tool_call_id)],
        }
    )


@tool
def place_order(items: list[str], runtime: ToolRuntime[ShopContext]) -> str:
    """Place an order for the items (charges the customer's card)."""
    total = sum(CATALOG.get(i, 0.0) for i in items)
    PLACED.append({"customer": runtime.context.customer_id, "items": items, "total": total})
    return f"order placed: {len(items)} item(s), total {total}"


SYSTEM_PROMPT = "You are the shop's support agent. Be brief."


def build_shop_agent(model: Any) -> Any:
    """The shop's agent on ``model`` (a chat model, or a model name such as
    ``"openai:gpt-4o-mini"`` in production)."""
    return create_agent(
        model,
        tools=[lookup_order, search_catalog, add_to_cart, place_order],
        system_prompt=SYSTEM_PROMPT,
        middleware=[
            ModelCallLimitMiddleware(run_limit=10, exit_behavior="end"),
            ToolCallLimitMiddleware(run_limit=20, exit_behavior="continue"),
            PIIMiddleware("email", strategy="mask", apply_to_input=True),
        ],
        state_schema=CartState,
        context_schema=ShopContext,
        checkpointer=InMemorySaver(),
    )
