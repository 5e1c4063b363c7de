"""Redaction: which strings never leave a run unredacted.

A :class:`RedactionPolicy` is applied to every string (keys and values) of a trace
event before it is stored, to tool results before the model reads them, and to the
output and stop detail of a run, so a secret handed to the run never reaches the trace,
the model or the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import ConfigurationError
from ..text import escape_surrogates

__all__ = ["DEFAULT_PATTERNS", "MIN_SECRET_CHARS", "REDACTED", "RedactionPolicy"]

REDACTED: Final = "[REDACTED]"
"""What a redacted span becomes (the default :attr:`RedactionPolicy.replacement`)."""
MIN_SECRET_CHARS: Final = 4
"""The shortest secret accepted, in characters: a shorter one would redact ordinary text."""
_KEY_CACHE_SIZE: Final = 4096

DEFAULT_PATTERNS: Final[tuple[str, ...]] = (
    r"sk-[A-Za-z0-9_-]{16,}",  # OpenAI/Anthropic-style API keys
    r"AKIA[0-9A-Z]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack tokens
    r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*",  # bearer credentials
)
"""Secret shapes redacted in every run, on top of the secrets a run is given."""


@dataclass(frozen=True, kw_only=True)
class RedactionPolicy:
    """Which strings never leave a run unredacted.

    Raises:
        ConfigurationError: a secret shorter than :data:`MIN_SECRET_CHARS` characters
            (it would redact ordinary text), or a pattern that does not compile.
    """

    secrets: tuple[str, ...] = ()
    """Exact values to redact wherever they appear, also in their JSON-escaped form, their
    ``repr`` inside a larger text, and with lone surrogates escaped (the text rule)."""
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    """Regular expressions of secret shapes."""
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
            forms = {secret, escape_surrogates(secret)}
            for quote in ('"', "'"):
                forms.add(repr(secret + quote)[1:-2])
                forms.add(ascii(secret + quote)[1:-2])
            for form in forms:
                variants.add(form)
                variants.add(json.dumps(form)[1:-1])  # as it appears inside JSON text
                variants.add(json.dumps(form, ensure_ascii=False)[1:-1])
        parts = [re.escape(v) for v in sorted(variants, key=len, reverse=True)]
        try:
            parts.extend(f"(?:{p})" for p in self.patterns)
            compiled = re.compile("|".join(parts)) if parts else None
        except re.error as exc:
            raise ConfigurationError(f"bad redaction pattern: {exc}") from exc
        object.__setattr__(self, "_regex", compiled)
        # Redacted mapping keys, remembered: keys repeat (event fields, argument names).
        object.__setattr__(self, "_keys", {})

    def redact(self, text: str) -> str:
        """``text`` with every secret and secret-shaped span replaced."""
        regex: re.Pattern[str] | None = getattr(self, "_regex")  # noqa: B009 (set in __post_init__)
        if regex is None or not text:
            return text
        return regex.sub(self.replacement, text)

    def redact_value(self, value: Any) -> Any:
        """A deep copy of a JSON-like ``value`` with every string redacted.

        Dicts, lists and tuples are walked (tuples become lists); ``None``, booleans
        and numbers are kept, except a number whose JSON text holds a secret (it
        becomes the redacted text); anything else becomes its redacted ``repr`` so
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
            return {self._redact_key(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(v) for v in value]
        return self.redact(repr(value))

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
            secrets=(*self.secrets, *extra), patterns=self.patterns, replacement=self.replacement
        )
