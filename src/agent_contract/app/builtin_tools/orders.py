"""Order tools on a real store (SQLite or PostgreSQL, :mod:`agent_contract.stores`): ``lookup_order`` (read) and ``refund_order`` (write).

The contract, written before the code:

**Order ids.** ``^[A-Z]-[0-9]{4}$``: one capital letter, a dash, four digits (exactly 6
characters). The JSON Schema rejects anything else as ``invalid_arguments`` before any
lookup, and the handlers check again; an id is only ever a bound SQL parameter.

**Identity.** The caller comes from the run's context (``ToolContext.caller``, set by
the application), never from arguments the model wrote: no tool takes a user
argument. A run without a caller gets ``unauthorized``.

**Another user's order is ``not_found``, not ``unauthorized``.** A caller sees only
their own orders. Answering ``unauthorized`` for an order that exists but belongs to
someone else would tell a prober which ids exist; so a foreign order and a missing
order give the same ``not_found`` with the same message. ``unauthorized`` is kept for
a missing identity, which leaks nothing.

**What the model sees.** ``order_id``, ``status``, ``placed_on``, ``items`` (names and
quantities), ``total``, ``refunded`` and ``refundable`` (as ``"49.99 EUR"`` strings),
and ``refundable_cents`` (an int, so a refund can name an exact amount).
**Application-only** (the artifact, never shown to the model or the trace): the
owner, the customer e-mail, the payment reference and the internal note.

**Errors.** ``invalid_arguments`` (bad id, bad amount, refund above what is
refundable), ``unauthorized`` (no caller), ``not_found`` (missing or foreign order),
``transient`` (the store is locked or busy: retry later).

**Size limits.** One lookup result is at most 1,500 characters (a refund result 1,000);
the whole trace is capped by the run's ``Budget.max_trace_bytes``.

**Refunds** (a write): ``preview`` reads what would change; the runtime asks a human to
approve; the write runs in one transaction keyed by the runtime's idempotency key
(``refunds.idempotency_key`` is the primary key), so a retry or a resume applies it at
most once: SQLite's write lock covers the file, PostgreSQL's advisory lock
``order:<order id>`` serializes the read-check-write of one order, and a concurrent
insert of the same key that still gets through is a unique violation, answered with the
refund already applied; ``verify`` reads the refund back by that key.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ...datafolder import BUSY_TIMEOUT_SECONDS, DataFolderError
from ...errors import (
    InvalidArgumentsError,
    NotFoundError,
    ToolError,
    TransientError,
    UnauthorizedError,
)
from ...results import ToolOutput
from ...stores import Connection, Cursor, Database, Store
from ...tools import ToolContext, ToolSpec
from .order_data import SAMPLE_ORDERS, create_tables, has_tables

__all__ = [
    "LOCK_TIMEOUT_SECONDS",
    "MAX_REFUND_CENTS",
    "ORDER_ID_PATTERN",
    "SAMPLE_ORDERS",
    "OrderStore",
    "StoreUnusableError",
    "check_order_id",
    "lookup_order_tool",
    "money",
    "refund_order_tool",
]

ORDER_ID_PATTERN: Final = re.compile(r"^[A-Z]-[0-9]{4}$")
MAX_REFUND_CENTS: Final = 1_000_000
LOCK_TIMEOUT_SECONDS: Final = BUSY_TIMEOUT_SECONDS
"""How long a store call waits for another process's lock before ``transient``."""
_CORRUPT: Final = (
    "the order store is corrupt and cannot be read; this is not a temporary failure "
    "(retrying will not help)"
)


class StoreUnusableError(ToolError):
    """The order store is missing, corrupt, read-only or unsafe: kind ``tool_error``, not
    ``transient`` (retrying later cannot help)."""


_UNUSABLE: Final = {
    "corrupt": _CORRUPT,
    "readonly": "the order store is read-only; nothing can be written (retrying will not help)",
    "missing": "the order store is missing; it is not re-created here",
    "unsafe": "the order store is not a safe file (a symlink, or open to other users); refused",
}


def _unusable(exc: DataFolderError) -> ToolError:
    """The tool error for a store failure: ``transient`` when it is locked past the
    timeout, else :class:`StoreUnusableError` named for its reason (the model reads
    the message, so it names the reason, not the path; the path is in ``details``)."""
    if exc.reason in ("locked", "unavailable"):
        return TransientError("the order store is busy or unreachable; retry later")
    message = _UNUSABLE.get(exc.reason, "the order store cannot be used")
    return StoreUnusableError(message, details={"path": exc.path, "reason": exc.reason})


