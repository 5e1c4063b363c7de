"""ContractChatModel: a scripted agent_contract Model driving LangChain and create_agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableBinding
from langchain_core.tools import BaseTool, tool

from agent_contract.errors import ConfigurationError, ModelError, ScriptExhaustedError
from agent_contract.messages import Completion, Message, ToolCall
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract_langchain.chat_model import ContractChatModel, message_id_for
from agent_contract_langchain.messages import to_langchain_messages

ADD_DEFINITION = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


def make_add_tool(ran: list[tuple[int, int]]) -> BaseTool:
    """An ``add`` tool that records every execution in ``ran``."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    return add


def ai_messages(messages: list[BaseMessage]) -> list[AIMessage]:
    return [m for m in messages if isinstance(m, AIMessage)]


def joined_replies(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    """The streamed AI chunks joined per reply (by message id), in stream order, as a
    consumer of ``stream_mode="messages"`` joins them."""
    joined: dict[str | None, AIMessageChunk] = {}
    for m in messages:
        if isinstance(m, AIMessageChunk):
            joined[m.id] = m if m.id not in joined else joined[m.id] + m
    return list(joined.values())


def test_llm_type() -> None:
    assert ContractChatModel(model=FakeModel(["hi"]))._llm_type == "agent-contract"


def test_bind_tools_binds_and_never_runs_a_tool() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel(["unused"])
    bound = ContractChatModel(model=fake).bind_tools([make_add_tool(ran)], tool_choice="auto")
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs["tools"] == [ADD_DEFINITION]
    assert bound.kwargs["tool_choice"] == "auto"
    assert ran == []
    assert fake.calls == []


def test_bind_tools_without_tool_choice_binds_only_tools() -> None:
    bound = ContractChatModel(model=FakeModel([])).bind_tools([ADD_DEFINITION])
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs == {"tools": [ADD_DEFINITION]}


def test_invoke_delivers_tool_calls_and_passes_tools() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel([tool_call("add", {"a": 1, "b": 2}, id="call_1")])
    bound = ContractChatModel(model=fake).bind_tools([make_add_tool(ran)])
    reply = bound.invoke([HumanMessage(content="1+2?")])
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls == [
        {"type": "tool_call", "id": "call_1", "name": "add", "args": {"a": 1, "b": 2}}
    ]
    assert reply.content == ""
    assert ran == []
    [call] = fake.calls
    assert call["tools"] == [ADD_DEFINITION]
    assert call["messages"] == [Message(role="user", content="1+2?")]


def test_invoke_passes_output_cap_and_temperature() -> None:
    fake = FakeModel(["a", "b", "c"])
    chat = ContractChatModel(model=fake, max_output_tokens=64, temperature=0.5)
    chat.invoke("x")
    chat.bind(max_tokens=7, temperature=0.2).invoke("x")
    chat.bind(max_output_tokens=9).invoke("x")
    settings = [(c["max_output_tokens"], c["temperature"], c["tools"]) for c in fake.calls]
    assert settings == [(64, 0.5, None), (7, 0.2, None), (9, 0.5, None)]


def test_ainvoke_delivers_tool_calls() -> None:
    fake = FakeModel([tool_call("add", {"a": 2, "b": 3}, id="call_7")])
    bound = ContractChatModel(model=fake).bind_tools([ADD_DEFINITION])
    reply = asyncio.run(bound.ainvoke([HumanMessage(content="2+3?")]))
    assert isinstance(reply, AIMessage)
    assert [(tc["id"], tc["args"]) for tc in reply.tool_calls] == [("call_7", {"a": 2, "b": 3})]


def test_answer_message_id_is_deterministic() -> None:
    completion = Completion(text="4")
    reply = ContractChatModel(model=FakeModel([completion])).invoke("2+2?")
    assert reply.id == message_id_for(1, completion)
    assert reply.id is not None
    assert reply.id.startswith("ac-1-")
    assert len(reply.id) == len("ac-1-") + 12
    again = ContractChatModel(model=FakeModel([completion])).invoke("2+2?")
    assert again.id == reply.id


def test_malformed_calls_never_reach_tool_calls_with_a_none_id() -> None:
    malformed = Completion(
        tool_calls=(
            ToolCall(id=None, name="add", arguments={"a": 1, "b": 2}),
            ToolCall(id="ok", name="add", arguments={"a": 1, "b": 2}),
            ToolCall(id="raw", name="add", arguments='{"a": 1'),
        ),
        finish_reason="tool_calls",
    )
    reply = ContractChatModel(model=FakeModel([malformed])).invoke("x")
    assert isinstance(reply, AIMessage)
    assert [tc["id"] for tc in reply.tool_calls] == ["ok"]
    assert [itc["id"] for itc in reply.invalid_tool_calls] == [None, "raw"]


def test_script_exhaustion_propagates_from_invoke() -> None:
    chat = ContractChatModel(model=FakeModel(["only reply"]))
    assert chat.invoke("first").content == "only reply"
    with pytest.raises(ScriptExhaustedError):
        chat.invoke("second")


def test_script_exhaustion_propagates_from_ainvoke() -> None:
    chat = ContractChatModel(model=FakeModel([]))
    with pytest.raises(ScriptExhaustedError):
        asyncio.run(chat.ainvoke("x"))


def test_script_exhaustion_propagates_out_of_create_agent() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel([tool_call("add", {"a": 1, "b": 1})])
    agent = create_agent(ContractChatModel(model=fake), tools=[make_add_tool(ran)])
    with pytest.raises(ScriptExhaustedError):
        agent.invoke({"messages": [HumanMessage(content="1+1?")]})
    assert ran == [(1, 1)]


def test_create_agent_stream_messages_delivers_tool_calls() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel(
        [
            tool_calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})),
            "The sums are 3 and 7.",
        ]
    )
    agent = create_agent(ContractChatModel(model=fake), tools=[make_add_tool(ran)])
    streamed: list[BaseMessage] = []
    for item in agent.stream(
        {"messages": [HumanMessage(content="1+2 and 3+4?")]}, stream_mode="messages"
    ):
        chunk, _metadata = item
        assert isinstance(chunk, BaseMessage)
        streamed.append(chunk)
    # the model streams natively: each reply arrives as chunks (text, one per call, last)
    assert all(isinstance(m, AIMessageChunk) for m in ai_messages(streamed))
    streamed_ai = joined_replies(streamed)
    assert [len(m.tool_calls) for m in streamed_ai] == [2, 0]
    assert [tc["args"] for tc in streamed_ai[0].tool_calls] == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
    ]
    assert all(tc["id"] for tc in streamed_ai[0].tool_calls)
    assert streamed_ai[-1].content == "The sums are 3 and 7."
    assert sorted(ran) == [(1, 2), (3, 4)]
    tool_results = [m for m in streamed if isinstance(m, ToolMessage)]
    # Parallel tool messages are streamed as they finish, in no fixed order; the final
    # state keeps issue order (tested in the contract suite).
    assert sorted(m.tool_call_id for m in tool_results) == sorted(
        tc["id"] for tc in streamed_ai[0].tool_calls
    )
    assert len(fake.calls) == 2


