"""Redaction: which strings never leave a run unredacted.

A :class:`RedactionPolicy` is applied to every string (keys and values) of a trace
event before it is stored, to tool results before the model reads them, and to the
output and stop detail of a run, so a secret handed to the run never reaches the trace,
the model or the caller.

Three kinds of rule, all on by default:

- **secrets** a run is given: exact values, as they are, escaped as JSON text (once
  and twice), quoted by ``repr``/``ascii``, in upper and lower case, and encoded whole as
  base64 (standard and URL-safe, padded or not) or hex (either case). A secret is not
  found inside a longer encoded text (the base64 of ``user:secret``), nor in an encoding
  not named here;
- **patterns**: secret shapes (:data:`DEFAULT_PATTERNS`: API keys of the common
  providers, and a bearer credential of any length, ``Bearer <token>``);
- **secret keys** (:data:`DEFAULT_SECRET_KEYS`): the value under a key such as
  ``password``, ``api_key``, ``token`` or ``authorization`` is redacted whatever it is,
  case-insensitively, with ``_``, ``-`` or nothing between the key's words and any
  prefix (``db_password``, ``X-Api-Key``, ``aws_secret_access_key``): in JSON objects
  and dicts at any depth, and in text as ``"key": "value"``, ``'key': 'value'``,
  ``key=value`` or ``key: value`` (an ``Authorization: Basic <credential>`` keeps its
  scheme word). Only the value is replaced; the key stays readable.

Where a secret key's value ends in text (a value is never partly shown):

- in ``key=value`` / ``key: value`` text, a value that starts with a quote runs to its
  closing quote (a backslash escapes the next character) and on to the next
  whitespace; any other value runs to the next whitespace, whatever punctuation it
  holds (``password=ab]c,d;e&f=g`` hides ``ab]c,d;e&f=g``: a query string's later
  parameters are hidden with it);
- in JSON text and dict reprs (a quoted key), a quoted value is the quoted string; a
  bare number or word ends at the JSON delimiter after it (``,``, ``}``, ``]``), any
  other bare value at the next whitespace;
- a quote never closed runs to the end of the text.

Redaction is idempotent: ``redact(redact(text)) == redact(text)`` (a key right after a
redacted span is not read as a key).

Redaction errs on the side of hiding: ``Bearer of bad news`` at the start of a sentence
loses ``of`` (after a lowercase ``bearer`` a word of letters only is kept), and a key
such as ``next_page_token`` loses its value.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import ConfigurationError
from ..text import escape_surrogates
from ._prefilter import Groups, holds_any, needle_groups

__all__ = [
    "DEFAULT_PATTERNS",
    "DEFAULT_SECRET_KEYS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "WINDOW_MARGIN_CHARS",
    "RedactionPolicy",
]

REDACTED: Final = "[REDACTED]"
"""What a redacted span becomes (the default :attr:`RedactionPolicy.replacement`)."""
MIN_SECRET_CHARS: Final = 4
"""The shortest secret accepted, in characters: a shorter one would redact ordinary text."""
_KEY_CACHE_SIZE: Final = 4096
WINDOW_MARGIN_CHARS: Final = 1024
"""Characters past a shown window that :meth:`RedactionPolicy.redact_head` also redacts
(at least; more for a longer secret), so that a secret straddling the cut is found."""
_CLOSE_QUOTES: Final = "\"'\"'"
"""Appended to a cut window: a quoted value the cut left open is closed (after a
trailing backslash too), so the key rules still find it."""

DEFAULT_PATTERNS: Final[tuple[str, ...]] = (
    r"sk-[A-Za-z0-9_-]{16,}",  # OpenAI/Anthropic-style API keys
    r"AKIA[0-9A-Z]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack tokens
    # Bearer credentials of any length (a lowercase "bearer" before a plain word is
    # kept: see RedactionPolicy.redact).
    r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/-]+=*",
)
"""Secret shapes redacted in every run, on top of the secrets a run is given."""

_PATTERN_NEEDLES: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    DEFAULT_PATTERNS[0]: (("sk-",), ()),
    DEFAULT_PATTERNS[1]: (("AKIA",), ()),
    DEFAULT_PATTERNS[2]: (tuple(f"gh{c}_" for c in "pousr"), ()),
    DEFAULT_PATTERNS[3]: (tuple(f"xox{c}-" for c in "abprs"), ()),
    DEFAULT_PATTERNS[4]: ((), ("bearer",)),
}
"""For each default pattern, literals one of which every match holds: ``(exact,
lowercase)``, the second compared with the lowercased text (the literal prefilter:
a text holding none of them skips the pattern alternation). A pattern not listed here
(a caller's own) turns the prefilter off."""

DEFAULT_SECRET_KEYS: Final[tuple[str, ...]] = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "client_secret",
    "secret_key",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth_token",
    "session_token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "authorization",
    "cookie",
)
"""Keys whose values are redacted (see the module doc for how a key matches)."""

