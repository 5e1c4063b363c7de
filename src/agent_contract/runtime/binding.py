"""The approval binding: what ties a human decision to the exact write that runs.

The token a decision carries is recomputed from the run (its id and caller), the
``tool_call_id``, the tool and the canonical arguments the model proposed, keyed with
the contract's signing key (:func:`agent_contract.approval.approval_token`), never read
back from stored state: when the decision is checked (:func:`token_for`, in
:func:`agent_contract.runtime.writes.decide`) and again right before the write runs
(:func:`check_bound`), where the arguments about to run must also be the proposed ones
(``approve``) or the edited ones (``edit``).
"""

from __future__ import annotations

from typing import Any

from ..approval import Approval, approval_token
from ..canonical import canonical_json
from ..errors import ApprovalError
from .ledger import PlannedCall
from .run import Run

__all__ = ["check_bound", "token_for"]


def token_for(
    run: Run, call_id: str, name: str, arguments: Any, *, canonical: str | None = None
) -> str:
    """The approval token of a call of ``run`` (keyed with the contract's signing key;
    ``canonical``: the arguments' canonical text when known)."""
    return approval_token(
        run.run_id,
        call_id,
        name,
        arguments,
        run.caller,
        key=run.contract.signing_key,
        canonical=canonical,
    )


def check_bound(run: Run, planned: PlannedCall, name: str) -> None:
    """Check, right before a write runs, that what is about to run is what was decided:
    the recorded decision's token is the one recomputed now from the run, the call, the
    tool, the proposed arguments and the caller, and the arguments to run are the
    proposed ones (``approve``) or the edited ones (``edit``).

    Raises:
        ApprovalError: they differ (stored state was changed); nothing is written.
    """
    recorded = run.decisions.get(planned.call_id)
    decision = Approval.from_dict(recorded) if recorded is not None else None
    issued = planned.call.canonical_arguments
    expected = token_for(run, planned.call_id, name, planned.call.arguments, canonical=issued)
    meant = (
        canonical_json(decision.arguments)
        if decision is not None and decision.decision == "edit"
        else issued
    )
    if decision is None or decision.token != expected or canonical_json(planned.arguments) != meant:
        raise ApprovalError(
            f"write {name!r} [{planned.call_id}] is not the call that was approved (the run, "
            "call, tool, arguments or caller changed since the decision); nothing was written",
            tool_call_id=planned.call_id,
        )
