"""Command-returning tools (issue 10, item 3) and structured output (item 4) inside
``create_agent``, with a stock middleware before and after the contract."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState, ToolCallLimitMiddleware
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from pydantic import BaseModel, Field

from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.tools import current_tool_context, from_langchain_tool

from .conftest import Ran, Stack, budget, echo_spec

# -- Command tools -----------------------------------------------------------------------

LIMIT = lambda: ToolCallLimitMiddleware(run_limit=50)  # noqa: E731 - a stock after_model companion


class NotesState(AgentState):  # type: ignore[type-arg]
    notes: NotRequired[Annotated[list[str], operator.add]]


class Notes(AgentMiddleware):
    """The team's state key the command tool writes."""

    state_schema = NotesState


def command_tool(update: dict[str, Any], *, status: str = "success", size: int = 0) -> Any:
    @tool
    def save_note(text: str) -> Command[Any]:
        """Save a note."""
        context = current_tool_context.get()
        call_id = context.tool_call_id if context else "?"
        content = f"saved {text} key=sk-planted-in-command" + "x" * size
        message = ToolMessage(content=content, tool_call_id=call_id, status=status)
        return Command(update={"messages": [message], **update})

    return save_note


def notes_run(tool_: Any, position: str, mode: str, companion: Any) -> tuple[Any, Any, Any]:
    contract = Contract(
        [from_langchain_tool(tool_, effect="read", max_result_chars=200)],
        budget=budget(),
        secrets=["sk-planted-in-command"],
    )
    stack = Stack(
        FakeModel([tool_call("save_note", {"text": "milk"}), "noted"]),
        contract,
        [Notes(), companion()],
        position,  # type: ignore[arg-type]
        tools=[tool_],
    )
    result = stack.run(mode=mode)
    state = stack.graph.get_state({"configurable": {"thread_id": result.run_id}}).values
    return result, state, stack


def test_a_command_tools_message_is_the_result_and_its_update_lands(
    position: str, mode: str, companion: Any
) -> None:
    result, state, _ = notes_run(command_tool({"notes": ["milk"]}), position, mode, companion)
    assert result.stop_reason == "answered"
    (record,) = result.tool_calls
    assert record.status == "success"
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert message.content == "saved milk key=[REDACTED]"
    assert state["notes"] == ["milk"]
    keys = [e["keys"] for e in result.trace.events if e["type"] == "state_update"]
    assert keys == [["notes"]]


def test_a_command_tools_result_is_sized_like_any_other() -> None:
    result, state, _ = notes_run(
        command_tool({"notes": ["big"]}, size=5_000), "after", "invoke", LIMIT
    )
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert "[truncated by agent-contract" in message.content
    assert len(message.content) <= 200
    assert state["notes"] == ["big"]
    (graph_message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert "value" not in graph_message.artifact  # the uncut value is not kept


@pytest.mark.parametrize(
    ("update", "why"),
    [
        ({"jump_to": "end"}, "reserved state keys"),
        ({"structured_response": {"x": 1}}, "reserved state keys"),
        ({"agent_contract_stop": {"reason": "answered"}}, "reserved state keys"),
    ],
)
def test_a_command_writing_the_loops_keys_is_refused(update: dict[str, Any], why: str) -> None:
    result, state, _ = notes_run(command_tool(update), "after", "invoke", LIMIT)
    (record,) = result.tool_calls
    assert record.error_kind == "tool_error"
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert why in message.content
    assert state.get("notes", []) == []


def test_an_error_result_drops_the_update() -> None:
    result, state, _ = notes_run(
        command_tool({"notes": ["no"]}, status="error"), "after", "invoke", LIMIT
    )
    assert result.tool_calls[0].status == "error"
    assert state.get("notes", []) == []


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (lambda m: Command(goto="model", update={"messages": [m]}), "goto"),
        (lambda m: Command(graph=Command.PARENT, update={"messages": [m]}), "another graph"),
    ],
)
def test_a_command_taking_the_control_flow_is_refused(command: Any, why: str) -> None:
    @tool
    def save_note(text: str) -> Command[Any]:
        """Save a note."""
        context = current_tool_context.get()
        return command(ToolMessage(content="x", tool_call_id=context.tool_call_id))  # type: ignore[union-attr]

    result, _, _ = notes_run(save_note, "after", "invoke", LIMIT)
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert result.tool_calls[0].error_kind == "tool_error"
    assert why in json.loads(message.content)["message"]


