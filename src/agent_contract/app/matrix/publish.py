"""When a framework release was published, asked of the registry through uv: the
``dated`` companions of a release are those uploaded before that time (see
:class:`~agent_contract.app.matrix.target.Companions`)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from .runner import CommandRunner
from .target import MatrixTarget, PublishTime, matrix_target

__all__ = ["parse_publish_time", "uv_publish_time"]

_PUBLISHED = re.compile(r"published at (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)")


def parse_publish_time(text: str) -> datetime:
    """The first ``published at <RFC 3339 time>`` in uv's resolver output.

    Raises:
        LookupError: none found.
    """
    found = _PUBLISHED.search(text)
    if not found:
        raise LookupError("uv did not report a publish time")
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))


def uv_publish_time(
    uv: Sequence[str], runner: CommandRunner, target: MatrixTarget | None = None
) -> PublishTime:
    """A :data:`~agent_contract.app.matrix.target.PublishTime` that asks the configured
    registry through uv: resolving ``package==version`` with every upload excluded fails,
    and uv's hint says when that version was published (uv 0.13: "The requested version,
    v1.2.9, was published at 2026-02-06T12:39:39.833Z"). The lookup's LookupError
    suggests ``target``'s pin options (default: the registered target's)."""

    def lookup(package: str, version: str) -> datetime:
        with tempfile.TemporaryDirectory(prefix="agent-contract-published-") as tmp:
            requirements = Path(tmp) / "requirements.in"
            requirements.write_text(f"{package}=={version}\n", encoding="utf-8")
            result = runner(
                [
                    *uv,
                    "pip",
                    "compile",
                    str(requirements),
                    "--no-header",
                    "--exclude-newer",
                    "1970-01-02T00:00:00Z",
                ]
            )
        try:
            return parse_publish_time(result.stderr + result.stdout)
        except LookupError:
            options = [f"--{name}" for name in (target or matrix_target()).pin_options]
            hint = " or ".join(filter(None, ["/".join(options), "--companions newest"]))
            tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-2:]
            raise LookupError(
                f"the registry did not say when {package} {version} was published "
                f"({' '.join(tail)}); pass {hint}"
            ) from None

    return lookup
