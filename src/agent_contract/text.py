"""The text rule: what happens to text that cannot be written as UTF-8.

A Python ``str`` can hold a *lone surrogate* (a code point from U+D800 to U+DFFF):
``os.fsdecode`` makes one from a file name that is not UTF-8 (``b"report-\\xff.txt"``
becomes ``"report-\\udcff.txt"``), and ``json.loads`` makes one from a JSON escape such as
``"\\ud800"``. UTF-8 cannot encode it: a database, a file, a terminal or an HTTP body
raises ``UnicodeEncodeError``, and LangGraph's checkpoint serializer silently turns it
into ``?``. The runtime applies one rule wherever text enters a run:

- **Tool-call arguments** holding one are refused before anything runs, as
  ``invalid_arguments``, with a message naming the JSON path
  (:func:`json_data_problem`, which :meth:`ToolSpec.validate` applies first). A tool
  never sees a lone surrogate the model sent.
- **Everything else** (tool results, error texts, the answer, stop details, the
  history, previews, trace events, snapshots) is escaped on the way out by one escape,
  :func:`escape_surrogates`: each lone surrogate becomes the six characters ``\\udXXX``
  (a backslash, ``u``, four lowercase hex digits: ``"\\udcff"`` becomes the text
  ``\\udcff``), as Python's ``backslashreplace`` writes it. Values are escaped before they
  are serialized, so a JSON result parses back to that literal text. Where the runtime
  escaped something it says so: ``escaped_chars`` on the tool result, the
  ``tool_result`` and ``stop`` trace events, the ``model_call`` event (the history sent),
  and the message.

The escape is not reversible (a text that already held ``\\udcff`` looks the same), and
it is applied before redaction, which knows both forms of a secret.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MAX_JSON_DEPTH",
    "copy_json",
    "count_surrogates",
    "escape_surrogates",
    "escape_value",
    "exact_snapshot",
    "has_surrogates",
    "json_data_problem",
    "json_path",
]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")

MAX_JSON_DEPTH: Final = 100
"""How deeply JSON data (arguments, results) may nest, in levels."""


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds a lone surrogate (it cannot be written as UTF-8)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def count_surrogates(text: str) -> int:
    """How many lone surrogates ``text`` holds."""
    return 0 if text.isascii() else len(_SURROGATE.findall(text))


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by the literal text ``\\udXXX`` (the
    module's one escape); any other text is returned unchanged (the same object)."""
    if not has_surrogates(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_IMMUTABLE: Final = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data (dicts and lists rebuilt, strings, numbers, booleans and
    ``None`` shared: they are immutable), several times faster than
    :func:`copy.deepcopy` on the flat argument dicts tools get; anything else inside is
    copied with :func:`copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(inner) for key, inner in value.items()}
    if kind is list:
        return [copy_json(inner) for inner in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


class _Exact:
    """A number or boolean in an :func:`exact_snapshot`: equal only to a value of the
    very same type and value (``1``, ``True`` and ``1.0`` compare equal in Python, not
    here; nor do ``0.0`` and ``-0.0``; a NaN equals nothing, as in Python)."""

    __slots__ = ("value",)
    __hash__ = None  # type: ignore[assignment]  # compared, never hashed

    def __init__(self, value: int | float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        value = self.value
        if type(other) is not type(value) or other != value:
            return False
        if type(value) is not float:
            return True
        return math.copysign(1.0, value) == math.copysign(1.0, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return f"exact({self.value!r})"


_NUMBERS: Final = (int, float, bool)


def exact_snapshot(value: Any) -> Any:
    """A copy of ``value`` taken to see later whether ``value`` was changed in place:
    ``exact_snapshot(v) == v`` (the snapshot on either side) holds while ``v`` has the
    same content with the same scalar types, where plain ``==`` of a copy would miss an
    edit of ``1`` to ``True`` or ``1.0``. Dicts, lists and tuples (exact types) are
    rebuilt, strings and ``None`` shared (immutable), each ``int``, ``float`` and
    ``bool`` wrapped so that it compares equal only to the same type and value (and a
    float's sign); anything else is copied with :func:`copy.deepcopy` and compared by its
    own ``==``. The comparison runs in C except at the wrapped numbers.

    Raises:
        Exception: whatever :func:`copy.deepcopy` raises for an uncopyable object.
    """
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is dict:
        return {key: exact_snapshot(inner) for key, inner in value.items()}
    if kind is list:
        return [exact_snapshot(inner) for inner in value]
    if kind is tuple:
        return tuple(map(exact_snapshot, value))
    if kind in _NUMBERS:
        return _Exact(value)
    return copy.deepcopy(value)


def _clean(item: Any, depth: int) -> bool:
    """True when no string in ``item`` (walked as :func:`escape_value` walks it) holds a
    lone surrogate: the common case, answered without building anything."""
    if isinstance(item, str):
        return item.isascii() or _SURROGATE.search(item) is None
    if depth > MAX_JSON_DEPTH * 2:
        return True
    if isinstance(item, dict):
        for key, inner in item.items():
            if not (_clean(key, depth + 1) and _clean(inner, depth + 1)):
                return False
        return True
    if isinstance(item, list | tuple):
        for inner in item:
            if not _clean(inner, depth + 1):
                return False
    return True


def escape_value(value: Any) -> tuple[Any, int]:
    """``(escaped, count)``: ``value`` with :func:`escape_surrogates` applied to every
    string in it (dict keys included, walking dicts, lists and tuples; tuples stay
    tuples), and how many surrogates were escaped. ``value`` itself is returned when
    there is nothing to escape; anything else is left as it is."""
    if _clean(value, 0):
        return value, 0
    count = 0

    def walk(item: Any, depth: int) -> Any:
        nonlocal count
        if isinstance(item, str):
            if not has_surrogates(item):
                return item
            count += count_surrogates(item)
            return escape_surrogates(item)
        if depth > MAX_JSON_DEPTH * 2:
            return item
        if isinstance(item, dict):
            before = count
            out = {walk(k, depth + 1): walk(v, depth + 1) for k, v in item.items()}
            return out if count != before else item
        if isinstance(item, list | tuple):
            before = count
            items = [walk(v, depth + 1) for v in item]
            if count == before:
                return item
            return items if isinstance(item, list) else tuple(items)
        return item

    escaped = walk(value, 0)
    return escaped, count


_IDENTIFIER: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(parent: str, key: str | int) -> str:
    """The JSON path of ``key`` inside ``parent``, as jsonschema writes one: ``$.name``,
    ``$[0]``, ``$['two words']`` (a lone surrogate in a key is shown escaped)."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{parent}.{key}"
    return f"{parent}[{escape_surrogates(key)!r}]"


def json_data_problem(value: Any, path: str = "$") -> str | None:
    """Why ``value`` is not JSON data a tool may run with, or ``None``.

    JSON data is ``None``, booleans, ints, finite floats, strings without a lone
    surrogate, lists and dicts with string keys of the same, nested at most
    :data:`MAX_JSON_DEPTH` levels. The message names the first JSON path that breaks
    the rule, e.g. ``"$.path: text holds a lone surrogate (U+DCFF), which is not valid
    Unicode"``.
    """
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, str):
            found = _SURROGATE.search(item) if not item.isascii() else None
            if found is not None:
                return (
                    f"{where}: text holds a lone surrogate (U+{ord(found.group()):04X}), "
                    "which is not valid Unicode"
                )
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{where}: {item!r} is not a JSON number (NaN and Infinity are not JSON)"
            continue
        if depth >= MAX_JSON_DEPTH:
            return f"{where}: nested more than {MAX_JSON_DEPTH} levels deep"
        if isinstance(item, list):
            stack.extend(
                (v, json_path(where, i), depth + 1) for i, v in reversed(list(enumerate(item)))
            )
            continue
        if isinstance(item, Mapping):
            pairs = list(item.items())
            for key, _ in pairs:
                if not isinstance(key, str):
                    return f"{where}: a key of type {type(key).__name__} is not a JSON key"
                if has_surrogates(key):
                    return (
                        f"{where}: the key {escape_surrogates(key)!r} holds a lone surrogate, "
                        "which is not valid Unicode"
                    )
            stack.extend((v, json_path(where, k), depth + 1) for k, v in reversed(pairs))
            continue
        return f"{where}: a value of type {type(item).__name__} is not JSON data"
    return None
