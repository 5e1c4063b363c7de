"""Checkpoints that are authenticated and read with an explicit allowlist of types.

LangGraph's default serializer imports and calls whatever a stored row names: a
checkpoint row edited to hold a msgpack extension naming ``("os", "system", ...)`` ran
that command on the next resume. Its strict mode does not raise: it silently hands back
the raw payload in place of a blocked type. So every value a checkpointer of this
binding stores goes through :class:`SealedSerializer`:

1. **Encrypted and authenticated.** ``dumps_typed`` encrypts the payload
   (:func:`agent_contract.sealing.encrypt`, the ``checkpoints-cipher/v1`` sub-key), so
   no value of the graph state (a secret in the input, a pending write's arguments) is
   stored as it is, prefixes the row type with ``sealed2:`` and the ciphertext with an
   HMAC-SHA256 of the type and ciphertext (keyed with the data folder's
   ``checkpoints/v1`` sub-key). ``loads_typed`` refuses any row without a valid tag
   (a forged or edited row, an unauthenticated row of an older version) before it
   decrypts or decodes a byte; a row tagged ``hmac1:`` (authenticated, not encrypted:
   what only a holder of the key can write) is read as well.
2. **Allowlisted.** A ``msgpack`` payload is walked first, and every extension it holds
   must name a type in :data:`ALLOWED_TYPES` (the message classes, ``Send``,
   ``Interrupt``, ``Command``, datetimes, ...: an explicit list here, joined by
   LangGraph's own ``SAFE_MSGPACK_TYPES`` where the installed release has one) or a
   method in :data:`ALLOWED_METHODS`; anything else (another module, pickle, numpy, a
   pydantic v1 class) is a :class:`~agent_contract.errors.CheckpointError` and nothing
   is imported or called. Only ``null``, ``bytes``, ``bytearray`` and ``msgpack`` rows
   are accepted.
3. **Decoded strictly**, by ``JsonPlusSerializer(allowed_msgpack_modules=None)`` where the
   installed ``langgraph-checkpoint`` takes that argument (older releases, down to the
   supported floor, do not: there the pre-scan of step 2 is the guard, and it runs on
   every release alike).

A value's tag does not say where the row sits (its thread, its checkpoint, or whether a
newer row was deleted): the row columns and the metadata are plain. So when a run pauses,
:func:`seal_paused` seals the thread's newest checkpoint row and its pending writes, and
the seal travels in the run's own (authenticated) snapshot; :func:`check_paused` refuses
a resume when that row is gone or changed, a write sealed with it is gone or changed, or
the checkpoint has moved on where it could not have.

Until a resume records its decisions, nothing may have moved: the thread's newest
checkpoint must be the sealed one and its writes exactly the sealed ones (a checkpoint
or a write added under it, such as another run's sealed row grafted onto the thread, is
refused before anything runs, and the decision is not used up). Once a resume has
recorded its decisions on the seal (the stored snapshot then says so, under
:data:`RESUMED_KEY`), a crash may have left the graph further on: then newer checkpoints
descending from the sealed one and further writes on it are expected, and the resume
goes on from them under the decisions already recorded.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Mapping
from typing import Any, Final

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agent_contract.errors import CheckpointError
from agent_contract.sealing import decrypt, encrypt, seal, subkey, verify

__all__ = [
    "ALLOWED_METHODS",
    "ALLOWED_TYPES",
    "CHECKPOINTS_CIPHER_LABEL",
    "CHECKPOINTS_LABEL",
    "RESUMED_KEY",
    "SEAL_KEY",
    "SealedSerializer",
    "check_paused",
    "seal_paused",
]

CHECKPOINTS_LABEL: Final = "checkpoints/v1"
"""The sub-key label checkpoint values and seals are keyed with."""
CHECKPOINTS_CIPHER_LABEL: Final = "checkpoints-cipher/v1"
"""The sub-key label checkpoint values are encrypted with."""
SEAL_KEY: Final = "checkpoint_seal"
"""The key of the paused checkpoint's seal in a run snapshot."""
RESUMED_KEY: Final = "checkpoint_resumed"
"""The key, in a run snapshot, that says a resume recorded its decisions on the seal (so
the graph may have moved past the sealed checkpoint before a crash)."""
_MESSAGES: Final = ("Human", "AI", "System", "Chat", "Tool", "Function")
_OWN_TYPES: Final[frozenset[tuple[str, ...]]] = frozenset(
    {
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "deque"),
        ("zoneinfo", "ZoneInfo"),
        ("langchain_core.messages.base", "BaseMessage"),
        ("langchain_core.messages.base", "BaseMessageChunk"),
        ("langchain_core.messages.modifier", "RemoveMessage"),
        *(
            (f"langchain_core.messages.{kind.lower()}", f"{kind}Message{chunk}")
            for kind in _MESSAGES
            for chunk in ("", "Chunk")
        ),
        ("langgraph.types", "Send"),
        ("langgraph.types", "Interrupt"),
        ("langgraph.types", "Command"),
        ("langgraph.types", "Overwrite"),
    }
)


