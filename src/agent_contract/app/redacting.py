"""The command line's stderr: every line through the redaction policy."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TextIO

from ..trace import MIN_SECRET_CHARS, RedactionPolicy

__all__ = ["RedactingStream", "secrets_in"]


class RedactingStream:
    """A text stream that redacts every line written to it before passing it on: what
    the command line writes to stderr (errors that echo ``--arguments``, argparse's
    messages) goes through the same policy as a run's output (the default secret
    patterns and every ``--secret`` value).

    Args:
        target: the stream written to.
        secrets: values to redact besides the default patterns (too short ones, which
            a run refuses as a usage error, are skipped here).
    """

    def __init__(self, target: TextIO, secrets: Iterable[str] = ()) -> None:
        self.target = target
        self.policy = RedactionPolicy()
        self._pending = ""
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Redact ``secrets`` too from now on."""
        usable = [s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS]
        if usable:
            self.policy = self.policy.with_secrets(usable)

    def write(self, text: str) -> int:
        """Buffer ``text``; pass on every complete line (ended by ``\\n``, or ``\\r``
        for a progress line), redacted."""
        self._pending += text
        end = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
        if end >= 0:
            done, self._pending = self._pending[: end + 1], self._pending[end + 1 :]
            self.target.write(self.policy.redact(done))
        return len(text)

    def isatty(self) -> bool:
        """Whether the target is a terminal."""
        return bool(getattr(self.target, "isatty", lambda: False)())

    def flush(self) -> None:
        """Pass on what is buffered (redacted) and flush the target."""
        if self._pending:
            self.target.write(self.policy.redact(self._pending))
            self._pending = ""
        self.target.flush()


def secrets_in(argv: Sequence[str]) -> list[str]:
    """The ``--secret`` values of ``argv``, read before argparse (whose own error
    messages may echo them)."""
    found = []
    for i, arg in enumerate(argv):
        if arg == "--secret" and i + 1 < len(argv):
            found.append(argv[i + 1])
        elif arg.startswith("--secret="):
            found.append(arg.partition("=")[2])
    return found
