"""The approval-for-writes boundary (capability ``write_tools``): writes wait for a
human decision bound to the exact call, and apply once (approved, rejected, edited,
replayed approvals, a lost acknowledgement, a crash and restart, checked in every run
that asks for one by :func:`check_crash_restart`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ...approval import idempotency_key
from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ...tools import ToolContext, ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_model_calls, check_writes
from ..fixtures import Probe, tools_with, transfer_tool

__all__ = ["DEFINITION", "check_crash_restart", "check_write_keys", "flaky_ack_transfer_tool"]

_SEND: Final = {"to": "bob", "amount": 10}
_TRANSFER_TOOLS: Final = tools_with(transfer_tool)
"""``echo`` and ``transfer``: the tools most of these scenarios offer."""


def flaky_ack_transfer_tool(probe: Probe) -> ToolSpec:
    """:func:`~agent_contract.conformance.fixtures.transfer_tool` whose first write
    lands and then loses its acknowledgement (the handler raises ``ConnectionError``
    after storing the write under its idempotency key)."""
    spec = transfer_tool(probe)
    write = spec.handler

    def handler(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        result = write(context, to=to, amount=amount)
        if probe.write_calls == 1:
            raise ConnectionError("connection reset before the acknowledgement arrived")
        return dict(result)

    return ToolSpec(
        name=spec.name,
        description=spec.description,
        parameters=spec.parameters,
        handler=handler,
        effect="write",
        preview=spec.preview,
        verify=spec.verify,
    )


def check_crash_restart(
    scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe
) -> list[Problem]:
    """In every run of a scenario with a crash point: the harness crashed there once and
    restarted once."""
    if scenario.crash_at is None:
        return []
    plan = probe.crash
    fired, restarts = (plan.fired, plan.restarts) if plan else (0, 0)
    if (fired, restarts) == (1, 1):
        return []
    message = (
        f"asked to crash at {scenario.crash_at!r} and restart: crashed {fired} "
        f"time(s), restarted {restarts} time(s), expected once each"
    )
    return [Problem(boundary="write_approval", message=message)]


def check_write_keys(
    scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe
) -> list[Problem]:
    """In every run: each time the write handler ran (``transfer``), it ran with the
    idempotency key of its call and the arguments it wrote
    (:func:`~agent_contract.approval.idempotency_key`), so a write that runs more than
    once for one call (a retry, a resume after a crash) is the same write and applies
    once: a re-run the contract allows is one with the same key."""
    problems = []
    with probe.lock:
        runs = list(probe.write_runs)
    for context, arguments in runs:
        key = idempotency_key(context.run_id, context.tool_call_id, "transfer", arguments)
        if context.idempotency_key is None:
            problems.append("the write ran without an idempotency key")
        elif context.idempotency_key != key:
            problems.append(
                f"the write for call {context.tool_call_id!r} ran with the idempotency key "
                f"{context.idempotency_key!r}, not its call's {key!r}"
            )
    return [Problem(boundary="write_approval", message=m) for m in problems]


def _decided(
    name: str,
    description: str,
    decisions: tuple[str | tuple[str, dict[str, Any]], ...],
    answer: str,
    result: tuple[str, str | None],
    *,
    tools: Callable[[Probe], list[ToolSpec]] = _TRANSFER_TOOLS,
    **fields: Any,
) -> Scenario:
    """A scenario whose one call, a transfer of 10, gets the scripted human's
    ``decisions``; its tool message is expected with ``result`` and the model then
    answers ``answer``; ``fields`` are the scenario's other fields (``requires`` and
    the ``extra`` checks of what was written)."""
    return call_then_answer(
        name=name,
        boundary="write_approval",
        description=description,
        call=tool_call("transfer", _SEND),
        answer=answer,
        result=result,
        tools=tools,
        decisions=decisions,
        **fields,
    )


def _applied_once(
    name: str,
    description: str,
    tools: Callable[[Probe], list[ToolSpec]],
    *,
    requires: tuple[str, ...] = ("write_tools",),
    crash_at: str | None = None,
    extra: tuple[Check, ...] = (),
) -> Scenario:
    """A scenario whose transfer of 10, approved, applies exactly once (previewed once)
    and the run answers ``sent``; ``extra`` checks are made after that one."""
    return _decided(
        name,
        description,
        ("approve",),
        "sent",
        ("success", None),
        tools=tools,
        requires=requires,
        crash_at=crash_at,
        extra=(check_writes([10], previews=1), *extra),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="write_approval",
        label="approval for writes",
        rule="writes wait for a human decision bound to the exact call, and apply once",
        keep_it=(
            "`ToolSpec(effect='write', preview=..., verify=...)`: the run pauses with "
            "`pending_approval`, `RunState.resume` takes the human's `Approval`s bound to "
            "the exact call, and an approved write runs once with an idempotency key."
        ),
    ),
    scenarios=(
        Scenario(
            name="write_waits_for_approval",
            boundary="write_approval",
            description="a write call pauses the run; nothing is written without a decision",
            script=(tool_call("transfer", _SEND),),
            tools=_TRANSFER_TOOLS,
            stop_reason="pending_approval",
            trajectory=(),
            must_not_run=(),
            requires=("write_tools",),
            extra=(check_writes([], previews=1),),
        ),
        _applied_once(
            "write_approved",
            "an approved write runs once and is verified",
            _TRANSFER_TOOLS,
        ),
        _decided(
            "write_rejected",
            "a rejected write never runs and gets a bound rejection",
            ("reject",),
            "not sent",
            ("error", "rejected"),
            requires=("write_tools",),
            extra=(check_writes([], previews=1),),
        ),
        _decided(
            "write_edited",
            "an edited write is previewed again, then runs once with the edit",
            (("edit", {"to": "bob", "amount": 5}),),
            "sent less",
            ("success", None),
            requires=("write_tools",),
            extra=(check_writes([5], previews=2),),
        ),
        _decided(
            "approval_replay_refused",
            "an approval issued for other arguments is refused; nothing runs",
            ("replay", "reject"),
            "not sent",
            ("error", "rejected"),
            requires=("write_tools",),
            extra=(check_writes([], previews=1, refusals=1),),
        ),
        _applied_once(
            "write_acknowledgement_lost",
            "a write that landed but lost its acknowledgement is read back by its "
            "idempotency key and reported applied, not repeated",
            tools_with(flaky_ack_transfer_tool),
        ),
        *(
            _applied_once(
                f"write_crash_{point}",
                description,
                _TRANSFER_TOOLS,
                crash_at=point,
                requires=("write_tools", "crash_restart"),
                extra=(check_model_calls(2, "write_approval"),),
            )
            for point, description in (
                (
                    "after_write",
                    "the process crashes between a write and its acknowledgement; a fresh "
                    "instance resumes with the same idempotency key, verifies, and does not "
                    "write again",
                ),
                (
                    "after_approval",
                    "the process crashes after the decision is stored, before the write; a "
                    "fresh instance carries out the stored decision once",
                ),
            )
        ),
    ),
    every_run=(check_crash_restart, check_write_keys),
)
"""The approval for writes boundary: its row and its scenarios, and the check it makes in every run."""
