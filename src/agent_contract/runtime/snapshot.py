"""A run's whole state as JSON data, to resume it in another process.

:func:`dump` writes it (:meth:`RunState.snapshot`, or a paused run's
``RunResult.snapshot``); :func:`load` reads it back into a fresh run
(:meth:`Contract.restore`). Stored state is input: a snapshot of another version, one
that names a tool no longer registered, or one that is not well-formed raises
:class:`~agent_contract.errors.CheckpointError`; nothing ever starts afresh in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..budget import RunCounters
from ..errors import CheckpointError
from ..messages import Message

if TYPE_CHECKING:
    from .state import RunState

__all__ = ["SNAPSHOT_VERSION", "dump", "load"]

SNAPSHOT_VERSION: Final = 2
"""Version of the snapshot format; :func:`load` refuses other versions.
(2: trace events carry ``time`` and ``offset_seconds``.)"""


def dump(state: RunState, transcript: Sequence[Message]) -> dict[str, Any]:
    """The run's state as JSON data (the caller holds the run's lock).

    Holds the transcript (redacted: a secret handed to the run is not written to disk,
    and a resumed model sees the redaction marker), the budget's limits (for drivers
    that resume without the original Contract) and usage, the call-ID ledger, the open
    batch with its approvals and recorded decisions (arguments kept exact, since an
    approved write must run with them), and the trace (redacted when recorded).
    Application context values are not stored: pass them again to ``Contract.restore``.
    """
    redaction = state.contract.redaction
    return {
        "version": SNAPSHOT_VERSION,
        "run_id": state.run_id,
        "caller": state.caller,
        "budget": state.contract.budget.to_dict(),
        "usage": state.counters.to_dict(),
        **state._ledger.to_state(),
        "decisions": dict(state._decisions),
        "trace": state.trace.events,
        "transcript": [redaction.redact_value(m.to_dict()) for m in transcript],
    }


def load(
    snapshot: Mapping[str, Any], start: Callable[[str, str | None], RunState]
) -> tuple[RunState, list[Message]]:
    """Rebuild a run from :func:`dump`'s data and note the resume in its trace.

    Args:
        snapshot: the stored data.
        start: makes the fresh run to fill, from the stored run id and caller.

    Returns:
        ``(state, transcript)``.

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
        state = start(str(snapshot["run_id"]), snapshot.get("caller"))
        state.counters = RunCounters.from_dict(snapshot["usage"])
        state._ledger.load_state(snapshot, state.contract.registry)
        state._decisions = {str(k): dict(v) for k, v in dict(snapshot["decisions"]).items()}
        state.trace = state._ledger.trace = state._new_trace(snapshot["trace"])
        transcript = [Message.from_dict(m) for m in snapshot["transcript"]]
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"corrupt run snapshot: {type(exc).__name__}: {exc}") from exc
    state.trace.append("run_resumed", run_id=state.run_id)
    return state, transcript