_SCHEMES: Final = r"(?i:basic|bearer|token|digest|negotiate|apikey)"

_ENGLISH_BEARER: Final = re.compile(r"bearer\s+[A-Za-z]+")
"""A lowercase ``bearer`` before a word of letters only: English, kept."""
"""Authorization schemes kept in front of a redacted ``key: value`` credential."""


_ASCII_FOLDS: Final[dict[str, str]] = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
"""The non-ASCII characters a case-insensitive ``re`` pattern matches to an ASCII letter
(capital I with a dot U+0130, dotless i U+0131, long s U+017F, the Kelvin sign U+212A):
all of them, found by trying every code point (a test keeps the list true for the
running Python)."""

_ASCII_FOLDS_TABLE: Final = str.maketrans(_ASCII_FOLDS)


def _key_pattern(keys: Iterable[str]) -> str:
    """A regex (no groups) matching a secret key: any ``word_`` / ``word-`` prefixes,
    then one of ``keys`` with ``_``, ``-`` or nothing between its words."""
    names = sorted({k.strip().lower() for k in keys if k.strip()}, key=len, reverse=True)
    alternatives = "|".join(
        "[_-]?".join(re.escape(part) for part in re.split(r"[_-]+", name)) for name in names
    )
    return rf"(?i:(?:[a-z0-9]+[_-])*(?:{alternatives}))"


def _quoted(n: int) -> str:
    """A regex for a quoted string (its quote is the group ``_acq<n>``): up to its
    closing quote, a backslash escaping the next character; a quote never closed runs
    to the end of the text."""
    return rf"""(?P<_acq{n}>["'])(?:(?!(?P=_acq{n}))[^\\]|\\[\s\S])*(?:(?P=_acq{n})|\\?\Z)"""


def _key_rules(keys: Iterable[str], replacement: str) -> tuple[str, str]:
    """``(text_rules, nested_probe)``: the alternatives that find a secret key's value in
    text (each keeps the group ``_ackeep<n>``; a quoted value's quote is ``_acq<n>``),
    and a regex finding a quoted secret key whose value is an object or an array.

    Where a value ends (the value rule, the module doc states it): a quoted value in
    JSON text or a dict repr (``"key": "value"``) at its closing quote; a bare value
    there (``"key": 1234``) at the JSON delimiter after a number or a word, any other
    bare value at the next whitespace; in ``key=value`` / ``key: value`` text a value
    that starts with a quote at its closing quote and then at the next whitespace, any
    other value at the next whitespace. A quote never closed runs to the end of the
    text. A key right after ``replacement`` is not a key, so redacting twice changes
    nothing."""
    key = _key_pattern(keys)
    after = f"(?<!{re.escape(replacement)})" if replacement else ""
    rules = [
        # "key": "value" / 'key': 'value' (JSON text, dict reprs); the quotes are kept.
        rf"""(?P<_ackeep0>(?P<_ackq0>["']){key}(?P=_ackq0)\s*:\s*(?=["']))""" + _quoted(0),
        # "key": 1234 (a number or a bare word, as JSON text holds it): becomes a string.
        rf"""(?P<_ackeep1>(?P<_ackq1>["']){key}(?P=_ackq1)\s*:\s*)"""
        r"""(?!(?:true|false|null|None|True|False)\b)(?=[^"'])"""
        r"""(?:[-+.\w]+(?=[\s,}\]]|\Z)|\S+)""",
        # key=value / key: value / key = "value" in plain text.
        rf"""(?P<_ackeep2>(?<![\w-]){after}{key}\s*[:=]\s*"""
        rf"""(?:{_SCHEMES}\s+)?)(?:{_quoted(2)}\S*|\S+)""",
    ]
    nested = rf"""(["']){key}\1\s*:\s*[\[{{]"""
    return "|".join(f"(?:{r})" for r in rules), nested


def _encodings(secret: str) -> set[str]:
    """The whole secret as the common encodings print it: upper and lower case; the
    base64 of its UTF-8 bytes (standard and URL-safe alphabets, with and without the
    ``=`` padding); their hex in lower and upper case. Only the secret encoded on its
    own: a secret inside a longer encoded text (``base64(user + ":" + secret)``) is
    not found by these forms."""
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret.upper(), secret.lower()}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update((text, text.rstrip("=")))
    forms.update((raw.hex(), raw.hex().upper()))
    return forms


