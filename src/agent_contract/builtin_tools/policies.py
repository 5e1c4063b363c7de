"""Deprecated: moved to :mod:`agent_contract.app.builtin_tools.policies` (kept for one
release)."""

from __future__ import annotations

from .._deprecated import moved
from ..app.builtin_tools.policies import (
    POLICIES,
    TOPIC_PATTERN,
    lookup_policy,
    policy_lookup_tool,
)

moved(__name__, "agent_contract.app.builtin_tools.policies")

__all__ = ["POLICIES", "TOPIC_PATTERN", "lookup_policy", "policy_lookup_tool"]
