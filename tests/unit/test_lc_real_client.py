"""One real ``ChatOpenAI`` instance, pointed at the kit's replay server, serves many runs
through every entry point of the LangChain binding, sync and async (issue: a new event
loop per synchronous ``ainvoke`` stranded the client's async connections, and the second
run stopped ``model_error``).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.approval import Approval
from agent_contract.budget import Budget
from agent_contract.conformance.wire import Fault, RecordedRequest, ReplayServer
from agent_contract.errors import ConfigurationError
from agent_contract.messages import Completion, Message, ToolCall
from agent_contract.pools import run_async
from agent_contract.runtime import Contract, RunResult
from agent_contract.tools import ToolSpec
from agent_contract_langchain import (
    aresume_agent,
    arun_agent,
    arun_graph,
    build_agent,
    build_chat_model,
    resume_agent,
    run_agent,
    run_graph,
)

NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
AMOUNT = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}


class Tools:
    """An ``add`` tool and a ``pay`` write, each recording its real runs."""

    def __init__(self) -> None:
        self.added: list[tuple[int, int]] = []
        self.paid: list[int] = []

    def specs(self) -> list[ToolSpec]:
        def add(a: int, b: int) -> int:
            self.added.append((a, b))
            return a + b

        def pay(context: Any, amount: int) -> dict[str, Any]:
            self.paid.append(amount)
            return {"paid": amount}

        return [
            ToolSpec(name="add", description="Add two numbers.", parameters=NUMBERS, handler=add),
            ToolSpec(
                name="pay",
                description="Pay an amount.",
                parameters=AMOUNT,
                handler=pay,
                effect="write",
                preview=lambda context, amount: {"would_pay": amount},
                verify=lambda context, amount: {"paid": amount} if amount in self.paid else None,
            ),
        ]


def replier() -> Any:
    """A stateless scripted model: a tool call for the user's request, then an answer
    citing the tool's result; each call gets a new id."""
    ids = itertools.count(1)

    def reply(request: RecordedRequest) -> Completion:
        last = request.body["messages"][-1]
        content = last["content"]
        if last["role"] == "tool":  # OpenAI's tool message
            return Completion(text=f"The result is {content}.")
        if isinstance(content, list):  # Anthropic's: a user turn of blocks
            results = [b for b in content if b.get("type") == "tool_result"]
            if results:
                value = results[-1]["content"]
                text = value if isinstance(value, str) else value[0]["text"]
                return Completion(text=f"The result is {text}.")
            content = " ".join(b.get("text", "") for b in content)
        words = str(content).split()
        if words[0] == "pay":
            call = ToolCall(id=f"c{next(ids)}", name="pay", arguments={"amount": int(words[1])})
        else:
            call = ToolCall(
                id=f"c{next(ids)}", name="add", arguments={"a": int(words[1]), "b": int(words[2])}
            )
        return Completion(tool_calls=(call,), finish_reason="tool_calls")

    return reply


def close(chat: Any) -> None:
    """Close the client's connections (on the loop that opened the async ones)."""
    chat.root_client.close()
    run_async(chat.root_async_client.close())


def budget() -> Budget:
    return Budget(max_model_steps=6, max_tool_calls=4)


def test_one_chat_openai_serves_ten_runs_through_every_entry_point() -> None:
    tools = Tools()
    with ReplayServer(replier(), ids="provider") as server:
        chat = build_chat_model("replay-model", base_url=server.openai_base_url, max_retries=0)
        contract = Contract(tools.specs(), budget=budget())
        graph = build_agent(chat, contract)
        results: list[RunResult] = []

        def graph_run(mode: Any, text: str) -> None:
            state = contract.start()
            results.append(run_graph(graph, state, [Message(role="user", content=text)], mode=mode))

        graph_run("invoke", "add 1 2")
        graph_run("ainvoke", "add 2 3")
        graph_run("stream", "add 3 4")
        graph_run("ainvoke", "add 4 5")
        results.append(run_agent(chat, contract, "add 5 6", mode="ainvoke"))
        results.append(run_agent(chat, contract, "add 6 7", mode="invoke"))
        first = results[-1]
        results.append(  # a second turn after the first
            run_agent(chat, contract, "add 7 8", mode="ainvoke", history=first.messages[1:])
        )
        results.append(run_agent(chat, contract, "add 8 9", mode="stream"))

        def approved_after_a_pause(text: str, mode: Any) -> RunResult:
            saver = InMemorySaver()
            paused = run_agent(chat, contract, text, mode=mode, checkpointer=saver)
            assert paused.stop_reason == "pending_approval"
            (pending,) = paused.pending_approvals
            approval = Approval.for_pending(pending, "approve")
            snapshot = paused.snapshot or {}
            return resume_agent(chat, contract, snapshot, [approval], checkpointer=saver, mode=mode)

        results.append(approved_after_a_pause("pay 10", "invoke"))
        results.append(approved_after_a_pause("pay 9", "ainvoke"))

        async def in_one_loop() -> list[RunResult]:
            done = [await arun_agent(chat, contract, "add 10 11")]
            state = contract.start()
            done.append(await arun_graph(graph, state, [Message(role="user", content="add 11 12")]))
            asaver = InMemorySaver()
            apaused = await arun_agent(chat, contract, "pay 13", checkpointer=asaver)
            (apending,) = apaused.pending_approvals
            done.append(
                await aresume_agent(
                    chat,
                    contract,
                    apaused.snapshot or {},
                    [Approval.for_pending(apending, "approve")],
                    checkpointer=asaver,
                )
            )
            return done

        # the application's async code on the process's run loop (run_async, not
        # asyncio.run): the client's async connections stay on one loop
        results.extend(run_async(in_one_loop()))
        graph_run("ainvoke", "add 20 21")  # and sync again after the async part
        close(chat)
    assert [r.stop_reason for r in results] == ["answered"] * len(results)
    assert len(results) == 14  # and the three runs that paused for approval first
    outputs = [r.output for r in results]
    assert outputs[0] == "The result is 3."
    assert outputs[-1] == "The result is 41."
    assert tools.added == [
        (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9), (10, 11), (11, 12),
        (20, 21),
    ]  # fmt: skip
    assert tools.paid == [10, 9, 13]
    assert not server.exhausted
    assert all(r.path == "/v1/chat/completions" for r in server.requests)
    # every call id the run bound is the provider's
    bound = [c.id for r in results for c in r.tool_calls]
    assert bound
    assert all(i is not None and i.startswith("call_") for i in bound)


