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
3. **Decoded strictly**, by ``JsonPlusSerializer(allowed_msgpack_modules=...)`` (LangGraph's
   own allowlist: its safe types and the team's, below) where the installed
   ``langgraph-checkpoint`` takes that argument (older releases, down to the supported
   floor, do not: there the pre-scan of step 2 is the guard, and it runs on every release
   alike).

**A team's own types.** ``SealedSerializer(key, allowed_types=[Order, "myapp.models.Status"])``
(or ``sqlite_checkpointer(path, allowed_types=...)``) names the team's classes a checkpoint
may hold besides the list above (:func:`allowed_type_keys` says which are accepted). They
join the pre-scan's list and LangGraph's own ``allowed_msgpack_modules``. A type not named
is refused on the way in too, so no row is written that could not be read back:
:func:`check_state_types` before the graph runs, :func:`check_update_types` for a tool's
``Command`` update, and ``dumps_typed`` for anything else (the three cases and their
errors: ``docs/APPROVALS.md``, "Your own types in the LangChain checkpointer").

A value's tag does not say where the row sits (its thread, its checkpoint, or whether a
newer row was deleted): the row columns and the metadata are plain. So when a run pauses,
:func:`seal_paused` seals the thread's newest checkpoint row and its pending writes (on
PostgreSQL the ``checkpoints`` row, whose JSONB is plain, the ``checkpoint_blobs`` rows
its channel versions name, and its ``checkpoint_writes``: everything a resume reads; one
set of rules, a row reader per store), and
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

import dataclasses
import enum
import hashlib
import hmac
import importlib
import sqlite3
import typing
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Literal, Protocol, TypeVar

import ormsgpack
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.sealing import decrypt, encrypt, seal, subkey, verify

__all__ = [
    "ALLOWED_METHODS",
    "ALLOWED_TYPES",
    "CHECKPOINTS_CIPHER_LABEL",
    "CHECKPOINTS_LABEL",
    "RESUMED_KEY",
    "SEAL_KEY",
    "SealedSerializer",
    "TypeKey",
    "TypeNotAllowedError",
    "allowed_type_keys",
    "check_paused",
    "check_state_types",
    "check_update_types",
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


TypeKey = tuple[str, ...]
"""A type as LangGraph names it in a checkpoint: ``(module, class name)``."""


class TypeNotAllowedError(CheckpointError):
    """A value the sealed checkpointer would have to store, or a state key declared to
    hold one, names a type outside its allowlist. Raised before anything runs (by
    :func:`check_state_types`) or instead of writing the row (by ``dumps_typed``), so
    no thread is left holding a row that cannot be read back.

    Attributes:
        types: each refused type as ``"module.Name"``, sorted.
        keys: the graph state keys declared to hold them (empty when found in a value).
    """

    def __init__(self, message: str, *, types: Iterable[str], keys: Iterable[str] = ()) -> None:
        self.types = tuple(sorted(set(types)))
        self.keys = tuple(sorted(set(keys)))
        super().__init__(message)


def _how_to_allow(names: Iterable[str]) -> str:
    listed = ", ".join(repr(n) for n in sorted(set(names)))
    return (
        "name the team's own classes: "
        f"sqlite_checkpointer(path, allowed_types=[{listed}]) (or async_sqlite_checkpointer, "
        "or SealedSerializer(key, allowed_types=[...])); each a class object or "
        '"module.Name", defined at module top level'
    )


def _dotted(key: TypeKey) -> str:
    return ".".join(str(part) for part in key[:2])


def _stored_by_name(cls: type) -> bool:
    """Whether LangGraph's encoder stores a value of ``cls`` as an extension naming its
    class (what a reader must construct): a pydantic model, a pydantic secret, a
    dataclass, a named tuple or an enum."""
    if issubclass(cls, enum.Enum) or dataclasses.is_dataclass(cls):
        return True
    return any(
        callable(getattr(cls, attr, None)) for attr in ("model_dump", "get_secret_value", "dict")
    ) or (issubclass(cls, tuple) and callable(getattr(cls, "_asdict", None)))


def _pydantic_v1(cls: type) -> bool:
    return not callable(getattr(cls, "model_dump", None)) and callable(getattr(cls, "dict", None))


def _resolve(name: str) -> Any:
    module, _, attr = name.rpartition(".")
    parts = name.split(".")
    if not module or "*" in name or not all(part.isidentifier() for part in parts):
        raise ConfigurationError(
            f"allowed_types entry {name!r} is not 'module.Name' (a class, no wildcard)"
        )
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"allowed_types entry {name!r} does not name a class at the top level of an "
            f"importable module: {exc}"
        ) from None
    return found


