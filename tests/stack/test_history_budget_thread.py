"""Issue 24 item 5 on LangChain's own history: a thread on a checkpointer grows run by
run, and the contract's middleware sees the whole stored thread (the harness's input is
only the new turn). Once the thread is over ``Budget.max_history_messages`` the run stops
``max_history_messages`` before the model is called, and the middleware and its gate
convert none of its messages (the core refuses the history on its length alone)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from agent_contract.messages import Message
from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel
from agent_contract_langchain import gate
from agent_contract_langchain._driver import prepare

from .conftest import MODES, Ran, Stack, budget, echo_spec


@pytest.mark.parametrize("mode", MODES)
def test_a_thread_over_the_message_limit_is_refused_unconverted(
    mode: str, ran: Ran, monkeypatch: pytest.MonkeyPatch
) -> None:
    converted: list[int] = []

    def counting(original: Any) -> Any:
        def convert(messages: Iterable[BaseMessage]) -> list[Message]:
            given = list(messages)
            converted.append(len(given))
            return original(given)  # type: ignore[no-any-return]

        return convert

    monkeypatch.setattr(
        prepare, "from_langchain_messages", counting(prepare.from_langchain_messages)
    )
    monkeypatch.setattr(gate, "from_langchain_messages", counting(gate.from_langchain_messages))
    model = FakeModel(["first", "second", "never"])
    contract = Contract([echo_spec(ran)], budget=budget(max_history_messages=3))
    stack = Stack(model, contract)
    first = stack.run("one", mode=mode, thread="t")
    second = stack.run("two", mode=mode, thread="t")  # the model gets 3 messages
    assert (first.stop_reason, second.stop_reason) == ("answered", "answered")
    assert converted  # the middleware and the gate read the thread while within the limit
    converted.clear()
    third = stack.run("three", mode=mode, thread="t")  # 5 messages: one turn too many
    assert third.stop_reason == "max_history_messages"
    assert third.stop_detail == "max_history_messages of 3 exceeded (5 messages in the history)"
    assert third.output is None
    assert len(model.calls) == 2
    assert converted == []


@pytest.mark.parametrize("mode", MODES)
def test_a_large_input_is_refused_before_it_is_converted(
    mode: str, ran: Ran, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200,000 input messages: refused before they become LangChain messages (the graph
    never runs), the model not called."""
    from agent_contract_langchain import harness

    converted: list[int] = []
    original = harness.to_langchain_messages

    def convert(messages: Any) -> Any:
        converted.append(len(messages))
        return original(messages)

    monkeypatch.setattr(harness, "to_langchain_messages", convert)
    model = FakeModel(["never"])
    contract = Contract([echo_spec(ran)], budget=budget())
    state = contract.start()
    history = [Message(role="user", content=f"m{n}") for n in range(200_000)]
    result = harness.run_graph(Stack(model, contract).graph, state, history, mode=mode)  # type: ignore[arg-type]
    assert result.stop_reason == "max_history_messages"
    assert result.harness == f"langchain-{mode}"
    assert (converted, model.calls) == ([], [])
