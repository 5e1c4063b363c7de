"""Checks on an approver's request before a stored run resumes: the budget it may
tighten, an ambiguous edit, and a decision repeated after an interruption."""

from __future__ import annotations

from typing import Any

from ..approval import DecisionKind
from ..budget import Budget
from ..errors import ApprovalError, CheckpointError, ConfigurationError

__all__ = ["AmbiguousEditError", "held_budget", "repeated_decision"]


class AmbiguousEditError(ConfigurationError):
    """``--decision edit`` without ``--call-id`` while more than one write waits: one set
    of edited arguments cannot be meant for every pending call (a usage error, exit 2;
    nothing is recorded)."""


def held_budget(stored: Any, given: Budget | None) -> Budget | None:
    """The run's stored limits, each tightened (never loosened) by ``given``.

    Raises:
        CheckpointError: the stored limits are not a valid budget.
    """
    if stored is None:
        return given
    try:
        held = Budget(**dict(stored))
    except (ConfigurationError, TypeError, ValueError) as exc:
        raise CheckpointError(f"the stored budget is corrupt: {exc}") from exc
    if given is None:
        return held
    limits: dict[str, Any] = {}
    for name, mine in held.to_dict().items():
        other = getattr(given, name)
        limits[name] = other if mine is None else mine if other is None else min(mine, other)
    return Budget(**limits)


def repeated_decision(
    thread_id: str,
    snapshot: dict[str, Any],
    decision: DecisionKind,
    arguments: dict[str, Any] | None,
    call_id: str | None,
) -> None:
    """Accept a decision on a run with nothing pending only as the repeat of the one
    recorded (the same ``approve`` again after an interruption settled the write): the
    run then goes on with no new decision.

    Raises:
        ApprovalError: nothing was decided (``resume`` continues such a run), or the
            decision differs from the one recorded.
    """
    recorded = {
        str(k): v
        for k, v in dict(snapshot.get("decisions") or {}).items()
        if call_id in (None, k) and isinstance(v, dict)
    }
    if not recorded and call_id is not None:
        raise ApprovalError(
            f"run {thread_id!r} has no pending call {call_id!r}", tool_call_id=call_id
        )
    if not recorded:
        raise ApprovalError(
            f"run {thread_id!r} has no pending approval; continue it with: agent-contract resume"
        )
    for cid, data in recorded.items():
        if data.get("decision") != decision or (
            decision == "edit" and data.get("arguments") != arguments
        ):
            raise ApprovalError(
                f"call {cid!r} was already decided ({data.get('decision')}); a different "
                "decision is refused",
                tool_call_id=cid,
            )
