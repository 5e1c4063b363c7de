"""A run's whole state as JSON data, to resume it in another process.

:func:`dump` writes it (``RunState.view.snapshot``, or a paused run's
``RunResult.snapshot``); :func:`load` reads it back into a fresh run
(:meth:`Contract.restore`). Stored state is input: a snapshot of another version, one
that names a tool no longer registered, or one that is not well-formed raises
:class:`~agent_contract.errors.CheckpointError`; nothing ever starts afresh in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ..budget import RunCounters
from ..errors import CheckpointError
from ..messages import Message
from ..text import escape_value
from .run import Run

__all__ = ["SNAPSHOT_VERSION", "dump", "load"]

SNAPSHOT_VERSION: Final = 2
"""Version of the snapshot format; :func:`load` refuses other versions.
(2: trace events carry ``time`` and ``offset_seconds``.)"""


def dump(run: Run, transcript: Sequence[Message]) -> dict[str, Any]:
    """The run's state as JSON data (the caller holds the run's lock).

    Holds the transcript (redacted: a secret handed to the run is not written to disk,
    and a resumed model sees the redaction marker), the budget's limits (for drivers
    that resume without the original Contract) and usage, the call-ID ledger, the open
    batch with its approvals and recorded decisions (arguments kept exact, since an
    approved write must run with them), and the trace (redacted when recorded). Every
    text is valid UTF-8 (lone surrogates escaped by the text rule).
    Application context values are not stored: pass them again to ``Contract.restore``.
    """
    redaction = run.contract.redaction
    state = {
        "version": SNAPSHOT_VERSION,
        "run_id": run.run_id,
        "caller": run.caller,
        "budget": run.contract.budget.to_dict(),
        "usage": run.counters.to_dict(),
        **run.ledger.to_state(),
        "decisions": dict(run.decisions),
        "trace": run.trace.events,
        "transcript": [redaction.redact_value(m.to_dict()) for m in transcript],
    }
    # Valid UTF-8 for any store: a refused call's arguments may hold lone surrogates
    # (a call that ran cannot: arguments holding one are refused).
    escaped, _ = escape_value(state)
    return dict(escaped)


def load(
    snapshot: Mapping[str, Any], start: Callable[[str, str | None], Run]
) -> tuple[Run, list[Message]]:
    """Rebuild a run from :func:`dump`'s data and note the resume in its trace.

    Args:
        snapshot: the stored data.
        start: makes the fresh run to fill, from the stored run id and caller.

    Returns:
        ``(run, transcript)``.

    Raises:
        CheckpointError: see the module doc.
    """
    if not isinstance(snapshot, Mapping) or snapshot.get("version") != SNAPSHOT_VERSION:
        found = (
            snapshot.get("version") if isinstance(snapshot, Mapping) else type(snapshot).__name__
        )
        raise CheckpointError(
            f"cannot restore a run snapshot of version {found!r}; expected {SNAPSHOT_VERSION}"
        )
    try:
        run = start(str(snapshot["run_id"]), snapshot.get("caller"))
        counters = RunCounters.from_dict(snapshot["usage"], clock=run.contract.clock)
        run.restore_trace(counters, snapshot["trace"])
        run.ledger.load_state(snapshot, run.contract.registry)
        run.decisions = {str(k): dict(v) for k, v in dict(snapshot["decisions"]).items()}
        transcript = [Message.from_dict(m) for m in snapshot["transcript"]]
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"corrupt run snapshot: {type(exc).__name__}: {exc}") from exc
    run.trace.record("run_resumed", run_id=run.run_id)
    return run, transcript
