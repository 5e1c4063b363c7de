"""Running ``matrix``'s commands: one argv at a time, through an injectable
:class:`CommandRunner`, so planning, parsing and reporting are tested without a network."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CommandResult", "CommandRunner", "subprocess_runner"]


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """What one command did."""

    returncode: int
    stdout: str
    stderr: str


class CommandRunner(Protocol):
    """Runs one command (argv) and returns its result; never raises for a nonzero exit."""

    def __call__(self, argv: Sequence[str]) -> CommandResult: ...


def subprocess_runner(timeout_seconds: float = 1800.0) -> CommandRunner:
    """A runner over :func:`subprocess.run` (text mode, captured output, the working
    directory inherited, so a team's ``module:factory`` is found there). A command past
    ``timeout_seconds`` (wall clock) or one that cannot start is returned as exit code
    127 with the reason in ``stderr``."""

    def run(argv: Sequence[str]) -> CommandResult:
        try:
            proc = subprocess.run(  # noqa: S603 - argv lists built by the matrix
                list(argv), capture_output=True, text=True, timeout=timeout_seconds, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return CommandResult(returncode=127, stdout="", stderr=f"{type(exc).__name__}: {exc}")
        return CommandResult(returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)

    return run
