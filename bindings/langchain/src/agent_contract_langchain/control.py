"""LangGraph's control flow, which the contract lets through: never a tool's failure.

A tool task that raises ``GraphInterrupt`` (``interrupt()`` inside a tool), another
``GraphBubbleUp`` (``ParentCommand``, ``GraphDrained``), a resume value refused by an
interrupt's schema, or a cancellation is not a failed call: LangGraph must see it to
pause, hand off or cancel. The core executor is told so through its generic
``passthrough`` seam (:data:`CONTROL_FLOW`); it names no framework.
"""

from __future__ import annotations

import asyncio
from typing import Final

import langgraph.errors
from langgraph.errors import GraphBubbleUp

__all__ = ["CONTROL_FLOW", "ResumeRefused", "check_resume"]


class ResumeRefused(Exception):
    """Carries the error LangGraph raises for a resume value an interrupt's schema
    refused (a pydantic ``ValidationError`` it marks as such), so that the executor
    lets it through; ``error`` is the original."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(type(error).__name__)
        self.error = error


CONTROL_FLOW: Final[tuple[type[BaseException], ...]] = (
    GraphBubbleUp,
    ResumeRefused,
    asyncio.CancelledError,
)
"""What the core executor re-raises instead of classifying (its ``passthrough``)."""


_IS_INVALID_RESUME: Final = getattr(langgraph.errors, "is_invalid_resume", None)
"""``langgraph.errors.is_invalid_resume`` (absent before the schema-checked resume)."""


def check_resume(exc: Exception) -> None:
    """Return when ``exc`` is not LangGraph's error for a resume value an interrupt's
    schema refused.

    Raises:
        ResumeRefused: carrying ``exc``, when it is (raise it from the tool's run, so
            the executor lets it through).
    """
    if _IS_INVALID_RESUME is not None and _IS_INVALID_RESUME(exc):
        raise ResumeRefused(exc) from exc
