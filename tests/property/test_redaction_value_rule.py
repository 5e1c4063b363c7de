"""The secret-key value rule (``agent_contract.trace.redaction``): a value under a secret
key in ``key=value`` / ``key: value`` text is hidden whole, whatever punctuation it holds,
and redaction is idempotent (``redact(redact(x)) == redact(x)``); the literal prefilter
and the windowed redaction agree with it."""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from agent_contract.trace import DEFAULT_SECRET_KEYS, REDACTED, RedactionPolicy

POLICY = RedactionPolicy()
WITH_SECRET = RedactionPolicy(secrets=("Zq7secretvalue",))

PUNCTUATION = "])},;\"'&([{<>=:/\\|!?#%*+-.`~@$^"
"""What once ended a value early (``]``, ``)``, ``,``, ``;``, ``}``, ``"``, ``&``), and more."""

VALUES = st.text(alphabet="Q" + PUNCTUATION, min_size=1, max_size=16)
"""Secret values: no whitespace (a bare value ends at whitespace), and ``Q`` is the only
letter, which no key, separator or tail below holds: a ``Q`` in the output is a leak."""

KEYS = st.sampled_from(
    [*DEFAULT_SECRET_KEYS, "db_password", "X-Api-Key", "AWS_SECRET_ACCESS_KEY", "Token"]
)
SEPARATORS = st.sampled_from(["=", ": ", ":", " = ", "= ", ":\t"])
PREFIXES = st.sampled_from(["", "x ", "GET /a?", "[log] ", "{", "(", "note: "])
TAILS = st.sampled_from(["", " next", "\nline two", " user=bob", "  page=2 ]"])


def _closed(value: str) -> bool:
    """True when ``value`` starts with a quote that a later unescaped quote closes."""
    quote, position = value[0], 1
    while position < len(value):
        if value[position] == "\\":
            position += 2
        elif value[position] == quote:
            return True
        else:
            position += 1
    return False


@given(prefix=PREFIXES, key=KEYS, separator=SEPARATORS, value=VALUES, tail=TAILS)
@example(prefix="", key="password", separator="=", value="ab]cdefg", tail="")
@example(prefix="", key="api_key", separator="=", value="[REDACTED]", tail="")
@example(prefix="", key="token", separator=": ", value='"Q Q', tail=" next")
def test_no_character_of_a_value_is_shown(
    prefix: str, key: str, separator: str, value: str, tail: str
) -> None:
    text = f"{prefix}{key}{separator}{value}{tail}"
    redacted = POLICY.redact(text)
    assert "Q" not in redacted, (text, redacted)
    head = f"{prefix}{key}{separator}"
    quote = value[0] if value[0] in "\"'" else ""
    # A quoted value keeps its quotes; one never closed runs to the end of the text.
    expected_tail = "" if quote and not _closed(value) else tail
    assert redacted == f"{head}{quote}{REDACTED}{quote}{expected_tail}", text
    assert POLICY.redact(redacted) == redacted


FRAGMENTS = st.sampled_from(
    [
        *DEFAULT_SECRET_KEYS[:6],
        "db_password",
        "X-Api-Key",
        "Authorization",
        "=",
        ":",
        ": ",
        " ",
        "\n",
        '"',
        "'",
        "\\",
        "]",
        "[",
        ")",
        "}",
        "{",
        ",",
        ";",
        "&",
        "abc",
        "Q1",
        "true",
        "1234",
        REDACTED,
        "Bearer ",
        "bearer ",
        "Basic ",
        "sk-" + "a" * 20,
        "AKIA" + "A" * 16,
        "ghp_" + "b" * 36,
        "Zq7secretvalue",
        '"token": ',
        "'password': ",
    ]
)
TEXTS = st.lists(FRAGMENTS, max_size=14).map("".join)


@given(text=TEXTS)
@example(text="AKIA" + "A" * 16 + "password=1")
@example(text='password="a\\')
@example(text="{'token': b'a b'}")
def test_redaction_is_idempotent(text: str) -> None:
    for policy in (POLICY, WITH_SECRET):
        once = policy.redact(text)
        assert policy.redact(once) == once, (text, once)


@given(text=TEXTS)
def test_the_prefilter_agrees_with_the_rules(text: str) -> None:
    """Text the literal prefilter calls clean is text no rule changes."""
    for policy in (POLICY, WITH_SECRET):
        if policy.is_clean(text):
            assert policy.redact(text) == text


@given(
    key=KEYS,
    value=VALUES,
    offset=st.integers(min_value=0, max_value=300),
)
def test_the_windowed_head_shows_what_redacting_it_all_shows(
    key: str, value: str, offset: int
) -> None:
    """``redact_head`` over a long text: no character of the value in the head, and the
    head is the whole text's redaction cut (the value ends well inside the window)."""
    filler = "lorem ipsum dolor sit amet "
    text = (filler * 12)[:offset] + f" {key}={value} " + filler * 200
    assume(value[0] not in "\"'" or _closed(value))  # never closed: runs to the end
    head = POLICY.redact_head(text, 200)
    assert head is not None
    assert "Q" not in head
    assert head == POLICY.redact(text)[:200]
