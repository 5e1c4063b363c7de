"""The message mapping between PydanticAI and the contract, and the model adapter."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from agent_contract import Contract
from agent_contract.conformance.fixtures import Probe, basic_tools
from agent_contract.messages import Completion, Message, ToolCall
from agent_contract.results import error_result, success_result
from agent_contract.testing import FakeModel, tool_call
from agent_contract.trace import RedactionPolicy
from agent_contract_pydantic_ai import (
    completion_to_response,
    from_pydantic_messages,
    response_to_completion,
    run_agent,
    to_pydantic_messages,
)
from agent_contract_pydantic_ai.messages import tool_return_part, wire_arguments


def test_a_transcript_survives_the_round_trip() -> None:
    transcript = [
        Message(role="system", content="be brief"),
        Message(role="user", content="echo hi"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="c1", name="echo", arguments={"text": "hi"}),),
        ),
        Message(role="tool", content="echo: hi", tool_call_id="c1", name="echo", status="success"),
        Message(
            role="tool", content='{"error":"x"}', tool_call_id="c1", name="echo", status="error"
        ),
        Message(role="assistant", content="done"),
    ]
    back = from_pydantic_messages(to_pydantic_messages(transcript))
    assert back == transcript


def test_an_empty_id_is_no_id() -> None:
    response = ModelResponse(parts=[ToolCallPart(tool_name="echo", args={}, tool_call_id="")])
    assert response_to_completion(response).tool_calls[0].id is None
    sent = completion_to_response(Completion(tool_calls=(ToolCall(id=None, name="echo"),)))
    (part,) = sent.parts
    assert isinstance(part, ToolCallPart)
    assert part.tool_call_id == ""  # not an id PydanticAI made up


@pytest.mark.parametrize(
    ("arguments", "wire"),
    [({"a": 1}, {"a": 1}), ('{"a": 1', '{"a": 1'), (["a", "b"], '["a", "b"]'), (None, "null")],
)
def test_arguments_reach_the_contract_as_the_model_sent_them(arguments: Any, wire: Any) -> None:
    assert wire_arguments(arguments) == wire
    response = completion_to_response(
        Completion(tool_calls=(ToolCall(id="c", name="echo", arguments=arguments),))
    )
    assert response_to_completion(response).tool_calls[0].arguments == wire


def test_text_parts_are_joined_and_prompts_mapped() -> None:
    history = [
        ModelRequest(parts=[SystemPromptPart(content="sys"), UserPromptPart(content=["a", "b"])]),
        ModelResponse(parts=[TextPart(content="one "), TextPart(content="two")]),
    ]
    assert [(m.role, m.content) for m in from_pydantic_messages(history)] == [
        ("system", "sys"),
        ("user", "ab"),
        ("assistant", "one two"),
    ]


def test_a_ledger_result_is_a_bound_tool_return() -> None:
    redaction = RedactionPolicy()
    ok = tool_return_part(
        success_result(
            "c1", "echo", "hi", max_result_chars=100, on_oversize="truncate", redaction=redaction
        )
    )
    failed = tool_return_part(error_result("c2", "echo", "tool_error", "boom", redaction=redaction))
    assert isinstance(ok, ToolReturnPart)
    assert (ok.tool_call_id, ok.outcome, ok.content) == ("c1", "success", "hi")
    assert (failed.tool_call_id, failed.outcome) == ("c2", "failed")
    assert '"tool_error"' in str(failed.content)


@pytest.mark.parametrize("mode", ["run_sync", "run", "stream"])
def test_a_model_that_returns_no_completion_is_a_model_error(mode: str) -> None:
    class Broken:
        def complete(self, messages: Any, tools: Any = None, **_: Any) -> Any:
            return "not a completion"

    result = run_agent(Broken(), Contract(basic_tools(Probe())), "hi", mode=mode)  # type: ignore[arg-type]
    assert result.stop_reason == "model_error"
    assert result.output is None


@pytest.mark.parametrize("mode", ["run_sync", "run", "stream"])
def test_the_model_is_offered_the_allowlisted_tools_with_their_schemas(mode: str) -> None:
    probe = Probe()
    contract = Contract(basic_tools(probe), allowlist=["forecast"])
    model = FakeModel([tool_call("forecast", {"city": "Oslo", "days": 2}), "ok"])
    result = run_agent(model, contract, "weather?", mode=mode)  # type: ignore[arg-type]
    assert result.stop_reason == "answered"
    (offered,) = model.calls[0]["tools"]
    spec = next(s for s in contract.registry if s.name == "forecast")
    assert offered["function"]["parameters"] == dict(spec.parameters)
