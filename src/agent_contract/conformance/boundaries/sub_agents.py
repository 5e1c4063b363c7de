"""The sub-agents boundary: one contract over a tree of agents. A child agent the top
agent delegates to (capability ``sub_agents``: the run's delegating tool runs it under
the run's child contract, ``contract.child(name, tools=..., allowlist=...)``; see
:mod:`agent_contract.delegation` and docs/MULTI_AGENT.md) spends the run's budget, so a
child that spends it ends the whole run and the parent's model is not called again; a
child's call outside its own allowlist never runs, even when the parent may call that
tool; and each delegation is a fresh scope, whose call ids are bound in that scope.
"""

from __future__ import annotations

import json
from typing import Final

from ...budget import Budget
from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, SubAgent
from ..checks import check_ran
from ..fixtures import Probe, basic_tools, echo_tool, text_tool, tools_with

__all__ = ["DEFINITION", "wipe_tool"]

wipe_tool: Final = text_tool("wipe", "Wipe the notes.", lambda text: f"wiped {text}")
"""``wipe(text)``: a read tool the parent may call and the child's allowlist leaves out."""


def _problems(messages: list[str]) -> list[Problem]:
    return [Problem(boundary="sub_agents", message=m) for m in messages]


def _read(content: str, status: str | None) -> str:
    """A tool message as :func:`_child_read` compares it: an error's kind, else its
    content."""
    if status == "error":
        try:
            return str(json.loads(content).get("error"))
        except (ValueError, AttributeError):
            return content
    return content


def _child_read(expected: list[list[tuple[str | None, str]]]) -> Check:
    """The child's model, at each of its calls after a tool result, read exactly the
    tool messages ``expected`` (``(tool_call_id, content or error kind)`` each): its own
    scope's, never another delegation's."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        child = probe.child_model
        if child is None:
            return _problems(["no child agent ran"])
        seen = []
        for call in child.calls:
            tools = [m for m in call["messages"] if m.role == "tool"]
            if tools:
                seen.append([(m.tool_call_id, _read(m.content, m.status)) for m in tools])
        if seen != expected:
            return _problems(
                [f"the child's model read the tool messages {seen}, expected {expected}"]
            )
        return []

    return check


def _child_runs(counts: dict[str, int]) -> Check:
    """The child's ``echo`` ran this often per ``tool_call_id`` (ids bound per scope)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        seen = probe.runs_by_call(["echo"])
        if seen != counts:
            return _problems([f"echo ran {seen} times per call id, expected {counts}"])
        return []

    return check


def _delegations_answered(answers: list[str]) -> Check:
    """Each delegating call's tool message is its own child's answer."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        seen = [m["content"] for m in obs.tool_messages]
        if seen != answers:
            return _problems([f"the delegating calls returned {seen}, expected {answers}"])
        return []

    return check


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="sub_agents",
        label="sub-agents",
        rule=(
            "a child agent spends the run's budget, keeps its own allowlist, and runs in a "
            "fresh scope per delegation"
        ),
        keep_it=(
            "Build every child agent's contract from the run's, `contract.child(name, "
            "tools=..., allowlist=...)`, and give it to the child (its middleware, "
            "capability or loop), never a `Contract` of its own: the run's budget is "
            "charged for the child's calls and a child's stop ends the run, the child's "
            "allowlist holds on its calls, and each delegation opens a fresh child scope."
        ),
    ),
    scenarios=(
        Scenario(
            name="child_spends_the_run_budget",
            boundary="sub_agents",
            description=(
                "a child's tool calls are charged to the run's budget: the child that "
                "spends it ends the whole run with max_tool_calls, the delegating call "
                "interrupted, and the parent's model is not called again"
            ),
            script=(tool_call("delegate", {"text": "look"}, id="call_delegate"), "done"),
            tools=basic_tools,
            sub_agent=SubAgent(
                script=(
                    tool_call("echo", {"text": "a"}),
                    tool_call("echo", {"text": "b"}),
                    tool_call("echo", {"text": "c"}),
                    "found",
                ),
                tools=lambda probe: [echo_tool(probe)],
            ),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=3),
            stop_reason="max_tool_calls",
            trajectory=("delegate",),
            results=(("error", "interrupted"),),
            model_calls=1,
            requires=("sub_agents",),
            extra=(check_ran("echo", 2, "sub_agents"),),
        ),
        Scenario(
            name="child_call_not_granted_never_runs",
            boundary="sub_agents",
            description=(
                "a child's call outside its own allowlist never runs (refused, its model "
                "told), even though the parent may call that tool"
            ),
            script=(tool_call("delegate", {"text": "clean up"}), "done"),
            tools=tools_with(wipe_tool),
            sub_agent=SubAgent(
                script=(tool_call("wipe", {"text": "all"}, id="call_wipe"), "could not"),
                tools=lambda probe: [echo_tool(probe), wipe_tool(probe)],
                allowlist=("echo",),
            ),
            stop_reason="answered",
            trajectory=("delegate",),
            results=(("success", None),),
            output_contains=("done",),
            must_not_run=("wipe",),
            requires=("sub_agents",),
            extra=(_child_read([[("call_wipe", "not_allowed")]]),),
        ),
        Scenario(
            name="two_delegations_fresh_scopes",
            boundary="sub_agents",
            description=(
                "two delegations are two fresh scopes: the call id the child reuses is "
                "bound in each, and each child's model reads its own call's result"
            ),
            script=(
                tool_call("delegate", {"text": "first"}, id="call_first"),
                tool_call("delegate", {"text": "second"}, id="call_second"),
                "done",
            ),
            tools=basic_tools,
            sub_agent=SubAgent(
                script=(
                    tool_call("echo", {"text": "a"}, id="call_1"),
                    "got a",
                    tool_call("echo", {"text": "b"}, id="call_1"),
                    "got b",
                ),
                tools=lambda probe: [echo_tool(probe)],
            ),
            stop_reason="answered",
            trajectory=("delegate", "delegate"),
            results=(("success", None), ("success", None)),
            output_contains=("done",),
            model_calls=3,
            requires=("sub_agents",),
            extra=(
                _child_runs({"call_1": 2}),
                _child_read([[("call_1", "echo: a")], [("call_1", "echo: b")]]),
                _delegations_answered(["got a", "got b"]),
            ),
        ),
    ),
)
"""The sub-agents boundary: its row and its scenarios."""
