"""Deprecated: moved to :mod:`agent_contract.app.builtin_tools.calculator` (kept for one
release)."""

from __future__ import annotations

from .._deprecated import moved
from ..app.builtin_tools.calculator import (
    MAX_DEPTH,
    MAX_EXPRESSION_CHARS,
    MAX_MAGNITUDE,
    calculator_tool,
    evaluate,
)

moved(__name__, "agent_contract.app.builtin_tools.calculator")

__all__ = ["MAX_DEPTH", "MAX_EXPRESSION_CHARS", "MAX_MAGNITUDE", "calculator_tool", "evaluate"]