def allowed_type_keys(entries: Iterable[type | str]) -> frozenset[TypeKey]:
    """The ``(module, name)`` keys of a team's ``allowed_types`` entries.

    Args:
        entries: class objects or ``"module.Name"`` strings (a string is imported here).

    Returns:
        The keys, as LangGraph names the classes in a checkpoint.

    Raises:
        ConfigurationError: an entry is not a class, a wildcard, cannot be imported, is
            nested or local (LangGraph could not find it again by module and name), is a
            pydantic v1 model, or is not a type LangGraph stores by name (a pydantic v2
            model, a dataclass, an enum or a named tuple).
    """
    if isinstance(entries, str | type):
        raise ConfigurationError("allowed_types takes a list of classes or 'module.Name' strings")
    keys: set[TypeKey] = set()
    for entry in entries:
        cls = _resolve(entry) if isinstance(entry, str) else entry
        if not isinstance(cls, type):
            raise ConfigurationError(
                f"allowed_types entry {entry!r} is not a class (give the class or 'module.Name')"
            )
        label = f"{cls.__module__}.{cls.__qualname__}"
        if cls.__qualname__ != cls.__name__:
            raise ConfigurationError(
                f"allowed_types entry {label} is nested or local: LangGraph stores a value by "
                "module and class name and could not find it again; define it at the top "
                "level of a module"
            )
        if _pydantic_v1(cls):
            raise ConfigurationError(
                f"allowed_types entry {label} is a pydantic v1 model (or has a dict() method): "
                "LangGraph stores it in a form a sealed checkpoint does not read; use a "
                "pydantic v2 model"
            )
        if not _stored_by_name(cls):
            raise ConfigurationError(
                f"allowed_types entry {label} is not a type a checkpoint stores by name (a "
                "pydantic v2 model, a dataclass, an enum or a named tuple): nothing to allow"
            )
        keys.add((cls.__module__, cls.__name__))
    return frozenset(keys)


def _scanner(refused: list[tuple[int, TypeKey]], allowed: frozenset[TypeKey]) -> Any:
    """An ormsgpack ``ext_hook`` for the pre-scan that raises on anything not in
    ``allowed`` (or :data:`ALLOWED_METHODS`) and notes it in ``refused`` (ormsgpack
    replaces an ``ext_hook``'s exception with its own, so the reason travels here)."""

    def scan(code: int, data: bytes) -> None:
        inner = ormsgpack.unpackb(data, ext_hook=scan, option=ormsgpack.OPT_NON_STR_KEYS)
        if code == _DELTA:
            return None
        named = tuple(inner[:2]) if isinstance(inner, list | tuple) and len(inner) >= 2 else ()
        if code in _CONSTRUCTORS and named in allowed:
            return None
        method = isinstance(inner, list | tuple) and len(inner) >= 4
        if code == _METHOD and method and (inner[0], inner[1], inner[3]) in ALLOWED_METHODS:
            return None
        refused.append((code, named))
        raise ValueError("refused")

    return scan


def _scan(payload: bytes, allowed: frozenset[TypeKey]) -> tuple[int, TypeKey] | str | None:
    """The first extension of ``payload`` outside ``allowed`` (``(code, type)``), a reason
    it does not decode, or None when every extension is allowed."""
    refused: list[tuple[int, TypeKey]] = []
    try:
        ormsgpack.unpackb(
            payload, ext_hook=_scanner(refused, allowed), option=ormsgpack.OPT_NON_STR_KEYS
        )
    except (ValueError, TypeError) as exc:
        return refused[0] if refused else f"undecodable ({exc})"
    return None


