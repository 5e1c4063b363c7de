"""PydanticAI's real provider models (``OpenAIChatModel``, ``AnthropicModel``) under the
contract, over their own wire parsing with no socket (``tests.wire``): finish reasons and
refusals are contract input on ``run_sync``, ``run`` and the event stream; a reply cut
inside a tool call never runs the tool (handler runs are counted)."""

from __future__ import annotations

from typing import Any, Literal

import httpx
import httpx2
import pytest

from agent_contract import Budget, Contract
from agent_contract.messages import Message
from agent_contract.runtime import RunResult
from agent_contract.tools import ToolSpec
from agent_contract_pydantic_ai import build_agent, drive_agent
from tests.wire import PROVIDERS, Reply, Wire

MODES = ("run_sync", "run", "stream")


def pydantic_model(wire: Wire) -> Any:
    """PydanticAI's real model class for ``wire``'s provider, pointed at it."""
    if wire.provider == "openai":
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(
            api_key="sk-test",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(wire)),
        )
        return OpenAIChatModel("gpt-test", provider=OpenAIProvider(openai_client=client))
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(
        api_key="sk-ant-test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(wire)),
    )
    return AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))


def run(wire: Wire, ran: list[int], mode: str) -> RunResult:
    def pay(amount: int) -> str:
        ran.append(amount)
        return f"paid {amount}"

    spec = ToolSpec(
        name="pay",
        description="Pay an amount.",
        parameters={
            "type": "object",
            "properties": {"amount": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["amount"],
        },
        handler=pay,
    )
    contract = Contract([spec], budget=Budget(max_model_steps=4))
    agent = build_agent(pydantic_model(wire), contract)
    return drive_agent(
        agent,
        contract.start(),
        [Message(role="user", content="pay 1000")],
        mode=mode,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_good_call_runs_once(provider: Literal["openai", "anthropic"], mode: str) -> None:
    ran: list[int] = []
    wire = Wire(
        [
            Reply(calls=(("call_1", "pay", '{"amount": 1000}'),), finish="tool_calls"),
            Reply(text="Paid 1000."),
        ],
        provider,
    )
    result = run(wire, ran, mode)
    assert wire.streamed == [mode == "stream"] * 2
    assert (result.stop_reason, result.output, ran) == ("answered", "Paid 1000.", [1000])


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_reply_cut_inside_a_tool_call_never_runs_it(
    provider: Literal["openai", "anthropic"], mode: str
) -> None:
    ran: list[int] = []
    cut = '{"amount": 10' if mode == "stream" or provider == "openai" else '{"amount": 10}'
    wire = Wire(
        [Reply(calls=(("call_cut", "pay", cut),), finish="length"), Reply(text="never")],
        provider,
    )
    result = run(wire, ran, mode)
    assert ran == []
    assert (result.stop_reason, result.output) == ("truncated_response", None)
    (record,) = result.tool_calls
    assert (record.id, record.error_kind) == ("call_cut", "invalid_call")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_text_reply_cut_by_length_is_not_an_answer(
    provider: Literal["openai", "anthropic"], mode: str
) -> None:
    wire = Wire([Reply(text="The total is 1", finish="length")], provider)
    result = run(wire, [], mode)
    assert (result.stop_reason, result.output) == ("truncated_response", None)


@pytest.mark.parametrize("mode", MODES)
def test_an_openai_content_filter_is_its_own_stop(mode: str) -> None:
    wire = Wire([Reply(text="Here is how to", finish="content_filter")], "openai")
    result = run(wire, [], mode)
    assert (result.stop_reason, result.output) == ("content_filtered", None)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_refusal_is_refused_with_its_text(
    provider: Literal["openai", "anthropic"], mode: str
) -> None:
    if provider == "openai":
        reply = Reply(refusal="I can't help with that.")
    else:
        reply = Reply(text="I can't help with that.", finish="refusal")
    result = run(Wire([reply], provider), [], mode)
    assert (result.stop_reason, result.output) == ("refused", None)
    assert result.stop_detail == "the model refused: I can't help with that."


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_malformed_streamed_call_is_refused(
    provider: Literal["openai", "anthropic"], mode: str
) -> None:
    if provider == "anthropic" and mode != "stream":
        pytest.skip("the Anthropic API never sends unparsed arguments unstreamed")
    ran: list[int] = []
    bad = '{"amount": 10, "note": "abc'
    wire = Wire(
        [Reply(calls=(("call_bad", "pay", bad),), finish="tool_calls"), Reply(text="never")],
        provider,
    )
    result = run(wire, ran, mode)
    assert ran == []
    assert result.stop_reason == "invalid_response"
