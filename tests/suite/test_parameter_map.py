"""docs/PARAMETER_MAP.md: both sides of every row run here with a scripted chat model, and
each row's words are what was measured. The old APIs come from langchain-classic
(``AgentExecutor``; a development dependency only) and langgraph's deprecated
``create_react_agent`` (its LangGraphDeprecatedSinceV10 is expected, narrowly)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    after_model,
    before_model,
)
from langchain.agents.structured_output import ToolStrategy
from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10
from pydantic import BaseModel, Field

import devtools.parameter_map as parameter_map
from agent_contract import Budget, Completion, Contract, Message, RunResult, ToolCall, ToolSpec
from agent_contract.exitcodes import EXIT_CODES
from agent_contract.testing import FakeModel
from agent_contract_langchain import ContractChatModel, ContractMiddleware, run_graph
from agent_contract_langchain.tools import to_langchain_tools
from devtools.parameter_map import ROWS, MapRow

ROOT = Path(__file__).resolve().parents[2]
ROW = {row.id: row for row in ROWS}


# -- the old side: a scripted, non-streaming chat model ---------------------------------------


class Scripted(BaseChatModel):
    """Replies in order; records what it was shown. (``GenericFakeChatModel`` streams,
    and an empty-content tool-call chunk breaks ``AgentExecutor``.)"""

    replies: list[Any]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.replies[len(self.seen) - 1])])

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self


def lc_call(i: int, q: str = "x", name: str = "lookup") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": {"q": q}, "id": f"c{i}"}])


def looping(n: int = 20) -> list[Any]:
    return [lc_call(i, f"x{i}") for i in range(n)]


@tool
def lookup(q: str) -> str:
    """Look up q."""
    return f"result for {q}"


@tool("lookup")
def slow_lookup(q: str) -> str:
    """Look up q (slowly)."""
    time.sleep(0.2)
    return f"result for {q}"


PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


def executor(model: Scripted, tools: Sequence[Any] = (lookup,), **kwargs: Any) -> AgentExecutor:
    agent = create_tool_calling_agent(model, list(tools), PROMPT)
    return AgentExecutor(agent=agent, tools=list(tools), **kwargs)


def react_agent(model: Scripted, **kwargs: Any) -> Any:
    """``create_react_agent``: deprecated since langgraph 1.0 (and expected to say so)."""
    with pytest.warns(LangGraphDeprecatedSinceV10):
        return create_react_agent(model, [lookup], **kwargs)


# -- the new side: create_agent + ContractMiddleware ----------------------------------------------


def _lookup(q: str) -> str:
    return f"result for {q}"


def _slow(q: str) -> str:
    time.sleep(0.2)
    return f"result for {q}"


SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
LOOKUP = ToolSpec(name="lookup", description="Look up q.", parameters=SCHEMA, handler=_lookup)
SLOW = ToolSpec(name="lookup", description="Look up q.", parameters=SCHEMA, handler=_slow)


def call(i: int, q: str = "x", name: str = "lookup") -> Completion:
    return Completion(tool_calls=(ToolCall(id=f"c{i}", name=name, arguments={"q": q}),))


def contract_run(
    script: Sequence[Any],
    *,
    tools: Sequence[ToolSpec] = (LOOKUP,),
    middleware: Sequence[Any] = (),
    budget: Budget | None = None,
    **create: Any,
) -> tuple[RunResult, FakeModel, Any]:
    """``create_agent`` with ``ContractMiddleware`` around ``middleware`` (outermost, and
    its gate innermost), driven once."""
    contract = Contract.of(list(tools), budget=budget)
    model = FakeModel(script)
    graph = create_agent(
        ContractChatModel(model=model),
        tools=to_langchain_tools(contract.registry),
        middleware=ContractMiddleware(contract).around(*middleware),
        **create,
    )
    state = contract.start()
    config = {"configurable": {"thread_id": state.view.run_id}}
    result = run_graph(graph, state, [Message(role="user", content="hi")], config=config)
    return result, model, graph


def stopped(result: RunResult, model: FakeModel) -> str:
    assert result.output is None
    return (
        f"stop `{result.stop_reason}` after {len(model.calls)} model calls, no output "
        f"(exit {EXIT_CODES[result.stop_reason]})"
    )


def tool_texts(result: RunResult) -> list[str]:
    return [m.content for m in result.messages if m.role == "tool"]


# -- AgentExecutor ---------------------------------------------------------------------------------


def test_max_iterations() -> None:
    row = ROW["max_iterations"]
    model = Scripted(replies=looping())
    output = executor(model, max_iterations=2).invoke({"input": "hi"})["output"]
    assert f'output "{output}" after {len(model.seen)} model calls' == row.old_measured
    result, fake, _ = contract_run(
        [call(i, f"x{i}") for i in range(9)], budget=Budget(max_model_steps=2)
    )
    assert stopped(result, fake) == row.new_measured


def test_max_execution_time() -> None:
    row = ROW["max_execution_time"]
    model = Scripted(replies=looping())
    done = executor(model, [slow_lookup], max_execution_time=0.1, return_intermediate_steps=True)
    out = done.invoke({"input": "hi"})
    assert (
        f'output "{out["output"]}" after {len(out["intermediate_steps"])} tool call'
        == row.old_measured
    )
    result, _, _ = contract_run(
        [call(i, f"x{i}") for i in range(9)], tools=(SLOW,), budget=Budget(deadline_seconds=0.1)
    )
    assert result.output is None
    ran = len(result.tool_calls)
    assert (
        f"stop `{result.stop_reason}` after {ran} tool call, no output "
        f"(exit {EXIT_CODES[result.stop_reason]})" == row.new_measured
    )


def test_early_stopping_method() -> None:
    row = ROW["early_stopping_method"]
    model = Scripted(replies=looping())
    with pytest.raises(ValueError, match="early_stopping_method"):
        executor(model, max_iterations=2, early_stopping_method="generate").invoke({"input": "hi"})
    forced = executor(Scripted(replies=looping()), max_iterations=2).invoke({"input": "hi"})
    assert forced["output"] == "Agent stopped due to max iterations."
    assert "only `force`" in row.old_measured
    stops = [
        contract_run([call(i, f"x{i}") for i in range(9)], budget=Budget(max_model_steps=2))[0],
        contract_run([call(i) for i in range(9)])[0],  # the same call again and again
    ]
    assert [r.stop_reason for r in stops] == ["max_model_steps", "repeated_call"]
    assert {r.output for r in stops} == {None}
    assert row.new_measured == "every stop has `output=None` and a named `stop_reason`"


def test_handle_parsing_errors() -> None:
    row = ROW["handle_parsing_errors"]
    bad = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "lookup",
                "args": "{not json",
                "id": "c1",
                "error": "bad",
                "type": "invalid_tool_call",
            }
        ],
    )
    outputs = [
        executor(Scripted(replies=[bad, AIMessage("final")]), handle_parsing_errors=flag).invoke(
            {"input": "hi"}
        )["output"]
        for flag in (True, False)
    ]
    assert f"output {outputs[0]!r} with True and with False" in row.old_measured
    assert outputs[0] == outputs[1]
    script = [Completion(tool_calls=(ToolCall(id="c1", name="lookup", arguments="{not json"),))]
    result, _, _ = contract_run(script)
    [refusal] = result.tool_calls
    assert (refusal.id, refusal.error_kind, refusal.outcome) == ("c1", "invalid_call", "not_run")
    assert row.new_measured.startswith(
        f"stop `{result.stop_reason}`; the call gets an `invalid_call`"
    )


def test_return_intermediate_steps() -> None:
    row = ROW["return_intermediate_steps"]
    model = Scripted(replies=[lc_call(1), AIMessage("done")])
    steps = executor(model, return_intermediate_steps=True).invoke({"input": "hi"})
    shown = [
        (f"AgentAction({a.tool!r}, {a.tool_input!r})", o) for a, o in steps["intermediate_steps"]
    ]
    text = "[" + ", ".join(f"({a}, {o!r})" for a, o in shown) + "]"
    assert f"`intermediate_steps`: {text}" == row.old_measured
    result, _, _ = contract_run([call(1), Completion(text="done")])
    records = [
        (r.name, r.arguments, r.status, text)
        for r, text in zip(result.tool_calls, tool_texts(result), strict=True)
    ]
    assert f"`tool_calls`: {records}" == row.new_measured


def test_trim_intermediate_steps() -> None:
    row = ROW["trim_intermediate_steps"]
    model = Scripted(replies=looping())
    executor(model, max_iterations=3, trim_intermediate_steps=1).invoke({"input": "hi"})
    counts = [sum(1 for m in seen if m.type == "tool") for seen in model.seen]
    assert f"the model saw {', '.join(map(str, counts))} tool messages" == row.old_measured
    edit = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=1, keep=1)])
    script = [call(i, f"x{i}") for i in range(2)] + [Completion(text="done")]
    result, fake, _ = contract_run(script, middleware=[edit])
    seen = [[m for m in c["messages"] if m.role == "tool"] for c in fake.calls]
    counts = [len(s) for s in seen]
    assert row.new_measured.startswith(f"the model saw {', '.join(map(str, counts))} tool messages")
    last = seen[-1]
    assert [m.content for m in last[-1:]] == ["result for x1"]
    assert all(m.content != "result for x0" for m in last[:-1])  # cleared
    assert [m.tool_call_id for m in last] == ["c0", "c1"]  # every call keeps its result
    assert result.stop_reason == "answered"


def test_unknown_tool() -> None:
    row = ROW["unknown_tool"]
    model = Scripted(replies=[lc_call(1, name="nope"), AIMessage("final")])
    steps = executor(model, return_intermediate_steps=True).invoke({"input": "hi"})
    assert f"observation {steps['intermediate_steps'][0][1]!r}" == row.old_measured
    result, _, _ = contract_run([call(1, name="nope"), Completion(text="final")])
    [record] = result.tool_calls
    assert (record.id, record.error_kind, result.stop_reason) == ("c1", "unknown_tool", "answered")
    assert row.new_measured.startswith(f"error `{record.error_kind}` bound to the call id")


# -- create_react_agent -------------------------------------------------------------------------------


def test_recursion_limit() -> None:
    row = ROW["recursion_limit"]
    agent = react_agent(Scripted(replies=looping()))
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "hi")]}, {"recursion_limit": 5})
    assert row.old_measured == "GraphRecursionError"
    result, fake, _ = contract_run(
        [call(i, f"x{i}") for i in range(9)], budget=Budget(max_model_steps=2)
    )
    assert stopped(result, fake) == row.new_measured


def test_prompt() -> None:
    row = ROW["prompt"]
    model = Scripted(replies=[AIMessage("done")])
    react_agent(model, prompt="You are the shop.").invoke({"messages": [("user", "hi")]})
    first = model.seen[0][0]
    assert f"the model's first message: {first.type} {first.content!r}" == row.old_measured
    _, fake, _ = contract_run([Completion(text="done")], system_prompt="You are the shop.")
    first_new = fake.calls[0]["messages"][0]
    assert f"the model's first message: {first_new.role} {first_new.content!r}" == row.new_measured


class Answer(BaseModel):
    text: str


def test_response_format() -> None:
    row = ROW["response_format"]
    structured = AIMessage(
        "", tool_calls=[{"name": "Answer", "args": {"text": "hello"}, "id": "s1"}]
    )
    model = Scripted(replies=[AIMessage("done"), structured])
    state = react_agent(model, response_format=Answer).invoke({"messages": [("user", "hi")]})
    assert f"`structured_response`: {state['structured_response']!r}" in row.old_measured
    assert len(model.seen) == 2  # "from a second model call"
    script = [
        Completion(tool_calls=(ToolCall(id="s1", name="Answer", arguments={"text": "hello"}),))
    ]
    result, fake, _ = contract_run(script, response_format=ToolStrategy(Answer))
    offered = [t["function"]["name"] for t in fake.calls[0]["tools"]]
    assert offered == ["lookup", "Answer"]
    assert row.new_measured.startswith(f"stop `{result.stop_reason}` ('{result.stop_detail}')")


def test_pre_model_hook() -> None:
    row = ROW["pre_model_hook"]

    def hook(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": [*state["messages"], SystemMessage("note")]}

    model = Scripted(replies=[AIMessage("done")])
    react_agent(model, pre_model_hook=hook).invoke({"messages": [("user", "hi")]})
    seen = ", ".join(f"{m.type.replace('human', 'user')} {m.content!r}" for m in model.seen[0])
    assert f"the model saw the hook's messages: {seen}" == row.old_measured

    @before_model
    def note(state: Any, runtime: Any) -> dict[str, Any]:
        return {"messages": [SystemMessage("note")]}

    _, fake, _ = contract_run([Completion(text="done")], middleware=[note])
    seen_new = ", ".join(f"{m.role} {m.content!r}" for m in fake.calls[0]["messages"])
    assert f"the model saw the hook's messages: {seen_new}" == row.new_measured


def _edited(message: AIMessage) -> AIMessage:
    """``message`` with every tool call's arguments rewritten (create_react_agent's hook)."""
    calls = [{**c, "args": {"q": "EDITED"}} for c in message.tool_calls]
    return AIMessage(content=message.content, id=message.id, tool_calls=calls)


def test_post_model_hook() -> None:
    row = ROW["post_model_hook"]

    def hook(state: dict[str, Any]) -> dict[str, Any]:
        last = state["messages"][-1]
        return {"messages": [_edited(last)]} if last.tool_calls else {}

    model = Scripted(replies=[lc_call(1, "orig"), AIMessage("done")])
    out = react_agent(model, post_model_hook=hook).invoke({"messages": [("user", "hi")]})
    ran = [m.content for m in out["messages"] if m.type == "tool"]
    assert f"the tool ran with the rewritten arguments: {ran[0]!r}" == row.old_measured

    def rewriting(args: dict[str, Any]) -> Any:
        @after_model
        def rewrite(state: Any, runtime: Any) -> dict[str, Any] | None:
            last = state["messages"][-1]
            if not last.tool_calls:
                return None
            calls = [{**c, "args": args} for c in last.tool_calls]
            return {"messages": [AIMessage(content="", id=last.id, tool_calls=calls)]}

        return rewrite

    script = [call(1, "orig"), Completion(text="done")]
    edited, _, _ = contract_run(script, middleware=[rewriting({"q": "EDITED"})])
    bad, _, _ = contract_run(script, middleware=[rewriting({"q": 123})])
    [refused] = bad.tool_calls
    assert (refused.status, refused.outcome) == ("error", "not_run")
    assert (
        f"the rewritten call ran: {tool_texts(edited)[0]!r}, validated again: a rewrite to "
        f"`{refused.arguments}` was refused `{refused.error_kind}`" == row.new_measured
    )


def test_checkpointer() -> None:
    row = ROW["checkpointer"]
    config = {"configurable": {"thread_id": "t1"}}
    agent = react_agent(
        Scripted(replies=[lc_call(1), AIMessage("done")]), checkpointer=InMemorySaver()
    )
    agent.invoke({"messages": [("user", "hi")]}, config)
    old = len(agent.get_state(config).values["messages"])
    assert f"`get_state(thread)` holds {old} messages" == row.old_measured
    result, _, graph = contract_run(
        [call(1), Completion(text="done")], checkpointer=InMemorySaver()
    )
    new = len(graph.get_state({"configurable": {"thread_id": result.run_id}}).values["messages"])
    assert row.new_measured.startswith(f"`get_state(thread)` holds {new} messages")


def _preview(context: Any, q: str) -> dict[str, str]:
    return {"refund": q}


def _verify(context: Any, q: str) -> None:
    return None


def _refund(context: Any, q: str) -> str:
    return "refunded"


def test_interrupt_before() -> None:
    row = ROW["interrupt_before"]
    config = {"configurable": {"thread_id": "t1"}}
    agent = react_agent(
        Scripted(replies=[lc_call(1), AIMessage("done")]),
        checkpointer=InMemorySaver(),
        interrupt_before=["tools"],
    )
    agent.invoke({"messages": [("user", "hi")]}, config)
    after = react_agent(
        Scripted(replies=[lc_call(1), AIMessage("done")]),
        checkpointer=InMemorySaver(),
        interrupt_after=["tools"],
    )
    after.invoke({"messages": [("user", "hi")]}, config)
    assert (
        f"paused before `{agent.get_state(config).next[0]}` "
        f"(with `interrupt_after`: before `{after.get_state(config).next[0]}`)" == row.old_measured
    )
    refund = ToolSpec(
        name="refund",
        description="Refund.",
        parameters=SCHEMA,
        handler=_refund,
        effect="write",
        preview=_preview,
        verify=_verify,
    )
    write, _, _ = contract_run(
        [call(1, "A-1", name="refund"), Completion(text="ok")],
        tools=(refund,),
        checkpointer=InMemorySaver(),
    )
    [pending] = write.pending_approvals
    assert pending.preview == {"refund": "A-1"}
    before, after = (
        contract_run(
            [call(1), Completion(text="done")], checkpointer=InMemorySaver(), **{where: ["tools"]}
        )[0]
        for where in ("interrupt_before", "interrupt_after")
    )
    assert before.stop_reason == after.stop_reason
    assert (
        f"write: stop `{write.stop_reason}` with the call's preview; `interrupt_before`: stop "
        f"`{before.stop_reason}` ('{before.stop_detail}'), `interrupt_after`: "
        f"('{after.stop_detail}')" == row.new_measured
    )


# -- the document ---------------------------------------------------------------------------------------


def test_every_row_has_its_test() -> None:
    tests = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert {row.id for row in ROWS} <= tests
    assert len({row.id for row in ROWS}) == len(ROWS)


def test_the_document_is_current() -> None:
    document = (ROOT / "docs" / "PARAMETER_MAP.md").read_text(encoding="utf-8")
    assert document == parameter_map.render(), (
        "regenerate: python -m devtools.parameter_map > docs/PARAMETER_MAP.md"
    )


def test_rows_are_well_formed() -> None:
    for row in ROWS:
        assert isinstance(row, MapRow)
        assert all((row.old, row.old_measured, row.new, row.new_measured)), row.id
