"""LangGraph's control flow, which the contract lets through: never a tool's failure.

A tool task that raises ``GraphInterrupt`` (``interrupt()`` inside a tool), another
``GraphBubbleUp`` (``ParentCommand``, ``GraphDrained``), a resume value refused by an
interrupt's schema, or a cancellation is not a failed call: LangGraph must see it to
pause, hand off or cancel. The core executor is told so through its generic
``passthrough`` seam (:data:`CONTROL_FLOW`); it names no framework.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import langgraph.errors
from langgraph.errors import GraphBubbleUp

__all__ = ["CONTROL_FLOW", "ResumeRefused", "aguard_resume", "guard_resume"]

_T = TypeVar("_T")


class ResumeRefused(Exception):
    """Carries the error LangGraph raises for a resume value an interrupt's schema
    refused (a pydantic ``ValidationError`` it marks as such), so that the executor
    lets it through; :func:`unwrap_resume` gives the original back."""

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


def _is_invalid_resume(exc: BaseException) -> bool:
    return _IS_INVALID_RESUME is not None and bool(_IS_INVALID_RESUME(exc))


def guard_resume(fn: Callable[[], _T]) -> _T:
    """``fn()``, with a refused resume value wrapped in :class:`ResumeRefused`."""
    try:
        return fn()
    except Exception as exc:
        if _is_invalid_resume(exc):
            raise ResumeRefused(exc) from exc
        raise


async def aguard_resume(fn: Callable[[], Awaitable[_T]]) -> _T:
    """Async :func:`guard_resume`."""
    try:
        return await fn()
    except Exception as exc:
        if _is_invalid_resume(exc):
            raise ResumeRefused(exc) from exc
        raise
