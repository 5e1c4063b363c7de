"""Run a three-step LCEL chain with no model and no API key.

Usage::

    python examples/lcel_no_key.py '  hello   agent  '
    {"text": "hello agent", "chars": 11, "words": 2}

Exit codes: 0 success; 2 usage error (no text given); 4 ``langchain-core`` (or the
``agent-contract-langchain`` binding) is not installed, reported on stderr as
``dependency_missing: ...`` with nothing on stdout.
"""

from __future__ import annotations

import json
import sys

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_DEPENDENCY_MISSING = 4


def main(argv: list[str]) -> int:
    """Print the chain's result for ``argv[0]`` as one JSON object; return the exit code."""
    if len(argv) != 1:
        print("usage: python examples/lcel_no_key.py TEXT", file=sys.stderr)
        return EXIT_USAGE
    try:
        from agent_contract_langchain.lcel import run_lcel
    except ImportError as exc:
        print(
            f"dependency_missing: langchain-core is not installed ({exc}); "
            "install it (from a clone: uv sync, or pip install ./ ./bindings/langchain)",
            file=sys.stderr,
        )
        return EXIT_DEPENDENCY_MISSING
    print(json.dumps(run_lcel(argv[0]), ensure_ascii=False))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
