"""LangChain's own standard tests (``langchain-tests``), run as a peer's conformance suite
(issue 10, item 12): ``ContractChatModel`` is a conformant chat model
(``ChatModelUnitTests``), and a converted ToolSpec a conformant tool (``ToolsUnitTests``,
``ToolsIntegrationTests``). Skips are the standard tests' own capability flags (image
inputs, init from the environment, serialization), never ours."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ChatModelIntegrationTests, ToolsIntegrationTests
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


_STREAM_GAP = "stream()/astream() yield AIMessage, not AIMessageChunk (known gap, issue 23)"
_EVENTS_GAP = "the v3 event stream needs native chunk streaming; " + _STREAM_GAP
_NO_USAGE = "FakeModel reports no token usage, so usage_metadata is absent"
_NO_TOOL_DECISION = (
    "a scripted model replies its fixed script; it cannot decide to call the tool the test binds"
)
_NO_SCHEMA = (
    "a scripted reply is fixed text, not an answer to the test's schema; streamed structured"
    " output also yields nothing (known gap, issue 23)"
)

# Each test a scripted chat model cannot pass, with why; strict, so a fix turns it red.
_XFAILS: dict[str, str] = {
    "test_stream": _STREAM_GAP,
    "test_astream": _STREAM_GAP,
    "test_stream_events_v3": _EVENTS_GAP,
    "test_astream_events_v3": _EVENTS_GAP,
    "test_usage_metadata_streaming": _NO_USAGE,
    "test_tool_calling": _NO_TOOL_DECISION,
    "test_tool_calling_async": _NO_TOOL_DECISION,
    "test_bind_runnables_as_tools": _NO_TOOL_DECISION,
    "test_tool_choice": _NO_TOOL_DECISION,
    "test_tool_calling_with_no_arguments": _NO_TOOL_DECISION,
    "test_agent_loop": _NO_TOOL_DECISION,
    "test_unicode_tool_call_integration": _NO_TOOL_DECISION,
    "test_structured_output": _NO_SCHEMA,
    "test_structured_output_async": _NO_SCHEMA,
    "test_structured_output_pydantic_2_v1": _NO_SCHEMA,
    "test_structured_output_optional_param": _NO_SCHEMA,
}


def _xfail(name: str) -> Callable[..., Any]:
    """The standard test ``name`` re-declared as a strict xfail with its reason; the base
    function (and its parametrize marks) stays untouched."""
    base = getattr(ChatModelIntegrationTests, name)
    if inspect.iscoroutinefunction(base):

        @functools.wraps(base)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            return await base(self, *args, **kwargs)

    else:

        @functools.wraps(base)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            return base(self, *args, **kwargs)

    marked: Callable[..., Any] = pytest.mark.xfail(strict=True, reason=_XFAILS[name])(wrapper)
    return marked


class TestContractChatModelIntegration(ChatModelIntegrationTests):
    """The integration suite against a scripted model: what a scripted model cannot do is a
    strict xfail with its reason (``_XFAILS``); the rest passes; skips are the suite's own
    capability flags (image/audio/PDF inputs, JSON mode, model override, VCR)."""

    @property
    def chat_model_class(self) -> type[ContractChatModel]:
        return ContractChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        # batch/abatch call the model twice per test: enough replies for every call.
        return {"model": FakeModel(["hello"] * 8)}


for _name in _XFAILS:
    setattr(TestContractChatModelIntegration, _name, _xfail(_name))