# -- structured output -------------------------------------------------------------------


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    temp_c: float = Field(le=60)


def test_contract_chat_model_works_with_a_bare_response_format() -> None:
    from langchain.agents import create_agent

    from agent_contract_langchain.middleware import ContractMiddleware

    contract = Contract([])
    contract_mw = ContractMiddleware(contract)
    graph = create_agent(
        ContractChatModel(model=FakeModel([tool_call("Weather", {"city": "Oslo", "temp_c": 3})])),
        tools=[],
        middleware=contract_mw.around(),
        response_format=Weather,
    )
    from langchain_core.messages import HumanMessage

    from agent_contract_langchain.run_config import contract_config

    state = contract.start()
    final = graph.invoke({"messages": [HumanMessage("q")]}, contract_config(state))
    assert final["structured_response"] == Weather(city="Oslo", temp_c=3)


FORMATS = {
    "tool": lambda: ToolStrategy(Weather),
    "bare": lambda: Weather,
    "provider": lambda: ProviderStrategy(Weather),
}
ANSWERS = {
    "tool": tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
    "bare": tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
    "provider": '{"city": "Oslo", "temp_c": 3}',
}


@pytest.mark.parametrize("strategy", FORMATS)
def test_a_structured_answer_is_the_answer(
    strategy: str, position: str, mode: str, companion: Any, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    stack = Stack(
        FakeModel([tool_call("echo", {"a": 1}), ANSWERS[strategy]]),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
        options={"response_format": FORMATS[strategy]()},
    )
    result = stack.run(mode=mode)
    assert (result.stop_reason, result.output) == ("answered", '{"city":"Oslo","temp_c":3}')
    assert result.structured_response == {"city": "Oslo", "temp_c": 3}
    assert result.usage.tool_calls == 1  # the answer is not a tool call
    state = stack.graph.get_state({"configurable": {"thread_id": result.run_id}}).values
    assert state["structured_response"] == Weather(city="Oslo", temp_c=3)


@pytest.mark.parametrize("strategy", ["tool", "bare"])
def test_a_structured_answer_failing_its_schema_is_refused_and_retried(
    strategy: str, position: str, mode: str, companion: Any, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    script = [
        tool_call("Weather", {"city": "Oslo", "temp_c": 999}),
        tool_call("Weather", {"city": "Oslo", "temp_c": 3}),
    ]
    result = Stack(
        FakeModel(script),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
        options={"response_format": FORMATS[strategy]()},
    ).run(mode=mode)
    assert result.stop_reason == "answered"
    assert [(c.name, c.error_kind) for c in result.tool_calls] == [
        ("Weather", "invalid_arguments"),
        ("Weather", None),
    ]
    assert result.usage.model_steps == 2


def test_a_structured_answer_beside_a_tool_call_is_refused(
    position: str, mode: str, companion: Any, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    script = [tool_calls(("Weather", {"city": "Oslo", "temp_c": 3}), ("echo", {"a": 1}))]
    result = Stack(
        FakeModel(script),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
        options={"response_format": ToolStrategy(Weather)},
    ).run(mode=mode)
    assert result.stop_reason == "invalid_response"
    assert ran.calls == []
    assert result.structured_response is None


def test_provider_strategy_text_that_is_not_the_structure_is_refused(ran: Ran) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    result = Stack(
        FakeModel(["it is cold"]), contract, options={"response_format": ProviderStrategy(Weather)}
    ).run()
    assert (result.stop_reason, result.output) == ("invalid_response", None)
