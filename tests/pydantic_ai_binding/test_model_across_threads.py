"""One PydanticAI model over a real async client (``AsyncOpenAI`` on httpx, pointed at the
kit's replay server on 127.0.0.1) shared by several threads. The synchronous ``run`` and
``stream`` entry points run on the process's one run loop, so the client's connections,
opened there, serve every run from every thread (a loop per thread stranded them: the first
run on a second thread stopped ``model_error``). ``run_sync`` drives the calling thread's
own loop: the same model on a second thread fails closed, naming the fix, and nothing runs."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_contract import Budget, Contract
from agent_contract.conformance.wire import ReplayServer
from agent_contract.errors import ConfigurationError
from agent_contract.runtime import RunResult
from agent_contract_pydantic_ai import run_agent
from agent_contract_pydantic_ai.driving import close_model_client
from tests.unit.test_lc_real_client import Tools, replier

pytest.importorskip("openai")


def openai_model(base_url: str) -> Any:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=base_url, api_key="sk-local", max_retries=0, timeout=30)
    return OpenAIChatModel("replay-model", provider=OpenAIProvider(openai_client=client))


@pytest.mark.parametrize("mode", ["run", "stream"])
def test_one_model_serves_runs_from_several_threads(mode: Any) -> None:
    tools = Tools()
    with ReplayServer(replier(), ids="provider") as server:
        model = openai_model(server.openai_base_url)
        contract = Contract(tools.specs(), budget=Budget(max_model_steps=6, max_tool_calls=4))
        results: list[RunResult] = []
        errors: list[BaseException] = []

        def one_run(a: int) -> None:
            try:
                results.append(run_agent(model, contract, f"add {a} 1", mode=mode))
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                errors.append(exc)

        one_run(1)
        for a in (2, 3):  # each on a thread of its own, one after the other
            thread = threading.Thread(target=one_run, args=(a,))
            thread.start()
            thread.join()
        one_run(4)  # and the first thread again
        close_model_client(model)  # on the loop its connections live on
    assert errors == []
    assert [(r.stop_reason, r.output) for r in results] == [
        ("answered", f"The result is {a + 1}.") for a in (1, 2, 3, 4)
    ]
    assert tools.added == [(1, 1), (2, 1), (3, 1), (4, 1)]


def test_run_sync_on_a_second_thread_fails_closed() -> None:
    tools = Tools()
    with ReplayServer(replier(), ids="provider") as server:
        model = openai_model(server.openai_base_url)
        contract = Contract(tools.specs(), budget=Budget(max_model_steps=6, max_tool_calls=4))
        first = run_agent(model, contract, "add 1 1", mode="run_sync")
        second = run_agent(model, contract, "add 2 1", mode="run_sync")  # same thread: fine
        errors: list[BaseException] = []

        def elsewhere(mode: Any) -> None:
            try:
                run_agent(model, contract, "add 3 1", mode=mode)
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                errors.append(exc)

        thread = threading.Thread(target=elsewhere, args=("run_sync",))
        thread.start()
        thread.join()
        elsewhere("run")  # and the process's run loop is another loop too
        requests = len(server.requests)
        close_model_client(model)
    assert [first.output, second.output] == ["The result is 2.", "The result is 3."]
    assert [type(e) for e in errors] == [ConfigurationError, ConfigurationError]
    assert all("run_sync loop of one thread" in str(e) for e in errors)
    assert "mode='run'" in str(errors[0])
    assert tools.added == [(1, 1), (2, 1)]  # nothing ran on the refused calls
    assert requests == 4  # nor was the model asked
