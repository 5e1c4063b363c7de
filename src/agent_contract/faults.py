"""Named crash points, for proving that a write survives a process being killed.

Set ``AGENT_CONTRACT_CRASH_AT`` to a point's name and the process kills itself with
``SIGKILL`` when it reaches that point: no ``finally`` blocks, no flushing, exactly
like a machine losing power. Points used by the write path:

- ``after_approval``: the decision is stored; the write has not started.
- ``after_write``: the write committed; the result is not acknowledged (stored) yet.

Tests start a subprocess with the variable set, then resume in a fresh process.
"""

from __future__ import annotations

import os
import signal
from typing import Final

__all__ = ["CRASH_ENV", "CRASH_POINTS", "crashpoint"]

CRASH_ENV: Final = "AGENT_CONTRACT_CRASH_AT"
CRASH_POINTS: Final[tuple[str, ...]] = ("after_approval", "after_write")


def crashpoint(name: str) -> None:
    """Kill this process with SIGKILL if ``AGENT_CONTRACT_CRASH_AT == name``."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
