"""Trace sinks: where a run's events go as they are recorded.

Every run keeps its own in-memory :class:`~agent_contract.trace.Trace` (the one a
``RunResult`` carries and a snapshot stores). A :class:`TraceSink` given to
``Contract(trace_sink=...)`` receives each event of every run of that contract as well,
at the moment it is recorded, in ``seq`` order per run: the seam for exporting a trace
elsewhere (a JSONL file with :class:`JsonlSink`, an OpenTelemetry exporter of your
own). A sink receives the redacted event, never raw values.

Events restored from a snapshot (a resumed run) are not sent again; a sink sees each
event once, in the process that recorded it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType
from typing import Protocol, TextIO, runtime_checkable

from .events import TraceEvent, json_line

__all__ = ["JsonlSink", "MemorySink", "TraceSink"]


@runtime_checkable
class TraceSink(Protocol):
    """Receives each trace event of a run as it is recorded.

    ``emit`` is called with the run's lock held, so events of one run arrive in ``seq``
    order; it must not call back into the run. An exception it raises propagates to
    the code that recorded the event and ends the run loudly: an audit trail that
    cannot be written is not skipped in silence.
    """

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Take one event of the run ``run_id``."""


class MemorySink:
    """Keeps every event it receives, in order (for tests and in-process consumers).
    Thread-safe."""

    def __init__(self) -> None:
        self._events: list[tuple[str, TraceEvent]] = []
        self._lock = threading.Lock()

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Keep ``event`` of run ``run_id``."""
        with self._lock:
            self._events.append((run_id, event))

    @property
    def events(self) -> list[tuple[str, TraceEvent]]:
        """``(run_id, event)`` for every event received, oldest first."""
        with self._lock:
            return list(self._events)

    def of_run(self, run_id: str) -> list[TraceEvent]:
        """The events of one run, in ``seq`` order."""
        with self._lock:
            return [event for rid, event in self._events if rid == run_id]


class JsonlSink:
    """Writes each event as one JSON line ``{"run_id", "seq", "type", "time",
    "offset_seconds", ...fields}`` (keys sorted, UTF-8, non-ASCII kept), flushed per
    event, so the file is complete up to the last event even if the process dies.

    Args:
        target: a path (opened for appending, created with its folder if missing) or
            an open text stream (not closed by :meth:`close`).

    Raises:
        OSError: the file cannot be opened; later, a line cannot be written.
    """

    def __init__(self, target: str | Path | TextIO) -> None:
        self._lock = threading.Lock()
        if isinstance(target, str | Path):
            path = Path(target)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._stream: TextIO = path.open("a", encoding="utf-8")
            self._owned = True
        else:
            self._stream = target
            self._owned = False

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Append ``event`` of run ``run_id`` as one line and flush."""
        line = json_line({"run_id": run_id, **event.to_dict()})
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        """Close the file this sink opened (a stream it was given stays open)."""
        with self._lock:
            if self._owned and not self._stream.closed:
                self._stream.close()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