def test_stream_in_pieces_joins_to_exactly_what_the_model_sent() -> None:
    """``chunk_chars``/``interleave_calls``: the text and each call's argument text come
    in pieces that join, by index, to the text as sent (a malformed one stays so); a
    call's first piece carries its id and name."""
    bad = '{"text": "hi",, }'
    fake = FakeModel(
        [
            Completion(
                text="the answer",
                tool_calls=(
                    ToolCall(id="c1", name="echo", arguments={"text": "caf\u00e9 \u2713"}),
                    ToolCall(id="c2", name="echo", arguments=bad),
                ),
                finish_reason="tool_calls",
            )
        ]
    )
    model = ContractChatModel(model=fake, chunk_chars=3, interleave_calls=True)
    chunks = list(model.stream([HumanMessage(content="go")]))
    texts = [c.content for c in chunks if c.content]
    assert "".join(str(t) for t in texts) == "the answer"
    assert all(len(str(t)) <= 3 for t in texts)
    parts = [p for c in chunks for p in c.tool_call_chunks]
    indexes = [p["index"] for p in parts]
    assert indexes[:4] == [0, 1, 0, 1]  # by turns
    joined = {i: "".join(str(p["args"]) for p in parts if p["index"] == i) for i in (0, 1)}
    assert joined == {0: '{"text": "caf\u00e9 \u2713"}', 1: bad}
    heads = [p for p in parts if p["id"] is not None]
    assert [(p["index"], p["id"], p["name"]) for p in heads] == [
        (0, "c1", "echo"),
        (1, "c2", "echo"),
    ]
    assert all(p["name"] is None for p in parts if p["id"] is None)
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert [tc["args"] for tc in merged.tool_calls] == [{"text": "caf\u00e9 \u2713"}]
    assert [tc["args"] for tc in merged.invalid_tool_calls] == [bad]


def test_stream_without_pieces_sends_each_text_in_one_chunk() -> None:
    fake = FakeModel([tool_calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}))])
    chunks = list(ContractChatModel(model=fake).stream([HumanMessage(content="go")]))
    parts = [p for c in chunks for p in c.tool_call_chunks]
    assert [(p["index"], p["args"]) for p in parts] == [
        (0, '{"a": 1, "b": 2}'),
        (1, '{"a": 3, "b": 4}'),
    ]


def test_create_agent_ainvoke_runs_the_loop() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel([tool_call("add", {"a": 5, "b": 6}), "11"])
    agent = create_agent(ContractChatModel(model=fake), tools=[make_add_tool(ran)])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage(content="5+6?")]}))
    assert state["messages"][-1].content == "11"
    assert ran == [(5, 6)]


