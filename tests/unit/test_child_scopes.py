"""Child scopes of a run, in the core (no framework): ``Contract.child`` and
``Contract.start(parent=, parent_call_id=)``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_contract import Budget, Contract
from agent_contract.app.cli import _summary
from agent_contract.errors import ConfigurationError
from agent_contract.messages import Completion, Message, ToolCall
from agent_contract.runtime import ChildScopeRefused, RunState, Stop
from agent_contract.tools import ToolContext, ToolSpec

RAN: list[str] = []


def _spec(name: str) -> ToolSpec:
    def handler(q: str) -> str:
        RAN.append(name)
        return q

    return ToolSpec(
        name=name,
        description=name,
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler=handler,
    )


def _calls(state: RunState, *calls: tuple[str, str]) -> list[str]:
    """Plan and run one batch; the names that ran."""
    RAN.clear()
    completion = Completion(
        tool_calls=tuple(ToolCall(id=i, name=n, arguments={"q": "x"}) for n, i in calls)
    )
    verdict = state.accept_response(completion)
    plan = state.plan_tool_calls(verdict.calls)
    for planned in plan.calls:
        state.execute(planned)
    return list(RAN)


def _tree(budget: Budget | None = None) -> tuple[Contract, Contract, RunState, RunState]:
    contract = Contract([_spec("delegate")], budget=budget or Budget())
    child = contract.child(
        "researcher", tools=[_spec("search"), _spec("wipe")], allowlist=["search"]
    )
    root = contract.start()
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    _calls(root, ("delegate", "d1"))
    scope = child.start(parent=root, parent_call_id="d1")
    return contract, child, root, scope


def test_a_child_has_its_own_allowlist_and_the_runs_counters() -> None:
    _, child, root, scope = _tree()
    assert scope.view.scope is not None
    assert (scope.view.scope.agent, scope.view.scope.call_path) == ("researcher", ("d1",))
    assert child.start(parent=root, parent_call_id="d1") is scope  # found again
    assert scope.check_before_model_call([Message(role="user", content="q")]) is None
    assert _calls(scope, ("search", "c1"), ("wipe", "c2")) == ["search"]
    assert scope.view.result_for("c2") is not None  # refused, bound in the child's ledger
    assert root.view.result_for("c1") is None  # the parent's ledger is its own
    assert root.view.usage().model_steps == 2
    assert root.view.usage().tool_calls == 3
    assert [v.scope for v in root.view.children()] == [scope.view.scope]


def test_a_childs_answer_ends_the_child_only_any_other_stop_the_run() -> None:
    _, child, root, scope = _tree()
    scope.halt(Stop(reason="answered"), "found")
    assert root.view.halted is None
    second = child.start(parent=root, parent_call_id="d2")
    assert second is not scope
    second.halt(Stop(reason="max_tool_calls", detail="spent"))
    assert root.view.halted == Stop(reason="max_tool_calls", detail="spent")
    assert root.check_before_model_call([]) == Stop(reason="max_tool_calls", detail="spent")


def test_the_runs_budget_covers_the_children() -> None:
    _, _, _root, scope = _tree(Budget(max_model_steps=2))
    assert scope.check_before_model_call([Message(role="user", content="q")]) is None
    stop = scope.check_before_model_call([Message(role="user", content="q")])
    assert stop is not None
    assert stop.reason == "max_model_steps"


def test_the_trace_is_one_tree() -> None:
    _, _, root, scope = _tree()
    assert scope.check_before_model_call([Message(role="user", content="q")]) is None
    events = root.view.trace.events
    started = [e for e in events if e["type"] == "child_started"]
    assert [(e["agent"], e["scope"]) for e in started] == [
        ("researcher", {"agent": "researcher", "call_path": ["d1"]})
    ]
    assert [e.get("scope") for e in events if e["type"] == "model_call"] == [
        None,
        {"agent": "researcher", "call_path": ["d1"]},
    ]
    assert scope.view.trace.size_bytes == root.view.trace.size_bytes


def _refused(contract: Contract, child: Contract, match: str) -> None:
    """``child`` as the contract of a child scope of a run of ``contract``: refused
    with ``match`` and the fix, the run halted with ``middleware_stop``."""
    root = contract.start()
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    _calls(root, ("delegate", "d1"))
    with pytest.raises(ChildScopeRefused, match=match + r".*contract\.child\(name") as caught:
        child.start(parent=root, parent_call_id="d1", agent="researcher")
    assert isinstance(caught.value, ConfigurationError)
    assert (caught.value.agent, caught.value.call_id) == ("researcher", "d1")
    assert root.view.children() == ()
    stop = root.check_before_model_call([Message(role="user", content="go")])
    assert stop is not None
    assert stop.reason == "middleware_stop"
    assert "researcher" in (stop.detail or "")


def test_a_child_contract_with_a_budget_of_its_own_is_refused() -> None:
    contract = Contract([_spec("delegate")])
    other = Contract([_spec("search")], budget=Budget(max_tool_calls=99))
    _refused(contract, other, r"'researcher'.*a Contract of its own")


def test_a_free_standing_contract_with_the_same_budget_is_refused() -> None:
    """Same budget, but not made from the run's Contract: the run's secrets and
    redaction would not apply to it (the parent's secret would reach the child)."""
    contract = Contract([_spec("delegate")], secrets=["s3cret-value"])
    other = Contract([_spec("search")])
    assert other.budget == contract.budget
    _refused(contract, other, r"a Contract of its own.*redaction and secrets")


def test_a_child_of_another_contract_is_refused() -> None:
    contract = Contract([_spec("delegate")])
    stranger = Contract([_spec("delegate")], budget=Budget(max_tool_calls=99))
    _refused(contract, stranger.child("researcher"), r"a child Contract of another Contract")
    twin = Contract([_spec("delegate")])  # equal budget, still another Contract
    _refused(contract, twin.child("researcher"), r"a child Contract of another Contract")


def test_the_runs_own_contract_may_open_a_child_scope() -> None:
    """The run's own Contract is accepted (its tools are checked against the child's
    model's offer by the binding's gate)."""
    contract = Contract([_spec("delegate"), _spec("search")])
    root = contract.start()
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    _calls(root, ("delegate", "d1"))
    assert contract.start(parent=root, parent_call_id="d1").view.scope is not None


def test_a_child_of_a_child_is_accepted_at_any_depth() -> None:
    contract, child, _root, scope = _tree()
    grandchild = child.child("helper", tools=[_spec("search")])
    _calls(scope, ("search", "s1"))
    nested = grandchild.start(parent=scope, parent_call_id="s1")
    assert nested.view.scope is not None
    assert nested.view.scope.call_path == ("d1", "s1")
    # a sibling made from the top contract may run inside a child's call too
    sibling = contract.child("other", tools=[_spec("search")])
    assert sibling.start(parent=scope, parent_call_id="s1").view.scope is not None


def test_a_child_scope_needs_its_parent_call() -> None:
    contract = Contract([_spec("delegate")])
    root = contract.start()
    with pytest.raises(ConfigurationError, match="parent_call_id"):
        contract.start(parent=root)
    with pytest.raises(ConfigurationError, match="caller"):
        contract.start(parent=root, parent_call_id="d1", caller="me")
    with pytest.raises(ConfigurationError, match="name"):
        contract.child("")


def test_a_childs_admitted_call_left_unrun_when_the_run_ends_gets_a_result() -> None:
    """A child's call admitted (``decision: run``) that never ran when another scope's
    stop ends the run: the run's end closes the child's batch, the call's result is
    ``interrupted`` with an unknown outcome, and its ``tool_result`` event is written."""
    _, _child, root, scope = _tree()
    RAN.clear()
    assert scope.check_before_model_call([Message(role="user", content="q")]) is None
    verdict = scope.accept_response(
        Completion(tool_calls=(ToolCall(id="s1", name="search", arguments={"q": "x"}),))
    )
    scope.plan_tool_calls(verdict.calls)  # admitted, never executed
    root.halt(Stop(reason="max_tool_calls", detail="a sibling spent the budget"))
    root.finish(messages=[])
    results = [e for e in root.view.trace.events if e["type"] == "tool_result" and e["id"] == "s1"]
    assert [(e["outcome"], e["error_kind"], e["scope"]["call_path"]) for e in results] == [
        ("unknown", "interrupted", ["d1"])
    ]
    recorded = scope.view.result_for("s1")
    assert recorded is not None
    assert "max_tool_calls" in (recorded.error_message or "")
    assert RAN == []  # nothing ran it


def _delegating(budget: Budget, child_script: list[tuple[str, str]]) -> tuple[RunState, list[str]]:
    """A run whose ``delegate`` handler starts a child scope (``researcher``) inside
    its own call and runs ``child_script`` there, one call per batch, halting the
    child with the stop a batch's planning returns (as a driver does)."""
    holder: dict[str, Any] = {}
    ran: list[str] = []
    contract = Contract([_delegate_spec(holder, ran)], budget=budget)
    holder["child_contract"] = contract.child("researcher", tools=[_spec("search")])
    root = holder["root"] = contract.start()
    holder["script"] = child_script
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    verdict = root.accept_response(
        Completion(tool_calls=(ToolCall(id="call_1", name="delegate", arguments={"q": "x"}),))
    )
    for planned in root.plan_tool_calls(verdict.calls).calls:
        root.execute(planned)
    return root, ran


def _delegate_spec(holder: dict[str, Any], ran: list[str]) -> ToolSpec:
    def handler(context: ToolContext, q: str) -> str:
        child: Contract = holder["child_contract"]
        scope = child.start(parent=holder["root"], parent_call_id=context.tool_call_id)
        for name, call_id in holder["script"]:
            stop = scope.check_before_model_call([Message(role="user", content=q)])
            if stop is not None:
                scope.halt(stop)
                return "the child's last message"
            verdict = scope.accept_response(
                Completion(tool_calls=(ToolCall(id=call_id, name=name, arguments={"q": q}),))
            )
            plan = scope.plan_tool_calls(verdict.calls)
            if plan.stop is not None:
                scope.halt(plan.stop)
                return "the child's last message"
            for planned in plan.calls:
                ran.append(scope.execute(planned).status)
        scope.halt(Stop(reason="answered"), "found")
        return "found"

    return ToolSpec(
        name="delegate",
        description="delegate",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler=handler,
        needs_context=True,
    )


def test_a_delegating_call_whose_child_was_stopped_is_not_a_success() -> None:
    """The child's second search is past ``max_tool_calls=2`` (the delegation is one):
    the child halts the run; the delegating call's result, returned normally by its
    handler, is an ``interrupted`` error, outcome unknown, naming the child's stop."""
    root, _ = _delegating(Budget(max_tool_calls=2), [("search", "call_1"), ("search", "call_2")])
    recorded = root.view.result_for("call_1")
    assert recorded is not None
    assert (recorded.status, recorded.error_kind, recorded.outcome) == (
        "error",
        "interrupted",
        "unknown",
    )
    assert recorded.side_effects_possible
    assert "child agent 'researcher'" in (recorded.error_message or "")
    assert "max_tool_calls" in (recorded.error_message or "")
    result = root.finish(messages=[])
    assert result.stop_reason == "max_tool_calls"
    assert [(c.id, c.name, c.status, c.scope is not None) for c in result.tool_calls] == [
        ("call_1", "delegate", "error", False),
        ("call_1", "search", "success", True),  # the child's own call_1, kept apart
        ("call_2", "search", "error", True),
    ]


def test_a_delegating_call_whose_child_answered_stays_a_success() -> None:
    root, ran = _delegating(Budget(), [("search", "call_1")])
    recorded = root.view.result_for("call_1")
    assert recorded is not None
    assert (recorded.name, recorded.status) == ("delegate", "success")
    assert ran == ["success"]
    result = root.finish(messages=[])
    assert [c.scope.agent if c.scope else None for c in result.tool_calls] == [None, "researcher"]
    assert result.trajectory() == ["delegate"]


def test_the_cli_summary_names_a_child_calls_agent() -> None:
    root, _ = _delegating(Budget(), [("search", "call_1")])
    summary = _summary(root.finish(messages=[]))
    assert "delegate [call_1] success, search [call_1] (agent 'researcher') success" in summary


def _write_spec(name: str) -> ToolSpec:
    def handler(q: str) -> str:
        RAN.append(name)
        return q

    return ToolSpec(
        name=name,
        description=name,
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler=handler,
        effect="write",
        preview=lambda context, q: {"would": q},
        verify=lambda context, q: None,
    )


def test_a_child_contract_that_allows_a_write_fails_at_build_time() -> None:
    """A write waits for approval (a pause); a child scope cannot pause: the child's
    Contract is refused when built, naming the agent, the tool and the fix."""
    contract = Contract([_spec("delegate")])
    with pytest.raises(
        ConfigurationError,
        match=r"child agent 'researcher'.*write tools \['wipe'\].*out of the child's allowlist",
    ):
        contract.child("researcher", tools=[_spec("search"), _write_spec("wipe")])
    # registered but not allowlisted: never offered, so accepted
    child = contract.child(
        "researcher", tools=[_spec("search"), _write_spec("wipe")], allowlist=["search"]
    )
    assert child.offered_names() == ["search"]
    # inheriting the run's registry and its write
    with_write = Contract([_spec("delegate"), _write_spec("order")])
    with pytest.raises(ConfigurationError, match=r"'helper'.*\['order'\]"):
        with_write.child("helper")


def test_the_runs_own_contract_with_a_write_is_refused_as_a_child_scope() -> None:
    contract = Contract([_spec("delegate"), _write_spec("order")])
    root = contract.start()
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    _calls(root, ("delegate", "d1"))
    with pytest.raises(ChildScopeRefused, match=r"'researcher'.*write tools \['order'\]"):
        contract.start(parent=root, parent_call_id="d1", agent="researcher")
    stop = root.check_before_model_call([Message(role="user", content="go")])
    assert stop is not None
    assert stop.reason == "middleware_stop"


def test_an_approved_write_whose_child_was_stopped_is_not_a_success() -> None:
    """A parent's write tool that delegates (its handler starts a child agent, which is
    stopped): the approved write's result goes through the same rule as any call."""
    from agent_contract.approval import Approval

    holder: dict[str, Any] = {}
    applied: list[str] = []

    def handler(context: ToolContext, q: str) -> str:
        scope = holder["child"].start(parent=holder["root"], parent_call_id=context.tool_call_id)
        scope.halt(Stop(reason="max_tool_calls", detail="the child spent the budget"))
        applied.append(q)
        return "the child's last message"

    write = ToolSpec(
        name="delegate_write",
        description="delegate_write",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        handler=handler,
        effect="write",
        needs_context=True,
        preview=lambda context, q: {"would": q},
        verify=lambda context, q: {"done": q} if applied else None,
    )
    contract = Contract([write])
    holder["child"] = contract.child("researcher", tools=[_spec("search")])
    root = holder["root"] = contract.start()
    assert root.check_before_model_call([Message(role="user", content="go")]) is None
    verdict = root.accept_response(
        Completion(tool_calls=(ToolCall(id="w1", name="delegate_write", arguments={"q": "x"}),))
    )
    (pending,) = root.plan_tool_calls(verdict.calls).pending
    (approved,) = root.resume([Approval.for_pending(pending, "approve")])
    result = root.execute(approved)
    assert applied == ["x"]
    assert (result.status, result.error_kind, result.outcome) == ("error", "interrupted", "unknown")
    assert "child agent 'researcher'" in (result.error_message or "")
