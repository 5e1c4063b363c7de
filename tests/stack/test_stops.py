"""Stops that cannot be lost (issue 10, item 1): whatever the middleware stack and its
order, once the contract stops a run nothing more is called and the run ends with the
contract's stop on invoke, ainvoke and stream."""

from __future__ import annotations

import gc
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, ModelResponse, hook_config
from langchain_core.messages import AIMessage, HumanMessage

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.runtime import Contract, Stop
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.run_config import contract_config, recursion_limit
from agent_contract_langchain.stops import is_stop_message, stop_of
from devtools.stock import STOCK, StockContext, stock_classes

from .conftest import MODES, POSITIONS, Ran, Stack, budget, echo_spec

SMALLEST = [tool_call("echo", {"a": 1})] * 5 + ["done"]
"""The issue's smallest input: the same call five times, then an answer."""


class NoopAfter(AgentMiddleware):
    """A user middleware whose after_model does nothing (it used to cancel the stop)."""

    def after_model(self, state: Any, runtime: Any) -> None:
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> None:
        return None


def smallest(
    ran: Ran, middleware: list[Any], position: str, mode: str, model: FakeModel | None = None
) -> tuple[Any, Any]:
    model = model or FakeModel(SMALLEST)
    contract = Contract(
        [echo_spec(ran), echo_spec(ran, "other")], budget=budget(max_identical_calls=2)
    )
    stack = Stack(model, contract, middleware, position)  # type: ignore[arg-type]
    return stack.run(mode=mode), model


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("mode", MODES)
def test_smallest_input_with_a_user_after_model_hook(position: str, mode: str, ran: Ran) -> None:
    result, model = smallest(ran, [NoopAfter()], position, mode)
    assert (result.stop_reason, len(model.calls), ran.count("echo")) == ("repeated_call", 3, 2)
    assert result.usage.model_steps == 3
    assert result.output is None


LANGCHAIN_LEAKS = {
    # ShellToolMiddleware leaves its bash process's pipes for the garbage collector to
    # close (LangChain's ResourceWarning, with or without the contract).
    "ShellToolMiddleware": [
        pytest.mark.filterwarnings("ignore::ResourceWarning"),
        pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ],
}


def stock_cells() -> list[Any]:
    return [
        pytest.param(
            name,
            position,
            mode,
            id=f"{name}-{position}-{mode}",
            marks=LANGCHAIN_LEAKS.get(name, []),
        )
        for name in stock_classes()
        for position in POSITIONS
        for mode in MODES
    ]


def test_every_stock_middleware_has_an_entry() -> None:
    """If this fails: a LangChain release added a middleware class; add an entry to
    ``devtools.stock.STOCK`` (settings, relation, note) and regenerate
    docs/MIDDLEWARE.md."""
    assert sorted(set(stock_classes()) - set(STOCK)) == []


@pytest.mark.parametrize(("name", "position", "mode"), stock_cells())
def test_smallest_input_with_every_stock_middleware(
    name: str, position: str, mode: str, ran: Ran, tmp_path: Path
) -> None:
    """The Done-when line of issue 10: ``repeated_call`` after 3 model calls, with every
    stock middleware before or after the contract, on invoke, ainvoke and stream."""
    model = FakeModel(SMALLEST)
    context = StockContext(
        model=ContractChatModel(model=model),
        folder=tmp_path,
        read_tool="echo",
        quiet_tool="other",
    )
    result, _ = smallest(ran, [STOCK[name].make(context)], position, mode, model)
    if name in LANGCHAIN_LEAKS:
        gc.collect()  # its leaks are reported here, where they are filtered, not later
    assert (result.stop_reason, len(model.calls), ran.count("echo")) == ("repeated_call", 3, 2)
    messages = result.messages
    assert not any(m.name == "agent_contract" for m in messages)


class ReaskOnAnswer(AgentMiddleware):
    """An adversarial user middleware: send the run back to the model whenever its last
    message has no tool calls (a "keep going" loop)."""

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and not last.tool_calls:
            return {"jump_to": "model"}
        return None

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("mode", MODES)
def test_a_stack_that_loops_after_the_stop_calls_nothing_more(
    position: str, mode: str, ran: Ran
) -> None:
    result, model = smallest(ran, [ReaskOnAnswer()], position, mode)
    assert (result.stop_reason, len(model.calls), ran.count("echo")) == ("repeated_call", 3, 2)
    types = [e["type"] for e in result.trace.events]
    assert "refused_after_stop" in types  # the halted run refused the loop's model calls