def _strict_serializer(team: frozenset[TypeKey]) -> JsonPlusSerializer:
    """LangGraph's serializer in strict mode (its safe set and the team's types alone),
    on a release that has it; on an older one, the plain serializer (the pre-scan
    guards it)."""
    try:
        return JsonPlusSerializer(allowed_msgpack_modules=tuple(sorted(team)) or None)
    except TypeError:  # langgraph-checkpoint without allowed_msgpack_modules
        return JsonPlusSerializer()


class SealedSerializer(SerializerProtocol):
    """The checkpoint serializer described in the module doc.

    Args:
        key: the data folder's key (the ``checkpoints/v1`` sub-key is derived here).
        allowed_types: the team's own classes a checkpoint may hold besides
            :data:`ALLOWED_TYPES`: class objects or ``"module.Name"`` strings (see
            :func:`allowed_type_keys`). Default: none.

    Raises:
        ConfigurationError: (construction) an ``allowed_types`` entry is refused (see
            :func:`allowed_type_keys`).
        TypeNotAllowedError: on dump, a value naming a type outside the allowlist (the
            row is not written).
        CheckpointError: on load, a row that fails authentication or names a type
            outside the allowlist.
    """

    encrypts_values: Final = True
    """Every value is stored encrypted (the harness lets a secret reach such a
    checkpointer as it is: see :mod:`.harness`)."""

    def __init__(self, key: bytes, *, allowed_types: Iterable[type | str] = ()) -> None:
        self._key = subkey(key, CHECKPOINTS_LABEL)
        self._cipher = subkey(key, CHECKPOINTS_CIPHER_LABEL)
        self.allowed_types: frozenset[TypeKey] = allowed_type_keys(allowed_types)
        """The team's types, as ``(module, name)`` keys."""
        self._allowed = ALLOWED_TYPES | self.allowed_types
        self._inner = _strict_serializer(self.allowed_types)

    def allows(self, key: TypeKey) -> bool:
        """Whether a checkpoint may construct the type ``key`` (``(module, name)``)."""
        return tuple(key[:2]) in self._allowed

    def _refused(self, typ: str, payload: bytes) -> TypeNotAllowedError | None:
        """The error for a dumped ``payload`` naming a type outside the allowlist."""
        found = _scan(payload, self._allowed) if typ == "msgpack" else None
        if not isinstance(found, tuple):
            return None
        code, named = found
        name = _dotted(named) if named else f"extension {code}"
        return TypeNotAllowedError(
            f"a checkpoint value holds {name}, a type outside the sealed checkpointer's "
            "allowlist; it is not stored (it could not be read back). " + _how_to_allow([name]),
            types=[name],
        )

    def check(self, obj: Any) -> None:
        """Refuse ``obj`` when storing it would name a type outside the allowlist (what
        ``dumps_typed`` would refuse), without storing it.

        Raises:
            TypeNotAllowedError: naming the type and how to allow it.
        """
        if (refused := self._refused(*self._inner.dumps_typed(obj))) is not None:
            raise refused

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """``(sealed2:<type>, tag + encrypted payload)``.

        Raises:
            TypeNotAllowedError: ``obj`` holds a value of a type outside the allowlist
                (nothing is written).
        """
        typ, payload = self._inner.dumps_typed(obj)
        if (refused := self._refused(typ, payload)) is not None:
            raise refused
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
        if inner == "msgpack" and (found := _scan(payload, self._allowed)) is not None:
            if isinstance(found, str):
                why = found
            else:
                why = f"extension {found[0]} naming {found[1] or '?'}"
            raise CheckpointError(
                f"a checkpoint row names a type outside the allowlist: {why}; nothing "
                "was imported or called (a team's own type: "
                + _how_to_allow([_dotted(found[1])] if isinstance(found, tuple) else [])
                + ")"
            )
        return self._inner.loads_typed((inner, payload))


# -- a graph's declared state types ---------------------------------------------------------

_WRAPPERS: Final = frozenset(
    name
    for name in ("Annotated", "NotRequired", "Required", "ReadOnly", "ClassVar", "Final")
    if hasattr(typing, name)
)