def _langgraph_safe() -> tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    """LangGraph's own safe types and methods, where the installed release has them."""
    try:
        from langgraph.checkpoint.serde import _msgpack
    except ImportError:  # older langgraph-checkpoint: the explicit list alone
        return frozenset(), frozenset()
    types: Any = getattr(_msgpack, "SAFE_MSGPACK_TYPES", frozenset())
    methods: Any = getattr(_msgpack, "SAFE_MSGPACK_METHODS", frozenset())
    return frozenset(map(tuple, types)), frozenset(map(tuple, methods))


ALLOWED_TYPES: Final[frozenset[tuple[str, ...]]] = _OWN_TYPES | _langgraph_safe()[0]
"""The ``(module, name)`` types a checkpoint may construct: the explicit list above
joined by LangGraph's ``SAFE_MSGPACK_TYPES`` when the installed release has it."""
ALLOWED_METHODS: Final[frozenset[tuple[str, ...]]] = (
    frozenset({("datetime", "datetime", "fromisoformat")}) | _langgraph_safe()[1]
)
"""The ``(module, name, method)`` calls a checkpoint may make."""
_ROW_TYPES: Final = frozenset({"null", "bytes", "bytearray", "msgpack"})
_PREFIX: Final = "hmac1:"
_ENCRYPTED: Final = "sealed2:"
_TAG_BYTES: Final = 32
_CONSTRUCTORS: Final = frozenset({0, 1, 2, 5})
"""Extension codes that construct a named type (single arg, args, kwargs, pydantic v2)."""
_METHOD: Final = 3
_DELTA: Final = 7


def _tag(key: bytes, typ: str, payload: bytes) -> bytes:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(typ.encode("utf-8") + b"\x00")
    mac.update(payload)
    return mac.digest()


def _scanner(refused: list[str]) -> Any:
    """An ormsgpack ``ext_hook`` for the pre-scan that raises on anything not allowed and
    notes why in ``refused`` (ormsgpack replaces an ``ext_hook``'s exception with its
    own, so the reason travels here)."""

    def scan(code: int, data: bytes) -> None:
        inner = ormsgpack.unpackb(data, ext_hook=scan, option=ormsgpack.OPT_NON_STR_KEYS)
        if code == _DELTA:
            return None
        named = tuple(inner[:2]) if isinstance(inner, list | tuple) and len(inner) >= 2 else ()
        if code in _CONSTRUCTORS and named in ALLOWED_TYPES:
            return None
        method = isinstance(inner, list | tuple) and len(inner) >= 4
        if code == _METHOD and method and (inner[0], inner[1], inner[3]) in ALLOWED_METHODS:
            return None
        refused.append(f"extension {code} naming {named or '?'}")
        raise ValueError("refused")

    return scan


def _strict_serializer() -> JsonPlusSerializer:
    """LangGraph's serializer in strict mode (no type beyond its safe set), on a release
    that has it; on an older one, the plain serializer (the pre-scan guards it)."""
    try:
        return JsonPlusSerializer(allowed_msgpack_modules=None)
    except TypeError:  # langgraph-checkpoint without allowed_msgpack_modules
        return JsonPlusSerializer()


