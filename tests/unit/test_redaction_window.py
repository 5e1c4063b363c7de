"""A long result is redacted over its shown window only: no planted secret leaks across
the cut, at any offset around it; the literal prefilter never keeps what a rule hides."""

from __future__ import annotations

import pytest

from agent_contract.results import TRUNCATION_MARKER, success_result
from agent_contract.trace import RedactionPolicy
from agent_contract.trace.redaction import WINDOW_MARGIN_CHARS

MAX_CHARS = 200
SECRET = "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"
"""The given secret; every secret value below is made of ``Q`` and digits only, and no
other text holds a ``Q``: a single ``Q`` in the content is a leak."""

POLICY = RedactionPolicy(secrets=(SECRET,))
FILLER = "lorem ipsum dolor sit amet, consectetur adipiscing elit; sed do eiusmod tempor. "

PLANTED = {
    "given secret": SECRET,
    "api key": "sk-" + "Q" * 40,
    "aws key id": "AKIA" + "Q" * 16,
    "github token": "ghp_" + "Q" * 40,
    "slack token": "xoxb-" + "Q9" * 12,
    "bearer": "Bearer " + "Q" * 50,
    "lowercase bearer": "bearer Q9" + "Q" * 30,
    "key=value": "db_password=" + "Q" * 30,
    "key=value, punctuation": "db_password=QQ]QQ)QQ,Q;Q}Q\"Q&Q'Q" + "Q" * 20,
    "key: value, quoted with spaces": 'api_key: "QQ QQ\\" Q"Q]' + "Q" * 20,
    "json key": '"api_key": "' + "Q" * 30 + '"',
    "json key, escaped quotes": '"token": "' + "Q\\\\Q\\" + '"' + "Q" * 30 + '"',
    "json key, long value": '"secret": "' + "Q" * 1500 + '"',
    "json key, number": '"access_token": ' + "9" * 10 + "Q",
    "header": "Authorization: Basic " + "Q" * 30,
}


def _text(offset: int, planted: str) -> str:
    head = (FILLER * (offset // len(FILLER) + 1))[:offset]
    tail = FILLER * ((3 * WINDOW_MARGIN_CHARS) // len(FILLER) + 2)
    return head + " " + planted + " " + tail


def _shown(content: str) -> str:
    marker = content.rfind("\n[truncated by agent-contract:")
    return content[:marker] if marker >= 0 else content


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_no_planted_secret_leaks_across_the_cut_at_any_offset(name: str) -> None:
    planted = PLANTED[name]
    cut = MAX_CHARS - len(TRUNCATION_MARKER.format(shown=MAX_CHARS, total=10**5))
    window_end = cut + WINDOW_MARGIN_CHARS
    # Every offset around the cut and around the window's end (where a planted value
    # straddles it), every 13th elsewhere.
    offsets = sorted(
        {*range(0, cut + 60), *range(window_end - len(planted) - 40, window_end + 40)}
        | set(range(0, window_end + 80, 13))
    )
    for offset in offsets:
        text = _text(offset, planted)
        result = success_result(
            "call_1",
            "t",
            text,
            max_result_chars=MAX_CHARS,
            on_oversize="truncate",
            redaction=POLICY,
        )
        shown = _shown(result.content)
        assert "Q" not in shown, (name, offset, shown[-80:])
        assert result.truncated
        assert len(result.content) <= MAX_CHARS
        if not offset < window_end < offset + len(planted) + 2:
            # Not straddling the window's end: exactly what redacting it all shows.
            assert shown == POLICY.redact(text)[: len(shown)], (name, offset)


def test_a_window_with_no_rule_literal_is_not_scanned_and_keeps_the_total() -> None:
    text = FILLER * 20_000  # about 1.6 MB of clean text
    result = success_result(
        "call_1", "t", text, max_result_chars=8_000, on_oversize="truncate", redaction=POLICY
    )
    assert result.truncated
    assert result.original_chars == len(text)
    assert result.content.startswith(text[:7_000])
    assert result.content.endswith(f"of {len(text)} chars shown]")


def test_a_result_under_twice_the_limit_is_redacted_whole() -> None:
    planted = '"password": "' + "Q" * 150 + '"'
    text = FILLER * 2 + planted
    result = success_result(
        "call_1", "t", text, max_result_chars=MAX_CHARS, on_oversize="truncate", redaction=POLICY
    )
    assert "Q" not in result.content
    assert result.original_chars == len(POLICY.redact(text))


def test_a_policy_with_its_own_pattern_redacts_the_whole_text() -> None:
    policy = RedactionPolicy(patterns=(r"Q{5,}",))
    text = _text(MAX_CHARS - 3, "Q" * 2_000)
    assert policy.redact_head(text, 100) is None
    result = success_result(
        "call_1", "t", text, max_result_chars=MAX_CHARS, on_oversize="truncate", redaction=policy
    )
    assert "Q" not in result.content


@pytest.mark.parametrize(
    "text",
    [
        "my Bearer abcdefghijklmnop",
        "x sk-abcdefghijklmnopqrstu",
        "PASSWORD=hunter22",
        "pa\u017f\u017fword=hunter22",  # a key matched case-insensitively through a long s
        "Api-Key: 1234",
        SECRET,
        repr(SECRET + '"')[1:-2],
    ],
)
def test_the_prefilter_never_calls_redactable_text_clean(text: str) -> None:
    assert not POLICY.is_clean(text)
    assert POLICY.redact(text) != text


def test_clean_text_is_returned_as_it_is() -> None:
    text = FILLER * 3
    assert POLICY.is_clean(text)
    assert POLICY.redact(text) is text