def _hints(cls: Any) -> dict[str, Any]:
    """``cls``'s resolved field annotations (pydantic fields, dataclass and TypedDict
    hints); an annotation that does not resolve is left out (the dump-time scan still
    guards those values)."""
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, Mapping):
        return {name: getattr(info, "annotation", None) for name, info in fields.items()}
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except (NameError, TypeError, AttributeError):  # unresolvable: the later checks guard it
        return {}


def _declared(annotation: Any, seen: set[int]) -> Iterator[type]:
    """Every class in ``annotation`` a checkpoint would store by name (see
    :func:`_stored_by_name`), through wrappers, unions, containers, TypedDicts and the
    fields of the classes found (each class walked once)."""
    origin = typing.get_origin(annotation)
    if origin is Literal or isinstance(annotation, TypeVar):
        return
    if origin is not None:
        wrapper = getattr(origin, "_name", None) in _WRAPPERS or origin is typing.Annotated
        args = typing.get_args(annotation)
        for arg in args[:1] if wrapper else args:
            yield from _declared(arg, seen)
        if isinstance(origin, type) and not wrapper:
            yield from _declared(origin, seen)
        return
    if isinstance(annotation, list | tuple):  # Callable's argument list
        for arg in annotation:
            yield from _declared(arg, seen)
        return
    if not isinstance(annotation, type) or id(annotation) in seen:
        return
    seen.add(id(annotation))
    if (annotation.__module__, annotation.__name__) in ALLOWED_TYPES:
        return  # the messages and graph types: LangGraph's own, not walked
    if _stored_by_name(annotation):
        yield annotation
    if typing.is_typeddict(annotation) or _stored_by_name(annotation):
        for hint in _hints(annotation).values():
            yield from _declared(hint, seen)


def check_state_types(graph: Any) -> None:
    """Refuse to run ``graph`` when its checkpointer is sealed (:class:`SealedSerializer`)
    and a state key is declared to hold a type that serializer would not read back.

    Reads the state schema of a ``StateGraph`` (``graph.builder.state_schema``: a
    ``create_agent`` graph's merged schema, the middleware's keys included); keys kept
    out of checkpoints (``UntrackedValue``) are skipped. A graph without one (the
    functional API) or without a sealed checkpointer is not checked here (the dump-time
    scan still guards every row).

    Raises:
        TypeNotAllowedError: naming each such type and key, and how to allow them.
    """
    serde = getattr(getattr(graph, "checkpointer", None), "serde", None)
    schema = getattr(getattr(graph, "builder", None), "state_schema", None)
    if not isinstance(serde, SealedSerializer) or schema is None:
        return
    channels = getattr(graph, "channels", None) or {}
    refused: dict[str, set[str]] = {}
    old = False
    for key, hint in _hints(schema).items():
        if isinstance(channels.get(key), UntrackedValue):
            continue  # never written to a checkpoint
        for cls in _declared(hint, set()):
            name = f"{cls.__module__}.{cls.__name__}"
            if _pydantic_v1(cls) or not serde.allows((cls.__module__, cls.__name__)):
                refused.setdefault(name, set()).add(key)
                old = old or _pydantic_v1(cls)
    if refused:
        where = "; ".join(
            f"{name} (state key {', '.join(sorted(keys))})"
            for name, keys in sorted(refused.items())
        )
        v1 = " (a pydantic v1 model cannot be stored: use a pydantic v2 model)" if old else ""
        raise TypeNotAllowedError(
            f"the graph's state holds types its sealed checkpointer does not store: {where}; "
            f"nothing ran{v1}. To allow them, " + _how_to_allow(refused),
            types=refused,
            keys=(key for keys in refused.values() for key in keys),
        )


_CHECKPOINTER_KEY: Final = "__pregel_checkpointer"
"""Where LangGraph hands a task its checkpointer in ``config["configurable"]``."""


def check_update_types(config: Mapping[str, Any] | None, update: Mapping[str, Any]) -> None:
    """Refuse a tool's state ``update`` (the rest of the ``Command`` it returned) that
    holds a type the run's sealed checkpointer would not store, before it reaches the
    graph: the call is answered (with this error) and the thread stays valid, where a
    refused row alone would leave the call unanswered. No sealed checkpointer in
    ``config`` (a task's config): nothing to check.

    Raises:
        TypeNotAllowedError: naming the type and how to allow it.
    """
    configurable = (config or {}).get("configurable") or {}
    serde = getattr(configurable.get(_CHECKPOINTER_KEY), "serde", None)
    if isinstance(serde, SealedSerializer) and update:
        serde.check(dict(update))


