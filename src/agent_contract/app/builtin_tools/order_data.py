"""The order store's tables and sample data (see :mod:`agent_contract.app.builtin_tools.orders`)."""

from __future__ import annotations

import json
from typing import Any, Final

from ...stores import Connection, Dialect, table_names

__all__ = ["SAMPLE_ORDERS", "SCHEMA", "create_tables", "has_tables", "schema"]

SAMPLE_ORDERS: Final[tuple[dict[str, Any], ...]] = (
    {
        "order_id": "A-1001",
        "owner": "alice",
        "email": "alice@example.com",
        "status": "delivered",
        "placed_on": "2026-10-02",
        "items": [["Espresso grinder", 1]],
        "total_cents": 12900,
        "currency": "EUR",
        "payment_ref": "pay_7Q2X9",
        "note": "VIP customer",
    },
    {
        "order_id": "A-1002",
        "owner": "alice",
        "email": "alice@example.com",
        "status": "shipped",
        "placed_on": "2026-11-20",
        "items": [["Paper filters", 3], ["Scale", 1]],
        "total_cents": 4497,
        "currency": "EUR",
        "payment_ref": "pay_8R1Z3",
        "note": "",
    },
    {
        "order_id": "B-2001",
        "owner": "bob",
        "email": "bob@example.com",
        "status": "delivered",
        "placed_on": "2026-09-14",
        "items": [["Kettle", 1]],
        "total_cents": 5900,
        "currency": "EUR",
        "payment_ref": "pay_1K5M2",
        "note": "asked about warranty",
    },
    {
        "order_id": "C-3001",
        "owner": "carol",
        "email": "carol@example.com",
        "status": "processing",
        "placed_on": "2026-11-27",
        "items": [["Beans 1kg", 2]],
        "total_cents": 3800,
        "currency": "EUR",
        "payment_ref": "pay_0C4N8",
        "note": "",
    },
)
"""The orders a new store starts with: two of alice's, one of bob's, one of carol's."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS orders (
    order_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    email TEXT NOT NULL,
    status TEXT NOT NULL,
    placed_on TEXT NOT NULL,
    items TEXT NOT NULL,
    total_cents INTEGER NOT NULL,
    refunded_cents INTEGER NOT NULL DEFAULT 0,
    currency TEXT NOT NULL,
    payment_ref TEXT NOT NULL,
    note TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    idempotency_key TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders(order_id),
    amount_cents INTEGER NOT NULL,
    reason TEXT NOT NULL,
    caller TEXT NOT NULL,
    run_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
"""The two tables: ``orders`` and ``refunds`` (keyed by the idempotency key), as SQLite
reads them (PostgreSQL: ``created_at`` is ``DOUBLE PRECISION``, epoch seconds; its
``REAL`` is 4 bytes)."""


def schema(dialect: Dialect) -> str:
    """:data:`SCHEMA` for ``dialect`` (``"sqlite"`` or ``"postgresql"``)."""
    if dialect == "sqlite":
        return SCHEMA
    return SCHEMA.replace("created_at REAL", "created_at DOUBLE PRECISION")


def create_tables(db: Connection, *, samples: bool, dialect: Dialect = "sqlite") -> None:
    """Create the tables if missing and, when ``samples`` and ``orders`` is empty, add
    :data:`SAMPLE_ORDERS` (``db`` is inside a write transaction)."""
    for statement in schema(dialect).split(";"):
        if statement.strip():
            db.execute(statement)
    if samples and db.execute("SELECT COUNT(*) FROM orders").fetchone()[0] == 0:
        db.executemany(
            "INSERT INTO orders (order_id, owner, email, status, placed_on, items, "
            "total_cents, currency, payment_ref, note) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    o["order_id"],
                    o["owner"],
                    o["email"],
                    o["status"],
                    o["placed_on"],
                    json.dumps(o["items"]),
                    o["total_cents"],
                    o["currency"],
                    o["payment_ref"],
                    o["note"],
                )
                for o in SAMPLE_ORDERS
            ],
        )


def has_tables(db: Connection, dialect: Dialect = "sqlite") -> bool:
    """Whether the store already has its two tables (a read: no write lock taken)."""
    return {"orders", "refunds"} <= table_names(db, dialect)
