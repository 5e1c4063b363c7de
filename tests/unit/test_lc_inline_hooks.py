"""Under ainvoke the contract's hooks run without LangSmith's two thread hops per hook
call during the harness's own runs; elsewhere LangSmith's runtime is left as it was."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest
from langsmith._internal import _aiter

from agent_contract import Budget, Contract, Message, ToolSpec
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import _inline_hooks, build_agent
from agent_contract_langchain.harness import arun_graph, run_graph


def _echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda text: text,
    )


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every call of LangSmith's default ``aio_to_thread`` (one thread hop each)."""
    seen: list[Any] = []
    default = _aiter._default_aio_to_thread

    async def counting(ctx: contextvars.Context, func: Any, /, *a: Any, **k: Any) -> Any:
        seen.append(func)
        return await default(ctx, func, *a, **k)

    monkeypatch.setattr(_aiter, "_default_aio_to_thread", counting)
    return seen


def _graph_and_contract() -> tuple[Any, Contract]:
    contract = Contract([_echo()], budget=Budget(max_model_steps=4, max_tool_calls=2))
    script = [tool_call("echo", {"text": "a"}), tool_call("echo", {"text": "b"}), "done"]
    return build_agent(FakeModel(script, stateless=True), contract), contract


def test_the_harness_runs_hook_wrappers_inline_and_the_run_holds(hops: list[Any]) -> None:
    graph, contract = _graph_and_contract()
    state = contract.start()
    result = run_graph(graph, state, [Message(role="user", content="go")], mode="ainvoke")
    assert result.stop_reason == "answered"
    assert [m.role for m in result.messages].count("tool") == 2
    assert hops == []


def test_outside_the_harness_langsmith_keeps_its_own_hops(hops: list[Any]) -> None:
    graph, contract = _graph_and_contract()
    run_graph(graph, contract.start(), [Message(role="user", content="go")], mode="ainvoke")
    state = contract.start()
    from agent_contract_langchain.messages import to_langchain_messages
    from agent_contract_langchain.run_config import contract_config

    payload = {"messages": to_langchain_messages([Message(role="user", content="go")])}
    asyncio.run(graph.ainvoke(payload, contract_config(state)))
    assert hops, "a graph awaited by the application itself is left to LangSmith's default"


def test_an_application_override_installed_first_is_still_called(
    hops: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import langsmith
    from langsmith._runtime_overrides import get_runtime_overrides

    calls: list[Any] = []

    async def mine(default: Any, ctx: contextvars.Context, func: Any, /, *a: Any, **k: Any) -> Any:
        calls.append(func)
        return await default(ctx, func, *a, **k)

    before = get_runtime_overrides().aio_to_thread
    monkeypatch.setattr(_inline_hooks, "_installed", False)
    langsmith.set_runtime_overrides(aio_to_thread=mine)
    try:
        graph, contract = _graph_and_contract()
        run_graph(graph, contract.start(), [Message(role="user", content="go")], mode="ainvoke")
        assert calls == []  # inline during the harness's run
        state = contract.start()
        result = asyncio.run(arun_graph(graph, state, [Message(role="user", content="go")]))
        assert result.stop_reason == "answered"

        async def outside() -> None:
            from langsmith import traceable

            @traceable
            async def noop() -> None:
                return None

            await noop()

        asyncio.run(outside())
        assert calls, "the application's own override still runs outside the harness"
    finally:
        langsmith.set_runtime_overrides(aio_to_thread=before)
        monkeypatch.setattr(_inline_hooks, "_installed", False)