class SealedSerializer(SerializerProtocol):
    """The checkpoint serializer described in the module doc.

    Args:
        key: the data folder's key (the ``checkpoints/v1`` sub-key is derived here).

    Raises:
        CheckpointError: on load, a row that fails authentication or names a type
            outside the allowlist.
    """

    encrypts_values: Final = True
    """Every value is stored encrypted (the harness lets a secret reach such a
    checkpointer as it is: see :mod:`.harness`)."""

    def __init__(self, key: bytes) -> None:
        self._key = subkey(key, CHECKPOINTS_LABEL)
        self._cipher = subkey(key, CHECKPOINTS_CIPHER_LABEL)
        self._inner = _strict_serializer()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """``(sealed2:<type>, tag + encrypted payload)``."""
        typ, payload = self._inner.dumps_typed(obj)
        hidden = encrypt(self._cipher, payload)
        return _ENCRYPTED + typ, _tag(self._key, _ENCRYPTED + typ, hidden) + hidden

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Check the tag, then the types, then decode.

        Raises:
            CheckpointError: see the class doc.
        """
        typ, blob = data
        encrypted = isinstance(typ, str) and typ.startswith(_ENCRYPTED)
        if (
            not isinstance(typ, str)
            or not (encrypted or typ.startswith(_PREFIX))
            or not isinstance(blob, bytes | bytearray)
        ):
            raise CheckpointError(
                f"a checkpoint row (type {typ!r}) is not authenticated: written outside "
                "agent-contract, or by an older version; it is refused"
            )
        prefix = _ENCRYPTED if encrypted else _PREFIX
        inner, tag, payload = (
            typ[len(prefix) :],
            bytes(blob[:_TAG_BYTES]),
            bytes(blob[_TAG_BYTES:]),
        )
        tagged = typ if encrypted else inner
        if not hmac.compare_digest(tag, _tag(self._key, tagged, payload)):
            raise CheckpointError(
                "a checkpoint row failed authentication: the checkpoint file was changed "
                "outside agent-contract (or sealed with another key); it is refused"
            )
        if inner not in _ROW_TYPES:
            raise CheckpointError(f"a checkpoint row of type {inner!r} is not accepted")
        if encrypted:
            try:
                payload = decrypt(self._cipher, payload)
            except ValueError as exc:
                raise CheckpointError(f"a checkpoint row does not decrypt: {exc}") from None
        if inner == "msgpack":
            refused: list[str] = []
            try:
                ormsgpack.unpackb(
                    payload, ext_hook=_scanner(refused), option=ormsgpack.OPT_NON_STR_KEYS
                )
            except (ValueError, TypeError) as exc:
                why = refused[0] if refused else f"undecodable ({exc})"
                raise CheckpointError(
                    f"a checkpoint row names a type outside the allowlist: {why}; nothing "
                    "was imported or called"
                ) from None
        return self._inner.loads_typed((inner, payload))


# -- the paused checkpoint's seal ---------------------------------------------------------


def _row_digest(row: tuple[Any, ...]) -> str:
    digest = hashlib.sha256()
    for value in row:
        data = value if isinstance(value, bytes) else repr(value).encode("utf-8")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _row(
    conn: sqlite3.Connection, thread_id: str, checkpoint_id: str | None = None
) -> tuple[Any, ...] | None:
    """Thread ``thread_id``'s checkpoint row ``checkpoint_id`` (None: its newest)."""
    select = (
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
    )
    if checkpoint_id is None:
        cursor = conn.execute(select + "ORDER BY checkpoint_id DESC LIMIT 1", (thread_id,))
    else:
        cursor = conn.execute(select + "AND checkpoint_id = ?", (thread_id, checkpoint_id))
    row = cursor.fetchone()
    return tuple(row) if row is not None else None


