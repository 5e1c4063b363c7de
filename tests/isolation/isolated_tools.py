"""Picklable tool handlers for the isolation tests (child processes import this module)."""

from __future__ import annotations

import time
from pathlib import Path

RELEASE_WAIT_SECONDS = 10.0
"""How long a held write waits for its release file before writing anyway."""


def held_write(path: str, release: str) -> str:
    """Wait until the file ``release`` exists (the test creates it once the run has
    returned), then append a line to ``path``: the late side effect."""
    end = time.monotonic() + RELEASE_WAIT_SECONDS
    while not Path(release).exists() and time.monotonic() < end:
        time.sleep(0.01)
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write("late write\n")
    return "written"


def quick(text: str) -> dict[str, str]:
    """Return at once."""
    return {"echo": text}


def boom(text: str) -> str:
    """Raise a classified-free error whose text must stay hidden."""
    raise RuntimeError(f"secret detail {text}")


async def async_quick(text: str) -> dict[str, str]:
    """An ``async def`` handler (run with its own event loop in the child)."""
    return {"async_echo": text}
