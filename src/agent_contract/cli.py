"""Deprecated: moved to :mod:`agent_contract.app.cli` (kept for one release);
``python -m agent_contract.cli`` still runs the command line."""

from __future__ import annotations

import sys

from ._deprecated import moved
from .app.cli import build_parser, main
from .app.demo import demo_tools, run_demo
from .app.selftest import self_test_checks
from .exitcodes import (
    EXIT_APPROVAL_REFUSED,
    EXIT_BUDGET,
    EXIT_CODES,
    EXIT_CONTRACT_VIOLATION,
    EXIT_DEPENDENCY_MISSING,
    EXIT_FAILURE,
    EXIT_MODEL_ERROR,
    EXIT_OK,
    EXIT_PENDING_APPROVAL,
    EXIT_USAGE,
)

moved(__name__, "agent_contract.app.cli")

__all__ = [
    "EXIT_APPROVAL_REFUSED",
    "EXIT_BUDGET",
    "EXIT_CODES",
    "EXIT_CONTRACT_VIOLATION",
    "EXIT_DEPENDENCY_MISSING",
    "EXIT_FAILURE",
    "EXIT_MODEL_ERROR",
    "EXIT_OK",
    "EXIT_PENDING_APPROVAL",
    "EXIT_USAGE",
    "build_parser",
    "demo_tools",
    "main",
    "run_demo",
    "self_test_checks",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
