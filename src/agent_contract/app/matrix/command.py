"""The ``agent-contract matrix`` subcommand (see :mod:`agent_contract.app.matrix.run` for
what it does and its exit codes). Its framework options come from the registered
:class:`~agent_contract.app.matrix.target.MatrixTarget`: ``--langchain RELEASES`` and the
pins ``--core`` and ``--langgraph`` when the LangChain binding is installed.

Each environment runs ``check --harness ...`` (the built-in harnesses, or a team's
``module:factory`` harness), or with ``--agent module:factory`` ``check --agent`` on the
team's own agent; ``--with`` installs the team's own requirements (``--with .``: their
project) beside it. uv is found by :func:`find_uv`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from ...errors import ConfigurationError, DependencyMissingError
from ..check_command import (
    check_report_path,
    split_harness_names,
    working_directory_importable,
    write_report_file,
)
from .packages import locate_packages
from .report import MATRIX_FORMATS, render_matrix_junit
from .run import default_matrix_harnesses, parse_releases, run_matrix, source_root
from .target import MatrixTarget, matrix_targets

__all__ = ["TOOLS_UV", "add_matrix_command", "cmd_matrix", "find_uv"]

TOOLS_UV = Path(".tools", "bin", "uv")
"""Where the README's set-up installs uv, relative to the repository root."""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _checkout_root() -> Path | None:
    try:
        return source_root()
    except ConfigurationError:
        return None


def find_uv(
    explicit: str | None = None,
    *,
    environ: Mapping[str, str] = os.environ,
    which: Callable[[str], str | None] = shutil.which,
    roots: Sequence[Path] | None = None,
    has_module: Callable[[str], bool] | None = None,
) -> list[str]:
    """How to call uv, as an argv prefix, in this order: ``explicit`` (``--uv``, as
    given); the ``UV`` environment variable (uv sets it to its own path for the
    processes ``uv run`` starts); ``uv`` on ``PATH``; ``.tools/bin/uv`` (where the
    README's set-up installs it) under each of ``roots`` (default: the working directory
    and, when running from a source checkout, its root); the ``uv`` Python package of
    this interpreter (``python -m uv``; ``has_module`` tells whether a module is
    importable).

    Raises:
        DependencyMissingError: none of these (exit 4); the message names ``--uv``.
    """
    if explicit:
        return [explicit]
    from_env = environ.get("UV", "")
    if from_env and _executable(Path(from_env)):
        return [from_env]
    on_path = which("uv")
    if on_path:
        return [on_path]
    if roots is None:
        checkout = _checkout_root()
        roots = [Path.cwd(), *([checkout] if checkout is not None else [])]
    for root in roots:
        candidate = root / TOOLS_UV
        if _executable(candidate):
            return [str(candidate)]
    if (has_module or _has_module)("uv"):
        return [sys.executable, "-m", "uv"]
    looked = ", ".join(str(root / TOOLS_UV) for root in roots)
    raise DependencyMissingError(
        "uv",
        "matrix builds its environments with uv and found none: not in $UV, not on PATH, "
        f"not at {looked or TOOLS_UV}, no uv module; pass --uv PATH_TO_UV, or install it "
        "as the README's set-up does",
    )


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
        "run `check --format json` there (`check --agent` with --agent), and print a "
        "boundary x release table with the evidence of every broken cell. Run it from the "
        "folder that holds your module:factory.",
        epilog="exit codes: 0 all hold; 5 a boundary broken or the binding not importing on "
        "an installed release; 1 check failed in an installed environment; 4 a release "
        "could not be installed, or no uv found; 2 usage",
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
    checked = matrix_p.add_mutually_exclusive_group()
    checked.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help=f"harnesses to check in each environment (default {default_harnesses})",
    )
    checked.add_argument(
        "--agent",
        metavar="module:factory",
        help="check your own agent in each environment instead (check --agent "
        "module:factory: factory(chat_model) builds it; found in the working directory)",
    )
    matrix_p.add_argument(
        "--with",
        dest="extra",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="also install this in every environment (repeatable): your own dependencies "
        "(--with PACKAGE==VERSION), or your project itself (--with .)",
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
    matrix_p.add_argument(
        "--uv",
        metavar="PATH",
        help="the uv executable (default: $UV, uv on PATH, then .tools/bin/uv as the README "
        "installs it)",
    )
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
        ConfigurationError: a ``--with`` value that starts with ``-``, a bad release list, a ``--wheels`` folder without the two
            wheels, a ``--source`` that is not a checkout, or a ``--junit`` file that
            cannot be written (exit 2).
        DependencyMissingError: no uv found (:func:`find_uv`; exit 4).
    """
    extra = [_requirement(r) for r in args.extra]  # before anything is looked up
    target, text = _chosen(args)
    releases = parse_releases(text, target)
    if args.junit is not None:
        check_report_path(args.junit)
    harnesses = split_harness_names(args.harness) or list(default_matrix_harnesses(target))
    working_directory_importable([args.agent] if args.agent else harnesses)
    uv = find_uv(args.uv)
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
        uv=uv,
        agent=args.agent,
        progress=None if args.quiet else progress,
        mode=args.companions,
        pins={option: getattr(args, _dest(option)) for option in target.pin_options},
        extra=extra,
        target=target,
    )
    out.write(MATRIX_FORMATS[args.format](report))
    if args.junit is not None:
        write_report_file(args.junit, render_matrix_junit(report))
    return report.exit_code


def _requirement(text: str) -> str:
    """A ``--with`` value: a local path (``.``, ``./pkg``, ``../x.whl``) becomes absolute,
    since the environments are built elsewhere; anything else is a requirement as is.

    Raises:
        ConfigurationError: the value starts with ``-`` (an installer option such as
            ``--index-url``, never a requirement; exit 2).
    """
    if text.strip().startswith("-"):
        raise ConfigurationError(
            f"--with {text!r} is an installer option, not a requirement: give a "
            "requirement (PACKAGE==VERSION) or a local path (./pkg)"
        )
    path = Path(text)
    if text.startswith((".", "/")) and path.exists():
        return str(path.resolve())
    return text
