"""Named crash points, for proving that a write survives a process being killed.

Set ``AGENT_CONTRACT_CRASH_AT`` to a point's name and the process kills itself with
``SIGKILL`` when it reaches that point: no ``finally`` blocks, no flushing, exactly
like a machine losing power. ``NAME:SIGINT`` or ``NAME:SIGTERM`` sends that signal
instead (the process handles it as it would Ctrl-C or a ``kill``). Points:

- ``after_approval``: the decision is stored; the write has not started.
- ``after_write``: the write committed; the result is not acknowledged (stored) yet.
- ``before_finish_record``: the run ended (a resumed run's graph finished, its write
  settled); the run store's "finished" record is not written yet.

Tests start a subprocess with the variable set, then resume in a fresh process.
"""

from __future__ import annotations

import os
import signal
from typing import Final

__all__ = ["CRASH_ENV", "CRASH_POINTS", "CRASH_SIGNALS", "crashpoint"]

CRASH_ENV: Final = "AGENT_CONTRACT_CRASH_AT"
CRASH_POINTS: Final[tuple[str, ...]] = ("after_approval", "after_write", "before_finish_record")
CRASH_SIGNALS: Final[tuple[str, ...]] = ("SIGKILL", "SIGINT", "SIGTERM")
"""What a crash point can send: ``NAME`` alone is ``SIGKILL``."""


def crashpoint(name: str) -> None:
    """Send this process a signal if ``AGENT_CONTRACT_CRASH_AT`` names this point:
    ``name`` (SIGKILL) or ``name:SIGINT`` / ``name:SIGTERM``."""
    point, _, sig = os.environ.get(CRASH_ENV, "").partition(":")
    if point == name and (sig or "SIGKILL") in CRASH_SIGNALS:
        os.kill(os.getpid(), signal.Signals[sig or "SIGKILL"])
