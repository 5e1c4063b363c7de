"""The binding's ``agent-contract`` subcommands, registered under the entry-point group
``agent_contract.commands`` (see this package's ``pyproject.toml``):

- ``lcel TEXT``: the keyless LCEL demo (:mod:`agent_contract_langchain.lcel`);
- ``matrix --langchain 1.2.9,1.3.15,latest,floor``: ``check`` in a throwaway environment
  per LangChain release (:mod:`agent_contract_langchain.matrix`).

Importing this module imports no LangChain: the subcommands load it when they run.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from agent_contract.app.check_command import (
    check_report_path,
    split_harness_names,
    working_directory_importable,
    write_report_file,
)
from agent_contract.exitcodes import EXIT_DEPENDENCY_MISSING, EXIT_OK

from .matrix import default_matrix_harnesses, parse_releases, run_matrix
from .matrix_env import locate_packages
from .matrix_report import MATRIX_FORMATS, render_matrix_junit

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
        "(never the project's .venv), install agent-contract and its LangChain binding, that "
        "release and its companions (by default langchain-core, langgraph and the rest as "
        "they were when the release was published), plus your own requirements (--with), "
        "run `check --format json` there, and print a boundary x release table. Run it "
        "from the folder that holds your module:factory harness.",
        epilog="exit codes: 0 all hold; 5 a boundary broken or the binding not importing on "
        "an installed release; 4 a release could not be installed; 2 usage",
    )
    matrix_p.add_argument(
        "--langchain",
        required=True,
        help="comma-separated releases, e.g. 1.2.9,1.3.15,latest; floor installs every lower "
        "bound of the metadata exactly",
    )
    matrix_p.add_argument(
        "--python",
        default=f"{sys.version_info.major}.{sys.version_info.minor}",
        help="interpreter for the environments (default: this one's version)",
    )
    matrix_p.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help="harnesses to check in each environment (default "
        f"{','.join(default_matrix_harnesses())})",
    )
    matrix_p.add_argument(
        "--with",
        dest="extra",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="also install this in every environment (repeatable): your own dependencies, "
        "or your project itself (--with .)",
    )
    matrix_p.add_argument(
        "--companions",
        choices=("dated", "newest"),
        default="dated",
        help="dated (default): langchain-core, langgraph and the rest as of each release's "
        "publish time; newest: the newest that resolve, plus the pins a release needs",
    )
    matrix_p.add_argument("--core", metavar="VERSION", help="pin langchain-core everywhere")
    matrix_p.add_argument("--langgraph", metavar="VERSION", help="pin langgraph everywhere")
    matrix_p.add_argument("--format", choices=sorted(MATRIX_FORMATS), default="text")
    matrix_p.add_argument(
        "--junit",
        type=Path,
        metavar="FILE",
        help="also write JUnit XML: per release an install case and one case per boundary",
    )
    matrix_p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    matrix_p.add_argument(
        "--wheels",
        type=Path,
        metavar="DIR",
        help="install agent-contract and agent-contract-langchain from the wheels in DIR",
    )
    matrix_p.add_argument(
        "--source", type=Path, metavar="DIR", help="install them from this source checkout"
    )
    matrix_p.add_argument("--uv", help="the uv executable (default: uv on PATH, or python -m uv)")
    matrix_p.set_defaults(handler=cmd_matrix)


def cmd_matrix(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``matrix`` command (see :mod:`agent_contract_langchain.matrix` for exit codes).
    Without ``--wheels`` or ``--source``, the two distributions are installed from where
    the running ones came from (see :func:`~agent_contract_langchain.matrix_env.locate_packages`).

    Raises:
        ConfigurationError: a bad ``--langchain`` value, a ``--wheels`` folder without
            the two wheels, a ``--source`` that is not a checkout, or a ``--junit`` file
            that cannot be written (exit 2).
    """
    releases = parse_releases(args.langchain)
    if args.junit is not None:
        check_report_path(args.junit)
    harnesses = split_harness_names(args.harness) or list(default_matrix_harnesses())
    working_directory_importable(harnesses)
    packages = locate_packages(
        wheels=args.wheels.resolve() if args.wheels else None,
        source=args.source.resolve() if args.source else None,
    )

    def progress(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    report = run_matrix(
        releases,
        packages=packages,
        python=args.python,
        harnesses=harnesses,
        uv=_uv_command(args.uv),
        progress=None if args.quiet else progress,
        mode=args.companions,
        core=args.core,
        langgraph=args.langgraph,
        extra=[_requirement(r) for r in args.extra],
    )
    out.write(MATRIX_FORMATS[args.format](report))
    if args.junit is not None:
        write_report_file(args.junit, render_matrix_junit(report))
    return report.exit_code


def _requirement(text: str) -> str:
    """A ``--with`` value: a local path (``.``, ``./pkg``, ``../x.whl``) becomes absolute,
    since the environments are built elsewhere; anything else is a requirement as is."""
    path = Path(text)
    if text.startswith((".", "/")) and path.exists():
        return str(path.resolve())
    return text