# -- the paused checkpoint's seal ---------------------------------------------------------


def _row_digest(row: tuple[Any, ...]) -> str:
    digest = hashlib.sha256()
    for value in row:
        data = value if isinstance(value, bytes) else repr(value).encode("utf-8")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


class _Rows(Protocol):
    """How the seal reads a thread's rows from one kind of checkpointer (its SQLite file
    or its PostgreSQL tables): each row a tuple of plain values (what the digest covers),
    ``row[2]`` the checkpoint id and ``row[3]`` its parent's."""

    def checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> tuple[Any, ...] | None:
        """Thread ``thread_id``'s checkpoint ``checkpoint_id`` (None: its newest) with
        everything a resume reads of it, or None."""

    def writes(self, thread_id: str, checkpoint_id: str) -> list[tuple[Any, ...]]:
        """The pending writes of that checkpoint."""


_CHECKPOINT_COLUMNS: Final = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type"
_NEWEST: Final = "ORDER BY checkpoint_id DESC LIMIT 1"


def _which(
    select: str, mark: str, thread_id: str, checkpoint_id: str | None
) -> tuple[str, tuple[str, ...]]:
    """``(sql, parameters)`` reading one checkpoint row of ``thread_id`` with ``select``
    (a query ending in its ``WHERE`` conditions on the thread): the checkpoint
    ``checkpoint_id``, or the newest when it is None; ``mark`` is the driver's
    placeholder (``?`` for sqlite3, ``%s`` for psycopg)."""
    if checkpoint_id is None:
        return select + _NEWEST, (thread_id,)
    return select + f"AND checkpoint_id = {mark}", (thread_id, checkpoint_id)


@dataclasses.dataclass(frozen=True)
class _SqliteRows:
    """``SqliteSaver``'s tables: a checkpoint row holds its whole (sealed) value."""

    conn: sqlite3.Connection

    def checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> tuple[Any, ...] | None:
        select = (
            f"SELECT {_CHECKPOINT_COLUMNS}, checkpoint, metadata FROM checkpoints "  # noqa: S608
            "WHERE thread_id = ? AND checkpoint_ns = '' "
        )
        row = self.conn.execute(*_which(select, "?", thread_id, checkpoint_id)).fetchone()
        return tuple(row) if row is not None else None

    def writes(self, thread_id: str, checkpoint_id: str) -> list[tuple[Any, ...]]:
        rows = self.conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
            "FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? "
            "ORDER BY task_id, idx",
            (thread_id, checkpoint_id),
        ).fetchall()
        return [tuple(r) for r in rows]


