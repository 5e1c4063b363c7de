"""A tiny LCEL chain that needs no model and no API key.

It shows LangChain Expression Language composition (``|`` and a parallel map) with
plain functions, so the demo runs anywhere ``langchain-core`` is installed::

    >>> run_lcel("  hello   agent  ")
    {'text': 'hello agent', 'chars': 11, 'words': 2}

This module imports ``langchain_core`` at the top on purpose: it is only imported
when the demo is asked for (see ``examples/lcel_no_key.py``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel

__all__ = ["build_chain", "normalize_whitespace", "run_lcel"]


def normalize_whitespace(text: str) -> str:
    """``text`` with leading/trailing whitespace removed and inner runs collapsed to one space."""
    return " ".join(text.split())


def _identity(text: str) -> str:
    return text


def _char_count(text: str) -> int:
    return len(text)


def _word_count(text: str) -> int:
    return len(text.split())


def build_chain() -> Runnable[str, dict[str, Any]]:
    """The chain ``normalize_whitespace | {text, chars, words}``.

    Shape: input a ``str``; output ``{"text": str, "chars": int, "words": int}``
    where ``chars`` counts code points of the normalized text and ``words`` its
    whitespace-separated words.
    """
    parallel: RunnableParallel[str] = RunnableParallel(
        text=RunnableLambda(_identity),
        chars=RunnableLambda(_char_count),
        words=RunnableLambda(_word_count),
    )
    return RunnableLambda(normalize_whitespace) | parallel


def run_lcel(text: str) -> dict[str, Any]:
    """Run :func:`build_chain` on ``text``.

    Example: ``run_lcel("  hello   agent  ")`` returns
    ``{"text": "hello agent", "chars": 11, "words": 2}``.

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"run_lcel expects a str, got {type(text).__name__}")
    return dict(build_chain().invoke(text))
