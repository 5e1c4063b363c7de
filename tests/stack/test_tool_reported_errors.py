"""An error a tool reports (an error ``ToolMessage``, what langchain-mcp-adapters returns
from 0.3 on, or a ``ToolException`` its ``handle_tool_error`` turns into one) reaches the
model under the same exposure policy as an exception: "the tool reported an error" by
default, and the tool's own text (redacted) with ``expose_exception_text=True``."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, ToolException

from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain.tools import from_langchain_tool

from .conftest import MODES, Stack, budget

SECRET = "sk-reported-0123456789"


def _raises(city: str) -> str:
    raise ToolException(f"rate limited: retry after 30 s (key {SECRET})")


def _returns_error(city: str) -> ToolMessage:
    return ToolMessage(
        content=f"rate limited: retry after 30 s (key {SECRET})",
        tool_call_id="ignored",
        status="error",
    )


def _tools() -> dict[str, StructuredTool]:
    raising = StructuredTool.from_function(
        _raises, name="weather", description="The weather in a city.", handle_tool_error=True
    )
    returning = StructuredTool.from_function(
        _returns_error, name="weather", description="The weather in a city."
    )
    return {"tool_exception": raising, "error_tool_message": returning}


def _seen_by_model(way: str, mode: str, *, expose: bool) -> str:
    tool = _tools()[way]
    contract = Contract(
        [from_langchain_tool(tool, effect="read")],
        budget=budget(),
        secrets=[SECRET],
        expose_exception_text=expose,
    )
    model = FakeModel([tool_call("weather", {"city": "Oslo"}, id="w1"), "done"])
    result = Stack(model, contract, tools=[tool]).run(mode=mode)
    assert result.stop_reason == "answered", result.stop_detail
    (call,) = result.tool_calls
    assert call.status == "error"
    (answer,) = [m for m in model.last_messages() if m.role == "tool"]
    return str(json.loads(answer.content)["message"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("way", ["tool_exception", "error_tool_message"])
def test_the_model_sees_the_tools_text_when_exposed(way: str, mode: str) -> None:
    """When it fails: the binding replaces the text of an error the tool reported with
    a fixed message whatever ``expose_exception_text`` says, so the model never reads
    "retry after 30 s"."""
    seen = _seen_by_model(way, mode, expose=True)
    assert "retry after 30 s" in seen
    assert SECRET not in seen  # redacted like any exception text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("way", ["tool_exception", "error_tool_message"])
def test_the_tools_text_stays_hidden_by_default(way: str, mode: str) -> None:
    seen = _seen_by_model(way, mode, expose=False)
    assert "the tool reported an error" in seen
    assert "retry after" not in seen
