"""The write-approval scenarios (capability ``write_tools``): a write waits for a human
decision bound to the exact call, and applies once."""

from __future__ import annotations

from ..budget import Budget
from ..testing import tool_call
from .evaluate import Scenario, check_writes
from .fixtures import tools_with, transfer_tool

__all__ = ["build_approval_scenarios"]


def build_approval_scenarios() -> list[Scenario]:
    """Scenarios for write tools (capability ``write_tools``)."""
    send = {"to": "bob", "amount": 10}
    return [
        Scenario(
            name="write_waits_for_approval",
            boundary="write_approval",
            description="a write call pauses the run; nothing is written without a decision",
            script=(tool_call("transfer", send),),
            tools=tools_with(transfer_tool),
            stop_reason="pending_approval",
            trajectory=(),
            must_not_run=(),
            requires=("write_tools",),
            extra=(check_writes([], previews=1),),
        ),
        Scenario(
            name="write_approved",
            boundary="write_approval",
            description="an approved write runs once and is verified",
            script=(tool_call("transfer", send), "sent"),
            tools=tools_with(transfer_tool),
            decisions=("approve",),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("success", None),),
            requires=("write_tools",),
            extra=(check_writes([10], previews=1),),
        ),
        Scenario(
            name="write_rejected",
            boundary="write_approval",
            description="a rejected write never runs and gets a bound rejection",
            script=(tool_call("transfer", send), "not sent"),
            tools=tools_with(transfer_tool),
            decisions=("reject",),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("error", "rejected"),),
            requires=("write_tools",),
            extra=(check_writes([], previews=1),),
        ),
        Scenario(
            name="write_edited",
            boundary="write_approval",
            description="an edited write is previewed again, then runs once with the edit",
            script=(tool_call("transfer", send), "sent less"),
            tools=tools_with(transfer_tool),
            decisions=(("edit", {"to": "bob", "amount": 5}),),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("success", None),),
            requires=("write_tools",),
            extra=(check_writes([5], previews=2),),
        ),
        Scenario(
            name="approval_replay_refused",
            boundary="write_approval",
            description="an approval issued for other arguments is refused; nothing runs",
            script=(tool_call("transfer", send), "not sent"),
            tools=tools_with(transfer_tool),
            decisions=("replay", "reject"),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("error", "rejected"),),
            requires=("write_tools",),
            extra=(check_writes([], previews=1, refusals=1),),
        ),
        Scenario(
            name="write_budget_across_resumes",
            boundary="tool_call_budget",
            description="the tool-call budget counts across resumes (a framework's own counters may reset)",
            script=(
                tool_call("transfer", {"to": "bob", "amount": 1}),
                tool_call("transfer", {"to": "bob", "amount": 2}),
                tool_call("transfer", {"to": "bob", "amount": 3}),
            ),
            tools=tools_with(transfer_tool),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            decisions=("approve", "approve", "approve"),
            stop_reason="max_tool_calls",
            trajectory=("transfer",) * 3,
            results=(("success", None), ("success", None), ("error", "budget_exceeded")),
            requires=("write_tools",),
            extra=(check_writes([1, 2], previews=2, boundary="tool_call_budget"),),
        ),
    ]
