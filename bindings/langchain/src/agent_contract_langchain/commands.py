"""The binding's ``agent-contract`` subcommand, registered under the entry-point group
``agent_contract.commands`` (see this package's ``pyproject.toml``):

- ``lcel TEXT``: the keyless LCEL demo (:mod:`agent_contract_langchain.lcel`).

(``matrix --langchain ...`` is the core's command, :mod:`agent_contract.app.matrix`; this
binding registers what it installs: :mod:`agent_contract_langchain.matrix_target`.)

Importing this module imports no LangChain: the subcommand loads it when it runs.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, TextIO

from agent_contract.exitcodes import EXIT_DEPENDENCY_MISSING, EXIT_OK

__all__ = ["add_lcel_command", "cmd_lcel"]


def add_lcel_command(sub: Any) -> None:
    """Register ``lcel`` on the ``agent-contract`` subparsers ``sub``."""
    lcel_p = sub.add_parser("lcel", help="the keyless LCEL demo (needs langchain-core)")
    lcel_p.add_argument("text")
    lcel_p.set_defaults(handler=cmd_lcel)


def cmd_lcel(args: Any, out: TextIO, err: TextIO) -> int:
    """Print the LCEL chain's result for ``args.text`` as one JSON object; 4 with
    ``dependency_missing`` on stderr when ``langchain-core`` is not installed."""
    try:
        lcel = importlib.import_module("agent_contract_langchain.lcel")
    except ImportError as exc:
        missing = (
            "agent-contract-langchain"
            if (exc.name or "").startswith("agent_contract_langchain")
            else "langchain-core"
        )
        err.write(f"dependency_missing: {missing} is not installed ({exc})\n")
        return EXIT_DEPENDENCY_MISSING
    out.write(json.dumps(lcel.run_lcel(args.text), ensure_ascii=False) + "\n")
    return EXIT_OK
