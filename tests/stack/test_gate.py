"""The inner gate (issue 10, items 6, 7, 8 and the HITL edit): what sits between the
contract and the model or the tools is seen from inside."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents import middleware as stock
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from agent_contract.errors import ConfigurationError, NotFoundError
from agent_contract.messages import Message
from agent_contract.runtime import AnswerFormat, Contract
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract.tools import ToolSpec
from agent_contract_langchain import gate
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.harness import run_graph
from agent_contract_langchain.middleware import ContractMiddleware
from agent_contract_langchain.resuming import resume_graph
from agent_contract_langchain.run_config import contract_config
from agent_contract_langchain.tools import from_langchain_tool, to_langchain_tools

from .conftest import Ran, Stack, budget, echo_spec

ONE_ARG = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def retry() -> Any:
    return stock.ToolRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False)


def raising(ran: Ran, name: str, error: BaseException) -> ToolSpec:
    def handler(a: int) -> str:
        ran.calls.append((name, {"a": a}))
        raise error

    return ToolSpec(name=name, description=name, parameters=ONE_ARG, handler=handler)


def test_a_stack_without_the_gate_fails_closed_naming_the_fix(ran: Ran) -> None:
    contract = Contract([echo_spec(ran)])
    graph = create_agent(
        ContractChatModel(model=FakeModel([tool_call("echo", {"a": 1}), "done"])),
        tools=to_langchain_tools(contract.registry),
        middleware=[ContractMiddleware(contract)],
    )
    with pytest.raises(ConfigurationError, match=r"inner\(\)"):
        graph.invoke({"messages": [HumanMessage("q")]}, contract_config(contract.start()))
    assert ran.calls == []


# -- retries (item 7) --------------------------------------------------------------------


def test_every_retry_inside_the_contract_is_an_attempt_and_a_timeout_is_honest(
    mode: str, ran: Ran
) -> None:
    contract = Contract([raising(ran, "flaky", TimeoutError("upstream"))], budget=budget())
    model = FakeModel([tool_call("flaky", {"a": 1}), "done"])
    result = Stack(model, contract, [retry()], "after").run(mode=mode)
    assert ran.count("flaky") == 3
    assert result.usage.tool_calls == 3  # each execution is charged to the budget
    (record,) = result.tool_calls
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )
    retries = [e["attempt"] for e in result.trace.events if e["type"] == "tool_retry"]
    assert retries == [2, 3]


def test_a_retry_layer_outside_the_contract_never_retries(mode: str, ran: Ran) -> None:
    contract = Contract([raising(ran, "flaky", TimeoutError("upstream"))], budget=budget())
    model = FakeModel([tool_call("flaky", {"a": 1}), "done"])
    result = Stack(model, contract, [retry()], "before").run(mode=mode)
    assert ran.count("flaky") == 1
    assert result.tool_calls[0].side_effects_possible


def test_a_retry_past_the_tool_call_budget_is_refused(ran: Ran) -> None:
    contract = Contract(
        [raising(ran, "flaky", TimeoutError("upstream"))], budget=budget(max_tool_calls=2)
    )
    model = FakeModel([tool_call("flaky", {"a": 1}), "done"])
    result = Stack(model, contract, [retry()], "after").run()
    assert ran.count("flaky") == 2
    (record,) = result.tool_calls
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "budget_exceeded",
        "failed",
        True,
    )


def test_a_write_is_never_run_twice_by_a_retry_layer(position: str, ran: Ran) -> None:
    writes: list[int] = []

    def write(context: Any, a: int) -> str:
        writes.append(a)
        raise ConnectionError("flaky backend")

    spec = ToolSpec(
        name="pay",
        description="pay",
        parameters=ONE_ARG,
        handler=write,
        effect="write",
        preview=lambda context, a: {"pay": a},
        verify=lambda context, a: None,
    )
    contract = Contract([spec], budget=budget())
    stack = Stack(
        FakeModel([tool_call("pay", {"a": 5}), "done"], stateless=True),
        contract,
        [retry()],
        position,  # type: ignore[arg-type]
    )
    paused = stack.run()
    assert paused.stop_reason == "pending_approval"
    from agent_contract.approval import Approval

    (pending,) = paused.pending_approvals
    done = resume_graph(
        stack.graph, contract, paused.snapshot or {}, [Approval.for_pending(pending, "approve")]
    )
    assert writes == [5]
    assert done.tool_calls[0].status == "error"


def test_a_tool_error_layer_inside_keeps_the_contracts_classification(
    position: str, ran: Ran
) -> None:
    contract = Contract([raising(ran, "lookup", NotFoundError("no such order"))])
    handler = stock.ToolErrorMiddleware(on_error=lambda exc, req: "it failed")
    model = FakeModel([tool_call("lookup", {"a": 1}), "done"])
    result = Stack(model, contract, [handler], position).run()  # type: ignore[arg-type]
    assert [(c.error_kind, c.outcome) for c in result.tool_calls] == [("not_found", "failed")]


class FlakyModel:
    """Raises ConnectionError on its first ``fails`` calls, then follows the script."""

    def __init__(self, fails: int, script: list[Any]) -> None:
        self.fails = fails
        self.calls = 0
        self.inner = FakeModel(script)

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.fails:
            raise ConnectionError("provider down")
        return self.inner.complete(*args, **kwargs)


@pytest.mark.skipif(not hasattr(stock, "ModelRetryMiddleware"), reason="langchain < 1.2")
@pytest.mark.parametrize(
    ("fails", "stop", "provider_calls"), [(1, "answered", 2), (5, "model_error", 3)]
)
def test_model_retries_inside_are_model_steps_and_never_answer_for_the_model(
    fails: int, stop: str, provider_calls: int, mode: str, ran: Ran
) -> None:
    model = FlakyModel(fails, ["done"])
    middleware = stock.ModelRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False)
    result = Stack(model, Contract([echo_spec(ran)]), [middleware], "after").run(mode=mode)
    assert (result.stop_reason, model.calls, result.usage.model_steps) == (
        stop,
        provider_calls,
        provider_calls,
    )
    if stop == "model_error":
        assert result.output is None
        assert "a middleware answered in its place" in result.stop_detail


@pytest.mark.skipif(not hasattr(stock, "ModelRetryMiddleware"), reason="langchain < 1.2")
def test_model_retries_past_the_step_budget_are_refused(ran: Ran) -> None:
    model = FlakyModel(5, ["done"])
    middleware = stock.ModelRetryMiddleware(max_retries=4, initial_delay=0.0, jitter=False)
    contract = Contract([echo_spec(ran)], budget=budget(max_model_steps=2))
    result = Stack(model, contract, [middleware], "after").run()
    assert (result.stop_reason, model.calls) == ("max_model_steps", 2)


# -- dynamic tools (item 6) --------------------------------------------------------------


@tool
def extra(a: int) -> str:
    """A tool another middleware adds at run time."""
    return f"extra {a}"


class AddTool(AgentMiddleware):
    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request.override(tools=[*request.tools, extra, {"type": "web_search"}]))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(
            request.override(tools=[*request.tools, extra, {"type": "web_search"}])
        )


@pytest.mark.parametrize("registered", [False, True])
def test_a_tool_added_at_run_time_is_admitted_or_never_offered(
    registered: bool, position: str, mode: str, ran: Ran
) -> None:
    contract = Contract(
        [echo_spec(ran), *([from_langchain_tool(extra, effect="read")] if registered else [])],
        budget=budget(),
    )
    model = FakeModel([tool_call("extra", {"a": 2}), "done"])
    stack = Stack(
        model,
        contract,
        [AddTool()],
        position,  # type: ignore[arg-type]
        tools=to_langchain_tools([contract.registry.get("echo")]),  # type: ignore[list-item]
    )
    result = stack.run(mode=mode)
    offered = [t["function"]["name"] for t in model.calls[0]["tools"]]
    (record,) = result.tool_calls
    if registered:
        assert offered == ["echo", "extra"]
        assert (record.status, [m.content for m in result.messages if m.role == "tool"]) == (
            "success",
            ["extra 2"],
        )
    else:  # never offered (nor the provider-side tool), refused if called anyway
        assert offered == ["echo"]
        assert record.error_kind == "unknown_tool"


# -- another layer answers, or ends the run (item 8) -------------------------------------


def test_a_tool_call_limit_that_continues_keeps_issue_order(
    position: str, mode: str, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    model = FakeModel([tool_calls(("echo", {"a": 1}), ("echo", {"a": 2})), "done"])
    limit = stock.ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    result = Stack(model, contract, [limit], position).run(mode=mode)  # type: ignore[arg-type]
    assert result.stop_reason == "answered"
    assert [(c.status, c.outcome) for c in result.tool_calls] == [
        ("success", "succeeded"),
        ("error", "not_run"),
    ]
    tool_ids = [m.tool_call_id for m in result.messages if m.role == "tool"]
    assert tool_ids == [c.id for c in result.tool_calls]


@pytest.mark.parametrize("behavior", ["end", "error"])
def test_a_tool_call_limit_that_ends_the_run_is_named(
    behavior: str, position: str, mode: str, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    model = FakeModel([tool_calls(("echo", {"a": 1}), ("echo", {"a": 2})), "done"])
    limit = stock.ToolCallLimitMiddleware(run_limit=1, exit_behavior=behavior)
    result = Stack(model, contract, [limit], position).run(mode=mode)  # type: ignore[arg-type]
    assert result.stop_reason == "middleware_stop"
    assert "ToolCallLimit" in result.stop_detail
    assert result.output is None
    assert ran.calls == []
    assert {c.outcome for c in result.tool_calls} == {"not_run"}


def test_an_emulated_answer_is_not_a_tool_result(position: str, ran: Ran) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    contract = Contract([echo_spec(ran)], budget=budget())
    emulator = stock.LLMToolEmulator(tools=["echo"], model=FakeListChatModel(responses=["42"]))
    model = FakeModel([tool_call("echo", {"a": 1}), "done"])
    result = Stack(model, contract, [emulator], position).run()  # type: ignore[arg-type]
    # Inside, the gate saw no attempt; outside, the contract's tool hook never ran: the
    # emulator's answer is refused either way, and the real tool never ran.
    (record,) = result.tool_calls
    assert (record.error_kind, record.outcome, ran.calls) == ("not_allowed", "not_run", [])


# -- a human's edit (HITL) is validated wherever it is made ------------------------------


@pytest.mark.parametrize(("edit", "expected"), [({"a": 7}, "success"), ({"a": "x"}, "error")])
def test_a_hitl_edit_is_validated_and_recorded(
    edit: dict[str, Any], expected: str, position: str, mode: str, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    stack = Stack(
        FakeModel([tool_call("echo", {"a": 1}), "done"], stateless=True),
        contract,
        [HumanInTheLoopMiddleware(interrupt_on={"echo": True})],
        position,  # type: ignore[arg-type]
    )
    paused = stack.run(mode=mode)
    assert paused.stop_reason == "interrupted"
    assert paused.tool_calls == ()  # nothing ran, nothing settled: the batch is open
    (pending,) = stack.graph.get_state({"configurable": {"thread_id": paused.run_id}}).interrupts
    decision = {"decisions": [{"type": "edit", "edited_action": {"name": "echo", "args": edit}}]}
    done = resume_graph(
        stack.graph, contract, paused.snapshot or {}, answers={pending.id: decision}, mode=mode
    )
    (record,) = done.tool_calls
    assert (record.status, record.arguments) == (expected, edit)
    if expected == "success":
        assert ran.calls == [("echo", edit)]
    else:
        assert (record.error_kind, ran.calls) == ("invalid_arguments", [])
    rewritten = [e for e in done.trace.events if e["type"] == "arguments_rewritten"]
    assert [e["arguments"] for e in rewritten] == [edit]


# -- the route back to the model (issue 22, item 8) --------------------------------------

WEATHER = AnswerFormat(
    tools={
        "Weather": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "temp_c": {"type": "integer", "maximum": 60},
            },
            "required": ["city", "temp_c"],
        }
    }
)


def test_a_refused_structured_answer_is_answered_again_without_response_format(
    mode: str, ran: Ran
) -> None:
    """The contract's own answer format, no ``response_format`` and no ``after_model``
    hook of the team's: the refusal goes back to the model (it crashed with
    ``KeyError: 'model'`` inside LangGraph up to langchain 1.3.x)."""
    contract = Contract([echo_spec(ran)], answer_format=WEATHER)
    model = FakeModel(
        [
            tool_call("Weather", {"city": "Oslo", "temp_c": 999}),
            tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
        ]
    )
    result = Stack(model, contract).run(mode=mode)
    assert result.stop_reason == "answered"
    assert result.output == '{"city":"Oslo","temp_c":3}'
    assert len(model.calls) == 2
    assert ran.calls == []


def test_the_model_node_has_its_route_back_on_this_release() -> None:
    """Whatever the installed release: an agent whose only middleware is the contract's
    routes from the model back to the model (from the model node itself, or through the
    gate's ``after_model`` hook where the release needs one)."""
    contract = Contract([echo_spec(Ran())], answer_format=WEATHER)
    graph = Stack(FakeModel(["done"]), contract).graph
    routes = {
        node: {end for branch in branches.values() for end in (branch.ends or {})}
        for node, branches in graph.builder.branches.items()
        if node != "tools"
    }
    assert any("model" in ends for ends in routes.values()), routes
    hooked = gate.ContractGate.after_model is not AgentMiddleware.after_model
    assert hooked is not gate.MODEL_NODE_ROUTES_BACK


def test_the_route_is_measured_on_the_graph_create_agent_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release whose model node has no route back is told apart from one that has."""

    def built(ends: dict[str, str]) -> Any:
        branch = SimpleNamespace(ends=ends)
        return lambda *a, **k: SimpleNamespace(
            builder=SimpleNamespace(branches={"model": {"model_to_tools": branch}})
        )

    monkeypatch.setattr(gate, "create_agent", built({"tools": "tools", "__end__": "__end__"}))
    assert gate.model_node_routes_back() is False
    monkeypatch.setattr(gate, "create_agent", built({"tools": "tools", "model": "model"}))
    assert gate.model_node_routes_back() is True


# -- the two halves as one middleware ------------------------------------------------------


class _CountingGate(gate.ContractGate):
    def __init__(self, contract: Contract, hooks: list[str]) -> None:
        super().__init__(contract)
        self.hooks = hooks

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("gate:model")
        return super().wrap_model_call(request, handler)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("gate:model")
        return await super().awrap_model_call(request, handler)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("gate:tool")
        return super().wrap_tool_call(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("gate:tool")
        return await super().awrap_tool_call(request, handler)


class _Counting(ContractMiddleware):
    """A ContractMiddleware (a team's subclass) that notes each hook call, its own and its
    gate's, in order."""

    def __init__(self, contract: Contract) -> None:
        super().__init__(contract)
        self.hooks: list[str] = []
        self._gate = _CountingGate(contract, self.hooks)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("outer:model")
        return super().wrap_model_call(request, handler)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("outer:model")
        return await super().awrap_model_call(request, handler)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("outer:tool")
        return super().wrap_tool_call(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.hooks.append("outer:tool")
        return await super().awrap_tool_call(request, handler)


def _run_with(stack: list[Any], contract: Contract, mode: str) -> Any:
    graph = create_agent(
        ContractChatModel(
            model=FakeModel([tool_call("echo", {"a": 1}), tool_call("echo", {"a": 1}), "done"])
        ),
        tools=to_langchain_tools(contract.registry),
        middleware=stack,
    )
    return run_graph(graph, contract.start(), [Message(role="user", content="q")], mode=mode)  # type: ignore[arg-type]


def test_around_without_middleware_is_both_halves_in_one_middleware(mode: str, ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget(max_identical_calls=1))
    outer = _Counting(contract)
    stack = outer.around()
    (layer,) = stack
    assert isinstance(layer, ContractMiddleware)  # check --agent sees the contract in it
    assert layer.inner() is outer.inner()
    assert layer.name == outer.name
    result = _run_with(stack, contract, mode)
    # The outer hooks (the subclass's own) and the gate's ran, each once per call,
    # the gate inside the outer one.
    assert outer.hooks == [
        *("outer:model", "gate:model", "outer:tool", "gate:tool"),
        *("outer:model", "gate:model"),  # the repeat is refused when planned: the run stops
    ]
    assert outer.gate_seen
    # The same run as with the two middleware: the identical repeat refused, not run.
    two = Contract([echo_spec(Ran())], budget=budget(max_identical_calls=1))
    contract_mw = ContractMiddleware(two)
    split = _run_with([contract_mw, contract_mw.inner()], two, mode)
    assert ran.count("echo") == 1
    assert [(r.name, r.error_kind) for r in result.tool_calls] == [
        ("echo", None),
        ("echo", "repeated_call"),
    ]
    assert [(r.name, r.error_kind) for r in result.tool_calls] == [
        (r.name, r.error_kind) for r in split.tool_calls
    ]
    assert (result.stop_reason, result.output, result.usage.model_steps) == (
        split.stop_reason,
        split.output,
        split.usage.model_steps,
    )
    assert [e["type"] for e in result.trace.events] == [e["type"] for e in split.trace.events]
