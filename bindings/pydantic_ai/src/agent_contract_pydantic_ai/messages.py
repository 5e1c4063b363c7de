"""Messages across the boundary: PydanticAI's ``ModelMessage`` list <-> the contract's
:class:`~agent_contract.messages.Message` list, and ``ModelResponse`` <->
:class:`~agent_contract.messages.Completion`.

PydanticAI keeps a conversation as alternating ``ModelRequest`` (system and user prompts,
tool returns, retry prompts) and ``ModelResponse`` (text and tool-call parts). The
mapping, both ways:

- ``SystemPromptPart`` <-> ``system``; ``UserPromptPart`` <-> ``user`` (the text of a
  multi-part prompt, joined);
- ``ToolReturnPart`` <-> ``tool``, bound by ``tool_call_id``: an ``outcome`` other than
  ``success`` (``failed``, ``retried``, ``denied``, ``interrupted``) is status ``error``;
  a ``RetryPromptPart`` about a tool (PydanticAI before 2.17, and its unknown-tool
  answer) is an ``error`` tool message, one about the output is a ``user`` turn, as is a
  ``RetryFeedbackPart``;
- ``ModelResponse`` <-> ``assistant``: its text parts joined are the content, its
  ``ToolCallPart`` s the tool calls, the arguments kept as the model sent them (a string
  that is not JSON stays a string, so the contract sees it and refuses it; an empty
  string is no arguments, ``{}``, as on every harness);
- its finish reason: the provider's own value when the model kept it
  (``provider_details["finish_reason"]``: OpenAI's ``finish_reason``, Anthropic's
  ``stop_reason``), else PydanticAI's normalized ``finish_reason``; a refusal from
  ``provider_details["refusal"]`` (OpenAI's refusal text, Anthropic's explanation) or
  the raw reason ``refusal`` (PydanticAI reports both as ``content_filter``).

An empty ``tool_call_id`` is no id at all (PydanticAI's own ``guard_tool_call_id`` reads it
so): the contract sees ``None`` and refuses the call as ``missing_call_id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from agent_contract.messages import Completion, Message, TokenUsage, ToolCall
from agent_contract.results import ToolResult
from agent_contract.text import exact_snapshot

__all__ = [
    "ERROR_OUTCOMES",
    "ConvertedHistory",
    "completion_to_response",
    "finish_fields",
    "from_pydantic",
    "from_pydantic_messages",
    "response_to_completion",
    "to_pydantic_messages",
    "tool_return_part",
    "wire_arguments",
]

ERROR_OUTCOMES: Final = frozenset({"failed", "retried", "denied", "interrupted"})
"""``ToolReturnPart.outcome`` values that are an error tool message."""

_FEEDBACK_PARTS: tuple[type[Any], ...] = ()
"""Feedback that is not about a tool call (``RetryFeedbackPart``, PydanticAI 2.17+)."""
try:
    from pydantic_ai.messages import RetryFeedbackPart

    _FEEDBACK_PARTS = (RetryFeedbackPart,)
except ImportError:  # pragma: no cover - older releases send RetryPromptPart only
    pass


def _text(content: Any) -> str:
    """The text of a prompt's content: a string, or the text items of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "".join(item if isinstance(item, str) else "" for item in content)
    return str(content)


def _tool_content(part: ToolReturnPart) -> str:
    content = part.content
    if isinstance(content, str):
        return content
    return part.model_response_str()


def _request_messages(request: ModelRequest) -> list[Message]:
    out: list[Message] = []
    for part in request.parts:
        if isinstance(part, SystemPromptPart):
            out.append(Message(role="system", content=part.content))
        elif isinstance(part, UserPromptPart):
            out.append(Message(role="user", content=_text(part.content)))
        elif isinstance(part, ToolReturnPart):
            outcome = getattr(part, "outcome", "success")
            out.append(
                Message(
                    role="tool",
                    content=_tool_content(part),
                    tool_call_id=part.tool_call_id,
                    name=part.tool_name,
                    status="error" if outcome in ERROR_OUTCOMES else "success",
                )
            )
        elif isinstance(part, RetryPromptPart):
            if part.tool_name is not None and part.tool_call_id:
                out.append(
                    Message(
                        role="tool",
                        content=part.model_response(),
                        tool_call_id=part.tool_call_id,
                        name=part.tool_name,
                        status="error",
                    )
                )
            else:
                out.append(Message(role="user", content=part.model_response()))
        elif isinstance(part, _FEEDBACK_PARTS):
            out.append(Message(role="user", content=part.model_response()))
        # Other parts (instructions, availability notes) are no turn of their own.
    return out