def money(cents: int, currency: str) -> str:
    """``4999, "EUR"`` -> ``"49.99 EUR"``."""
    return f"{cents // 100}.{cents % 100:02d} {currency}"


def check_order_id(order_id: Any) -> str:
    """Return ``order_id`` if it has the documented syntax.

    Raises:
        InvalidArgumentsError: otherwise (the lookup never happens).
    """
    if not isinstance(order_id, str) or not ORDER_ID_PATTERN.match(order_id):
        raise InvalidArgumentsError(
            "order_id must look like A-1001 (a capital letter, a dash, four digits)"
        )
    return order_id


def _caller(context: ToolContext) -> str:
    if not context.caller:
        raise UnauthorizedError("no authenticated caller for this run; order tools need one")
    return context.caller


_Row = dict[str, Any]
"""A row as the order store reads it: ``{column: value}`` (on both stores)."""


def _row(cursor: Cursor) -> _Row | None:
    """The next row of ``cursor`` as a dict, or ``None``."""
    values = cursor.fetchone()
    if values is None:
        return None
    names = [column[0] for column in getattr(cursor, "description", None) or ()]
    return dict(zip(names, values, strict=True))


class OrderStore:
    """The order database: a private SQLite file in the data folder, or the ``orders``
    and ``refunds`` tables of a PostgreSQL store.

    Args:
        location: the store's :class:`~agent_contract.stores.Database`
            (``Store.database("orders")``), or the path of a SQLite file
            (``orders.sqlite3``).
        create: create a missing store, with the sample orders (an explicit first
            ``run``, ``agent-contract init``); ``False`` (``approve``, ``resume``) never
            creates one: a missing store is an error, and the write never goes to a
            fresh copy.
    """

    def __init__(self, location: Database | str | os.PathLike[str], *, create: bool = True) -> None:
        if isinstance(location, Database):
            self.database = location
        else:
            path = Path(location)
            name = path.name.removesuffix(".sqlite3")
            if name == path.name:
                raise ValueError(f"an order store file is named NAME.sqlite3, not {str(path)!r}")
            self.database = Store.sqlite(path.parent).database(name)
        self.create = create
        self._ready = False

    @property
    def path(self) -> Path:
        """The SQLite file (``orders.sqlite3``).

        Raises:
            ConfigurationError: the store is PostgreSQL (no file).
        """
        return self.database.store.sqlite_file(self.database.name)

    def ensure(self) -> None:
        """Create the store, the tables and the sample data on first use (if allowed);
        each tool call does it first, and a caller may do it earlier (outside the tools'
        time limits: a new PostgreSQL database takes a few connections).

        Raises:
            StoreUnusableError: the store is missing (and may not be created), unsafe,
                corrupt or cannot be written.
            TransientError: it is locked past the timeout, or the server is unreachable.
        """
        if self._ready:
            return
        dialect = self.database.dialect
        try:
            ready = False
            # SQLite: the file is the store (a file without tables gets them, and no
            # sample orders); PostgreSQL: the tables are.
            existed = self.database.exists()
            if existed:
                with self._transaction(write=False, create=False) as db:
                    ready = has_tables(db, dialect)
                existed = ready or dialect == "sqlite"
            if not existed and not self.create:
                raise StoreUnusableError(
                    "the order store is missing; it is not re-created here (it held the "
                    "orders this run saw)",
                    details={"path": self.database.where},
                )
            if not ready:  # a crowd reads; only a new store writes
                with self._transaction(write=True, lock="orders:schema", create=True) as db:
                    create_tables(db, samples=not existed, dialect=dialect)
        except DataFolderError as exc:
            raise _unusable(exc) from exc
        self._ready = True

    @contextmanager
    def _transaction(
        self, *, write: bool, lock: str | None = None, create: bool = False
    ) -> Iterator[Connection]:
        """One transaction on the store; a driver error inside it becomes a
        :class:`DataFolderError` (reason ``"other"``), raised from it."""
        errors = self.database.errors
        try:
            with self.database.transaction(write=write, lock=lock, create=create) as db:
                yield db
        except DataFolderError:
            raise
        except errors as exc:
            raise DataFolderError(
                f"order store {self.database.where}: {exc}",
                path=self.database.where,
                reason="other",
            ) from exc

    @contextmanager
    def _connect(self, *, write: bool = False, lock: str | None = None) -> Iterator[Connection]:
        """One transaction (``BEGIN IMMEDIATE`` when it writes on SQLite; under the
        advisory lock ``lock`` on PostgreSQL), its failures named: busy past the timeout
        (or an unreachable server) is ``transient``; a corrupt or unusable store is
        not."""
        self.ensure()
        try:
            with self._transaction(write=write, lock=lock) as db:
                yield db
        except DataFolderError as exc:
            raise _unusable(exc) from exc

    def _own_order(self, db: Connection, caller: str, order_id: str) -> _Row:
        row = _row(db.execute("SELECT * FROM orders WHERE order_id = ?", (order_id,)))
        if row is None or row["owner"] != caller:
            raise NotFoundError(f"order {order_id} not found")
        return row

    def _read_own_order(self, context: ToolContext, order_id: str) -> _Row:
        """The caller's order ``order_id``, read in a read-only transaction (the checks
        and errors of :meth:`lookup`)."""
        check_order_id(order_id)
        caller = _caller(context)
        with self._connect() as db:
            return self._own_order(db, caller, order_id)

    def lookup(self, context: ToolContext, order_id: str) -> ToolOutput:
        """The caller's order: model-visible fields as the value, the rest as artifact.

        Raises:
            InvalidArgumentsError: a malformed order id.
            UnauthorizedError: no caller in the run's context.
            NotFoundError: no such order, or another customer's.
            TransientError: the order store is busy or unavailable.
        """
        row = self._read_own_order(context, order_id)
        return ToolOutput(value=_visible(row), artifact=_private(row))

    def preview_refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any]:
        """What a refund would change; changes nothing.

        Raises:
            InvalidArgumentsError: a malformed order id, or an amount above what is
                refundable.
            UnauthorizedError: no caller in the run's context.
            NotFoundError: no such order, or another customer's.
            TransientError: the order store is busy or unavailable.
        """
        row = self._read_own_order(context, order_id)
        return _refund_plan(row, amount_cents, reason)

    def refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any]:
        """Apply the refund once per idempotency key, in one transaction.

        A second call with the same key returns the first refund unchanged.

        Raises:
            InvalidArgumentsError: a malformed order id or amount, or no idempotency key
                in the context.
            UnauthorizedError: no caller in the run's context.
            NotFoundError: no such order, or another customer's.
            TransientError: the order store is busy or unavailable.
        """
        check_order_id(order_id)
        caller = _caller(context)
        key = context.idempotency_key
        if not key:
            raise InvalidArgumentsError("a refund needs the runtime's idempotency key")
        try:
            with self._connect(write=True, lock=f"order:{order_id}") as db:
                existing = _refund_by_key(db, key)
                if existing is not None:
                    return _refund_record(existing, replayed=True)
                row = self._own_order(db, caller, order_id)
                plan = _refund_plan(row, amount_cents, reason)
                db.execute(
                    "INSERT INTO refunds (idempotency_key, order_id, amount_cents, reason, "
                    "caller, run_id, tool_call_id, created_at) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        key,
                        order_id,
                        amount_cents,
                        reason,
                        caller,
                        context.run_id,
                        context.tool_call_id,
                        time.time(),
                    ),
                )
                db.execute(
                    "UPDATE orders SET refunded_cents = refunded_cents + ?, status = ? "
                    "WHERE order_id = ?",
                    (amount_cents, plan["status_after"], order_id),
                )
                created = _refund_by_key(db, key)
        except ToolError as exc:
            # A concurrent insert of the same key won (this transaction rolled back as a
            # whole): that refund is the one applied; answer with it.
            if not Database.unique_violation(exc):
                raise
            with self._connect() as db:
                created = _refund_by_key(db, key)
            if created is None:  # the winner's refund is committed: it is there
                raise TransientError("the refund's outcome is unknown; retry later") from exc
            return _refund_record(created, replayed=True)
        if created is None:  # inserted just above, in the same transaction
            raise TransientError("the refund's outcome is unknown; retry later")
        return _refund_record(created, replayed=False)

    def verify_refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any] | None:
        """The refund written with ``context.idempotency_key``, or ``None``.

        Raises:
            TransientError: the store is busy (the outcome stays unknown).
        """
        key = context.idempotency_key
        if not key:
            return None
        with self._connect() as db:
            row = _refund_by_key(db, key)
        return None if row is None else _refund_record(row, replayed=True)

    def refund_count(self, order_id: str | None = None) -> int:
        """How many refund rows exist (for one order, or all): the write count."""
        with self._connect() as db:
            if order_id is None:
                return int(db.execute("SELECT COUNT(*) FROM refunds").fetchone()[0])
            query = "SELECT COUNT(*) FROM refunds WHERE order_id = ?"
            return int(db.execute(query, (order_id,)).fetchone()[0])


