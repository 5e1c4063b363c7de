"""The trace's hot path: the redaction prefilter's grouped needle scan finds a needle
exactly when one of the needles is in the text, the trace clock writes
``format_time``'s form, and a trace line is what the JSON encoder writes."""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agent_contract.trace._prefilter import holds_any, needle_groups
from agent_contract.trace.events import _JSONL, format_time, json_line
from agent_contract.trace.recorder import _WallClock
from agent_contract.trace.redaction import RedactionPolicy

# -- the redaction prefilter --------------------------------------------------------------

PIECES = st.sampled_from(["gh", "gho_", "xox", "xoxb-", "sk-", "AKIA", "pass", "key", "to", "_"])
NEEDLES = st.lists(st.text(alphabet="abgko_x-", min_size=1, max_size=5), min_size=1, max_size=8)
TEXTS = st.lists(PIECES | st.text(alphabet="abgko_x- " + string.ascii_uppercase, max_size=4)).map(
    "".join
)


@given(needles=NEEDLES, text=TEXTS)
def test_grouped_needles_find_what_the_needles_find(needles: list[str], text: str) -> None:
    assert holds_any(text, needle_groups(needles)) == any(n in text for n in needles)


@given(text=TEXTS | st.text(max_size=40))
@example(text="Authorization: ...")
@example(text="a PASSWD here")
@example(text="paßword")  # casefolds to "password"
def test_is_clean_is_the_plain_needle_scan(text: str) -> None:
    for policy in (RedactionPolicy(), RedactionPolicy(secrets=("hunter2hunter2",))):
        exact = getattr(policy, "_needles")  # noqa: B009
        folded = getattr(policy, "_folded_needles")  # noqa: B009
        words = getattr(policy, "_key_words")  # noqa: B009
        key_end = any(
            re.search(re.escape(w) + r"""(?=[\s"':=])""", text, re.IGNORECASE) for w in words
        )
        naive = (
            not any(n in text for n in exact)
            and not any(n in text.casefold() for n in folded)
            and not key_end
        )
        assert policy.is_clean(text) == naive


KEYED = st.lists(
    st.sampled_from(
        ["token", "TOKEN", "_tokens", "input", "api_key", "COOKİE", "password", "Authorization"]
    )
    | st.sampled_from(['"', "'", ":", "=", " ", "\t", ",", "{", "}", "x", "1", "Basic "])
    | st.text(max_size=3),
    max_size=12,
).map("".join)


@given(text=KEYED)
@example(text='{"input_tokens": 1, "output_tokens": 17}')
@example(text="COOKİE: abc")
@example(text='{"token": "abc"}')
def test_a_clean_text_is_one_no_rule_matches(text: str) -> None:
    """The prefilter's promise: when it calls a text clean, no rule (secrets, shapes,
    secret keys) matches anywhere in it, so skipping redaction changes nothing."""
    for policy in (RedactionPolicy(), RedactionPolicy(secrets=("hunter2hunter2",))):
        if policy.is_clean(text):
            assert getattr(policy, "_keyed_regex").search(text) is None  # noqa: B009


def test_the_trace_clock_writes_format_times_form() -> None:
    clock = _WallClock()
    before = format_time(datetime.now(UTC))
    stamp = clock.now()
    after = format_time(datetime.now(UTC))
    assert len(stamp) == 27
    assert stamp.endswith("Z")
    assert before <= stamp <= after
    assert datetime.fromisoformat(stamp.replace("Z", "+00:00")).tzinfo is not None


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(fields=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=5))
def test_json_line_writes_what_the_json_encoder_writes(fields: dict[str, Any]) -> None:
    assert json_line(fields) == _JSONL.encode(fields)


def test_json_line_errors_are_the_json_encoders() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="Circular reference"):
        json_line({"a": cycle})
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_line({"a": object()})


def test_the_ascii_folds_are_every_non_ascii_letter_re_takes_for_ascii() -> None:
    """The fast key-word check lowers the text after mapping these characters: it is the
    rules' case rule only if no other non-ASCII character matches an ASCII letter, and no
    other lowers to one."""
    from agent_contract.trace.redaction import _ASCII_FOLDS

    letter = re.compile("[a-z]", re.IGNORECASE)
    found = {
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c <= 0xDFFF and letter.fullmatch(chr(c))
    }
    assert found == set(_ASCII_FOLDS)
    lowered = {
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c <= 0xDFFF and any(x.isascii() for x in chr(c).lower())
    }
    assert lowered <= set(_ASCII_FOLDS)


UNICODE_KEYED = st.lists(
    st.sampled_from(["token", "ToKeN", "api_key", "cookie", "password", "tokens"])
    | st.sampled_from(["\u0130", "\u0131", "\u017f", "\u212a", "\u00e9", "计", "\ufb01", "ß"])
    | st.sampled_from(['"', "'", ":", "=", " ", "\u3000", "x"])
    | st.text(max_size=2),
    max_size=10,
).map("".join)


@given(text=UNICODE_KEYED)
@example(text="COOK\u0130E: x")
@example(text="pa\u017f\u017fword=x")
@example(text="\u212aey: x")
def test_the_key_word_check_is_case_insensitive_as_the_rules_are(text: str) -> None:
    policy = RedactionPolicy()
    any_case = getattr(policy, "_key_end_any_case")  # noqa: B009
    assert policy._may_hold_key(text) == (any_case.search(text) is not None)
