"""Deprecated: moved to :mod:`agent_contract.app.builtin_tools.orders` (kept for one
release)."""

from __future__ import annotations

from .._deprecated import moved
from ..app.builtin_tools.orders import (
    LOCK_TIMEOUT_SECONDS,
    MAX_REFUND_CENTS,
    ORDER_ID_PATTERN,
    SAMPLE_ORDERS,
    OrderStore,
    check_order_id,
    lookup_order_tool,
    money,
    refund_order_tool,
)

moved(__name__, "agent_contract.app.builtin_tools.orders")

__all__ = [
    "LOCK_TIMEOUT_SECONDS",
    "MAX_REFUND_CENTS",
    "ORDER_ID_PATTERN",
    "SAMPLE_ORDERS",
    "OrderStore",
    "check_order_id",
    "lookup_order_tool",
    "money",
    "refund_order_tool",
]
