"""Deprecated: moved to :mod:`agent_contract.app.store` (kept for one release)."""

from __future__ import annotations

from ._deprecated import moved
from .app.store import (
    FINISHED_PREFIX,
    LOCK_TIMEOUT_SECONDS,
    RunStore,
)

moved(__name__, "agent_contract.app.store")

__all__ = [
    "FINISHED_PREFIX",
    "LOCK_TIMEOUT_SECONDS",
    "RunStore",
]