def _refund_by_key(db: Connection, key: str) -> _Row | None:
    """The refund row written with idempotency ``key``, or ``None``."""
    return _row(db.execute("SELECT * FROM refunds WHERE idempotency_key = ?", (key,)))


def _visible(row: _Row) -> dict[str, Any]:
    currency = row["currency"]
    return {
        "order_id": row["order_id"],
        "status": row["status"],
        "placed_on": row["placed_on"],
        "items": [{"name": n, "quantity": q} for n, q in json.loads(row["items"])],
        "total": money(row["total_cents"], currency),
        "refunded": money(row["refunded_cents"], currency),
        "refundable_cents": row["total_cents"] - row["refunded_cents"],
        "refundable": money(row["total_cents"] - row["refunded_cents"], currency),
    }


def _private(row: _Row) -> dict[str, Any]:
    return {
        "owner": row["owner"],
        "email": row["email"],
        "payment_ref": row["payment_ref"],
        "note": row["note"],
    }


def _refund_plan(row: _Row, amount_cents: int, reason: str) -> dict[str, Any]:
    if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or amount_cents < 1:
        raise InvalidArgumentsError("amount_cents must be a positive whole number of cents")
    refundable = row["total_cents"] - row["refunded_cents"]
    currency = row["currency"]
    if amount_cents > refundable:
        raise InvalidArgumentsError(
            f"refund of {money(amount_cents, currency)} exceeds the refundable "
            f"{money(refundable, currency)}"
        )
    after = row["refunded_cents"] + amount_cents
    return {
        "order_id": row["order_id"],
        "refund": money(amount_cents, currency),
        "reason": reason,
        "refunded_before": money(row["refunded_cents"], currency),
        "refunded_after": money(after, currency),
        "status_before": row["status"],
        "status_after": "refunded" if after == row["total_cents"] else "partially_refunded",
    }


