"""The shop's agent after adopting the contract: the same tools, unchanged, adopted with
``from_langchain_tool`` (effects declared), the team's own contract (budget, secrets),
``ContractMiddleware`` around their stock middleware, and a durable SQLite checkpointer.

``agent-contract check --agent tests.agents.shop_with_contract:build_agent`` probes it
with this contract, this middleware and this checkpointer.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, PIIMiddleware
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract import Budget, Contract
from agent_contract_langchain import ContractMiddleware, from_langchain_tool

from .shop import (
    PLACED,
    SYSTEM_PROMPT,
    CartState,
    ShopContext,
    add_to_cart,
    lookup_order,
    place_order,
    search_catalog,
)

SHOP_API_KEY = "sk-shop-live-0a1b2c3d4e5f6a7b8c9d"
"""A secret the shop's tools hold; the contract redacts it everywhere."""


def _placed(context: Any, items: list[str]) -> dict[str, Any] | None:
    """Read back an order placed under this call's idempotency key (none here: the demo
    store keeps no keys, so a placed order is found by its items)."""
    found = [p for p in PLACED if p["items"] == items]
    return found[-1] if found else None


def shop_contract() -> Contract:
    """The team's contract: their tools, their budget, their secrets."""
    return Contract(
        [
            from_langchain_tool(lookup_order, effect="read", timeout_seconds=2.0),
            from_langchain_tool(search_catalog, effect="read", timeout_seconds=2.0),
            from_langchain_tool(add_to_cart, effect="read"),
            from_langchain_tool(
                place_order,
                effect="write",
                preview=lambda context, items: {"would_order": items},
                verify=_placed,
            ),
        ],
        budget=Budget(max_model_steps=6, max_tool_calls=4, max_identical_calls=2),
        secrets=[SHOP_API_KEY],
    )


def checkpoint_file() -> Path:
    """Where the checkpoints live: ``$SHOP_CHECKPOINTS``, else a file in the temp folder."""
    default = Path(tempfile.gettempdir()) / "shop-checkpoints.sqlite"
    return Path(os.environ.get("SHOP_CHECKPOINTS", default))


def build_agent(model: Any) -> Any:
    """The shop's agent under its contract, on ``model``."""
    contract_mw = ContractMiddleware(shop_contract())
    connection = sqlite3.connect(checkpoint_file(), check_same_thread=False)
    return create_agent(
        model,
        tools=[lookup_order, search_catalog, add_to_cart, place_order],
        system_prompt=SYSTEM_PROMPT,
        middleware=contract_mw.around(
            ModelCallLimitMiddleware(run_limit=10, exit_behavior="end"),
            PIIMiddleware("email", strategy="mask", apply_to_input=True),
        ),
        state_schema=CartState,
        context_schema=ShopContext,
        checkpointer=SqliteSaver(connection),
    )
