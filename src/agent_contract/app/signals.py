"""Signals under the command line: SIGINT (Ctrl-C) and SIGTERM interrupt a run, which
pauses ``interrupted`` and is stored so that it can be resumed.

Python turns SIGINT into ``KeyboardInterrupt`` and lets SIGTERM kill the process at
once (no ``finally`` runs, nothing is stored). While a command runs,
:func:`raising_signals` makes both raise :class:`Interrupted` in the main thread instead:
the run records the call in flight with an unknown outcome, pauses ``interrupted``, and
the command stores it and exits 130 (SIGINT) or 143 (SIGTERM).
:func:`deferred_signals` holds a signal back while a short critical section (storing a
run's record) completes, then raises it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

from ..exitcodes import EXIT_INTERRUPTED, EXIT_TERMINATED

__all__ = ["HANDLED", "Interrupted", "deferred_signals", "exit_code", "raising_signals"]

HANDLED: Final = (signal.SIGINT, signal.SIGTERM)
"""The signals a command turns into :class:`Interrupted`."""


class Interrupted(BaseException):
    """A signal asked the command to stop (not an ``Exception``: no tool or library code
    that catches ``Exception`` can swallow it).

    Attributes:
        signum: the signal's number.
        signal_name: its name (``SIGINT``, ``SIGTERM``), shown in the run's stop detail.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        super().__init__(self.signal_name)


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def raising_signals() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread
    (outside the main thread, where handlers cannot be set, nothing changes)."""
    if not _in_main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back until the block has finished, then deliver the first
    one that came to the handler that was in place (for a short critical section, such as
    storing a run's record)."""
    if not _in_main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    previous: dict[int, Any] = {sig: signal.signal(sig, hold) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        handler = previous[caught[0]]
        if callable(handler):
            handler(caught[0], None)  # raises (Interrupted, KeyboardInterrupt) as it would have
        elif handler != signal.SIG_IGN:
            raise Interrupted(caught[0])


def exit_code(exc: BaseException) -> int:
    """The exit code of a command interrupted by ``exc``: 143 for SIGTERM, else 130."""
    while exc is not None:
        if isinstance(exc, Interrupted):
            return EXIT_TERMINATED if exc.signum == signal.SIGTERM else EXIT_INTERRUPTED
        cause = exc.__cause__
        if cause is None:
            break
        exc = cause
    return EXIT_INTERRUPTED
