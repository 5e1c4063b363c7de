"""Trace sinks: where a run's events go as they are recorded.

Every run keeps its own in-memory :class:`~agent_contract.trace.Trace` (the one a
``RunResult`` carries and a snapshot stores). A :class:`TraceSink` given to
``Contract(trace_sink=...)`` receives each event of every run of that contract as well,
at the moment it is recorded, in ``seq`` order per run: the seam for exporting a trace
elsewhere (a JSONL file with :class:`JsonlSink`, OpenTelemetry spans with
:class:`~agent_contract.trace.otel.OTelSink`). A sink receives the redacted event, never raw values.

Events restored from a snapshot (a resumed run) are not sent again; a sink sees each
event once, in the process that recorded it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Protocol, TextIO, runtime_checkable

from .events import TraceEvent, json_line

__all__ = [
    "CallbackSink",
    "CollectingSink",
    "JsonlSink",
    "MemorySink",
    "NullSink",
    "QueueSink",
    "TraceSink",
]


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


CollectingSink = MemorySink
"""The seeds' collecting sink for tests: :class:`MemorySink` already is one (an alias)."""


class NullSink:
    """Takes nothing. A :class:`~agent_contract.trace.Trace` given one treats it as no
    sink at all, so it costs nothing per event (not even building the event)."""

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Drop ``event``."""


class CallbackSink:
    """Calls ``callback(run_id, event)`` for each event (with the run's lock held: see
    :class:`TraceSink`; an exception it raises ends the run loudly).

    Raises:
        TypeError: on construction, ``callback`` is not callable.
    """

    def __init__(self, callback: Callable[[str, TraceEvent], object]) -> None:
        if not callable(callback):
            raise TypeError(f"CallbackSink needs a callable, got {type(callback).__name__}")
        self._callback = callback

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Hand ``event`` of run ``run_id`` to the callback."""
        self._callback(run_id, event)


class QueueSink:
    """Puts each ``(run_id, event)`` on an :class:`asyncio.Queue` that an SSE or
    websocket handler drains (``await sink.queue.get()``) while the run goes on.

    Events recorded on the queue's event loop thread are put directly; events recorded
    on another thread (a sync tool's worker) are handed to the loop with
    ``call_soon_threadsafe``, so they keep their order.

    Args:
        loop: the event loop the consumer runs on; default: the running loop (so make
            the sink inside it).
        maxsize: the queue's bound (0: unbounded). A full queue drops nothing: an
            event that does not fit raises :class:`asyncio.QueueFull` in the code that
            recorded it, ending the run loudly. From another thread, a bounded sink
            waits for the loop to try the put (at most :attr:`handoff_timeout`
            seconds), so the error reaches the run, not the loop's exception handler.

    Raises:
        RuntimeError: no ``loop`` given and no loop is running.
    """

    handoff_timeout: float = 60.0
    """Seconds a bounded sink waits, on another thread, for the consumer's loop to take
    an event (a hang guard: the loop runs the put as soon as it is free); past it the
    event raises :class:`TimeoutError` in the run."""

    def __init__(self, *, loop: asyncio.AbstractEventLoop | None = None, maxsize: int = 0) -> None:
        self._loop = loop or asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[str, TraceEvent]] = asyncio.Queue(maxsize)
        """The queue the consumer drains: ``(run_id, event)`` items, oldest first."""
        self._thread = threading.get_ident() if loop is None else None

    def emit(self, run_id: str, event: TraceEvent) -> None:
        """Put ``event`` of run ``run_id`` on the queue (thread-safe)."""
        item = (run_id, event)
        on_loop = self._thread == threading.get_ident()
        if not on_loop:
            try:
                on_loop = asyncio.get_running_loop() is self._loop
            except RuntimeError:
                on_loop = False
        if on_loop:
            self.queue.put_nowait(item)
        elif self.queue.maxsize <= 0:  # nothing can fail: no need to wait for the loop
            self._loop.call_soon_threadsafe(self.queue.put_nowait, item)
        else:
            done: concurrent.futures.Future[None] = concurrent.futures.Future()

            def put() -> None:
                try:
                    self.queue.put_nowait(item)
                except asyncio.QueueFull as exc:
                    done.set_exception(exc)
                else:
                    done.set_result(None)

            self._loop.call_soon_threadsafe(put)
            try:
                done.result(timeout=self.handoff_timeout)
            except concurrent.futures.TimeoutError:
                raise TimeoutError(
                    f"QueueSink: the consumer's event loop did not take event {event.seq} "
                    f"({event.type}) of run {run_id!r} within {self.handoff_timeout} s"
                ) from None


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
