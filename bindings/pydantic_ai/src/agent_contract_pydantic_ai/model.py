"""Any agent-contract :class:`~agent_contract.model.Model` as a PydanticAI model.

:func:`contract_model` wraps it in PydanticAI's ``FunctionModel``, with both paths:

- ``run`` / ``run_sync``: the model's :class:`~agent_contract.messages.Completion` becomes
  one ``ModelResponse`` (:func:`~agent_contract_pydantic_ai.messages.completion_to_response`);
- streaming (``run_stream_events``, ``iter`` with ``node.stream``): it is streamed as
  PydanticAI's deltas, the text first, then each tool call as a ``DeltaToolCall`` in two
  chunks of its JSON arguments, so tool calls reach the consumer through the stream.

The model is offered the tools PydanticAI puts in the request (the function tools the
contract's capability left in, then the output tools of a structured answer), each as a
JSON tool definition with its JSON Schema unchanged.

Streaming has one limit the model cannot pass: PydanticAI's parts manager gives a
streamed tool call without an id one of its own (``pyd_ai_...``) before any hook sees the
response, so on that path a missing id is never seen by the contract (see
:data:`~agent_contract_pydantic_ai.plugin.NOT_EXPRESSIBLE`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from agent_contract.errors import ModelError
from agent_contract.messages import Completion
from agent_contract.model import Model
from agent_contract.streaming import call_pieces, text_pieces

from .messages import completion_to_response, finish_fields, from_pydantic_messages

__all__ = ["MODEL_NAME", "contract_model", "tool_definitions"]

MODEL_NAME: Final = "agent-contract"
"""The ``model_name`` of the wrapped model's responses."""


def tool_definitions(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    """PydanticAI tool definitions as the contract's JSON tool definitions
    (``{"type": "function", "function": {name, description, parameters}}``)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.parameters_json_schema,
            },
        }
        for tool in tools
    ]


def _complete(model: Model, messages: list[ModelMessage], info: AgentInfo) -> Completion:
    offered = tool_definitions([*info.function_tools, *info.output_tools])
    completion = model.complete(from_pydantic_messages(messages), tools=offered or None)
    if not isinstance(completion, Completion):
        raise ModelError(f"model returned {type(completion).__name__}, not a Completion")
    return completion


def _json_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=repr)


def _argument_pieces(
    completion: Completion, chunk_chars: int | None, interleave: bool
) -> list[tuple[int, str]]:
    """The ``(call index, piece)`` of the completion's JSON argument texts, in stream
    order: pieces of ``chunk_chars`` (:func:`~agent_contract.streaming.call_pieces`),
    or, without it, each text in two halves (the first may be empty)."""
    texts = [_json_arguments(call.arguments) for call in completion.tool_calls]
    if chunk_chars is not None:
        return call_pieces(texts, chunk_chars, interleave=interleave)
    return [
        (index, part)
        for index, text in enumerate(texts)
        for part in (text[: len(text) // 2], text[len(text) // 2 :])
    ]


class _FinishingFunctionModel(FunctionModel):
    """A ``FunctionModel`` whose streamed responses carry the completion's finish reason
    and refusal as a provider's do (``FunctionModel`` streams leave them ``None``): the
    stream function files its completion under the request's message list, read here
    once the stream has started (its first item computes the completion)."""

    finishing: dict[int, Completion]
    """The completions of streams under way, by ``id()`` of their message list."""

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """``FunctionModel.request_stream`` with the finish reason filled in."""
        async with super().request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as streamed:
            completion = self.finishing.pop(id(messages), None)
            if completion is not None:
                finish, details = finish_fields(completion)
                streamed.finish_reason = finish  # type: ignore[assignment]  # PydanticAI's value
                streamed.provider_details = details
            yield streamed


def contract_model(
    model: Model,
    *,
    model_name: str = MODEL_NAME,
    chunk_chars: int | None = None,
    interleave_calls: bool = False,
) -> FunctionModel:
    """``model`` as a PydanticAI ``FunctionModel`` (non-streamed and streamed paths).

    Args:
        model: any agent-contract model (``FakeModel``, ``DemoModel``, a provider of yours).
        model_name: the name PydanticAI reports for it.
        chunk_chars: when streaming, the characters per piece of the reply's text and
            of each call's JSON argument text (:mod:`agent_contract.streaming`: the
            pieces join to exactly what the model sent); ``None`` (the default): the
            text whole, each call's arguments in two halves.
        interleave_calls: when streaming, the calls' argument pieces by turns (call 0,
            call 1, call 0, ...), each delta keyed by its call's index.

    Returns:
        A ``FunctionModel``. It raises :class:`~agent_contract.errors.ModelError` when
        ``model`` returns something that is not a Completion.
    """

    def function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return completion_to_response(_complete(model, messages, info), model_name=model_name)

    async def stream_function(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        completion = _complete(model, messages, info)
        finishing[id(messages)] = completion
        if completion.text:
            for piece in text_pieces(completion.text, chunk_chars):
                yield piece
        calls = completion.tool_calls
        started: set[int] = set()
        for index, piece in _argument_pieces(completion, chunk_chars, interleave_calls):
            if index in started:
                yield {index: DeltaToolCall(json_args=piece)}
            else:  # a call's first piece carries its name and id
                started.add(index)
                call = calls[index]
                yield {
                    index: DeltaToolCall(
                        name=call.name, json_args=piece, tool_call_id=call.id or None
                    )
                }
        if not completion.text and not completion.tool_calls:
            yield ""

    finishing: dict[int, Completion] = {}
    built = _FinishingFunctionModel(
        function, stream_function=stream_function, model_name=model_name
    )
    built.finishing = finishing
    return built
