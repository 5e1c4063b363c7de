"""The run trace: append-only, JSON-serializable, redacted before storage, timed.

:class:`Trace` numbers each event, redacts its fields with the run's
:class:`~agent_contract.trace.RedactionPolicy` (every string, keys and values), stamps
it with a UTC time and the run's offset in seconds, stores it as one JSON line and hands
it to the run's :class:`~agent_contract.trace.TraceSink`, if any. A lone surrogate in a
field is escaped first (the text rule of :mod:`agent_contract.text`), so every stored line
is valid UTF-8. Event types and their
fields are listed in :mod:`agent_contract.trace.events`.

The default output of the CLI is built from the trace and the result summary, never
from raw messages.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..text import escape_value, has_surrogates
from .events import HEADER_KEYS, TraceEvent, format_time, json_line
from .redaction import RedactionPolicy
from .sinks import NullSink, TraceSink

__all__ = ["ProgressEmitter", "ScopedTrace", "Trace"]


class _WallClock:
    """The current UTC time as a trace event's ``time`` text (the form of
    :func:`~agent_contract.trace.events.format_time`, e.g.
    ``2025-06-01T09:30:00.123456Z``): the date and time to the second are formatted once
    per second, the microseconds every time. Thread-safe (one tuple, replaced whole)."""

    def __init__(self) -> None:
        self._cached: tuple[int, str] = (-1, "")

    def now(self) -> str:
        """The time now, to the microsecond (floored, as ``datetime.now`` does)."""
        second, micros = divmod(time.time_ns() // 1000, 1_000_000)
        cached = self._cached
        if cached[0] != second:
            moment = datetime.fromtimestamp(second, UTC)
            cached = (second, format_time(moment)[:19])
            self._cached = cached
        return f"{cached[1]}.{micros:06d}Z"


_WALL_CLOCK = _WallClock()


def _monotonic_since_now() -> Callable[[], float]:
    started = time.monotonic()
    return lambda: time.monotonic() - started


class Trace:
    """The append-only list of redacted, timed events of one run. Thread-safe.

    Args:
        redaction: applied to every event's fields before the event is stored.
        events: earlier events (as :attr:`events` returns them), for a resumed run:
            stored as given (they were redacted when first recorded) and not sent to
            ``sink`` again.
        run_id: the run the events belong to (what ``sink`` is told).
        sink: receives each event appended from now on.
        clock: the run's active seconds so far, for each event's ``offset_seconds``;
            default: monotonic seconds since this trace was made.

    Raises:
        ValueError: an earlier event is not a well-formed trace event.
    """

    def __init__(
        self,
        redaction: RedactionPolicy | None = None,
        events: Iterable[Mapping[str, Any]] = (),
        *,
        run_id: str = "",
        sink: TraceSink | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.redaction = redaction or RedactionPolicy()
        self.run_id = run_id
        self._sink = None if isinstance(sink, NullSink) else sink
        self._clock = clock or _monotonic_since_now()
        self._lines: list[str] = []
        self._types: list[str] = []
        self._bytes = 0
        self._lock = threading.Lock()
        for event in events:
            record = TraceEvent.from_dict(event)
            self._store(record.type, json_line(escape_value(event)[0]))

    def _store(self, type_: str, line: str) -> None:
        self._lines.append(line)
        self._types.append(type_)
        self._bytes += len(line.encode("utf-8")) + 1

    def append(self, type_: str, **fields: Any) -> TraceEvent:
        """Redact, time and store one event, and hand it to the sink.

        Returns:
            The stored event (a copy: changing it changes nothing stored).

        Raises:
            ConfigurationError: a field is named ``seq``, ``type``, ``time`` or
                ``offset_seconds`` (set by the trace).
            Exception: whatever the sink raises (see :class:`TraceSink`).
        """
        with self._lock:
            line = self._add(type_, fields)
            event = _event(line)
            if self._sink is not None:
                self._sink.emit(self.run_id, event)
            return event

    def record(self, type_: str, **fields: Any) -> None:
        """:meth:`append` without building the returned event (the runtime's hot path:
        the event is built only when there is a sink to hand it to).

        Raises:
            ConfigurationError: as :meth:`append`.
            Exception: whatever the sink raises (see :class:`TraceSink`).
        """
        with self._lock:
            line = self._add(type_, fields)
            if self._sink is not None:
                self._sink.emit(self.run_id, _event(line))

    def _add(self, type_: str, fields: dict[str, Any]) -> str:
        """Redact, time, encode and store one event; its stored line. The caller holds
        the lock.

        Fast path: the whole line (header included) encoded once; when the redaction's
        literal prefilter finds nothing it could match and the line has no lone
        surrogate, that line is stored as it is (redaction would leave it unchanged).
        Otherwise the fields are redacted first (:meth:`_redacted`, or value by value),
        then timed and encoded again.
        """
        reserved = HEADER_KEYS & fields.keys()
        if reserved:
            raise ConfigurationError(f"trace event fields may not be named {sorted(reserved)}")
        seq = len(self._lines)
        stamp = _WALL_CLOCK.now()
        offset = round(self._clock(), 6)
        try:
            line = json_line(
                {
                    "seq": seq,
                    "type": type_,
                    **fields,
                    "time": stamp,
                    "offset_seconds": offset,
                }
            )
        except (TypeError, ValueError):
            line = ""
        kind = type_
        if not line or has_surrogates(line) or not self.redaction.is_clean(line):
            stored = self._redacted({"seq": seq, "type": type_, **fields})
            if stored is None:
                # Slow path: walk the values (lone surrogates, numbers holding a secret,
                # objects, or a redaction that cut through JSON syntax).
                escaped, _ = escape_value(fields)
                stored = {"seq": seq, "type": type_, **self.redaction.redact_value(escaped)}
            stored["time"] = stamp
            stored["offset_seconds"] = offset
            line = json_line(stored)
            kind = str(stored["type"])
        self._store(kind, line)
        return line

    def _redacted(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Fast path: redact the event's JSON line in one pass and decode it back.

        Returns ``None`` when the event is not plain JSON data or the redacted line no
        longer parses; the caller then redacts value by value. Over-redaction (a match
        across JSON syntax) can only remove text, never keep a secret.
        """
        try:
            line = json_line(event)
        except (TypeError, ValueError):
            return None
        if has_surrogates(line) or self.redaction.hides_nested_values(line):
            return None
        try:
            decoded: dict[str, Any] = json.loads(self.redaction.redact(line))
        except ValueError:
            return None
        return decoded

    @property
    def events(self) -> list[dict[str, Any]]:
        """Copies of the stored events as JSON data, oldest first (see
        :meth:`TraceEvent.to_dict`)."""
        with self._lock:
            return [json.loads(line) for line in self._lines]

    @property
    def records(self) -> list[TraceEvent]:
        """The stored events as :class:`TraceEvent` records, oldest first."""
        return [TraceEvent.from_dict(event) for event in self.events]

    @property
    def size_bytes(self) -> int:
        """Size of :meth:`to_jsonl`'s output, in bytes (UTF-8)."""
        return self._bytes

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        """Copies of the events whose ``type`` is ``type_``."""
        with self._lock:
            return [
                json.loads(line)
                for line, kind in zip(self._lines, self._types, strict=True)
                if kind == type_
            ]

    def to_jsonl(self) -> str:
        """One JSON object per line, keys sorted, non-ASCII kept literal."""
        with self._lock:
            return "".join(line + "\n" for line in self._lines)

    def write_jsonl(self, path: str | Path) -> None:
        """Write :meth:`to_jsonl` to ``path`` (UTF-8)."""
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def root(self) -> Trace:
        """The run's own trace (this one; a child scope's trace names its run's)."""
        return self