_TO_PYDANTIC_FINISH: Final[dict[str, str]] = {
    "stop": "stop",
    "tool_calls": "tool_call",
    "length": "length",
    "paused": "stop",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}
"""The contract's :data:`~agent_contract.messages.FinishReason` -> PydanticAI's
``FinishReason`` (``other`` has none)."""


def _finish(response: ModelResponse) -> tuple[str, str | None]:
    """``(finish_reason, refusal)`` of ``response`` (see the module doc)."""
    details = response.provider_details or {}
    raw = details.get("finish_reason")
    finish = raw if isinstance(raw, str) and raw else response.finish_reason
    refusal = details.get("refusal")
    if not isinstance(refusal, str) or not refusal:
        refusal = None
    return finish or "", refusal


def response_to_completion(response: ModelResponse) -> Completion:
    """The contract's view of one model response (see the module doc).

    Thinking and provider-native parts are left out: only text and function-tool calls
    are a response's shape.
    """
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = tuple(
        ToolCall(
            id=part.tool_call_id or None,
            name=part.tool_name,
            arguments={} if part.args is None or part.args == "" else part.args,
        )
        for part in response.parts
        if isinstance(part, ToolCallPart)
    )
    usage = response.usage
    finish, refusal = _finish(response)
    return Completion(
        text=text,
        tool_calls=calls,
        finish_reason=finish or ("tool_calls" if calls else "stop"),
        usage=TokenUsage(
            input_tokens=int(usage.input_tokens or 0), output_tokens=int(usage.output_tokens or 0)
        ),
        refusal=refusal,
    )


def from_pydantic(message: ModelMessage) -> list[Message]:
    """One PydanticAI message as contract messages (a request may hold several turns)."""
    if isinstance(message, ModelResponse):
        completion = response_to_completion(message)
        return [
            Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls)
        ]
    return _request_messages(message)


def from_pydantic_messages(messages: Sequence[ModelMessage]) -> list[Message]:
    """A PydanticAI history as the contract's transcript, oldest first."""
    return [m for message in messages for m in from_pydantic(message)]


def _read(message: ModelMessage) -> tuple[Any, ...]:
    """What :func:`from_pydantic` reads of ``message``: its class and, part by part, the
    part's class and its whole field dict (live, not copied).

    Raises:
        TypeError: a part has no field dict (a slotted part): never remembered.
    """
    return (type(message), [(type(part), vars(part)) for part in message.parts])


def _snapshot(message: ModelMessage) -> tuple[Any, ...] | None:
    """An exact copy of :func:`_read` (:func:`~agent_contract.text.exact_snapshot`: an
    edit of ``1`` to ``True`` is a change), or ``None`` when it cannot be taken."""
    try:
        kind, parts = _read(message)
        return (kind, [(part_kind, exact_snapshot(fields)) for part_kind, fields in parts])
    except Exception:  # noqa: BLE001 - unreadable or uncopyable: converted every time
        return None


