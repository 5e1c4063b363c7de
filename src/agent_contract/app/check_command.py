"""``agent-contract check``: the command that prints the contract suite as a checklist
(see :mod:`agent_contract.conformance.check` for what it measures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from ..conformance.check import run_check
from ..conformance.report import FORMATS
from ..errors import DependencyMissingError
from ..registry import harness_names, harness_plugins, missing_bindings

__all__ = [
    "TerminalProgress",
    "add_check_command",
    "cmd_check",
    "default_harnesses",
    "split_harness_names",
]


def default_harnesses() -> tuple[list[str], list[str]]:
    """``(checked, control)`` when no ``--harness`` is given: every registered harness
    marked ``default``, by role, in registry order.

    Raises:
        DependencyMissingError: a binding agent-contract declares (an extra) is not
            installed: the default check covers every binding, so one that is missing
            is named rather than skipped in silence.
    """
    missing = missing_bindings()
    if missing:
        raise DependencyMissingError(
            ", ".join(missing), "the default check runs every binding agent-contract declares"
        )
    plugins = [p for p in harness_plugins() if p.default]
    return (
        [p.name for p in plugins if p.role == "contract"],
        [p.name for p in plugins if p.role == "control"],
    )


def split_harness_names(values: Sequence[str] | None) -> list[str]:
    """The harness names given as repeatable, comma-separated ``--harness`` values, in
    order, without duplicates or blanks."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return names


class TerminalProgress:
    """Progress on one overwritten line of ``stream`` (``check`` uses stderr when it is a
    terminal); cleared when the run finishes."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, done: int, total: int, harness: str, scenario: str) -> None:
        """Show ``[done/total] harness: scenario``, or clear the line once done == total."""
        if done >= total:
            self.stream.write("\r\033[K")
        else:
            self.stream.write(f"\r\033[K[{done + 1}/{total}] {harness}: {scenario}")
        self.stream.flush()


def add_check_command(sub: Any) -> None:
    """Register ``check`` on the ``agent-contract`` subparsers ``sub``."""
    try:
        checked, control = default_harnesses()
        defaults = ", ".join(checked)
        if control:
            defaults += (
                f", plus {', '.join(control)} as a control column (expected to break; it "
                "does not affect the exit code)"
            )
    except DependencyMissingError:
        defaults = "every default harness of every binding (one is not installed)"
    check_p = sub.add_parser(
        "check",
        help="run the contract suite and print a boundary x harness checklist",
        description="Run every contract scenario in-process on each harness and print one "
        "row per boundary, one column per harness: holds or broken, with evidence. With no "
        f"--harness: {defaults}.",
        epilog="exit codes: 0 every boundary holds on the harnesses checked; 4 a harness's "
        "binding is missing; 5 a boundary is broken on a harness you asked about; 2 usage",
    )
    check_p.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help="a harness to check (repeatable or comma-separated): "
        f"{', '.join(harness_names())}, or module:factory",
    )
    check_p.add_argument("--format", choices=sorted(FORMATS), default="text")
    check_p.set_defaults(handler=cmd_check)


def cmd_check(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``check`` command: run, print in ``args.format``, return the exit code.

    Raises:
        DependencyMissingError: a harness whose binding is not installed (exit 4).
        ConfigurationError: an unknown harness (exit 2).
    """
    named = split_harness_names(args.harness)
    checked, control = (named, []) if named else default_harnesses()
    progress = TerminalProgress(err) if err.isatty() else None
    report = run_check(checked, control=control, progress=progress)
    out.write(FORMATS[args.format](report))
    return report.exit_code
