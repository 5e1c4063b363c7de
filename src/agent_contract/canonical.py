"""Canonical JSON: one byte string per JSON value, for identity (never for display).

Two tool calls are *the same call* when their names match and their arguments have the
same canonical form; an approval, an idempotency key and the repeated-call budget are
all bound to it, and all use :func:`canonical_json` (the one definition).

The form is RFC 8785, the JSON Canonicalization Scheme, through the ``rfc8785``
library: keys sorted by their UTF-16 code units, no whitespace, strings with the
minimal escapes, numbers as ECMAScript writes an IEEE 754 double. JSON has one number
type, so ``3``, ``3.0`` and ``3e0`` are one number (``3``), ``-0`` is ``0``, ``1e2`` is
``100`` and ``1e21`` is ``1e+21``.

RFC 8785 refuses a few values a Python program can still hold; they get a tagged form
instead of an error, so no argument value ever crashes the repeat key or a binding:

- an integer beyond ±(2**53 - 1) (I-JSON's exact range) that a double cannot hold
  exactly: ``{"$int": "<decimal digits>"}`` (an integer a double does hold exactly,
  such as ``2**60``, is that double: ``1152921504606847000``);
- a float that is NaN or infinite (not JSON; Python's ``json`` parses ``NaN``):
  ``{"$float": "nan" | "inf" | "-inf"}``;
- a string holding a lone surrogate (U+D800-U+DFFF, not encodable as UTF-8):
  ``{"$utf16": [code units]}``; as a key: ``"$u:"`` and the code units in hex;
- anything that is not JSON data (a tuple, a set, bytes, an object):
  ``{"$repr": "<type name>: <repr>"}``.

Once any value needs a tag, every object key that starts with ``$`` gets one more
``$`` in front, so a real ``{"$int": "5"}`` can never be mistaken for a tag, and the
whole text is prefixed with :data:`TAGGED_PREFIX` (no RFC 8785 text starts with it):
the form stays one-to-one. Values refused as arguments (lone surrogates, NaN, non-JSON
data) never run; they only need a key that does not crash.

:func:`field_dict` is the other JSON form a record has: its ``to_dict``, for display and
storage (every field by name, in declaration order).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Final

import rfc8785

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["MAX_EXACT_INT", "TAGGED_PREFIX", "canonical_bytes", "canonical_json", "field_dict"]

MAX_EXACT_INT: Final = 2**53 - 1
"""The largest integer I-JSON (and RFC 8785) represents exactly."""

TAGGED_PREFIX: Final = "~tagged~"
"""Starts the canonical text of a value that needed a tag (see the module doc)."""


def canonical_bytes(value: Any) -> bytes:
    """The canonical form of ``value`` as UTF-8 bytes (see the module doc).

    Never raises for any Python value built from dicts, lists, tuples, strings,
    numbers, booleans and ``None`` (other objects are tagged by their ``repr``).
    """
    try:
        return rfc8785.dumps(value)
    except (ValueError, RecursionError):
        # rfc8785's CanonicalizationError is a ValueError; a lone surrogate in a key
        # raises UnicodeEncodeError, also a ValueError.
        pass
    try:
        # Integers past 2**53 that a double holds exactly are that double.
        return rfc8785.dumps(_convert(value, 0, tag=False))
    except (_NeedsTag, ValueError, RecursionError):
        pass
    return TAGGED_PREFIX.encode("ascii") + rfc8785.dumps(_convert(value, 0, tag=True))


def canonical_json(value: Any) -> str:
    """:func:`canonical_bytes` as text (UTF-8 decoded)."""
    return canonical_bytes(value).decode("utf-8")


_MAX_DEPTH: Final = 200


class _NeedsTag(Exception):
    """A value needs a tag (raised by :func:`_convert` with ``tag=False``)."""


def _convert(value: Any, depth: int, *, tag: bool) -> Any:
    """``value`` with exact big integers as doubles and, with ``tag``, every value RFC
    8785 refuses replaced by its tag and object keys starting with ``$`` escaped (see
    the module doc). Without ``tag``, a value that needs one raises :class:`_NeedsTag`."""

    def tagged(kind: str, text: Any) -> dict[str, Any]:
        if not tag:
            raise _NeedsTag
        return {kind: text}

    if depth > _MAX_DEPTH:
        return tagged("$repr", "nested too deep")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and not _has_surrogate(value):
        return value
    if isinstance(value, int):
        if abs(value) <= MAX_EXACT_INT:
            return value
        as_float = float(value) if value.bit_length() <= 1024 else math.inf
        if math.isfinite(as_float) and int(as_float) == value:
            return as_float  # a double holds it exactly: that number
        try:
            return tagged("$int", str(value))
        except ValueError:  # more digits than sys.get_int_max_str_digits()
            return tagged("$int", f"{value:x}:hex")
    if isinstance(value, float):
        if math.isnan(value):
            return tagged("$float", "nan")
        if math.isinf(value):
            return tagged("$float", "inf" if value > 0 else "-inf")
        return value
    if isinstance(value, str):  # holds a lone surrogate
        return tagged("$utf16", _code_units(value))
    if isinstance(value, list | tuple):  # as rfc8785 itself treats a tuple
        return [_convert(item, depth + 1, tag=tag) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                return tagged("$repr", _repr(value))
            out[_key(key) if tag else key] = _convert(item, depth + 1, tag=tag)
        return out
    return tagged("$repr", _repr(value))


def _key(key: str) -> str:
    if _has_surrogate(key):
        return "$u:" + ".".join(f"{unit:04x}" for unit in _code_units(key))
    return "$" + key if key.startswith("$") else key


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


def _code_units(text: str) -> list[int]:
    """``text`` as UTF-16 code units (a lone surrogate is its own unit)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not break the key
        text = "<unrepresentable>"
    return f"{type(value).__name__}: {text[:10_000]}"


def field_dict(record: DataclassInstance) -> dict[str, Any]:
    """A flat record's JSON-ready form: ``{field name: value}`` for every field of the
    dataclass ``record``, in declaration order (values as they are, not copied: the
    ``to_dict`` of a record whose fields are JSON data already)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
