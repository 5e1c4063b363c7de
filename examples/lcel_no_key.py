"""A tiny LCEL chain that needs no model and no API key.

It shows LangChain Expression Language composition (``|`` and a parallel map) with
plain functions, so the demo runs anywhere ``langchain-core`` is installed::

    python examples/lcel_no_key.py '  hello   agent  '
    {"text": "hello agent", "chars": 11, "words": 2}

From a source checkout, ``agent-contract lcel TEXT`` runs this file too (the LangChain
binding's command locates it; an installed wheel does not carry it and says where it is).

Exit codes: 0 success; 2 usage error (no text given); 4 ``langchain-core`` is not
installed, reported on stderr as ``dependency_missing: ...`` with nothing on stdout.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_DEPENDENCY_MISSING = 4


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

    Raises:
        ImportError: ``langchain-core`` is not installed.
    """
    from langchain_core.runnables import RunnableLambda, RunnableParallel

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
        ImportError: ``langchain-core`` is not installed.
    """
    if not isinstance(text, str):
        raise TypeError(f"run_lcel expects a str, got {type(text).__name__}")
    return dict(build_chain().invoke(text))


def main(argv: list[str]) -> int:
    """Print the chain's result for ``argv[0]`` as one JSON object; return the exit code."""
    if len(argv) != 1:
        print("usage: python examples/lcel_no_key.py TEXT", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = run_lcel(argv[0])
    except ImportError as exc:
        print(
            f"dependency_missing: langchain-core is not installed ({exc}); "
            "install it (from a clone: uv sync, or pip install ./ ./bindings/langchain)",
            file=sys.stderr,
        )
        return EXIT_DEPENDENCY_MISSING
    print(json.dumps(result, ensure_ascii=False))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
