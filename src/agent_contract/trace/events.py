"""Trace events: typed, frozen records of what a run did, each with a time.

Every event has a ``seq`` (0-based position in its run), a ``type``, a UTC ``time``, an
``offset_seconds`` (active seconds since the run started: the run's own monotonic clock,
which keeps counting across a resume in another process and leaves out time spent
paused) and the event's fields. Event types, in the order a run produces them
(:data:`EVENT_TYPES`):

- ``run_started``: ``run_id``, ``tools_offered`` (names), ``budget``.
- ``model_call``: ``step`` (1-based).
- ``model_response``: ``step``, ``shape`` (``final``, ``tool_calls`` or ``invalid``),
  ``tool_calls`` (``[{"id", "name"}]``), ``text_chars``, ``input_tokens`` and
  ``output_tokens`` when the model reported its token usage; for a reply the model did not
  finish (cut, filtered, refused) also ``finish_reason`` (the provider's value) and, for
  a refusal, ``refusal`` (its first :data:`PREVIEW_CHARS` characters, redacted).
- ``contract_violation``: ``code``, ``message``, ``tool_call_id``; for
  ``unparseable_arguments`` also ``raw_arguments`` (the text the model sent, redacted,
  then cut to :data:`RAW_ARGUMENTS_CHARS` characters), ``raw_arguments_chars`` (its
  length) and ``raw_arguments_cut``.
- ``tool_call``: ``id``, ``name``, ``arguments`` (the validated arguments, redacted),
  ``decision`` (``run``, ``awaiting_approval`` or ``refused``), ``error_kind`` when
  refused. A refused call's arguments whose redacted JSON is longer than
  :data:`RAW_ARGUMENTS_CHARS` are kept as ``{"arguments_cut": true, "arguments_chars",
  "arguments_text"}`` (the redacted JSON, cut), so the trace cap holds.
- ``tool_result``: ``id``, ``name``, ``status``, ``error_kind``, ``outcome``,
  ``side_effects_possible``, ``chars``, ``truncated``, ``preview`` (first
  :data:`PREVIEW_CHARS` characters of the redacted content).
- ``approval_requested`` / ``approval_decided``: for write tools.
- ``write_settled``: ``id``, ``name``, ``idempotency_key``, ``status``, ``outcome``,
  ``arguments`` (the ones it ran with, redacted), ``edited`` (a human edited them).
- ``run_resumed``: ``run_id`` (a paused run continued, possibly in another process).
- ``tool_retry``: ``id``, ``name``, ``attempt`` (2 and up): a framework layer ran an
  admitted call again (charged to ``max_tool_calls``).
- ``arguments_rewritten``: ``id``, ``name``, ``arguments`` (redacted), ``by``, ``valid``:
  another layer replaced a call's arguments before it ran; valid ones are what ran.
- ``state_update``: ``id``, ``keys``: a call's successful result came with a framework
  state update (key names only).
- ``refused_after_stop``: ``what`` (``model_call`` or ``tool_call``), ``id`` (a tool
  call's), ``reason`` (the stop the run halted with): a framework asked for more work
  after the contract stopped the run, and got nothing.
- ``child_started``: ``agent``, ``tools_offered``: a child agent (a sub-agent, a
  worker, an agent wrapped as a tool) began a child scope of the run inside one of its
  tool calls.
- ``tool_progress``: ``id``, ``source`` (dotted emitter name or ``None``), ``data``:
  what a tool sent through ``ToolContext.emitter`` while it ran.
- ``stop``: ``reason``, ``detail``.

The seeds' ``tool.start`` / ``tool.end`` / ``tool.error`` map onto the existing events:
``tool.start`` is a ``tool_call`` with ``decision`` ``run``; ``tool.end`` a
``tool_result`` with ``status`` ``success``; ``tool.error`` a ``tool_result`` with another
status, or a ``tool_call`` with ``decision`` ``refused`` (see :func:`tool_phase`).

An event a child scope recorded carries a ``scope`` field, ``{"agent", "call_path"}``:
the child agent and the ids of the tool calls, from the run's top agent down, that
started it. Events without one are the top agent's. One run, one trace: the tree is
read from those fields (the redaction and the size budget apply to all of it).

Tool events of one batch are written in the order the model issued the calls:
``tool_call`` events when the batch is planned, ``tool_result`` events when it closes,
so the trace is the same whichever order parallel calls finished.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = [
    "EVENT_TYPES",
    "HEADER_KEYS",
    "PREVIEW_CHARS",
    "RAW_ARGUMENTS_CHARS",
    "EventType",
    "TraceEvent",
    "format_time",
    "json_line",
    "tool_phase",
]

EventType = Literal[
    "run_started",
    "model_call",
    "model_response",
    "contract_violation",
    "tool_call",
    "tool_result",
    "approval_requested",
    "approval_decided",
    "write_settled",
    "run_resumed",
    "tool_retry",
    "arguments_rewritten",
    "state_update",
    "refused_after_stop",
    "child_started",
    "tool_progress",
    "stop",
]
"""The event types the runtime writes (see the module doc for their fields)."""

EVENT_TYPES: Final[tuple[str, ...]] = EventType.__args__  # type: ignore[attr-defined]
"""Every :data:`EventType`, in declaration order."""

RAW_ARGUMENTS_CHARS: Final = 2_000
"""Characters of unparseable tool-call argument text a ``contract_violation`` event keeps
(redacted first, then cut)."""

PREVIEW_CHARS: Final = 200
"""Characters of a tool result's redacted content a ``tool_result`` event keeps."""