class ConvertedHistory:
    """One run's PydanticAI history as the contract's transcript, converting only the
    messages that are new or changed since the last call (the framework hands the whole
    history to every model request: converting all of it made a step's cost grow with
    the run).

    A message is taken over when it is the very object converted before (identity; the
    cache holds it, so its ``id`` is not reused) and an exact copy of everything the
    conversion read of it, taken then, still compares equal to it now (every part's
    class and field dict: an edit in place, a part added or replaced, an argument edited
    from ``1`` to ``True`` are each seen, and the message converted again). Anything
    else is converted. What a call returns equals ``from_pydantic_messages(messages)``.

    Not thread-safe: one per run (a run's model requests come one at a time).
    """

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ModelMessage, tuple[Any, ...], list[Message]]] = {}
        """By ``id`` of a message of the last call: it, its snapshot, its conversion."""

    def convert(self, messages: Sequence[ModelMessage]) -> list[Message]:
        """``from_pydantic_messages(messages)``, a message converted before taken over
        (see the class doc). A new list each call; entries of messages no longer in the
        history are dropped.

        Raises:
            Exception: whatever the conversion raises (the cache is left as it was).
        """
        known = self._by_id
        kept: dict[int, tuple[ModelMessage, tuple[Any, ...], list[Message]]] = {}
        out: list[Message] = []
        for message in messages:
            entry = known.get(id(message))
            if entry is not None and entry[0] is message:
                try:
                    same = entry[1] == _read(message)
                except Exception:  # noqa: BLE001 - a comparison that raises: convert again
                    same = False
                if same:
                    kept[id(message)] = entry
                    out += entry[2]
                    continue
            converted = from_pydantic(message)
            snapshot = _snapshot(message)
            if snapshot is not None:
                kept[id(message)] = (message, snapshot, converted)
            out += converted
        self._by_id = kept
        return out


def wire_arguments(arguments: Any) -> str | dict[str, Any]:
    """Arguments as a ``ToolCallPart`` carries them: a dict or a string as they are,
    anything else (a list, a number) as its JSON text, so the contract still sees what
    the model sent and refuses it."""
    if isinstance(arguments, dict | str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=repr)


def completion_to_response(
    completion: Completion, *, model_name: str | None = None
) -> ModelResponse:
    """A contract :class:`Completion` as a ``ModelResponse``.

    A call without an id keeps an empty ``tool_call_id`` (left out, PydanticAI would make
    one up), so the contract sees that the model sent none. The finish reason is kept
    as a provider keeps it (:func:`finish_fields`).
    """
    parts: list[ModelResponsePart] = []
    if completion.text:
        parts.append(TextPart(content=completion.text))
    for call in completion.tool_calls:
        parts.append(
            ToolCallPart(
                tool_name=call.name,
                args=wire_arguments(call.arguments),
                tool_call_id=call.id or "",
            )
        )
    usage = RequestUsage(
        input_tokens=completion.usage.input_tokens, output_tokens=completion.usage.output_tokens
    )
    finish_reason, details = finish_fields(completion)
    return ModelResponse(
        parts=parts,
        usage=usage,
        model_name=model_name,
        finish_reason=finish_reason,  # type: ignore[arg-type]  # one of PydanticAI's values
        provider_details=details,
    )


def finish_fields(completion: Completion) -> tuple[str | None, dict[str, Any] | None]:
    """``(finish_reason, provider_details)`` of a ``ModelResponse`` for ``completion``,
    as PydanticAI's provider models fill them: the normalized reason, and the provider's
    own value under ``provider_details["finish_reason"]`` (with the refusal text under
    ``"refusal"``)."""
    finish = completion.finish
    details: dict[str, Any] = {"finish_reason": completion.finish_reason}
    if completion.refusal is not None:
        details["refusal"] = completion.refusal
    return _TO_PYDANTIC_FINISH.get(finish), details


def tool_return_part(result: ToolResult | Message) -> ToolReturnPart:
    """A ledger result (or a tool message) as the ``ToolReturnPart`` the model gets: the
    contract's content, bound to the call's id, ``outcome`` ``failed`` for an error."""
    if isinstance(result, ToolResult):
        result = result.to_message()
    return ToolReturnPart(
        tool_name=result.name or "",
        content=result.content,
        tool_call_id=result.tool_call_id or "",
        outcome="failed" if result.status == "error" else "success",
    )


def to_pydantic_messages(messages: Sequence[Message]) -> list[ModelMessage]:
    """The contract's transcript as a PydanticAI history: consecutive system, user and
    tool turns form one ``ModelRequest``; each assistant turn is a ``ModelResponse``."""
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    for message in messages:
        if message.role == "assistant":
            if pending:
                out.append(ModelRequest(parts=pending))
                pending = []
            completion = Completion(text=message.content, tool_calls=message.tool_calls)
            out.append(completion_to_response(completion))
        elif message.role == "system":
            pending.append(SystemPromptPart(content=message.content))
        elif message.role == "user":
            pending.append(UserPromptPart(content=message.content))
        else:
            pending.append(tool_return_part(message))
    if pending:
        out.append(ModelRequest(parts=pending))
    return out