class Bypass(AgentMiddleware):
    """A miswired middleware that answers in the model's place without calling its
    handler: fresh tool calls every time, never judged by the contract."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        call = {"name": "echo", "args": {"a": 1}, "id": uuid.uuid4().hex, "type": "tool_call"}
        return ModelResponse(result=[AIMessage(content="", tool_calls=[call])])

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return self.wrap_model_call(request, handler)


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_the_contract_never_sees_ends_at_the_derived_limit(mode: str, ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget(max_model_steps=3))
    result = Stack(FakeModel(["never"]), contract, [Bypass()], "before").run(mode=mode)
    assert result.stop_reason == "max_graph_steps"
    assert "recursion limit" in result.stop_detail
    assert ran.count("echo") == 0  # calls the contract never admitted do not run


@pytest.mark.parametrize("mode", MODES)
def test_stop_of_tells_a_stop_from_an_answer(mode: str, ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget(max_identical_calls=2))
    stack = Stack(FakeModel(SMALLEST), contract, [NoopAfter()])
    result = stack.run(mode=mode)
    thread = stack.graph.get_state({"configurable": {"thread_id": result.run_id}})
    messages = thread.values["messages"]
    assert is_stop_message(messages[-1])
    assert messages[-1].tool_calls == []
    assert stop_of(messages) == Stop(reason="repeated_call", detail=result.stop_detail)
    answered = Stack(FakeModel(["fine"]), contract).run(mode=mode)
    assert answered.stop_reason == "answered"
    assert stop_of([HumanMessage("q"), AIMessage("fine")]) is None


def test_the_stop_message_is_hidden_from_the_model_on_the_next_turn(ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget(max_identical_calls=2))
    model = FakeModel([*SMALLEST[:3], "second answer"])
    stack = Stack(model, contract, [NoopAfter()])
    first = stack.run(thread="t")
    assert first.stop_reason == "repeated_call"
    second = stack.run("again", thread="t")
    assert (second.stop_reason, second.output) == ("answered", "second answer")
    shown = model.calls[-1]["messages"]
    assert not any(m.name == "agent_contract" for m in shown)
    assert not any("run stopped" in m.content for m in shown)


def test_the_run_state_travels_in_the_config_not_the_context(ran: Ran) -> None:
    contract = Contract([echo_spec(ran)])
    stack = Stack(FakeModel(["hi"]), contract)
    with pytest.raises(ConfigurationError, match="contract_config"):
        stack.graph.invoke({"messages": [HumanMessage("q")]}, {"configurable": {"thread_id": "x"}})
    state = contract.start()
    config = contract_config(state, {"configurable": {"thread_id": "y"}}, recursion_limit=40)
    stack.graph.invoke({"messages": [HumanMessage("q")]}, config, context={"team": "theirs"})
    assert state.view.halted == Stop(reason="answered")
    assert config["recursion_limit"] == 40


def test_the_derived_recursion_limit_counts_the_node_hooks(ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget(max_model_steps=4))
    bare = Stack(FakeModel(["x"]), contract).graph
    hooked = Stack(FakeModel(["x"]), contract, [NoopAfter(), ReaskOnAnswer()]).graph
    assert recursion_limit(bare, contract.budget) == 5 * 1 + 4 + 1
    assert recursion_limit(hooked, contract.budget) == 5 * 3 + 4 + 1
    assert recursion_limit(hooked, contract.budget, used_model_steps=4) == 1 * 3 + 0 + 1
    assert recursion_limit(bare, contract.budget, resuming=True) == 10 + 2


@pytest.mark.parametrize("mode", MODES)
def test_every_harness_run_gets_the_derived_limit(mode: str, ran: Ran) -> None:
    seen: list[int] = []

    class Spy(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            from langgraph.config import get_config

            seen.append(int(get_config()["recursion_limit"]))
            return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            from langgraph.config import get_config

            seen.append(int(get_config()["recursion_limit"]))
            return await handler(request)

    contract = Contract([echo_spec(ran)], budget=budget(max_model_steps=3))
    stack = Stack(FakeModel(["x"]), contract, [Spy()])
    stack.run(mode=mode)
    assert seen == [recursion_limit(stack.graph, contract.budget)]


def test_transcript_without_stop_messages_matches_offline(ran: Ran) -> None:
    from agent_contract.loop import run

    contract = Contract([echo_spec(ran)], budget=budget(max_identical_calls=2))
    offline = run(FakeModel(SMALLEST), contract, "hi")
    lang = Stack(FakeModel(SMALLEST), contract, [NoopAfter()]).run()
    assert [m.role for m in lang.messages] == [m.role for m in offline.messages]
    assert [m.role for m in offline.messages][-1] == "tool"
    assert Message(role="user", content="hi") in lang.messages
