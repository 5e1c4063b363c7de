"""The command line's stderr: every line through the redaction policy."""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Final, TextIO

from ..trace import MIN_SECRET_CHARS, RedactionPolicy

__all__ = ["RedactingStream", "secrets_in"]

_DRAIN_SECONDS: Final = 2.0
"""How long :meth:`RedactingStream.close` waits for the pipe of :meth:`~RedactingStream.fileno`
to drain (seconds): a child process that still holds it (a server left running) does
not keep the command from ending."""


class RedactingStream:
    """A text stream that redacts every line written to it before passing it on: what
    the command line writes to stderr (errors that echo ``--arguments``, argparse's
    messages) goes through the same policy as a run's output (the default secret
    patterns and every ``--secret`` value).

    It has a real file descriptor (:meth:`fileno`, a pipe opened on first use): a child
    process started with this stream as its stderr (an MCP server over stdio, which the
    MCP client starts with ``stderr=sys.stderr``) writes into the pipe, and what it
    writes is passed on redacted like the rest. Writes are thread-safe.

    Args:
        target: the stream written to.
        secrets: values to redact besides the default patterns (too short ones, which
            a run refuses as a usage error, are skipped here).
    """

    def __init__(self, target: TextIO, secrets: Iterable[str] = ()) -> None:
        self.target = target
        self.policy = RedactionPolicy()
        self._pending = ""
        self._lock = threading.RLock()
        self._pipe: tuple[int, threading.Thread] | None = None
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Redact ``secrets`` too from now on."""
        usable = [s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS]
        if usable:
            self.policy = self.policy.with_secrets(usable)

    def write(self, text: str) -> int:
        """Buffer ``text``; pass on every complete line (ended by ``\\n``, or ``\\r``
        for a progress line), redacted."""
        with self._lock:
            self._pending += text
            end = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
            if end >= 0:
                done, self._pending = self._pending[: end + 1], self._pending[end + 1 :]
                self.target.write(self.policy.redact(done))
        return len(text)

    def fileno(self) -> int:
        """The write end of a pipe whose bytes (UTF-8, undecodable ones replaced) are
        passed on through :meth:`write`: a real descriptor for a child process's stderr.
        Opened on the first call (the same one after); :meth:`close` closes it."""
        with self._lock:
            if self._pipe is None:
                read_end, write_end = os.pipe()
                pump = threading.Thread(
                    target=self._pump, args=(read_end,), name="redacting-stderr", daemon=True
                )
                pump.start()
                self._pipe = (write_end, pump)
            return self._pipe[0]

    def _pump(self, read_end: int) -> None:
        """Copy the pipe into :meth:`write` until every writer closed it."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while chunk := pipe.read(4096):
                self.write(decoder.decode(chunk))
        self.write(decoder.decode(b"", final=True))

    def close(self) -> None:
        """Close the pipe of :meth:`fileno` (if opened), pass on what it still holds
        (waiting at most 2 s for child processes that hold it too), then :meth:`flush`.
        The stream stays usable for :meth:`write`."""
        with self._lock:
            pipe, self._pipe = self._pipe, None
        if pipe is not None:
            os.close(pipe[0])
            pipe[1].join(_DRAIN_SECONDS)
        self.flush()

    def isatty(self) -> bool:
        """Whether the target is a terminal."""
        return bool(getattr(self.target, "isatty", lambda: False)())

    def flush(self) -> None:
        """Pass on what is buffered (redacted) and flush the target."""
        with self._lock:
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
