"""Conversions of live LangChain messages, remembered per message object.

A framework hands the whole history to every hook of every step (the contract's
middleware, its gate and the chat model each read it): converting every message every
time makes each step's cost grow with the history. Each message is converted once and
the result re-used while the fields the conversion reads still compare equal to an
exact copy taken then (:func:`~agent_contract.text.exact_snapshot`: numbers and
booleans compared with their types, so an edit of ``1`` to ``True`` counts); a message
changed in place is converted again.

:class:`HistoryPrefix` goes one step further for a hook that reads a run's growing
history on every step: the part it converted last time is taken over whole while the
message objects are the same ones, in the same places (see its doc for what that trusts).
:class:`CheckedHistory` does the same for the contract's gate, which trusts no identity
alone: what it takes over must also still compare equal to a copy of what was read.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, overload

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.text import exact_snapshot

__all__ = [
    "CheckedHistory",
    "HistoryPrefix",
    "Unconverted",
    "memoized",
    "memoized_all",
    "read_fields",
]

_CONVERTED: Final[dict[int, tuple[weakref.ref[BaseMessage], tuple[Any, ...], Message]]] = {}
"""By ``id`` of the message: the message (weakly: the entry goes when the message does),
the fields the conversion read, and the result."""


def read_fields(message: BaseMessage, keys: tuple[str, ...]) -> tuple[Any, ...]:
    """Everything a conversion reads from ``message`` (its type, content, name, the
    ``additional_kwargs`` under ``keys``, the calls of an AIMessage, the id and status of
    a ToolMessage), as a value that compares equal exactly when a conversion would give
    the same Message."""
    kind = type(message)
    reader = _READERS.get(kind) or _reader_for(kind)
    return (kind, reader(message), tuple(map(message.additional_kwargs.get, keys)))


_Reader = Callable[[BaseMessage], tuple[Any, ...]]
_READERS: Final[dict[type, _Reader]] = {}
"""By message class: the fields :func:`read_fields` reads besides ``additional_kwargs``."""


def _reader_for(kind: type) -> _Reader:
    names = ["content", "name"]
    if issubclass(kind, AIMessage):
        names += ["tool_calls", "invalid_tool_calls"]
    elif issubclass(kind, ToolMessage):
        names += ["tool_call_id", "status"]
    reader = operator.attrgetter(*names)
    _READERS[kind] = reader
    return reader


def _remembered(message: Any, keys: tuple[str, ...]) -> Message | None:
    """The Message converted before for this same object, while :func:`read_fields`
    (with ``keys``) still compares equal to what it read then; else ``None``."""
    entry = _CONVERTED.get(id(message))
    if entry is None:
        return None
    held = entry[0]()
    if held is None or held is not message or entry[1] != read_fields(held, keys):
        return None
    return entry[2]


def memoized_all(
    messages: Iterable[Any], keys: tuple[str, ...], convert: Callable[[Any], Message]
) -> list[Message]:
    """``[convert(m) for m in messages]``, a message converted before taken over by
    :func:`memoized`'s rule. ``convert`` gets every message not remembered (it checks the
    type).

    Raises:
        Exception: whatever ``convert`` raises.
    """
    return [_remembered(m, keys) or convert(m) for m in messages]


def _forget(key: int) -> Callable[[weakref.ref[BaseMessage]], None]:
    def drop(ref: weakref.ref[BaseMessage]) -> None:
        entry = _CONVERTED.get(key)
        if entry is not None and entry[0] is ref:
            _CONVERTED.pop(key, None)

    return drop


def memoized(
    message: BaseMessage, keys: tuple[str, ...], convert: Callable[[BaseMessage], Message]
) -> Message:
    """``convert(message)``, or the Message it gave before for this same object when
    :func:`read_fields` (with ``keys``) still compares equal to what it read then.

    Raises:
        Exception: whatever ``convert`` raises (nothing is remembered then).
    """
    remembered = _remembered(message, keys)
    if remembered is not None:
        return remembered
    key = id(message)
    converted = convert(message)
    read = read_fields(message, keys)
    try:  # keep the value now, exactly (1 and True are different arguments)
        kind, fields, extra = read
        read = (kind, tuple(map(exact_snapshot, fields)), tuple(map(exact_snapshot, extra)))
        ref = weakref.ref(message, _forget(key))
    except Exception:  # noqa: BLE001 - a field that cannot be copied: convert every time
        return converted
    _CONVERTED[key] = (ref, read, converted)
    return converted


class HistoryPrefix:
    """One hook's view of a run's history, kept from its last call: the messages it was
    given, the ones it kept and their conversions. A call whose messages start with the
    same message objects (identity, in the same places) converts only the messages
    added since, so a step's work is one identity pass over the history plus the new
    messages (the history grows by a turn per step; converting all of it every step made
    the cost of a step grow with the run).

    What this trusts: a message object already seen is not changed in place. A hook
    that must see such a change uses :class:`CheckedHistory` instead (the contract's
    gate, the last check before the model, does).

    Not thread-safe: one per run and hook (a run's model calls come one at a time).
    """

    __slots__ = ("_converted", "_kept", "_seen")

    def __init__(self) -> None:
        self._seen: tuple[object, ...] = ()
        self._kept: list[Any] = []
        self._converted: list[Message] = []

    def read(
        self,
        messages: Sequence[BaseMessage],
        keep: Callable[[Sequence[BaseMessage]], list[Any]],
        convert: Callable[[list[Any]], list[Message]],
    ) -> tuple[list[Any], list[Message]]:
        """``(kept, converted)``: ``kept = keep(messages)`` and ``converted =
        convert(kept)``, where ``keep`` keeps an order-preserving selection of the
        messages it is given, judging each message alone, and ``convert`` converts
        message by message; both are applied only to the messages past the prefix seen
        before. New lists each call.

        Raises:
            Exception: whatever ``keep`` or ``convert`` raises (the view is then left
                as it was).
        """
        seen = self._seen
        same = len(messages) >= len(seen) and all(map(operator.is_, seen, messages))
        start = len(seen) if same else 0
        kept_tail = keep(messages[start:])
        converted_tail = convert(kept_tail)
        if same:
            self._kept += kept_tail
            self._converted += converted_tail
        else:
            self._kept, self._converted = kept_tail, converted_tail
        self._seen = tuple(messages)
        return list(self._kept), list(self._converted)


_FIELDS: Final[dict[type, tuple[Callable[[Any], tuple[Any, ...]], bool]]] = {}
"""By message class: what :class:`CheckedHistory` compares (every field a conversion
reads, the whole ``additional_kwargs``: stricter than :func:`read_fields`), as
``(getter, in_dict)``: ``getter(vars(message))`` when ``in_dict`` (pydantic keeps the
fields in the instance dict, and no class attribute of those names answers instead),
else ``getter(message)``."""


def _fields_for(kind: type) -> tuple[Callable[[Any], tuple[Any, ...]], bool]:
    names = ["content", "name", "additional_kwargs"]
    if issubclass(kind, AIMessage):
        names += ["tool_calls", "invalid_tool_calls"]
    elif issubclass(kind, ToolMessage):
        names += ["tool_call_id", "status"]
    shadowed = any(name in vars(klass) for klass in kind.__mro__ for name in names)
    getter: Callable[[Any], tuple[Any, ...]]
    getter = operator.attrgetter(*names) if shadowed else operator.itemgetter(*names)
    _FIELDS[kind] = (getter, not shadowed)
    return _FIELDS[kind]


def _snapshot(message: BaseMessage) -> tuple[Any, ...] | None:
    """A copy of what :class:`CheckedHistory` compares for ``message``
    (:func:`~agent_contract.text.exact_snapshot`: an edit of ``1`` to ``True`` is a
    change), or ``None`` when a field cannot be read or copied
    (the message is then converted again on every step)."""
    kind = type(message)
    getter, in_dict = _FIELDS.get(kind) or _fields_for(kind)
    try:
        return tuple(map(exact_snapshot, getter(vars(message) if in_dict else message)))
    except Exception:  # noqa: BLE001 - an uncopyable field: never taken over
        return None


class CheckedHistory:
    """The contract gate's view of a run's history, kept from its last model call: the
    message objects it checked, a copy of every field their conversion read, and the
    conversions. The gate must see a message changed in place (it is the last check
    before the model), so unlike :class:`HistoryPrefix` it trusts no identity alone:
    a call whose messages start with the same objects in the same places takes the
    earlier conversions over only when every such message still has its class and its
    fields compare equal to the copy (one bulk comparison per message class, done in C:
    several times cheaper than converting through the memo, which reads each message in
    Python). Only the messages past that prefix are converted (through
    :func:`memoized`'s rule). Anything else (a message replaced, removed, reordered, an
    edit in place, a field that cannot be copied or compared) converts every message
    through the memo, exactly as without this view.

    Not thread-safe: one per run (a run's model calls come one at a time).
    """

    __slots__ = ("_by_kind", "_converted", "_seen", "_trusted", "_types")

    def __init__(self) -> None:
        self._seen: tuple[BaseMessage, ...] = ()
        """The messages of the last call."""
        self._trusted = True
        """Whether the copies and conversions below are those of :attr:`_seen`."""
        self._types: list[type] = []
        self._converted: list[Message] = []
        self._by_kind: dict[type, tuple[list[BaseMessage], list[tuple[Any, ...] | None]]] = {}
        """By message class: its messages and their copies, in order."""

    def _same_objects(self, messages: Sequence[BaseMessage]) -> bool:
        """Whether ``messages`` starts with the objects seen last, in the same places."""
        seen = self._seen
        return len(messages) >= len(seen) and all(map(operator.is_, seen, messages))

    def _unchanged(self) -> bool:
        """Whether every message seen last still has its class and its fields compare
        equal to their copies."""
        if list(map(type, self._seen)) != self._types:
            return False
        try:  # the messages are the objects seen (_same_objects): read those
            for kind, (seen, snapshots) in self._by_kind.items():
                getter, in_dict = _FIELDS[kind]
                found = map(vars, seen) if in_dict else seen
                if list(map(getter, found)) != snapshots:
                    return False
        except Exception:  # noqa: BLE001 - a field whose comparison raises: read all again
            return False
        return True

    def read(
        self, messages: Sequence[BaseMessage], convert: Callable[[list[Any]], list[Message]]
    ) -> list[Message]:
        """``convert(list(messages))``, where ``convert`` converts message by message
        through the memo (:func:`memoized_all`); the messages of the prefix that holds
        (see the class doc) are taken over instead. A new list each call.

        A history that does not start with the objects of the last call (a middleware
        that trims or rewrites it on every step) is converted whole and not copied: the
        copies are taken only once the history keeps its objects for two calls.

        Raises:
            Exception: whatever ``convert`` raises (the view is then left as it was).
        """
        same = self._same_objects(messages)
        if same and self._trusted and self._unchanged():
            start = len(self._seen)
            tail = list(messages[start:])
            converted = convert(tail)
        else:
            start, tail = 0, list(messages)
            converted = convert(tail)
            self._clear()
            if not same:  # not copied yet: see the doc
                self._seen = tuple(tail)
                return converted
        snapshots = list(map(_snapshot, tail))
        if None in snapshots:  # something cannot be copied: nothing is taken over
            whole = self._converted + converted
            self._clear()
            self._seen = tuple(messages)
            return whole
        self._converted += converted
        types = list(map(type, tail))
        self._types += types
        by_kind = self._by_kind
        for message, kind, snapshot in zip(tail, types, snapshots, strict=True):
            found, kept = by_kind.setdefault(kind, ([], []))
            found.append(message)
            kept.append(snapshot)
        self._seen = tuple(messages)
        self._trusted = True
        return list(self._converted)

    def _clear(self) -> None:
        """Forget the copies and conversions (the next call converts every message)."""
        self._trusted = False
        self._types, self._converted = [], []
        self._by_kind = {}


class Unconverted(Sequence[Message]):
    """A history of ``length`` messages left unconverted, handed to
    :meth:`~agent_contract.runtime.RunState.check_before_model_call` in place of the
    converted one when the framework's history has more messages than
    :attr:`~agent_contract.budget.Budget.max_history_messages`:
    the core refuses such a history on its ``len`` alone, before any message is read (so
    a million-message history costs no conversion). Reading a message is a driver bug.
    """

    __slots__ = ("_length",)

    def __init__(self, length: int) -> None:
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        """Never answers.

        Raises:
            ConfigurationError: always (the core read a history it must refuse unread).
        """
        raise ConfigurationError(
            "a history over max_history_messages was read before it was refused (a bug)"
        )