@dataclass(frozen=True, kw_only=True)
class RedactionPolicy:
    """Which strings never leave a run unredacted.

    Raises:
        ConfigurationError: a secret shorter than :data:`MIN_SECRET_CHARS` characters
            (it would redact ordinary text), or a pattern that does not compile.
    """

    secrets: tuple[str, ...] = ()
    """Exact values to redact wherever they appear, also in their JSON-escaped form, their
    ``repr`` inside a larger text, with lone surrogates escaped (the text rule), in upper
    and lower case, and encoded whole as base64 or hex (the module doc)."""
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    """Regular expressions of secret shapes."""
    secret_keys: tuple[str, ...] = DEFAULT_SECRET_KEYS
    """Keys whose values are redacted (see the module doc); ``()`` turns the rule off."""
    replacement: str = REDACTED
    """What a redacted span becomes."""

    def __post_init__(self) -> None:
        secrets = tuple(self.secrets)
        for secret in secrets:
            if not isinstance(secret, str) or len(secret) < MIN_SECRET_CHARS:
                raise ConfigurationError(
                    f"a secret must be a str of at least {MIN_SECRET_CHARS} characters"
                )
        object.__setattr__(self, "secrets", secrets)
        variants: set[str] = set()
        for secret in secrets:
            # As it is, and as repr()/ascii() quote it inside a larger text (exception
            # texts such as KeyError's, validation messages): with either quote style.
            # Also as the text rule escapes a lone surrogate in it (agent_contract.text).
            forms = {secret, escape_surrogates(secret), *_encodings(secret)}
            for quote in ('"', "'"):
                forms.add(repr(secret + quote)[1:-2])
                forms.add(ascii(secret + quote)[1:-2])
            for form in forms:
                variants.add(form)
                for escaped in (json.dumps(form)[1:-1], json.dumps(form, ensure_ascii=False)[1:-1]):
                    variants.add(escaped)  # as it appears inside JSON text
                    # and as JSON text inside a JSON string (a tool returning json.dumps)
                    variants.add(json.dumps(escaped)[1:-1])
                    variants.add(json.dumps(escaped, ensure_ascii=False)[1:-1])
        parts = [re.escape(v) for v in sorted(variants, key=len, reverse=True)]
        keys = tuple(self.secret_keys)
        object.__setattr__(self, "secret_keys", keys)
        key_parts: list[str] = []
        key_regex = nested = None
        words: tuple[str, ...] = ()
        if keys:
            if not all(isinstance(k, str) and k.strip() for k in keys):
                raise ConfigurationError("secret_keys must be non-empty strings")
            rules, probe = _key_rules(keys, self.replacement)
            key_parts.append(rules)
            key_regex = re.compile(rf"^{_key_pattern(keys)}$", re.IGNORECASE)
            nested = re.compile(probe, re.IGNORECASE)
            # The key rules are costly to try at every position: they run only on a
            # text that holds one of the keys' last words at all.
            words = tuple(sorted({re.split(r"[_-]+", k.strip().lower())[-1] for k in keys}))
        try:
            shapes = [f"(?:{p})" for p in self.patterns]
            plain = re.compile("|".join(parts + shapes)) if parts + shapes else None
            full = re.compile("|".join(parts + key_parts + shapes)) if key_parts else plain
        except re.error as exc:
            raise ConfigurationError(f"bad redaction pattern: {exc}") from exc
        exact: set[str] = set(variants)
        folded: set[str] = set()
        prefilter = True
        for pattern in self.patterns:
            needles = _PATTERN_NEEDLES.get(pattern)
            if needles is None:
                prefilter = False
                break
            exact.update(needles[0])
            folded.update(needles[1])
        object.__setattr__(self, "_needles", tuple(exact) if prefilter else None)
        longest = max((len(v) for v in variants), default=0)
        object.__setattr__(self, "_margin", max(WINDOW_MARGIN_CHARS, 2 * longest))
        object.__setattr__(self, "_folded_needles", tuple(folded))
        object.__setattr__(self, "_exact_groups", needle_groups(exact))
        object.__setattr__(self, "_folded_groups", needle_groups(folded))
        object.__setattr__(self, "_regex", plain)
        object.__setattr__(self, "_keyed_regex", full)
        object.__setattr__(self, "_key_words", words)
        # Every key rule reads a key's last word followed by its closing quote, or by
        # blanks then ':' or '=' (see _key_rules): a word followed by anything else (the
        # 'token' of "input_tokens") cannot start a match. Two forms: on the lowered text
        # of an ASCII text (then exactly the rules' case-insensitivity, and fast), and
        # case-insensitive on any other (a casefolded text can lose a match the rules
        # make: 'COOKİE' casefolds to 'cooki̇e').
        key_end = rf"""(?:{"|".join(map(re.escape, words))})(?=[\s"':=])"""
        object.__setattr__(self, "_key_end", re.compile(key_end) if words else None)
        object.__setattr__(self, "_ascii_words", all(w.isascii() for w in words))
        object.__setattr__(
            self, "_key_end_any_case", re.compile(key_end, re.IGNORECASE) if words else None
        )
        object.__setattr__(self, "_secret_key", key_regex)
        object.__setattr__(self, "_nested", nested)
        # Redacted mapping keys, remembered: keys repeat (event fields, argument names).
        object.__setattr__(self, "_keys", {})

    def redact(self, text: str) -> str:
        """``text`` with every secret, secret-shaped span and secret key's value replaced
        (a key's value keeps the key, its quotes and an authorization scheme)."""
        if not text or self.is_clean(text):
            return text
        regex: re.Pattern[str] | None = getattr(
            self, "_keyed_regex" if self._may_hold_key(text) else "_regex"
        )
        if regex is None:
            return text
        return regex.sub(self._replace, text)

    def is_clean(self, text: str) -> bool:
        """True when :meth:`redact` leaves ``text`` as it is, decided by the literal
        prefilter alone: ``text`` holds none of the run's secrets (in any of their
        forms), none of the literals every default pattern's match holds (``sk-``,
        ``AKIA``, ``ghp_``, ``bearer`` in any case, ...) and no secret key's last word
        (any case) where a key ends: before a quote, a blank, ``:`` or ``=`` (so the
        ``token`` of ``input_tokens`` does not count). ``False`` means "maybe not": the patterns decide. Always ``False``
        with a pattern of the caller's own (its literals are not known)."""
        if getattr(self, "_needles") is None:  # noqa: B009
            return False
        if holds_any(text, getattr(self, "_exact_groups")):  # noqa: B009
            return False
        folded: Groups = getattr(self, "_folded_groups")  # noqa: B009
        folded_text = text.casefold()
        if folded and holds_any(folded_text, folded):
            return False
        return not self._may_hold_key(text, folded_text)

    def redact_head(self, text: str, chars: int) -> str | None:
        """The first ``chars`` characters of :meth:`redact` ``(text)``, computed from a
        window of ``text`` (the head, plus a margin of at least
        :data:`WINDOW_MARGIN_CHARS` and twice the longest secret form, so a secret
        straddling the cut is found whole): the work does not grow with the rest of
        ``text``.

        Returns ``None`` when the caller must redact the whole text instead: ``text``
        is not longer than the window, the policy has a pattern of the caller's own
        (its longest match is not known), or redaction removed so much of the window
        that its end comes too close to the head, or a secret key in the window holds
        an object or an array (see :meth:`hides_nested_values`).
        """
        margin: int = getattr(self, "_margin")  # noqa: B009
        end = chars + margin
        if chars < 0 or len(text) <= end or getattr(self, "_needles") is None:  # noqa: B009
            return None
        window = text[:end]
        if self.is_clean(window):
            # No literal of any rule before the window's end: no match starts in the
            # head (a secret key's value comes after the key's word).
            return text[:chars]
        regex: re.Pattern[str] | None = getattr(self, "_keyed_regex")  # noqa: B009
        if regex is None or self.hides_nested_values(window):
            return None  # an object under a secret key: redact_value decides, on it all
        extended = window + _CLOSE_QUOTES
        pieces: list[str] = []
        filled = position = 0
        for match in regex.finditer(extended):
            if filled + match.start() - position >= chars:
                break
            pieces.append(extended[position : match.start()])
            found = self._replace(match) if match.end() < end else self.replacement
            pieces.append(found)
            filled += match.start() - position + len(found)
            position = match.end()
            if filled >= chars:
                break
        if filled < chars:
            position += chars - filled
            pieces.append(extended[position - (chars - filled) : position])
        if position > end - margin // 2:
            return None  # the head reaches into the margin: redact the whole text
        return "".join(pieces)[:chars]

    def _replace(self, match: re.Match[str]) -> str:
        groups = match.groupdict()
        for n in (0, 1, 2):
            kept = groups.get(f"_ackeep{n}")
            if kept is not None:
                if n == 1:  # a bare value in JSON text becomes a JSON string
                    return f"{kept}{json.dumps(self.replacement)}"
                quote = groups.get(f"_acq{n}") or ""
                return f"{kept}{quote}{self.replacement}{quote}"
        found = match.group()
        if found[:6] == "bearer" and _ENGLISH_BEARER.fullmatch(found):
            return found  # "the bearer of good news": a lowercase word, then a plain word
        return self.replacement

    def is_secret_key(self, key: str) -> bool:
        """True when the value under ``key`` is redacted whatever it is (see
        :attr:`secret_keys`)."""
        regex: re.Pattern[str] | None = getattr(self, "_secret_key")  # noqa: B009
        return regex is not None and regex.match(key) is not None

    def hides_nested_values(self, text: str) -> bool:
        """True when ``text`` (JSON) holds a secret key whose value is an object or an
        array: only :meth:`redact_value` redacts that whole (not :meth:`redact`)."""
        nested: re.Pattern[str] | None = getattr(self, "_nested")  # noqa: B009
        return nested is not None and self._may_hold_key(text) and nested.search(text) is not None

    def _may_hold_key(self, text: str, folded: str | None = None) -> bool:
        """True when ``text`` holds a secret key's last word (any case) followed by a
        quote, a blank, ``:`` or ``=`` (where every key rule's key ends): only then can
        the costly key rules match. ``folded``: ``text.casefold()``, if the caller has it."""
        ascii_end: re.Pattern[str] | None = getattr(self, "_key_end")  # noqa: B009
        if ascii_end is None:
            return False
        if text.isascii():  # casefolding is lowering, and exactly the rules' case rule
            return ascii_end.search(folded if folded is not None else text.lower()) is not None
        if getattr(self, "_ascii_words"):  # noqa: B009
            # ASCII words: the non-ASCII characters a case-insensitive match takes for an
            # ASCII letter become it; then lowering is the rules' case rule.
            if any(char in text for char in _ASCII_FOLDS):
                text = text.translate(_ASCII_FOLDS_TABLE)
            return ascii_end.search(text.lower()) is not None
        any_case: re.Pattern[str] = getattr(self, "_key_end_any_case")  # noqa: B009
        return any_case.search(text) is not None

    def redact_value(self, value: Any) -> Any:
        """A deep copy of a JSON-like ``value`` with every string redacted.

        Dicts, lists and tuples are walked (tuples become lists); the value under a
        secret key (:attr:`secret_keys`) becomes the replacement whatever it is (unless
        ``None`` or a boolean); ``None``, booleans and numbers are kept, except a number
        whose JSON text holds a secret (it becomes the redacted text); anything else becomes its redacted ``repr`` so
        that no object with a secret in its attributes slips through.
        """
        if isinstance(value, str):
            return self.redact(value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            # A secret made of digits must not survive as a JSON number. (An int's JSON
            # text is int.__repr__, which is cheaper to call than json.dumps.)
            try:
                text = int.__repr__(value) if isinstance(value, int) else json.dumps(value)
            except ValueError:  # an int past sys.get_int_max_str_digits(), or NaN/inf
                return f"<{type(value).__name__} that cannot be written as JSON>"
            redacted = self.redact(text)
            return value if redacted == text else redacted
        if type(value) is dict or isinstance(value, Mapping):  # dict first: no ABC check
            return {self._redact_key(k): self._redact_under(k, v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(v) for v in value]
        return self.redact(repr(value))

    def _redact_under(self, key: Any, value: Any) -> Any:
        """``value`` redacted, or replaced whole when ``key`` is a secret key (``None``
        and booleans are kept: they hold no secret)."""
        if (
            value is not None
            and not isinstance(value, bool)
            and isinstance(key, str)
            and self.is_secret_key(key)
        ):
            return self.replacement
        return self.redact_value(value)

    def _redact_key(self, key: Any) -> str:
        """:meth:`redact` of ``str(key)``, remembered for up to :data:`_KEY_CACHE_SIZE` keys."""
        text = key if isinstance(key, str) else str(key)
        keys: dict[str, str] = getattr(self, "_keys")  # noqa: B009 (set in __post_init__)
        redacted = keys.get(text)
        if redacted is None:
            redacted = self.redact(text)
            if len(keys) < _KEY_CACHE_SIZE:
                keys[text] = redacted
        return redacted

    def with_secrets(self, extra: Iterable[str]) -> RedactionPolicy:
        """A copy that also redacts ``extra``."""
        return RedactionPolicy(
            secrets=(*self.secrets, *extra),
            patterns=self.patterns,
            secret_keys=self.secret_keys,
            replacement=self.replacement,
        )
