"""Picklable tool handlers for the isolation tests (child processes import this module)."""

from __future__ import annotations

import time
from pathlib import Path


def slow_write(path: str, delay: float) -> str:
    """Sleep ``delay`` seconds, then append a line to ``path`` (the late side effect)."""
    time.sleep(delay)
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write("late write\n")
    return "written"


def quick(text: str) -> dict[str, str]:
    """Return at once."""
    return {"echo": text}


def boom(text: str) -> str:
    """Raise a classified-free error whose text must stay hidden."""
    raise RuntimeError(f"secret detail {text}")
