"""The run trace: typed, timed events, redaction, and sinks that export events.

- :mod:`~agent_contract.trace.events`: :class:`TraceEvent` and the event types;
- :mod:`~agent_contract.trace.redaction`: :class:`RedactionPolicy`;
- :mod:`~agent_contract.trace.recorder`: :class:`Trace`, the run's own record;
- :mod:`~agent_contract.trace.sinks`: the :class:`TraceSink` seam, :class:`MemorySink`
  and :class:`JsonlSink`.
"""

from .events import EVENT_TYPES, PREVIEW_CHARS, RAW_ARGUMENTS_CHARS, EventType, TraceEvent
from .recorder import ScopedTrace, Trace
from .redaction import (
    DEFAULT_PATTERNS,
    DEFAULT_SECRET_KEYS,
    MIN_SECRET_CHARS,
    REDACTED,
    RedactionPolicy,
)
from .sinks import JsonlSink, MemorySink, TraceSink

__all__ = [
    "DEFAULT_PATTERNS",
    "DEFAULT_SECRET_KEYS",
    "EVENT_TYPES",
    "MIN_SECRET_CHARS",
    "PREVIEW_CHARS",
    "RAW_ARGUMENTS_CHARS",
    "REDACTED",
    "EventType",
    "JsonlSink",
    "MemorySink",
    "RedactionPolicy",
    "ScopedTrace",
    "Trace",
    "TraceEvent",
    "TraceSink",
]
