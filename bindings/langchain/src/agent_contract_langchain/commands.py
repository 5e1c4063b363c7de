"""The binding's ``agent-contract`` subcommands, registered under the entry-point group
``agent_contract.commands`` (see this package's ``pyproject.toml``):

- ``lcel TEXT``: the keyless LCEL demo (:mod:`agent_contract_langchain.lcel`);
- ``matrix --langchain 1.0.0,1.3.15,latest``: ``check`` in a throwaway environment per
  LangChain release (:mod:`agent_contract_langchain.matrix`).

Importing this module imports no LangChain: the subcommands load it when they run.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from agent_contract.app.check_command import split_harness_names
from agent_contract.exitcodes import EXIT_DEPENDENCY_MISSING, EXIT_OK

from .matrix import default_matrix_harnesses, parse_releases, run_matrix, source_root
from .matrix_report import MATRIX_FORMATS

__all__ = ["add_lcel_command", "add_matrix_command", "cmd_lcel", "cmd_matrix"]


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


def _uv_command(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def add_matrix_command(sub: Any) -> None:
    """Register ``matrix`` on the ``agent-contract`` subparsers ``sub``."""
    matrix_p = sub.add_parser(
        "matrix",
        help="run check against several LangChain releases, each in a uv environment",
        description="For each LangChain release, build a throwaway environment with uv "
        "(never the project's .venv), install this source tree and that release (plus "
        "the companion pins it needs), run `check --format json` there, and print a "
        "boundary x release table.",
        epilog="exit codes: 0 all hold; 5 a boundary broken or the binding not importing on "
        "an installed release; 4 a release could not be installed; 2 usage",
    )
    matrix_p.add_argument(
        "--langchain",
        required=True,
        help="comma-separated releases, e.g. 1.0.0,1.3.15,latest",
    )
    matrix_p.add_argument(
        "--python",
        default=f"{sys.version_info.major}.{sys.version_info.minor}",
        help="interpreter for the environments (default: this one's version)",
    )
    matrix_p.add_argument(
        "--harness",
        action="append",
        help="harnesses to check in each environment (default "
        f"{','.join(default_matrix_harnesses())})",
    )
    matrix_p.add_argument("--format", choices=sorted(MATRIX_FORMATS), default="text")
    matrix_p.add_argument("--source", type=Path, help="repository root (default: detected)")
    matrix_p.add_argument("--uv", help="the uv executable (default: uv on PATH, or python -m uv)")
    matrix_p.set_defaults(handler=cmd_matrix)


def cmd_matrix(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``matrix`` command (see the module doc for exit codes).

    Raises:
        ConfigurationError: bad ``--langchain`` value or no source tree (exit 2).
    """
    releases = parse_releases(args.langchain)
    harnesses = split_harness_names(args.harness) or list(default_matrix_harnesses())
    source = args.source.resolve() if args.source else source_root()

    def progress(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    report = run_matrix(
        releases,
        source=source,
        python=args.python,
        harnesses=harnesses,
        uv=_uv_command(args.uv),
        progress=progress if err.isatty() else None,
    )
    out.write(MATRIX_FORMATS[args.format](report))
    return report.exit_code
