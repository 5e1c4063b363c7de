"""Deprecated: moved to :mod:`agent_contract.app.builtin_tools` (kept for one release)."""

from __future__ import annotations

from .._deprecated import moved
from ..app.builtin_tools import (
    POLICIES,
    calculator_tool,
    evaluate,
    lookup_policy,
    policy_lookup_tool,
)

moved(__name__, "agent_contract.app.builtin_tools")

__all__ = ["POLICIES", "calculator_tool", "evaluate", "lookup_policy", "policy_lookup_tool"]
