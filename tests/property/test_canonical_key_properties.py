"""The canonical call key's shortcut gives exactly RFC 8785's bytes.

A plain value (strings, exact-range integers, booleans, ``None``, lists and objects of
them, keys below U+D800) is written by the standard ``json`` encoder; its bytes are
``rfc8785.dumps``'s, and every other value still goes through ``rfc8785`` and its tags
(:func:`agent_contract.canonical._canonical_slow`, the reference).
"""

from __future__ import annotations

from typing import Any

import rfc8785
from hypothesis import example, given
from hypothesis import strategies as st

from agent_contract.canonical import MAX_EXACT_INT, _canonical_slow, _is_plain, canonical_bytes

# -- the canonical call key -----------------------------------------------------------------

# Any code point, lone surrogates and astral characters included: key order by UTF-16
# code unit differs from code point order only around U+D800-U+FFFF and above.
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=8)
EDGE_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            *('"', "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\u2028"),
            *("é", "\ud800", "\ue000", "\uffff", "\U00010000", "\U0001f600", "a", "$", "~"),
        ]
    ),
    max_size=6,
)
TEXT = ANY_TEXT | EDGE_TEXT
INTS = st.integers(min_value=-(2**60), max_value=2**60) | st.sampled_from(
    [MAX_EXACT_INT, -MAX_EXACT_INT, MAX_EXACT_INT + 1, -MAX_EXACT_INT - 1, 2**53, 0]
)
SCALARS = st.none() | st.booleans() | INTS | st.floats() | TEXT
JSONISH = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(TEXT, inner, max_size=4)
    ),
    max_leaves=12,
)
PLAIN_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_EXACT_INT, max_value=MAX_EXACT_INT)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
)
PLAIN_KEYS = st.text(alphabet=st.characters(max_codepoint=0xD7FF), max_size=6)
PLAIN = st.recursive(
    PLAIN_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(PLAIN_KEYS, inner, max_size=4),
    max_leaves=12,
)


@given(value=JSONISH)
@example(value={"b": 1, "a": [True, None, "x\n"]})
@example(value={"\ue000": 1, "\U0001f600": 2})  # UTF-16 order differs from code points
@example(value={"text": "\ud800"})  # a lone surrogate: tagged
@example(value={"n": 2**53})  # past the exact range: the double
@example(value={"n": 3.0})  # a float: rfc8785 writes 3
def test_canonical_bytes_is_the_rfc8785_path(value: Any) -> None:
    assert canonical_bytes(value) == _canonical_slow(value)


@given(value=PLAIN)
@example(value={"text": "step 1"})
@example(value={"z": {"b": [1, -2, '\x00\x1f"\\'], "a": None}, "é": "\u2028", "A": False})
def test_a_plain_value_takes_the_json_path_and_is_rfc8785(value: Any) -> None:
    assert _is_plain(value)
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_what_is_not_plain() -> None:
    deep: Any = 1
    for _ in range(40):
        deep = [deep]
    for value in (3.0, MAX_EXACT_INT + 1, (1, 2), {1: "a"}, {"\ue000": 1}, b"x", deep):
        assert not _is_plain(value), value
        assert canonical_bytes(value) == _canonical_slow(value)
    loop: list[Any] = []
    loop.append(loop)
    assert not _is_plain(loop)
