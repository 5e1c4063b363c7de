"""Deprecated: moved to :mod:`agent_contract.conformance.suite` (kept for one release)."""

from __future__ import annotations

from ._deprecated import moved
from .conformance.suite import (
    NAMED_BOUNDARIES,
    STANDARD_TESTS,
    ContractSuite,
    capability_flag,
    is_declared_opt_out,
    scenarios_for_test,
)

moved(__name__, "agent_contract.conformance.suite")

__all__ = [
    "NAMED_BOUNDARIES",
    "STANDARD_TESTS",
    "ContractSuite",
    "capability_flag",
    "is_declared_opt_out",
    "scenarios_for_test",
]