def test_build_chat_model_streams_through_the_server() -> None:
    tools = Tools()
    with ReplayServer(replier()) as server:
        chat = build_chat_model("replay-model", base_url=server.openai_base_url, streaming=True)
        result = run_agent(chat, tools.specs(), "add 2 3", mode="invoke", budget=budget())
        close(chat)
    assert result.stop_reason == "answered"
    assert result.output == "The result is 5."
    assert tools.added == [(2, 3)]
    assert all(r.stream for r in server.requests)


def test_build_chat_model_key_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = build_chat_model("m", base_url="http://localhost:8000/v1")
    assert local.openai_api_key is not None
    assert local.openai_api_key.get_secret_value() == "not-needed"
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        build_chat_model("m", base_url="https://models.example.com/v1")
    with pytest.raises(ConfigurationError):
        build_chat_model("m", base_url="http://127.0.0.1:8000/v1", api_key="")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    remote = build_chat_model("m", base_url="https://models.example.com/v1", timeout=5.0)
    assert remote.openai_api_key is not None
    assert remote.openai_api_key.get_secret_value() == "sk-env"
    assert remote.request_timeout == 5.0


def test_the_client_retries_a_429_and_the_run_answers() -> None:
    tools = Tools()
    script = [
        Fault(status=429, retry_after=0),
        Completion(
            tool_calls=(ToolCall(id="c1", name="add", arguments={"a": 1, "b": 1}),),
            finish_reason="tool_calls",
        ),
        Completion(text="2"),
    ]
    with ReplayServer(script) as server:
        chat = build_chat_model("replay-model", base_url=server.openai_base_url, max_retries=1)
        result = run_agent(chat, tools.specs(), "add 1 1", budget=budget())
        close(chat)
    assert result.stop_reason == "answered"
    assert len(server.requests) == 3
    assert tools.added == [(1, 1)]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream"])
def test_chat_anthropic_through_the_servers_messages_api(mode: Any) -> None:
    from langchain_anthropic import ChatAnthropic

    tools = Tools()
    with ReplayServer(replier(), ids="provider") as server:
        chat = ChatAnthropic(  # type: ignore[call-arg]
            model_name="claude-replay",
            base_url=server.anthropic_base_url,
            api_key="test-key",
            max_retries=0,
            streaming=mode == "stream",
        )
        result = run_agent(chat, tools.specs(), "add 2 3", mode=mode, budget=budget())
        chat._client.close()  # its cached clients: closed on the loop that opened them
        run_async(chat._async_client.close())
    assert result.stop_reason == "answered"
    assert result.output == "The result is 5."
    assert tools.added == [(2, 3)]
    assert all(r.path == "/v1/messages" for r in server.requests)
    (call,) = result.tool_calls
    assert call.id is not None
    assert call.id.startswith("toolu_01")


def test_a_wire_columns_chat_openai_is_closed_after_its_scenario() -> None:
    # check --wire builds a ChatOpenAI per scenario with httpx clients of its own and
    # closes them after it (the package's cached default client, shared by every
    # instance with the same base URL, is never handed out there, so none is closed).
    from agent_contract_langchain.plugin import wire_clients

    (client, _anthropic) = wire_clients("ainvoke")
    assert client.close is not None
    with ReplayServer([Completion(text="one"), Completion(text="two")]) as server:
        chat = client.build(server.openai_base_url)
        assert chat.invoke("hi").content == "one"
        assert run_async(chat.ainvoke("hi")).content == "two"
        client.close(chat)
    assert chat.http_client.is_closed
    assert chat.http_async_client.is_closed