@dataclasses.dataclass(frozen=True)
class _PostgresRows:
    """``PostgresSaver``'s tables: a ``checkpoints`` row (JSONB: ids, versions, metadata,
    any inline value) and the ``checkpoint_blobs`` its ``channel_versions`` name (a
    channel whose blob is missing is read as a gap: it counts too), in one tuple; its
    writes from ``checkpoint_writes`` (with their ``task_path``)."""

    conn: Any

    def _all(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        from psycopg.rows import tuple_row

        with self.conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute(sql, parameters)
            return [tuple(r) for r in cursor.fetchall()]

    def checkpoint(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> tuple[Any, ...] | None:
        select = (
            f"SELECT {_CHECKPOINT_COLUMNS}, checkpoint::text, metadata::text "  # noqa: S608
            "FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' "
        )
        rows = self._all(*_which(select, "%s", thread_id, checkpoint_id))
        if not rows:
            return None
        (row,) = rows
        blobs = self._all(
            "SELECT v.key, v.value, b.type, b.blob FROM checkpoints c "
            "CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v "
            "LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value "
            "WHERE c.thread_id = %s AND c.checkpoint_ns = '' AND c.checkpoint_id = %s "
            "ORDER BY v.key",
            (thread_id, row[2]),
        )
        return row + tuple(value for blob in blobs for value in blob)

    def writes(self, thread_id: str, checkpoint_id: str) -> list[tuple[Any, ...]]:
        return self._all(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, "
            "task_path FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = '' "
            "AND checkpoint_id = %s ORDER BY task_id, idx",
            (thread_id, checkpoint_id),
        )


def _rows(source: Any) -> _Rows:
    """The row reader of ``source``: a checkpointer of this binding (SQLite or
    PostgreSQL) or its connection (``sqlite3`` or psycopg's, not an async one).

    Raises:
        ConfigurationError: ``source`` is neither.
    """
    conn = getattr(source, "conn", source)
    if isinstance(conn, sqlite3.Connection):
        return _SqliteRows(conn)
    kind = type(conn)
    if kind.__module__.split(".")[0] == "psycopg" and kind.__name__ == "Connection":
        return _PostgresRows(conn)
    raise ConfigurationError(
        f"the checkpoint seal reads a SqliteSaver's or a PostgresSaver's rows (or their "
        f"sqlite3 or psycopg connection), not a {kind.__module__}.{kind.__name__}"
    )


def _writes(rows: _Rows, thread_id: str, checkpoint_id: str) -> list[str]:
    return sorted(_row_digest(r) for r in rows.writes(thread_id, checkpoint_id))


def seal_paused(source: Any, thread_id: str, key: bytes) -> dict[str, Any]:
    """The seal of ``thread_id``'s newest checkpoint and its pending writes, to store in
    the run's snapshot under :data:`SEAL_KEY`.

    Args:
        source: the checkpointer (``SqliteSaver``, ``PostgresSaver``) or its connection.
            On PostgreSQL the seal covers the ``checkpoints`` row, the blobs its channel
            versions name and its pending writes: all a resume reads.

    Raises:
        CheckpointError: the thread has no checkpoint.
        ConfigurationError: ``source`` is not a checkpointer this seal reads.
    """
    rows = _rows(source)
    row = rows.checkpoint(thread_id)
    if row is None:
        raise CheckpointError(f"no LangGraph checkpoint for thread {thread_id!r} to seal")
    checkpoint_id = str(row[2])
    writes = _writes(rows, thread_id, checkpoint_id)
    digest = _row_digest(row)
    mac = seal(subkey(key, CHECKPOINTS_LABEL), "paused", thread_id, checkpoint_id, digest, *writes)
    return {"checkpoint_id": checkpoint_id, "row": digest, "writes": writes, "mac": mac}


def check_paused(
    source: Any, thread_id: str, sealed: Any, key: bytes, *, resumed: bool = False
) -> None:
    """Refuse a resume whose paused checkpoint is not the one sealed (see the module doc).

    Args:
        source: as :func:`seal_paused`.
        resumed: a resume already recorded its decisions on this seal (the stored
            snapshot's :data:`RESUMED_KEY`): newer checkpoints descending from the sealed
            one, and further writes on it, are a crash's leftovers, not an edit. Without
            it the thread must be exactly as sealed.

    Raises:
        CheckpointError: no seal, or the sealed row or a sealed write is gone or changed;
            without ``resumed``, a write or a checkpoint added after the seal; with it,
            a newest checkpoint that does not descend from the sealed one.
        ConfigurationError: ``source`` is not a checkpointer this seal reads.
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
    rows = _rows(source)
    row = rows.checkpoint(thread_id, checkpoint_id)
    if row is None or _row_digest(row) != digest:
        raise CheckpointError(
            f"the paused checkpoint of run {thread_id!r} is gone or was changed; the run is refused"
        )
    present = _writes(rows, thread_id, checkpoint_id)
    if not set(writes) <= set(present):
        raise CheckpointError(
            f"a pending write of run {thread_id!r}'s paused checkpoint is gone or was "
            "changed; the run is refused"
        )
    newest = rows.checkpoint(thread_id)
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
        current = rows.checkpoint(thread_id, str(parent)) if parent else None
        hops += 1
    if current is None:
        raise CheckpointError(
            f"the newest checkpoint of run {thread_id!r} does not descend from the paused "
            "one; the run is refused"
        )
