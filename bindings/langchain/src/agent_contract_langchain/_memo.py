"""Conversions of live LangChain messages, remembered per message object.

A framework hands the whole history to every hook of every step (the contract's
middleware, its gate and the chat model each read it): converting every message every
time makes each step's cost grow with the history. Each message is converted once and
the result re-used while the fields the conversion reads still compare equal to a copy
taken then; a message changed in place is converted again.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import Any, Final

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent_contract.messages import Message

__all__ = ["memoized", "read_fields"]

_CONVERTED: Final[dict[int, tuple[weakref.ref[BaseMessage], tuple[Any, ...], Message]]] = {}
"""By ``id`` of the message: the message (weakly: the entry goes when the message does),
the fields the conversion read, and the result."""


def read_fields(message: BaseMessage, keys: tuple[str, ...]) -> tuple[Any, ...]:
    """Everything a conversion reads from ``message`` (its type, content, name, the
    ``additional_kwargs`` under ``keys``, the calls of an AIMessage, the id and status of
    a ToolMessage), as a value that compares equal exactly when a conversion would give
    the same Message."""
    fields: tuple[Any, ...] = (
        type(message),
        message.content,
        message.name,
        *map(message.additional_kwargs.get, keys),
    )
    if isinstance(message, AIMessage):
        return (*fields, message.tool_calls, message.invalid_tool_calls)
    if isinstance(message, ToolMessage):
        return (*fields, message.tool_call_id, message.status)
    return fields


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
    key = id(message)
    entry = _CONVERTED.get(key)
    if entry is not None and entry[0]() is message and entry[1] == read_fields(message, keys):
        return entry[2]
    converted = convert(message)
    read = read_fields(message, keys)
    try:
        if not isinstance(message.content, str) or isinstance(message, AIMessage):
            read = copy.deepcopy(read)  # mutable containers: keep their value now
        ref = weakref.ref(message, _forget(key))
    except Exception:  # noqa: BLE001 - a field that cannot be copied: convert every time
        return converted
    _CONVERTED[key] = (ref, read, converted)
    return converted