class ScopedTrace(Trace):
    """The part of a run's trace that one child scope writes: every event it records
    goes into the run's own trace (:attr:`root`), redacted, timed and counted against
    the run's size budget there, with a ``scope`` field added
    (``{"agent": ..., "call_path": [...]}``: the agent and the tool-call ids, from the
    run's top agent down, of the calls that started it). Reading it reads the whole
    run's trace: one trace is one tree.

    Args:
        root: the run's trace.
        scope: the JSON-ready ``scope`` field its events carry.
    """

    def __init__(self, root: Trace, scope: Mapping[str, Any]) -> None:
        # No Trace.__init__: the storage, lock, clock and sink are the root's.
        self._root = root.root
        self.scope = dict(scope)
        """The ``scope`` field of this scope's events."""
        self.redaction = self._root.redaction
        self.run_id = self._root.run_id

    @property
    def root(self) -> Trace:
        """The run's own trace."""
        return self._root

    def append(self, type_: str, **fields: Any) -> TraceEvent:
        """:meth:`Trace.append` into the run's trace, with this scope's field."""
        return self.root.append(type_, **{**fields, "scope": self.scope})

    def record(self, type_: str, **fields: Any) -> None:
        """:meth:`Trace.record` into the run's trace, with this scope's field."""
        self.root.record(type_, **{**fields, "scope": self.scope})

    @property
    def events(self) -> list[dict[str, Any]]:
        """The run's events (every scope's)."""
        return self.root.events

    @property
    def size_bytes(self) -> int:
        """The run's trace size, in bytes."""
        return self.root.size_bytes

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        """The run's events of ``type_`` (every scope's)."""
        return self.root.of_type(type_)

    def to_jsonl(self) -> str:
        """The run's trace as JSONL."""
        return self.root.to_jsonl()

    def __len__(self) -> int:
        return len(self.root)


class ProgressEmitter:
    """What a tool sends progress through mid-run (``ToolContext.emitter``): each
    :meth:`progress` records a ``tool_progress`` event (``id``: the call's, ``source``:
    the dotted name of the emitter, ``None`` for the tool's own, ``data``: the fields
    given, redacted as every event) into the run's trace, so the run's sink gets it at
    once, while the call goes on.

    Args:
        trace: the trace of the scope the call runs in.
        tool_call_id: the call the events belong to.
        source: the emitter's dotted name (see :meth:`child`).
    """

    def __init__(self, trace: Trace, tool_call_id: str, source: str | None = None) -> None:
        self._trace = trace
        self.tool_call_id = tool_call_id
        self.source = source

    def progress(self, **data: Any) -> None:
        """Record one ``tool_progress`` event carrying ``data`` (JSON data).

        Raises:
            Exception: whatever the run's sink raises (see :class:`TraceSink`).
        """
        self._trace.record("tool_progress", id=self.tool_call_id, source=self.source, data=data)

    def child(self, source: str) -> ProgressEmitter:
        """An emitter for a sub-agent or a part of the tool, whose events carry
        ``source`` appended to this one's (``"a"`` then ``"a.b"``), on the same stream.

        Raises:
            ValueError: ``source`` is empty.
        """
        if not source:
            raise ValueError("a child emitter needs a non-empty source")
        name = source if self.source is None else f"{self.source}.{source}"
        return ProgressEmitter(self._trace, self.tool_call_id, name)


def _event(line: str) -> TraceEvent:
    """The :class:`TraceEvent` a stored line holds (a fresh copy)."""
    return TraceEvent.from_dict(json.loads(line))
