"""Deprecated: moved to :mod:`agent_contract.app.demo` (kept for one release)."""

from __future__ import annotations

from ._deprecated import moved
from .app.demo import (
    DATA_DIR_ENV,
    DemoRun,
    approve_demo,
    data_dir,
    demo_tools,
    run_demo,
    start_demo,
)

moved(__name__, "agent_contract.app.demo")

__all__ = [
    "DATA_DIR_ENV",
    "DemoRun",
    "approve_demo",
    "data_dir",
    "demo_tools",
    "run_demo",
    "start_demo",
]
