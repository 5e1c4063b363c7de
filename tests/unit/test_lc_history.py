"""The history boundary inside the stacks users run: a trimming middleware that drops an
AIMessage but keeps its ToolMessage, as a node hook (``before_model``) or as a
``wrap_model_call`` placed before or after the contract's, on invoke, ainvoke and stream;
and stock middleware that edits the history correctly (ContextEditingMiddleware) before
and after ours. The contract's inner gate (``ContractMiddleware.inner()``, innermost)
checks what the model really gets."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ClearToolUsesEdit, ContextEditingMiddleware
from langchain_core.messages import AIMessage, RemoveMessage, ToolMessage

from agent_contract import Budget, Contract, ToolSpec
from agent_contract.messages import Message
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import (
    ContractChatModel,
    ContractMiddleware,
    build_agent,
    run_graph,
)
from agent_contract_langchain.harness import MODES, Mode
from agent_contract_langchain.tools import to_langchain_tools


def _dropped(messages: list[Any]) -> list[Any]:
    """``messages`` without the first AIMessage that has tool calls (its ToolMessage
    stays), once a ToolMessage exists."""
    if not any(isinstance(m, ToolMessage) for m in messages):
        return messages
    first = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    return [m for m in messages if m is not first]


class TrimNode(AgentMiddleware):  # type: ignore[type-arg]
    """A ``before_model`` trimmer: removes the assistant turn, keeps its result."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = list(state["messages"])
        kept = _dropped(messages)
        if len(kept) == len(messages):
            return None
        gone = [m for m in messages if m not in kept]
        return {"messages": [RemoveMessage(id=m.id) for m in gone]}


class TrimWrap(AgentMiddleware):  # type: ignore[type-arg]
    """A ``wrap_model_call`` trimmer: changes only what the model is sent."""

    @property
    def name(self) -> str:
        return "TrimWrap"

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request.override(messages=_dropped(list(request.messages))))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await handler(request.override(messages=_dropped(list(request.messages))))


def _echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda text: f"echo: {text}",
    )


def _run(middleware: list[Any], mode: Mode, model: FakeModel) -> RunResult:
    contract = Contract([_echo()], budget=Budget(deadline_seconds=30.0))
    outer = ContractMiddleware(contract)
    stack = [outer if m == "contract" else m for m in middleware]
    graph = create_agent(
        ContractChatModel(model=model),
        tools=to_langchain_tools(contract.registry),
        middleware=[*stack, outer.inner()],
    )
    return run_graph(graph, contract.start(), [Message(role="user", content="go")], mode=mode)


SCRIPT = [tool_call("echo", {"text": "a"}, id="call_a"), "this answer must never be produced"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "order",
    [
        pytest.param(lambda: [TrimNode(), "contract"], id="node-hook-before"),
        pytest.param(lambda: ["contract", TrimNode()], id="node-hook-after"),
        pytest.param(lambda: [TrimWrap(), "contract"], id="wrap-before"),
        pytest.param(lambda: ["contract", TrimWrap()], id="wrap-after"),
    ],
)
def test_a_trimmed_history_is_never_sent_to_the_model(
    order: Callable[[], list[Any]], mode: Mode
) -> None:
    model = FakeModel(SCRIPT)
    result = _run(order(), mode, model)
    assert result.stop_reason == "invalid_history"
    assert result.output is None
    assert len(model.calls) == 1  # the second call, with the orphan result, never happened
    violations = result.trace.of_type("contract_violation")
    assert [v["code"] for v in violations] == ["orphan_tool_message"]
    assert violations[0]["tool_call_id"] == "call_a"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_stock_context_editing_keeps_a_valid_history(mode: Mode, before: bool) -> None:
    editor = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=0, keep=0)])
    model = FakeModel(SCRIPT)
    result = _run([editor, "contract"] if before else ["contract", editor], mode, model)
    assert result.stop_reason == "answered"
    assert len(model.calls) == 2
    sent = model.calls[1]["messages"]
    assert [m.role for m in sent if m.role != "system"] == ["user", "assistant", "tool"]


def test_build_agent_checks_the_history_after_user_middleware() -> None:
    contract = Contract([_echo()], budget=Budget(deadline_seconds=30.0))
    model = FakeModel(SCRIPT)
    graph = build_agent(model, contract, middleware=[TrimWrap()])
    result = run_graph(graph, contract.start(), [Message(role="user", content="go")])
    assert result.stop_reason == "invalid_history"
    assert len(model.calls) == 1


class MutateInPlace(AgentMiddleware):  # type: ignore[type-arg]
    """Changes an earlier ToolMessage in place (the same object, another call id) once
    the history holds two results: the outer hook saw that object unchanged a step ago."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._mutate(request.messages)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._mutate(request.messages)
        return await handler(request)

    @staticmethod
    def _mutate(messages: list[Any]) -> None:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if len(results) == 2:
            results[0].tool_call_id = "call_elsewhere"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_a_message_changed_in_place_is_seen_by_the_gate(mode: Mode, before: bool) -> None:
    """The outer hook reads only what the history gained since its last step (it trusts
    a message object it has seen not to change); the gate, last before the model, reads
    every message again: a result rewired in place never reaches the model."""
    script = [
        tool_call("echo", {"text": "a"}, id="call_a"),
        tool_call("echo", {"text": "b"}, id="call_b"),
        "this answer must never be produced",
    ]
    model = FakeModel(script)
    stack = [MutateInPlace(), "contract"] if before else ["contract", MutateInPlace()]
    result = _run(stack, mode, model)
    assert result.stop_reason == "invalid_history"
    assert len(model.calls) == 2  # the third call, with the rewired result, never happened
    codes = {v["code"] for v in result.trace.of_type("contract_violation")}
    assert "orphan_tool_message" in codes


class MutateNestedInPlace(MutateInPlace):
    """Changes the id of an earlier AIMessage's call inside its ``tool_calls`` list (a
    nested dict of the same object) once the history holds two results."""

    @staticmethod
    def _mutate(messages: list[Any]) -> None:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if len(results) == 2:
            first = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
            first.tool_calls[0]["id"] = "call_elsewhere"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_a_nested_change_in_place_is_seen_by_the_gate(mode: Mode, before: bool) -> None:
    """The gate takes over what it checked before only while every field its conversion
    read compares equal to a copy: a call id changed inside a dict of an earlier
    message's ``tool_calls`` never reaches the model either."""
    script = [
        tool_call("echo", {"text": "a"}, id="call_a"),
        tool_call("echo", {"text": "b"}, id="call_b"),
        "this answer must never be produced",
    ]
    model = FakeModel(script)
    stack = [MutateNestedInPlace(), "contract"] if before else ["contract", MutateNestedInPlace()]
    result = _run(stack, mode, model)
    assert result.stop_reason == "invalid_history"
    assert len(model.calls) == 2
    codes = {v["code"] for v in result.trace.of_type("contract_violation")}
    assert "orphan_tool_message" in codes
