"""Under ainvoke the contract's hooks run without LangSmith's two thread hops per hook
call: during the harness's own runs, and wherever LangSmith does not trace; a traced run
outside the harness keeps LangSmith's hand-off (or the application's own override)."""

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


def _direct_ainvoke(graph: Any, contract: Contract) -> Any:
    """The application's own ``graph.ainvoke`` (not the harness)."""
    from agent_contract_langchain.messages import to_langchain_messages
    from agent_contract_langchain.run_config import contract_config

    payload = {"messages": to_langchain_messages([Message(role="user", content="go")])}
    return asyncio.run(graph.ainvoke(payload, contract_config(contract.start())))


def test_a_graph_the_application_awaits_runs_inline_while_nothing_is_traced(
    hops: list[Any],
) -> None:
    graph, contract = _graph_and_contract()
    final = _direct_ainvoke(graph, contract)
    assert [m.type for m in final["messages"]].count("tool") == 2
    assert hops == [], "no tracing: LangSmith's set-up has nothing to take off the loop"


def test_a_traced_run_outside_the_harness_keeps_langsmiths_hops(
    hops: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_inline_hooks, "_tracing_on", lambda ctx: True)
    graph, contract = _graph_and_contract()
    _direct_ainvoke(graph, contract)
    assert hops, "a traced graph awaited by the application is left to LangSmith's default"
    hops.clear()
    run_graph(graph, contract.start(), [Message(role="user", content="go")], mode="ainvoke")
    assert hops == [], "the harness's own runs stay inline, traced or not"


def test_tracing_is_read_from_the_hooks_context(monkeypatch: pytest.MonkeyPatch) -> None:
    from langsmith.run_helpers import tracing_context

    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    assert _inline_hooks._tracing_on(contextvars.copy_context()) is False
    with tracing_context(enabled=True):
        traced = contextvars.copy_context()
    assert _inline_hooks._tracing_on(traced) is True


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

        monkeypatch.setattr(_inline_hooks, "_tracing_on", lambda ctx: True)  # traced
        asyncio.run(outside())
        assert calls, "the application's own override still runs for a traced call"
    finally:
        langsmith.set_runtime_overrides(aio_to_thread=before)
        monkeypatch.setattr(_inline_hooks, "_installed", False)


def test_a_tracing_test_that_fails_keeps_langsmiths_hand_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import langsmith.utils

    def broken() -> bool:
        raise RuntimeError("another LangSmith")

    monkeypatch.setattr(langsmith.utils, "tracing_is_enabled", broken)
    assert _inline_hooks._tracing_on(contextvars.copy_context()) is True