def test_create_agent_astream_messages_delivers_tool_calls() -> None:
    ran: list[tuple[int, int]] = []
    fake = FakeModel([tool_call("add", {"a": 2, "b": 2}), "4"])
    agent = create_agent(ContractChatModel(model=fake), tools=[make_add_tool(ran)])

    async def collect() -> list[BaseMessage]:
        out: list[BaseMessage] = []
        async for item in agent.astream(
            {"messages": [HumanMessage(content="2+2?")]}, stream_mode="messages"
        ):
            chunk, _metadata = item
            assert isinstance(chunk, BaseMessage)
            out.append(chunk)
        return out

    streamed_ai = joined_replies(asyncio.run(collect()))
    assert [[tc["args"] for tc in m.tool_calls] for m in streamed_ai] == [[{"a": 2, "b": 2}], []]
    assert streamed_ai[-1].content == "4"
    assert ran == [(2, 2)]


def test_message_ids_are_unique_across_a_multi_step_run() -> None:
    def run() -> list[str | None]:
        fake = FakeModel(
            [
                tool_call("add", {"a": 1, "b": 1}),
                tool_call("add", {"a": 1, "b": 1}),
                tool_call("add", {"a": 2, "b": 2}),
                "done",
            ]
        )
        agent = create_agent(ContractChatModel(model=fake), tools=[make_add_tool([])])
        state = agent.invoke({"messages": [HumanMessage(content="go")]})
        return [m.id for m in ai_messages(state["messages"])]

    ids = run()
    assert len(ids) == 4
    assert len(set(ids)) == 4
    assert all(i is not None and i.startswith("ac-") for i in ids)
    assert run() == ids


def test_stateless_fake_resumes_after_a_completed_tool_round() -> None:
    script: list[str | Completion] = [tool_call("add", {"a": 1, "b": 2}, id="call_1"), "3"]
    first_process = FakeModel(script, stateless=True)
    first_reply = ContractChatModel(model=first_process).bind_tools([ADD_DEFINITION]).invoke("1+2?")
    assert isinstance(first_reply, AIMessage)
    transcript: list[Any] = [
        HumanMessage(content="1+2?"),
        first_reply,
        ToolMessage(content="3", tool_call_id="call_1", name="add"),
    ]

    # A new process: a fresh model, nothing carried over but the transcript.
    resumed = FakeModel(script, stateless=True)
    ran: list[tuple[int, int]] = []
    agent = create_agent(ContractChatModel(model=resumed), tools=[make_add_tool(ran)])
    state = agent.invoke({"messages": transcript})
    assert state["messages"][-1].content == "3"
    assert ran == []
    [call] = resumed.calls
    assert [m.role for m in call["messages"]] == ["user", "assistant", "tool"]


def test_transcript_from_contract_messages_drives_the_model() -> None:
    fake = FakeModel(["ok"])
    history = [
        Message(role="system", content="be brief"),
        Message(role="user", content="hi"),
    ]
    ContractChatModel(model=fake).invoke(to_langchain_messages(history))
    assert fake.calls[0]["messages"] == history


def test_non_completion_reply_is_a_model_error() -> None:
    class Broken:
        def complete(self, messages: Any, tools: Any = None, **_: Any) -> Any:
            return "not a completion"

    with pytest.raises(ModelError, match="not a Completion"):
        ContractChatModel(model=Broken()).invoke("x")


def test_model_without_complete_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="agent_contract Model"):
        ContractChatModel(model=object())


def test_stop_sequences_cut_the_text_at_the_first_one() -> None:
    reply = ContractChatModel(model=FakeModel(["ab\ncd you ef"])).invoke("x", stop=["you", "\n"])
    assert reply.content == "ab"
    assert reply.response_metadata["finish_reason"] == "stop"
    by_field = ContractChatModel(model=FakeModel(["thank you"]), stop=["you"]).invoke("x")
    assert by_field.content == "thank "
    untouched = ContractChatModel(model=FakeModel(["hello"])).invoke("x", stop=["zz"])
    assert untouched.content == "hello"


def test_model_name_is_in_the_response_metadata() -> None:
    reply = ContractChatModel(model=FakeModel(["hi"]), model_name="m-1").invoke("x")
    assert reply.response_metadata["model_name"] == "m-1"


# Contrast: why langchain_core's own fakes cannot drive create_agent.


def test_langchain_fakes_cannot_bind_tools() -> None:
    add = make_add_tool([])
    generic = GenericFakeChatModel(messages=iter([AIMessage(content="x")]))
    listed = FakeMessagesListChatModel(responses=[AIMessage(content="x")])
    with pytest.raises(NotImplementedError):
        generic.bind_tools([add])
    with pytest.raises(NotImplementedError):
        listed.bind_tools([add])


def test_langchain_list_fake_wraps_around_silently() -> None:
    listed = FakeMessagesListChatModel(responses=[AIMessage(content="the only reply")])
    first = listed.invoke("one")
    second = listed.invoke("two")
    assert first.content == second.content == "the only reply"
