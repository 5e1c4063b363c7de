"""The ``agent-contract matrix`` subcommand (see :mod:`agent_contract.app.matrix.run` for
what it does and its exit codes). Its framework options come from the registered
:class:`~agent_contract.app.matrix.target.MatrixTarget`: ``--langchain RELEASES`` and the
pins ``--core`` and ``--langgraph`` when the LangChain binding is installed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from ...errors import ConfigurationError
from ..check_command import (
    check_report_path,
    split_harness_names,
    working_directory_importable,
    write_report_file,
)
from .packages import locate_packages
from .report import MATRIX_FORMATS, render_matrix_junit
from .run import default_matrix_harnesses, parse_releases, run_matrix
from .target import MatrixTarget, matrix_targets

__all__ = ["add_matrix_command", "cmd_matrix"]


def _uv_command(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def _dest(name: str) -> str:
    return name.replace("-", "_")


def add_matrix_command(sub: Any) -> None:
    """Register ``matrix`` on the ``agent-contract`` subparsers ``sub``, with the options of
    every registered target; nothing when no binding registers one (``main`` then reports
    the command as ``dependency_missing``)."""
    targets = matrix_targets()
    if not targets:
        return
    labels = " or ".join(t.label for t in targets)
    bindings = ", ".join(t.binding for t in targets)
    families = " or ".join(", ".join(t.family[:2]) for t in targets)
    matrix_p = sub.add_parser(
        "matrix",
        help=f"run check against several {labels} releases, each in a uv environment",
        description=f"For each {labels} release, build a throwaway environment with uv "
        f"(never the project's .venv), install agent-contract and its {labels} binding, that "
        f"release and its companions (by default {families} and the rest as "
        "they were when the release was published), plus your own requirements (--with), "
        "run `check --format json` there, and print a boundary x release table. Run it "
        "from the folder that holds your module:factory harness.",
        epilog="exit codes: 0 all hold; 5 a boundary broken or the binding not importing on "
        "an installed release; 4 a release could not be installed; 2 usage",
    )
    frameworks = (
        matrix_p.add_mutually_exclusive_group(required=True) if len(targets) > 1 else matrix_p
    )
    for target in targets:
        frameworks.add_argument(
            f"--{target.name}",
            dest=_dest(target.name),
            required=len(targets) == 1,
            help="comma-separated releases, e.g. 1.2.9,1.3.15,latest; floor installs every "
            "lower bound of the metadata exactly",
        )
    matrix_p.add_argument(
        "--python",
        default=f"{sys.version_info.major}.{sys.version_info.minor}",
        help="interpreter for the environments (default: this one's version)",
    )
    default_harnesses = ",".join(default_matrix_harnesses(targets[0]))
    matrix_p.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help=f"harnesses to check in each environment (default {default_harnesses})",
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
        help=f"dated (default): {families} and the rest as of each release's "
        "publish time; newest: the newest that resolve, plus the pins a release needs",
    )
    for option, package in {k: v for t in targets for k, v in t.pin_options.items()}.items():
        matrix_p.add_argument(
            f"--{option}", dest=_dest(option), metavar="VERSION", help=f"pin {package} everywhere"
        )
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
        help=f"install agent-contract and {bindings} from the wheels in DIR",
    )
    matrix_p.add_argument(
        "--source", type=Path, metavar="DIR", help="install them from this source checkout"
    )
    matrix_p.add_argument("--uv", help="the uv executable (default: uv on PATH, or python -m uv)")
    matrix_p.set_defaults(handler=cmd_matrix)


def _chosen(args: argparse.Namespace) -> tuple[MatrixTarget, str]:
    """The target whose releases were given, and the releases text."""
    for target in matrix_targets():
        releases = getattr(args, _dest(target.name), None)
        if releases is not None:
            return target, releases
    options = ", ".join(f"--{t.name}" for t in matrix_targets())
    raise ConfigurationError(f"name the releases to check: {options}")


def cmd_matrix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The ``matrix`` command (see :mod:`agent_contract.app.matrix.run` for exit codes).
    Without ``--wheels`` or ``--source``, the two distributions are installed from where
    the running ones came from (see :func:`~agent_contract.app.matrix.packages.locate_packages`).

    Raises:
        ConfigurationError: a bad release list, a ``--wheels`` folder without the two
            wheels, a ``--source`` that is not a checkout, or a ``--junit`` file that
            cannot be written (exit 2).
    """
    target, text = _chosen(args)
    releases = parse_releases(text, target)
    if args.junit is not None:
        check_report_path(args.junit)
    harnesses = split_harness_names(args.harness) or list(default_matrix_harnesses(target))
    working_directory_importable(harnesses)
    packages = locate_packages(
        wheels=args.wheels.resolve() if args.wheels else None,
        source=args.source.resolve() if args.source else None,
        target=target,
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
        pins={option: getattr(args, _dest(option)) for option in target.pin_options},
        extra=[_requirement(r) for r in args.extra],
        target=target,
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
