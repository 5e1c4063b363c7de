"""LangChain's own standard tests (``langchain-tests``), run as a peer's conformance suite
(issue 10, item 12): ``ContractChatModel`` is a conformant chat model
(``ChatModelUnitTests``), and a converted ToolSpec a conformant tool (``ToolsUnitTests``,
``ToolsIntegrationTests``). Skips are the standard tests' own capability flags (image
inputs, init from the environment, serialization), never ours."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests, ToolsUnitTests

from agent_contract.app.builtin_tools.calculator import calculator_tool
from agent_contract.testing import FakeModel
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.tools import to_langchain_tool


class TestContractChatModelUnit(ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[ContractChatModel]:
        return ContractChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": FakeModel(["hello"])}


class TestConvertedToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return to_langchain_tool(calculator_tool())

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"expression": "2+3"}


class TestConvertedToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return to_langchain_tool(calculator_tool())

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"expression": "2+3"}
