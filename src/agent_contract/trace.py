"""The run trace: append-only, JSON-serializable, redacted before storage.

Every event is a dict with ``seq`` (0-based position), ``type`` and event fields.
Event types, in the order a run produces them:

- ``run_started``: ``run_id``, ``tools_offered`` (names), ``budget``.
- ``model_call``: ``step`` (1-based).
- ``model_response``: ``step``, ``shape`` (``final``, ``tool_calls`` or ``invalid``),
  ``tool_calls`` (``[{"id", "name"}]``), ``text_chars``.
- ``contract_violation``: ``code``, ``message``, ``tool_call_id``.
- ``tool_call``: ``id``, ``name``, ``arguments`` (the validated arguments, redacted),
  ``decision`` (``run``, ``awaiting_approval`` or ``refused``), ``error_kind`` when
  refused.
- ``tool_result``: ``id``, ``name``, ``status``, ``error_kind``, ``outcome``,
  ``side_effects_possible``, ``chars``, ``truncated``, ``preview`` (first
  :data:`PREVIEW_CHARS` characters of the redacted content).
- ``approval_requested`` / ``approval_decided``: for write tools.
- ``write_settled``: ``id``, ``name``, ``idempotency_key``, ``status``, ``outcome``.
- ``run_resumed``: ``run_id`` (a paused run continued, possibly in another process).
- ``stop``: ``reason``, ``detail``.

Tool events of one batch are written in the order the model issued the calls:
``tool_call`` events when the batch is planned, ``tool_result`` events when it closes,
so the trace is the same whichever order parallel calls finished.

Redaction: a :class:`RedactionPolicy` is applied to every string (keys and values)
before an event is stored, so a secret handed to the run never reaches the trace.
The default output of the CLI is built from the trace and the result summary, never
from raw messages.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .errors import ConfigurationError

REDACTED: Final = "[REDACTED]"
PREVIEW_CHARS: Final = 200
MIN_SECRET_CHARS: Final = 4
_KEY_CACHE_SIZE: Final = 4096
_JSONL: Final = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
"""One encoder for trace lines (``json.dumps`` with options builds a new one per call)."""

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
    """Exact values to redact wherever they appear, also in their JSON-escaped form."""
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
            forms = {secret}
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


class Trace:
    """Append-only list of redacted events. Thread-safe.

    Args:
        redaction: applied to every event before it is stored.
        events: earlier events, for a resumed run (stored as given: they were
            redacted when first recorded).
    """

    def __init__(
        self, redaction: RedactionPolicy | None = None, events: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.redaction = redaction or RedactionPolicy()
        self._events: list[dict[str, Any]] = []
        self._bytes = 0
        self._lock = threading.Lock()
        for event in events:
            self._store(dict(event))

    def _store(self, event: dict[str, Any], line: str | None = None) -> None:
        """Append ``event``; ``line`` is its JSONL text when already encoded."""
        if line is None:
            line = _JSONL.encode(event)
        self._events.append(event)
        self._bytes += len(line.encode("utf-8")) + 1

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Redact and store one event; returns the stored copy.

        Raises:
            TypeError: a field is not JSON-serializable after redaction (a bug in the
                caller: events carry plain data).
        """
        with self._lock:
            seq = len(self._events)
            stored, line = self._redacted_line({"seq": seq, "type": type_, **fields})
            if stored is None:
                # Slow path: walk the values (numbers holding a secret, objects, or a
                # redaction that cut through JSON syntax).
                stored = {"seq": seq, "type": type_, **self.redaction.redact_value(fields)}
                line = _JSONL.encode(stored)
            self._store(stored, line)
            return dict(stored)

    def _redacted_line(self, event: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """Fast path: redact the event's JSON line in one pass and decode it back.

        Returns ``(None, "")`` when the event is not plain JSON data or the redacted
        line no longer parses; the caller then redacts value by value. Over-redaction
        (a match across JSON syntax) can only remove text, never keep a secret.
        """
        try:
            line = _JSONL.encode(event)
        except (TypeError, ValueError):
            return None, ""
        redacted = self.redaction.redact(line)
        try:
            return json.loads(redacted), redacted
        except ValueError:
            return None, ""

    @property
    def events(self) -> list[dict[str, Any]]:
        """Copies of the stored events, oldest first."""
        with self._lock:
            return [json.loads(json.dumps(e)) for e in self._events]

    @property
    def size_bytes(self) -> int:
        """Size of :meth:`to_jsonl`'s output, in bytes (UTF-8)."""
        return self._bytes

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        """The events whose ``type`` is ``type_``."""
        with self._lock:
            return [json.loads(json.dumps(e)) for e in self._events if e["type"] == type_]

    def to_jsonl(self) -> str:
        """One JSON object per line, keys sorted, non-ASCII kept literal."""
        with self._lock:
            return "".join(_JSONL.encode(e) + "\n" for e in self._events)

    def write_jsonl(self, path: str | Path) -> None:
        """Write :meth:`to_jsonl` to ``path`` (UTF-8)."""
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    def __len__(self) -> int:
        return len(self._events)
