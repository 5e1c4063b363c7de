"""Miswiring surfaces as the framework's own error, not as a model failure."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware

from agent_contract import Contract
from agent_contract.messages import Message
from agent_contract.testing import FakeModel
from agent_contract_langchain import ContractChatModel, ContractMiddleware, run_graph


class SyncOnly(AgentMiddleware):  # type: ignore[type-arg]
    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


def test_sync_only_middleware_under_ainvoke_raises_not_a_model_error() -> None:
    contract = Contract([])
    graph = create_agent(
        ContractChatModel(model=FakeModel(["hi"])),
        tools=[],
        middleware=[ContractMiddleware(contract), SyncOnly()],
    )
    with pytest.raises(NotImplementedError):
        run_graph(graph, contract.start(), [Message(role="user", content="x")], mode="ainvoke")