def _writes(conn: sqlite3.Connection, thread_id: str, checkpoint_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
        "FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? "
        "ORDER BY task_id, idx",
        (thread_id, checkpoint_id),
    ).fetchall()
    return sorted(_row_digest(tuple(r)) for r in rows)


def seal_paused(conn: sqlite3.Connection, thread_id: str, key: bytes) -> dict[str, Any]:
    """The seal of ``thread_id``'s newest checkpoint and its pending writes, to store in
    the run's snapshot under :data:`SEAL_KEY`.

    Raises:
        CheckpointError: the thread has no checkpoint.
    """
    row = _row(conn, thread_id)
    if row is None:
        raise CheckpointError(f"no LangGraph checkpoint for thread {thread_id!r} to seal")
    checkpoint_id = str(row[2])
    writes = _writes(conn, thread_id, checkpoint_id)
    digest = _row_digest(row)
    mac = seal(subkey(key, CHECKPOINTS_LABEL), "paused", thread_id, checkpoint_id, digest, *writes)
    return {"checkpoint_id": checkpoint_id, "row": digest, "writes": writes, "mac": mac}


def check_paused(
    conn: sqlite3.Connection, thread_id: str, sealed: Any, key: bytes, *, resumed: bool = False
) -> None:
    """Refuse a resume whose paused checkpoint is not the one sealed (see the module doc).

    Args:
        resumed: a resume already recorded its decisions on this seal (the stored
            snapshot's :data:`RESUMED_KEY`): newer checkpoints descending from the sealed
            one, and further writes on it, are a crash's leftovers, not an edit. Without
            it the thread must be exactly as sealed.

    Raises:
        CheckpointError: no seal, or the sealed row or a sealed write is gone or changed;
            without ``resumed``, a write or a checkpoint added after the seal; with it,
            a newest checkpoint that does not descend from the sealed one.
    """
    if not isinstance(sealed, Mapping):
        raise CheckpointError(
            f"the stored run {thread_id!r} carries no checkpoint seal; it is refused"
        )
    checkpoint_id = str(sealed.get("checkpoint_id", ""))
    writes = [str(w) for w in sealed.get("writes") or ()]
    digest = str(sealed.get("row", ""))
    k = subkey(key, CHECKPOINTS_LABEL)
    if not verify(k, sealed.get("mac"), "paused", thread_id, checkpoint_id, digest, *writes):
        raise CheckpointError(f"the checkpoint seal of run {thread_id!r} is not valid")
    row = _row(conn, thread_id, checkpoint_id)
    if row is None or _row_digest(row) != digest:
        raise CheckpointError(
            f"the paused checkpoint of run {thread_id!r} is gone or was changed; the run is refused"
        )
    present = _writes(conn, thread_id, checkpoint_id)
    if not set(writes) <= set(present):
        raise CheckpointError(
            f"a pending write of run {thread_id!r}'s paused checkpoint is gone or was "
            "changed; the run is refused"
        )
    newest = _row(conn, thread_id)
    if not resumed:
        added = len(present) - len(writes)
        if added:
            raise CheckpointError(
                f"the paused checkpoint of run {thread_id!r} holds {added} pending write(s) "
                "that were not there when it paused (added outside agent-contract, for "
                "example another run's rows grafted onto it); nothing was decided or run, "
                "and the run is refused"
            )
        if newest is None or str(newest[2]) != checkpoint_id:
            found = str(newest[2]) if newest is not None else "none"
            raise CheckpointError(
                f"run {thread_id!r} has a checkpoint ({found}) newer than the one it paused "
                f"on ({checkpoint_id}), though no resume has recorded a decision on it "
                "(added outside agent-contract, for example another run's checkpoint "
                "grafted under it); nothing was decided or run, and the run is refused"
            )
        return
    hops = 0
    current = newest
    while current is not None and str(current[2]) != checkpoint_id and hops < 10_000:
        parent = current[3]
        current = _row(conn, thread_id, str(parent)) if parent else None
        hops += 1
    if current is None:
        raise CheckpointError(
            f"the newest checkpoint of run {thread_id!r} does not descend from the paused "
            "one; the run is refused"
        )
