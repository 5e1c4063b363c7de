"""A LangChain chat model that is driven by any agent_contract :class:`Model`.

:class:`ContractChatModel` lets the scripted
:class:`~agent_contract.testing.FakeModel` (or any other ``Model``) stand in for a
provider under LangChain's ``create_agent``. It exists because LangChain's own fake
chat models cannot: they raise ``NotImplementedError`` from ``bind_tools`` (which
``create_agent`` calls whenever tools are given), drop tool calls when streamed,
and wrap around silently when their script runs out.

Design points, each pinned by a test:

- ``bind_tools`` only binds the OpenAI-format definitions; it never runs a tool.
- It streams natively (``_stream``/``_astream``), as the provider clients do: the
  reply's text in one ``AIMessageChunk``, then one chunk per tool call whose
  ``tool_call_chunks`` carry the raw argument text the model sent (so a cut or
  malformed argument text reaches the contract's streamed-argument judging,
  :mod:`~agent_contract_langchain.streamed`, as on ``ChatOpenAI``), then a last chunk
  (``chunk_position="last"``) with the finish reason and model name in
  ``response_metadata``, the usage (when the model reports any) and the refusal.
  With ``chunk_chars`` (and ``interleave_calls``) the text and each call's argument
  text come in pieces of that many characters that join to exactly what the model
  sent (the contract suite's ``stream`` extras use it).
  ``invoke``/``ainvoke`` without a streaming handler go through
  :meth:`ContractChatModel._generate`, unchanged.
- Message ids are deterministic and unique within a run:
  ``"ac-<transcript length>-<12 hex digits of a hash of the completion>"``.
- Malformed calls (no id, empty name, arguments that are not an object) go to
  ``AIMessage.invalid_tool_calls``, never to ``tool_calls`` with ``id=None``.
- Whatever the wrapped model raises (e.g. ``ScriptExhaustedError``) propagates.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Final

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from agent_contract.canonical import canonical_bytes
from agent_contract.errors import ConfigurationError, ModelError
from agent_contract.messages import Completion, TokenUsage
from agent_contract.model import Model
from agent_contract.streaming import call_pieces, text_pieces

from .messages import _REFUSAL_KEY, completion_to_ai_message, from_langchain_messages
from .streamed import argument_text

__all__ = ["ContractChatModel", "completion_chunks", "message_id_for"]

_LLM_TYPE: Final = "agent-contract"


def message_id_for(transcript_length: int, completion: Completion) -> str:
    """The deterministic AIMessage id for ``completion`` answering a transcript.

    Shape: ``"ac-<transcript_length>-<first 12 hex digits of sha256>"`` over the
    completion's text, calls and finish reason. Each model step of a run sees a longer
    transcript, so ids are unique within a run (and within a thread that continues
    it); equal inputs give equal ids, so reruns are reproducible.
    """
    fields: dict[str, Any] = {
        "text": completion.text,
        "tool_calls": [c.to_dict() for c in completion.tool_calls],
        "finish_reason": completion.finish_reason,
    }
    if completion.refusal is not None:
        fields["refusal"] = completion.refusal
    payload = canonical_bytes(
        fields
    )  # never raises: lone surrogates and non-JSON arguments get a tagged form
    digest = hashlib.sha256(payload).hexdigest()[:12]
    return f"ac-{transcript_length}-{digest}"


def _cut_at_stop(completion: Completion, stop: Sequence[str] | None) -> Completion:
    """``completion`` with its text cut before the earliest occurrence of any
    non-empty sequence in ``stop`` (finish reason ``"stop"`` when cut); unchanged when
    no sequence occurs."""
    positions = [completion.text.find(s) for s in stop or () if s]
    found = [p for p in positions if p >= 0]
    if not found:
        return completion
    return replace(completion, text=completion.text[: min(found)], finish_reason="stop")


class ContractChatModel(BaseChatModel):
    """A ``BaseChatModel`` whose replies come from an agent_contract ``Model``.

    Example::

        from langchain.agents import create_agent
        from agent_contract.testing import FakeModel, tool_call

        model = ContractChatModel(model=FakeModel([tool_call("add", {"a": 1}), "2"]))
        agent = create_agent(model, tools=[add])

    Per-call keyword arguments read by :meth:`_generate` (usually bound with
    :meth:`bind_tools` or ``bind``): ``tools`` (OpenAI-format definitions, passed to
    ``Model.complete``), ``max_output_tokens`` or ``max_tokens``, ``temperature``.
    ``tool_choice`` is recorded by the binding but has no counterpart in the
    ``Model`` protocol: the wrapped model decides. Other keyword arguments are
    ignored.

    Raises:
        ConfigurationError: at construction, ``model`` has no ``complete`` method.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: Any
    """The agent_contract :class:`~agent_contract.model.Model` that answers."""
    model_name: str = "agent-contract-scripted"
    """The model's name, as LangChain reads it (``create_agent`` picks a structured
    output strategy by it; tracing reports it as ``ls_model_name``). Set
    ``profile={"structured_output": True}`` to have a bare ``response_format`` schema
    use the provider strategy (the wrapped model must then answer JSON text)."""
    max_output_tokens: int = 512
    """Default cap on the reply length, in tokens, passed to ``Model.complete``."""
    temperature: float = 0.0
    """Default sampling temperature passed to ``Model.complete``."""
    stop: list[str] | None = None
    """Default stop sequences: the reply's text is cut before the first of them."""
    chunk_chars: int | None = None
    """When streaming, the characters per chunk of the reply's text and of each call's
    argument text (:func:`agent_contract.streaming.text_pieces`); ``None`` (the default)
    sends the text in one chunk and each call in one chunk."""
    interleave_calls: bool = False
    """When streaming, send the calls' argument chunks by turns (call 0, call 1, call 0,
    ...), each carrying its call's ``index``, as OpenAI's stream may."""

    def __init__(self, **kwargs: Any) -> None:
        """Build the chat model; keyword arguments are the fields above.

        Raises:
            ConfigurationError: ``model`` does not implement the ``Model`` protocol.
        """
        # Checked before pydantic runs: a ValueError raised inside validation would be
        # wrapped in pydantic's ValidationError and lose its place in our error tree.
        if "model" in kwargs and not isinstance(kwargs["model"], Model):
            raise ConfigurationError(
                "ContractChatModel needs an agent_contract Model (an object with a "
                f"complete() method), got {type(kwargs['model']).__name__}"
            )
        super().__init__(**kwargs)

    @property
    def _llm_type(self) -> str:
        """``"agent-contract"``."""
        return _LLM_TYPE

    @property
    def _identifying_params(self) -> dict[str, Any]:
        """What identifies this model in traces: the wrapped model's type and defaults."""
        return {
            "model": type(self.model).__name__,
            "max_output_tokens": self.max_output_tokens,
            "temperature": self.temperature,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """The standard tracing parameters: provider ``agent_contract``, the model name,
        ``chat``, temperature, max tokens and stop sequences."""
        params = LangSmithParams(
            ls_provider="agent_contract",
            ls_model_name=str(kwargs.get("model") or self.model_name),
            ls_model_type="chat",
            ls_temperature=kwargs.get("temperature", self.temperature),
        )
        max_tokens = kwargs.get("max_tokens", kwargs.get("max_output_tokens"))
        params["ls_max_tokens"] = int(max_tokens or self.max_output_tokens)
        if stop:
            params["ls_stop"] = stop
        return params

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tool definitions to the model; nothing is executed.

        Args:
            tools: LangChain tools, functions, pydantic classes or tool dicts; each is
                converted with ``convert_to_openai_tool`` to
                ``{"type": "function", "function": {"name", "description",
                "parameters"}}``.
            tool_choice: recorded in the binding when not ``None``; the wrapped
                ``Model`` has no tool choice, so it does not change the reply.
            **kwargs: further keyword arguments to bind (e.g. ``max_tokens``).

        Returns:
            ``self.bind(tools=[...], ...)``: a runnable that calls this model with the
            definitions as the ``tools`` keyword argument.
        """
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _complete(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> Completion:
        """The wrapped model's completion for ``messages``, cut at the stop sequences
        (``stop``, else the ``stop`` field); the one model call of every entry point.

        Raises:
            ConfigurationError: a message has no agent_contract role.
            ModelError: the wrapped model returned something that is not a Completion.
        """
        transcript = from_langchain_messages(messages)
        max_output_tokens = kwargs.get(
            "max_output_tokens", kwargs.get("max_tokens", self.max_output_tokens)
        )
        temperature = kwargs.get("temperature", self.temperature)
        completion = self.model.complete(
            transcript,
            tools=kwargs.get("tools"),
            max_output_tokens=max_output_tokens,
            temperature=temperature,
        )
        if not isinstance(completion, Completion):
            raise ModelError(
                f"{type(self.model).__name__}.complete returned "
                f"{type(completion).__name__}, not a Completion"
            )
        return _cut_at_stop(completion, stop if stop is not None else self.stop)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Ask the wrapped model for one completion and return it as one AIMessage.

        ``stop`` (or the ``stop`` field) cuts the reply's text before the first
        occurrence of any stop sequence, as a provider stops generating there; the
        finish reason becomes ``"stop"`` when text was cut. Tool calls are kept.
        ``response_metadata["model_name"]`` is :attr:`model_name`.

        Raises:
            ConfigurationError: a message has no agent_contract role.
            ModelError: the wrapped model returned something that is not a Completion.
            Exception: anything the wrapped model raises propagates unchanged, e.g.
                :class:`~agent_contract.errors.ScriptExhaustedError`.
        """
        completion = self._complete(messages, stop, kwargs)
        message = completion_to_ai_message(
            completion, message_id=message_id_for(len(messages), completion)
        )
        message.response_metadata["model_name"] = self.model_name
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream one completion as the provider clients do (see the module doc):
        the chunks of :func:`completion_chunks`. langchain-core reports each to the
        callbacks (``on_llm_new_token``) and joins them into the AIMessage.

        Raises:
            The same as :meth:`_generate`, before the first chunk.
        """
        completion = self._complete(messages, stop, kwargs)
        yield from completion_chunks(
            completion,
            message_id_for(len(messages), completion),
            self.model_name,
            chunk_chars=self.chunk_chars,
            interleave=self.interleave_calls,
        )

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """:meth:`_stream` on the async path: the wrapped (synchronous) model is asked
        in the default executor, in a copy of this context; the chunks are yielded here.

        Raises:
            The same as :meth:`_generate`, before the first chunk.
        """
        context = contextvars.copy_context()
        call = functools.partial(context.run, self._complete, messages, stop, kwargs)
        completion = await asyncio.get_running_loop().run_in_executor(None, call)
        for chunk in completion_chunks(
            completion,
            message_id_for(len(messages), completion),
            self.model_name,
            chunk_chars=self.chunk_chars,
            interleave=self.interleave_calls,
        ):
            yield chunk


def completion_chunks(
    completion: Completion,
    message_id: str,
    model_name: str,
    *,
    chunk_chars: int | None = None,
    interleave: bool = False,
) -> Iterator[ChatGenerationChunk]:
    """``completion`` as the stream of chunks a provider client yields for it.

    In order, each an ``AIMessageChunk`` with id ``message_id``: the text (when there is
    any), in pieces of ``chunk_chars`` characters (``None``: one chunk); each tool call's
    argument text as sent (:func:`~agent_contract_langchain.streamed.argument_text`), in
    pieces of ``chunk_chars`` (:func:`agent_contract.streaming.call_pieces`: call by call
    in the order the model issued them, or by turns with ``interleave``), one
    ``tool_call_chunks`` entry per chunk carrying the call's ``index`` (its position), the
    first piece of a call also its id and name, so the pieces join (by index) to exactly
    the text the model sent; a last chunk
    (``chunk_position="last"``) with ``response_metadata`` ``{"finish_reason",
    "model_name"}``, the usage when the completion reports any tokens, and the refusal
    text in ``additional_kwargs["refusal"]``. Every field that langchain-core's chunk
    merge would concatenate is set in one chunk only.

    Raises:
        ConfigurationError: a call's arguments cannot be written as JSON.
    """
    if completion.text:
        for piece in text_pieces(completion.text, chunk_chars):
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message_id))
    calls = completion.tool_calls
    texts = [argument_text(call.arguments) for call in calls]
    started: set[int] = set()
    for index, piece in call_pieces(texts, chunk_chars, interleave=interleave):
        first = index not in started
        started.add(index)
        part = tool_call_chunk(
            name=calls[index].name if first else None,
            args=piece,
            id=calls[index].id if first else None,
            index=index,
        )
        yield ChatGenerationChunk(
            message=AIMessageChunk(content="", id=message_id, tool_call_chunks=[part])
        )
    usage: UsageMetadata | None = None
    if completion.usage != TokenUsage():
        usage = {
            "input_tokens": completion.usage.input_tokens,
            "output_tokens": completion.usage.output_tokens,
            "total_tokens": completion.usage.input_tokens + completion.usage.output_tokens,
        }
    extra: dict[str, Any] = {}
    if completion.refusal is not None:
        extra[_REFUSAL_KEY] = completion.refusal
    yield ChatGenerationChunk(
        message=AIMessageChunk(
            content="",
            id=message_id,
            response_metadata={
                "finish_reason": completion.finish_reason,
                "model_name": model_name,
            },
            usage_metadata=usage,
            additional_kwargs=extra,
            chunk_position="last",
        )
    )