_JSONL: Final = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
"""One encoder for trace lines (``json.dumps`` with options builds a new one per call)."""

HEADER_KEYS: Final = frozenset({"seq", "type", "time", "offset_seconds"})
"""Keys every event carries; no event field may use them."""


def format_time(moment: datetime) -> str:
    """``moment`` in UTC as ISO 8601 with microseconds and a ``Z``, e.g.
    ``2025-06-01T09:30:00.123456Z`` (always 27 characters)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _prebuilt_encoder() -> Callable[[Any, int], list[str]] | None:
    """``_JSONL``'s C encoder, built once (``JSONEncoder.encode`` builds one, and a
    closure, per call), without the circular-reference check: a cyclic value ends in
    ``RecursionError``, and :func:`json_line` then asks ``_JSONL`` for its usual
    error. ``None`` where the C accelerator is missing."""
    if c_make_encoder is None:
        return None
    encoder: Callable[[Any, int], list[str]] = c_make_encoder(
        None,
        _JSONL.default,
        encode_basestring,
        None,
        _JSONL.key_separator,
        _JSONL.item_separator,
        True,
        False,
        True,
    )
    return encoder


_FAST_JSONL: Final = _prebuilt_encoder()


def json_line(data: Mapping[str, Any]) -> str:
    """``data`` as one trace line: JSON, keys sorted, non-ASCII kept literal, no newline.

    Raises:
        TypeError: ``data`` holds something that is not JSON data.
        ValueError: ``data`` holds a number JSON cannot write, or a cycle.
    """
    if _FAST_JSONL is not None:
        try:
            return "".join(_FAST_JSONL(data, 0))
        except RecursionError:
            pass  # a cycle (or nesting past the limit): the checked encoder says which
    return _JSONL.encode(data)


@dataclass(frozen=True, kw_only=True)
class TraceEvent:
    """One event of a run's trace (read-only)."""

    seq: int
    """Position in the run's trace, from 0."""
    type: str
    """What happened: one of :data:`EVENT_TYPES` for events the runtime writes."""
    time: datetime
    """When it was recorded, timezone-aware UTC."""
    offset_seconds: float
    """Active seconds since the run started when it was recorded (the run's monotonic
    clock: it leaves out time spent paused for approval and continues across a
    resume), rounded to microseconds."""
    fields: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The event's own fields (JSON data, redacted); see the module doc per type."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy: ``seq``, ``type``, ``time`` (ISO 8601, UTC),
        ``offset_seconds``, then the fields."""
        return {
            "seq": self.seq,
            "type": self.type,
            "time": format_time(self.time),
            "offset_seconds": self.offset_seconds,
            **json.loads(json.dumps(dict(self.fields))),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceEvent:
        """Inverse of :meth:`to_dict` (for a trace read back from a snapshot).

        Raises:
            ValueError: ``data`` lacks a header key or holds one of the wrong type
                (``seq`` an int, ``type`` a str, ``time`` an ISO 8601 UTC time,
                ``offset_seconds`` a number).
        """
        seq, kind = data.get("seq"), data.get("type")
        moment, offset = data.get("time"), data.get("offset_seconds")
        if isinstance(seq, bool) or not isinstance(seq, int) or not isinstance(kind, str):
            raise ValueError(f"not a trace event: seq {seq!r}, type {kind!r}")
        if not isinstance(moment, str) or isinstance(offset, bool):
            raise ValueError(f"trace event {seq} has no time")
        if not isinstance(offset, int | float):
            raise ValueError(f"trace event {seq} has no offset_seconds")
        try:
            parsed = datetime.fromisoformat(moment)
        except ValueError:
            raise ValueError(f"trace event {seq}: time {moment!r} is not ISO 8601") from None
        if parsed.utcoffset() is None:
            raise ValueError(f"trace event {seq}: time {moment!r} is not UTC")
        rest = {k: v for k, v in data.items() if k not in HEADER_KEYS}
        return cls(
            seq=seq,
            type=kind,
            time=parsed.astimezone(UTC),
            offset_seconds=float(offset),
            fields=MappingProxyType(rest),
        )


def tool_phase(event: TraceEvent) -> str | None:
    """The seeds' tool phase of ``event``: ``"tool.start"``, ``"tool.end"``,
    ``"tool.error"``, or ``None`` for an event that is none of them (an awaiting
    approval ``tool_call`` included: it starts when approved, as a write)."""
    if event.type == "tool_call":
        decision = event.fields.get("decision")
        if decision == "run":
            return "tool.start"
        return "tool.error" if decision == "refused" else None
    if event.type == "tool_result":
        return "tool.end" if event.fields.get("status") == "success" else "tool.error"
    return None
