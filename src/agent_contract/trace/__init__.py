"""The run trace: typed, timed events, redaction, and sinks that export events.

- :mod:`~agent_contract.trace.events`: :class:`TraceEvent` and the event types;
- :mod:`~agent_contract.trace.redaction`: :class:`RedactionPolicy`;
- :mod:`~agent_contract.trace.recorder`: :class:`Trace`, the run's own record;
- :mod:`~agent_contract.trace.sinks`: the :class:`TraceSink` seam, :class:`MemorySink`
  :class:`JsonlSink`, :class:`CallbackSink`, :class:`QueueSink`, :class:`NullSink`;
- :mod:`~agent_contract.trace.otel`: :class:`OTelSink`, the runs as OpenTelemetry spans
  (loaded on first use; it needs the ``agent-contract[otel]`` extra when made).
"""

from ..lazy import lazy_names as _lazy_names
from .events import (
    EVENT_TYPES,
    PREVIEW_CHARS,
    RAW_ARGUMENTS_CHARS,
    EventType,
    TraceEvent,
    tool_phase,
)
from .recorder import ProgressEmitter, ScopedTrace, Trace
from .redaction import (
    DEFAULT_PATTERNS,
    DEFAULT_SECRET_KEYS,
    MIN_SECRET_CHARS,
    REDACTED,
    RedactionPolicy,
)
from .sinks import (
    CallbackSink,
    CollectingSink,
    JsonlSink,
    MemorySink,
    NullSink,
    QueueSink,
    TraceSink,
)

__all__ = [
    "DEFAULT_PATTERNS",
    "DEFAULT_SECRET_KEYS",
    "EVENT_TYPES",
    "MIN_SECRET_CHARS",
    "PREVIEW_CHARS",
    "RAW_ARGUMENTS_CHARS",
    "REDACTED",
    "CallbackSink",
    "CollectingSink",
    "EventType",
    "JsonlSink",
    "MemorySink",
    "NullSink",
    "OTelSink",
    "ProgressEmitter",
    "QueueSink",
    "RedactionPolicy",
    "ScopedTrace",
    "Trace",
    "TraceEvent",
    "TraceSink",
    "tool_phase",
]

_HOMES = {"OTelSink": "otel"}
"""Names loaded on first use -> their submodule (``otel`` imports OpenTelemetry only
when an ``OTelSink`` is made)."""

__getattr__, __dir__ = _lazy_names(__name__, _HOMES, __all__)