def _refund_record(row: _Row, *, replayed: bool) -> dict[str, Any]:
    return {
        "refund_id": row["idempotency_key"],
        "order_id": row["order_id"],
        "amount_cents": row["amount_cents"],
        "reason": row["reason"],
        "replayed": replayed,
    }


_ORDER_ID_SCHEMA: Final = {
    "type": "string",
    "pattern": ORDER_ID_PATTERN.pattern,
    "minLength": 6,
    "maxLength": 6,
    "description": "An order id like A-1001.",
}


def lookup_order_tool(store: OrderStore) -> ToolSpec:
    """``lookup_order(order_id)``: the caller's own order (read-only). See module doc."""
    return ToolSpec(
        name="lookup_order",
        description="Look up one of the current customer's orders by id (e.g. A-1001).",
        parameters={
            "type": "object",
            "properties": {"order_id": _ORDER_ID_SCHEMA},
            "required": ["order_id"],
        },
        handler=store.lookup,
        needs_context=True,
        timeout_seconds=2.0,
        max_result_chars=1_500,
    )


def refund_order_tool(store: OrderStore) -> ToolSpec:
    """``refund_order(order_id, amount_cents, reason)``: a write; needs approval."""
    return ToolSpec(
        name="refund_order",
        description=(
            "Refund part or all of one of the current customer's orders. Needs human "
            "approval; amount in cents."
        ),
        parameters={
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID_SCHEMA,
                "amount_cents": {"type": "integer", "minimum": 1, "maximum": MAX_REFUND_CENTS},
                "reason": {"type": "string", "minLength": 1, "maxLength": 200},
            },
            "required": ["order_id", "amount_cents", "reason"],
        },
        handler=store.refund,
        effect="write",
        preview=store.preview_refund,
        verify=store.verify_refund,
        timeout_seconds=5.0,
        max_result_chars=1_000,
    )
