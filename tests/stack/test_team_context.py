"""The team's context is theirs (issue 10, item 2): the contract's run state travels in
the config, so ``context_schema``, ``ToolRuntime``, ``InjectedToolCallId``,
``InjectedState`` and ``InjectedStore`` tools work under the contract."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain.tools import InjectedState, InjectedStore, InjectedToolCallId, ToolRuntime, tool
from langgraph.store.memory import InMemoryStore

from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_calls
from agent_contract_langchain.tools import from_langchain_tool

from .conftest import Stack, budget

# LangChain's own serializer warning for a ToolRuntime argument (pydantic cannot
# serialize the runtime object when it logs the tool input); not ours, so filtered here
# narrowly. It is raised with or without the contract, on 1.2.8 and later.
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


@dataclass
class TeamContext:
    user_id: str


@tool
def whoami(topic: str, runtime: ToolRuntime) -> str:
    """Who is asking, and about what."""
    store = runtime.store
    return f"user={runtime.context.user_id} topic={topic} store={store is not None}"


@tool
def with_id(x: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Echo x with the call's id."""
    return f"x={x} id={tool_call_id}"


@tool
def count_messages(note: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
    """Count the messages so far."""
    return f"note={note} messages={len(state['messages'])}"


@tool
def remember(key: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Remember a key."""
    store.put(("notes",), key, {"seen": True})
    return f"stored {key}: {store.get(('notes',), key) is not None}"


TEAM_TOOLS = [whoami, with_id, count_messages, remember]


def test_adopted_specs_show_the_model_visible_schema_only() -> None:
    specs = {t.name: from_langchain_tool(t, effect="read") for t in TEAM_TOOLS}
    visible = {name: sorted(s.parameters["properties"]) for name, s in specs.items()}
    assert visible == {
        "whoami": ["topic"],
        "with_id": ["x"],
        "count_messages": ["note"],
        "remember": ["key"],
    }


def test_an_adopted_tool_with_injected_arguments_refuses_to_run_outside_the_graph() -> None:
    spec = from_langchain_tool(whoami, effect="read")
    with pytest.raises(Exception, match="runs only inside create_agent"):
        spec.handler(topic="x")


def test_team_context_and_injected_tools_work_under_the_contract(
    position: str, mode: str, companion: Any
) -> None:
    contract = Contract(
        [from_langchain_tool(t, effect="read") for t in TEAM_TOOLS], budget=budget()
    )
    script = [
        tool_calls(
            ("whoami", {"topic": "bills"}, "c1"),
            ("with_id", {"x": 3}, "c2"),
            ("count_messages", {"note": "n"}, "c3"),
            ("remember", {"key": "k1"}, "c4"),
        ),
        "done",
    ]
    stack = Stack(
        FakeModel(script),
        contract,
        [companion()],
        position,  # type: ignore[arg-type]
        tools=TEAM_TOOLS,  # the team's own tools, as they wrote them
        options={"context_schema": TeamContext, "store": InMemoryStore()},
    )
    result = stack.run(mode=mode, graph_context=TeamContext(user_id="u-42"))
    assert result.stop_reason == "answered", result.stop_detail
    contents = [m.content for m in result.messages if m.role == "tool"]
    assert contents == [
        "user=u-42 topic=bills store=True",
        "x=3 id=c2",
        "note=n messages=2",
        "stored k1: True",
    ]
    assert [c.status for c in result.tool_calls] == ["success"] * 4
