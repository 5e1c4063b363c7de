"""The binding's ``agent-contract`` subcommand, registered under the entry-point group
``agent_contract.commands`` (see this package's ``pyproject.toml``):

- ``lcel TEXT``: the keyless LCEL demo. Its code lives in the repository's examples,
  ``examples/lcel_no_key.py``, the one home of the demo: from a source checkout the
  command runs that file (:func:`lcel_example`); an installed wheel does not carry it,
  and the command says where it is (exit 4).

(``matrix --langchain ...`` is the core's command, :mod:`agent_contract.app.matrix`; this
binding registers what it installs: :mod:`agent_contract_langchain.matrix_target`.)

Importing this module imports no LangChain: the demo imports it when it runs.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any, Final, TextIO

from agent_contract.exitcodes import EXIT_DEPENDENCY_MISSING, EXIT_OK

__all__ = ["LCEL_EXAMPLE", "add_lcel_command", "cmd_lcel", "lcel_example"]

LCEL_EXAMPLE: Final = "examples/lcel_no_key.py"
"""The demo's path in the source repository (from its root)."""
_LCEL_URL: Final = f"https://github.com/agent-contract/agent-contract/blob/main/{LCEL_EXAMPLE}"


def lcel_example() -> Path | None:
    """The demo's file when this package runs from a source checkout (the repository root
    is four folders above this module: ``bindings/langchain/src/agent_contract_langchain``),
    else None (an installed wheel)."""
    example = Path(__file__).resolve().parents[4].joinpath(*LCEL_EXAMPLE.split("/"))
    return example if example.is_file() else None


def add_lcel_command(sub: Any) -> None:
    """Register ``lcel`` on the ``agent-contract`` subparsers ``sub``."""
    lcel_p = sub.add_parser("lcel", help="the keyless LCEL demo (needs langchain-core)")
    lcel_p.add_argument("text")
    lcel_p.set_defaults(handler=cmd_lcel)


def cmd_lcel(args: Any, out: TextIO, err: TextIO) -> int:
    """Print the LCEL chain's result for ``args.text`` as one JSON object (the demo's
    ``run_lcel``); 4 with ``dependency_missing`` on stderr when ``langchain-core`` is not
    installed, or when the demo is not there (an installed wheel: the message names the
    file in the repository)."""
    example = lcel_example()
    if example is None:
        err.write(
            f"dependency_missing: the LCEL demo is not installed with the wheel; it is "
            f"{LCEL_EXAMPLE} in the agent-contract repository ({_LCEL_URL}): "
            "run it with python\n"
        )
        return EXIT_DEPENDENCY_MISSING
    demo = runpy.run_path(str(example))
    try:
        result = demo["run_lcel"](args.text)
    except ImportError as exc:
        err.write(f"dependency_missing: langchain-core is not installed ({exc})\n")
        return EXIT_DEPENDENCY_MISSING
    out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_OK
