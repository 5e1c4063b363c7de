"""The checkpoint-integrity boundary (capability ``durable_store``): a paused run's store
reopened after its row was forged, edited, rolled back or grafted from another run
refuses it, nothing runs, and the approval is not used up.

Each scenario pauses a transfer for approval; before the scripted human's approval is
carried in, the harness stores the paused snapshot in a fresh data folder with its own
store, the row is tampered with (:mod:`agent_contract.tampering`) and the store reopened
(:attr:`~agent_contract.harnesses.RunInput.tamper`). A harness whose framework keeps
checkpoints of its own tampers with those rows too and resumes through them (the
LangChain suite harnesses: the sealed SQLite checkpointer's rows,
:meth:`~agent_contract.tampering.TamperPlan.reopen_checkpoints`). What it observes: each
reopened store refused the tampered rows with a
:class:`~agent_contract.errors.CheckpointError` (never read them), and, once the tampering
is undone, the same approval still applies the write once (so the refusal ran nothing
and consumed no decision).
"""

from __future__ import annotations

from typing import Final

from ...harnesses import Observation
from ...tampering import TAMPERINGS
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_model_calls, check_writes
from ..fixtures import Probe, tools_with, transfer_tool

__all__ = ["DEFINITION", "check_refused"]

_WHAT: Final = {
    "forged": "a row the store's key did not seal (plain JSON, another key's seal)",
    "edited": "a sealed row with one byte of an authenticated field changed",
    "rolled_back": "an older sealed row of the same run put back over the newest",
    "grafted": "another run's sealed row put in place of the paused run's",
}
"""What each tampering leaves in the store, for the scenarios' descriptions."""


def check_refused(kind: str) -> Check:
    """The harness reopened its stores after the ``kind`` tampering (the run store once;
    a harness whose framework keeps checkpoints of its own, those too), and each refused
    the tampered rows (a :class:`~agent_contract.errors.CheckpointError`) instead of
    reading them."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        plan = probe.tamper
        reopened, refused, accepted = (
            (plan.reopened, len(plan.refusals), plan.accepted) if plan else (0, 0, 0)
        )
        if accepted:
            message = (
                f"a store read the paused run's {kind.replace('_', ' ')} rows and the run went "
                "on from them; expected a refusal (CheckpointError) before anything ran"
            )
        elif not reopened or refused != reopened:
            message = (
                f"asked to reopen the paused run's store after a tampering ({kind}): "
                f"reopened {reopened} time(s), refused {refused} time(s), expected a "
                "refusal at each reopening (at least the run store's)"
            )
        else:
            return []
        return [Problem(boundary="checkpoint_integrity", message=message)]

    return check


def _tampered(kind: str) -> Scenario:
    """A transfer of 10 paused for approval, its stored row tampered with (``kind``): the
    store refuses it, then the untampered run applies the approval once."""
    return call_then_answer(
        name=f"checkpoint_{kind}_refused",
        boundary="checkpoint_integrity",
        description=f"a paused run's store reopened after {_WHAT[kind]} refuses it before "
        "anything runs; the approval is not used up (applied once after the row is put right)",
        call=tool_call("transfer", {"to": "bob", "amount": 10}),
        answer="sent",
        result=("success", None),
        tools=tools_with(transfer_tool),
        decisions=("approve",),
        tamper=kind,
        requires=("write_tools", "durable_store"),
        extra=(
            check_refused(kind),
            check_writes([10], previews=1, boundary="checkpoint_integrity"),
            check_model_calls(2, "checkpoint_integrity"),
        ),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="checkpoint_integrity",
        label="checkpoint integrity",
        rule="a paused run's store refuses a forged, edited, rolled-back or grafted row "
        "before anything runs, and the approval is not used up",
        keep_it=(
            "Keep paused runs in `RunStore` (sealed, encrypted, versioned rows; a framework's "
            "checkpoints through its binding's sealed serializer) and resume only what it "
            "reads back: a row it did not seal, an edited, older or another run's row raises "
            "`CheckpointError` before any decision is recorded or any tool runs."
        ),
    ),
    scenarios=tuple(_tampered(kind) for kind in TAMPERINGS),
)
"""The checkpoint integrity boundary: its row and its scenarios."""
