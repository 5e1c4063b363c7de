"""Map agent_contract messages to LangChain messages and back.

The mapping is a translation, not a judgement: an assistant turn that carries both
text and tool calls, or a call with no id, is carried across faithfully so that the
contract's response validator (not this module) can refuse it.

Roles map one to one::

    Message(role="system")     <-> SystemMessage
    Message(role="user")       <-> HumanMessage
    Message(role="assistant")  <-> AIMessage
    Message(role="tool")       <-> ToolMessage(content, tool_call_id, name, status)

Tool calls on an assistant turn are split by LangChain into two lists (arguments that
are an empty string are no arguments, ``{}``, as ``ChatOpenAI`` and ``ChatAnthropic``
read them). A call is *well-formed* when its id is a non-empty ``str``, its name a non-empty ``str`` and its
arguments a ``dict``; those go to ``AIMessage.tool_calls``. Every other call goes to
``AIMessage.invalid_tool_calls`` with ``args`` holding the raw string the model sent
(or the JSON text of a non-string value such as a list) and ``error`` a short reason.

Splitting loses the order in which the model issued the calls, so
:func:`to_langchain` records it under :data:`CALL_ORDER_KEY` in
``AIMessage.additional_kwargs`` (only when there is at least one invalid call; with
valid calls alone the order is that of ``tool_calls``). :func:`from_langchain` uses
the marker to restore the original interleaving and the exact arguments; without it
(an AIMessage made elsewhere) valid calls come first, then invalid ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages import ToolCall as LCToolCall
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Completion, Message, TokenUsage, ToolCall
from agent_contract.text import escape_value

from ._memo import memoized, memoized_all

__all__ = [
    "CALL_ORDER_KEY",
    "ESCAPED_KEY",
    "ai_message_to_completion",
    "completion_to_ai_message",
    "escaped_ai_message",
    "from_langchain",
    "from_langchain_messages",
    "is_well_formed",
    "to_langchain",
    "to_langchain_messages",
    "tool_message_value",
    "unbuilt_reply",
    "with_judged_calls",
    "with_streamed_arguments",
]

CALL_ORDER_KEY: Final = "agent_contract_call_order"
"""Key in ``AIMessage.additional_kwargs`` holding the original call order.

Its value is a list with one entry per call, in the order the model issued them:

- ``"tool_call"``: the next entry of ``AIMessage.tool_calls``;
- ``"invalid_tool_call:str"``: the next entry of ``invalid_tool_calls``, whose
  ``args`` is the raw string the model sent;
- ``"invalid_tool_call:json"``: the next entry of ``invalid_tool_calls``, whose
  ``args`` is the JSON text of a non-string value (a list, a number, ``None``...).
"""

ESCAPED_KEY: Final = "agent_contract_escaped_chars"
"""Key in a message's ``additional_kwargs`` carrying :attr:`Message.escaped_chars` (how
many lone surrogates the text rule escaped in it), so a count survives the graph state."""

_READ_KEYS: Final = (ESCAPED_KEY, CALL_ORDER_KEY)  # the additional_kwargs a conversion reads
_VALID: Final = "tool_call"
_INVALID_STR: Final = "invalid_tool_call:str"
_INVALID_JSON: Final = "invalid_tool_call:json"

_FINISH_REASON_KEYS: Final = ("finish_reason", "stop_reason")
"""Where the provider clients put why the model stopped, in ``response_metadata``:
``ChatOpenAI`` (and this binding's chat model) under ``finish_reason``, ``ChatAnthropic``
under ``stop_reason``."""
_REFUSAL_KEY: Final = "refusal"
"""``ChatOpenAI`` puts OpenAI's ``message.refusal`` text in ``additional_kwargs`` here."""


def _finish_reason(message: AIMessage) -> str | None:
    """The provider's finish reason of ``message`` (first of :data:`_FINISH_REASON_KEYS`
    that holds a non-empty str), else ``None``."""
    for key in _FINISH_REASON_KEYS:
        value = message.response_metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _refusal(message: AIMessage) -> str | None:
    """The refusal text ``message`` carries: ``additional_kwargs["refusal"]`` (OpenAI's
    ``message.refusal``, as ``ChatOpenAI`` reads it) or the text of its ``refusal``
    content blocks (the Responses API shape); ``None`` when it carries none."""
    text = message.additional_kwargs.get(_REFUSAL_KEY)
    if isinstance(text, str) and text:
        return text
    if isinstance(message.content, list):
        parts = [
            str(block.get("refusal") or "")
            for block in message.content
            if isinstance(block, dict) and block.get("type") == "refusal"
        ]
        if parts:
            return "".join(parts)
    return None


def is_well_formed(call: ToolCall) -> bool:
    """True when ``call`` fits ``AIMessage.tool_calls``.

    Well-formed means: ``id`` is a non-empty ``str``, ``name`` a non-empty ``str`` and
    ``arguments`` a ``dict``. Anything else is carried as an invalid tool call.
    """
    return (
        isinstance(call.id, str)
        and bool(call.id)
        and isinstance(call.name, str)
        and bool(call.name)
        and isinstance(call.arguments, dict)
    )


def _invalid_reason(call: ToolCall) -> str:
    """A short reason why ``call`` is not well-formed (for ``InvalidToolCall.error``)."""
    reasons = []
    if not call.id:
        reasons.append("missing id")
    if not call.name:
        reasons.append("empty name")
    if not isinstance(call.arguments, dict):
        reasons.append(f"arguments are a {type(call.arguments).__name__}, not a JSON object")
    return "; ".join(reasons)


def _json_text(value: Any) -> str:
    """``value`` as JSON text, non-ASCII kept; NaN and infinities as Python's ``json``
    writes them (``NaN``, ``Infinity``), so that a malformed call holding one maps back
    to the same value and is refused like on the offline loop, not crashed on.

    Raises:
        ConfigurationError: ``value`` cannot be written as JSON (e.g. a set).
    """
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"tool-call arguments of type {type(value).__name__} cannot be written as JSON"
        ) from exc


def _split_calls(
    calls: Sequence[ToolCall],
) -> tuple[list[LCToolCall], list[InvalidToolCall], list[str]]:
    """Split ``calls`` into LangChain's valid and invalid lists plus the order marker."""
    valid: list[LCToolCall] = []
    invalid: list[InvalidToolCall] = []
    order: list[str] = []
    for call in calls:
        if isinstance(call.arguments, str) and not call.arguments.strip():
            # no argument text is no arguments, as the provider clients read it
            call = ToolCall(id=call.id, name=call.name, arguments={})
        if is_well_formed(call):
            valid.append(tool_call(name=call.name, args=dict(call.arguments), id=call.id))
            order.append(_VALID)
        else:
            if isinstance(call.arguments, str):
                args, kind = call.arguments, _INVALID_STR
            else:
                args, kind = _json_text(call.arguments), _INVALID_JSON
            invalid.append(
                invalid_tool_call(
                    name=call.name, args=args, id=call.id, error=_invalid_reason(call)
                )
            )
            order.append(kind)
    return valid, invalid, order


def _decode_invalid_args(args: str | None, kind: str | None) -> Any:
    """Recover the arguments of an invalid call from its ``args`` text.

    ``kind`` comes from the order marker; ``None`` means a foreign message, for which
    the text is parsed and a non-dict result kept (a dict means the call was invalid
    for another reason, e.g. a missing id, and the dict is kept too); text that does
    not parse, or parses to a string, stays the text. ``args=None`` (no arguments sent) becomes ``""``.
    """
    if args is None:
        return ""
    if kind == _INVALID_STR:
        return args
    try:
        parsed = json.loads(args)
    except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
        return args
    # a JSON string stays the text it came as: decoded, JSON text of a JSON text
    # (``"{\"a\": 1}"``) would become the object's text and pass the contract's rule
    return args if isinstance(parsed, str) else parsed


def _join_calls(message: AIMessage) -> tuple[ToolCall, ...]:
    """The calls of ``message`` as agent_contract ToolCalls, in the original order."""
    valid = [
        ToolCall(id=tc.get("id"), name=tc.get("name") or "", arguments=tc.get("args", {}))
        for tc in message.tool_calls
    ]
    invalid_raw = list(message.invalid_tool_calls)
    order = _read_order(message, n_valid=len(valid), n_invalid=len(invalid_raw))
    if order is None:
        order = [_VALID] * len(valid) + [None] * len(invalid_raw)
    out: list[ToolCall] = []
    next_valid = iter(valid)
    next_invalid = iter(invalid_raw)
    for kind in order:
        if kind == _VALID:
            out.append(next(next_valid))
        else:
            itc = next(next_invalid)
            out.append(
                ToolCall(
                    id=itc.get("id"),
                    name=itc.get("name") or "",
                    arguments=_decode_invalid_args(itc.get("args"), kind),
                )
            )
    return tuple(out)


def _read_order(message: AIMessage, *, n_valid: int, n_invalid: int) -> list[str | None] | None:
    """The order marker of ``message`` if it is present and matches its call lists.

    A marker that does not match the lists (a middleware edited the calls after the
    marker was written) is ignored rather than trusted.
    """
    marker = message.additional_kwargs.get(CALL_ORDER_KEY)
    if not isinstance(marker, list) or not all(isinstance(k, str) for k in marker):
        return None
    kinds: list[str | None] = list(marker)
    if kinds.count(_VALID) != n_valid:
        return None
    if kinds.count(_INVALID_STR) + kinds.count(_INVALID_JSON) != n_invalid:
        return None
    if len(kinds) != n_valid + n_invalid:
        return None
    return kinds


def _text(content: str | list[str | dict[Any, Any]]) -> str:
    """The text of a LangChain content value: a string, or the text blocks joined."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def _ai_message(message: Message | Completion, **fields: Any) -> AIMessage:
    """An AIMessage holding the text and calls of ``message`` plus ``fields``."""
    text = message.text if isinstance(message, Completion) else message.content
    valid, invalid, order = _split_calls(message.tool_calls)
    extra: dict[str, Any] = {CALL_ORDER_KEY: order} if invalid else {}
    if isinstance(message, Message):
        extra.update(_escaped_kwargs(message))
    return AIMessage(
        content=text,
        tool_calls=valid,
        invalid_tool_calls=invalid,
        additional_kwargs=extra,
        **fields,
    )


def to_langchain(message: Message) -> BaseMessage:
    """Translate one agent_contract message into the LangChain message of its role.

    Shapes: ``system`` -> SystemMessage, ``user`` -> HumanMessage, ``assistant`` ->
    AIMessage (calls split as described in the module docstring), ``tool`` ->
    ToolMessage. ``Message.name`` becomes the LangChain ``name``. No message id is set.

    Raises:
        ConfigurationError: the message is not a :class:`Message`, or an invalid
            call's arguments cannot be written as JSON.
    """
    if not isinstance(message, Message):
        raise ConfigurationError(f"expected an agent_contract Message, got {type(message)!r}")
    extra = _escaped_kwargs(message)
    if message.role == "system":
        return SystemMessage(content=message.content, name=message.name, additional_kwargs=extra)
    if message.role == "user":
        return HumanMessage(content=message.content, name=message.name, additional_kwargs=extra)
    if message.role == "assistant":
        return _ai_message(message, name=message.name)
    # role == "tool"; Message.__post_init__ guarantees tool_call_id and status.
    return ToolMessage(
        content=message.content,
        tool_call_id=message.tool_call_id,
        name=message.name,
        status=message.status,
        additional_kwargs=extra,
    )


def _escaped_kwargs(message: Message) -> dict[str, Any]:
    """``{ESCAPED_KEY: n}`` when the text rule escaped ``n > 0`` surrogates in it."""
    return {ESCAPED_KEY: message.escaped_chars} if message.escaped_chars else {}


def _escaped_count(message: BaseMessage) -> int:
    """The :data:`ESCAPED_KEY` count a message carries (0 when absent or malformed)."""
    count = message.additional_kwargs.get(ESCAPED_KEY, 0)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def from_langchain(message: BaseMessage) -> Message:
    """Translate one LangChain message into an agent_contract :class:`Message`.

    List content (content blocks) becomes the concatenation of its text blocks; other
    blocks (images, reasoning, provider tool-use blocks) are dropped. AIMessage calls
    are restored in their original order when the :data:`CALL_ORDER_KEY` marker is
    present and consistent, otherwise valid calls come first. Subclasses (e.g.
    ``AIMessageChunk``) map like their base class. The text rule applies (a lone
    surrogate is escaped, see :class:`~agent_contract.messages.Message`), and an
    :data:`ESCAPED_KEY` count is carried over.

    Raises:
        ConfigurationError: the message type has no agent_contract role (e.g.
            ``ChatMessage``, ``FunctionMessage``, ``RemoveMessage``), or its fields
            do not make a valid Message (e.g. a ToolMessage with an empty
            ``tool_call_id``).
    """
    if not isinstance(message, BaseMessage):
        raise ConfigurationError(f"expected a LangChain BaseMessage, got {type(message)!r}")
    return memoized(message, _READ_KEYS, _convert)


def _convert(message: BaseMessage) -> Message:  # from_langchain without the memo
    text = _text(message.content)
    escaped = _escaped_count(message)
    if isinstance(message, SystemMessage):
        return Message(role="system", content=text, name=message.name, escaped_chars=escaped)
    if isinstance(message, HumanMessage):
        return Message(role="user", content=text, name=message.name, escaped_chars=escaped)
    if isinstance(message, AIMessage):
        return Message(
            role="assistant",
            content=text,
            tool_calls=_join_calls(message),
            name=message.name,
            escaped_chars=escaped,
        )
    if isinstance(message, ToolMessage):
        return Message(
            role="tool",
            content=text,
            tool_call_id=message.tool_call_id,
            name=message.name,
            status=message.status,
            escaped_chars=escaped,
        )
    raise ConfigurationError(
        f"no agent_contract role for LangChain message type {type(message).__name__!r}; "
        "expected SystemMessage, HumanMessage, AIMessage or ToolMessage"
    )


def escaped_ai_message(message: AIMessage) -> AIMessage:
    """``message`` with the text rule applied: when its text, calls or arguments hold a
    lone surrogate, a copy holding the escaped text (see
    :class:`~agent_contract.messages.Message`) and the :data:`ESCAPED_KEY` count, with
    its id and metadata kept; otherwise ``message`` itself. What a checkpoint stores is
    then the same text the offline transcript holds (LangGraph's serializer would turn
    each surrogate into ``?``).
    """
    escaped = from_langchain(message)
    if escaped.escaped_chars == _escaped_count(message):
        return message
    twin = _ai_message(escaped)
    return message.model_copy(
        update={
            "content": twin.content,
            "tool_calls": twin.tool_calls,
            "invalid_tool_calls": twin.invalid_tool_calls,
            "additional_kwargs": {**message.additional_kwargs, **twin.additional_kwargs},
        }
    )


def to_langchain_messages(messages: Iterable[Message]) -> list[BaseMessage]:
    """:func:`to_langchain` of each message, order kept (raises as :func:`to_langchain`)."""
    return [to_langchain(m) for m in messages]


def from_langchain_messages(messages: Iterable[BaseMessage]) -> list[Message]:
    """:func:`from_langchain` applied to each message, order kept (raises ConfigurationError
    as :func:`from_langchain` does)."""
    return memoized_all(messages, _READ_KEYS, from_langchain)


def completion_to_ai_message(completion: Completion, *, message_id: str) -> AIMessage:
    """The AIMessage a chat model returns for ``completion``.

    Shape: ``content`` = ``completion.text``; calls split as in :func:`to_langchain`;
    ``id`` = ``message_id``; ``usage_metadata`` = input/output/total tokens;
    ``response_metadata["finish_reason"]`` = ``completion.finish_reason``; a
    ``completion.refusal`` in ``additional_kwargs["refusal"]`` (where ``ChatOpenAI``
    puts OpenAI's).

    Raises:
        ConfigurationError: ``completion`` is not a Completion, ``message_id`` is not
            a non-empty str, or an invalid call's arguments cannot be written as JSON.
    """
    if not isinstance(completion, Completion):
        raise ConfigurationError(f"expected a Completion, got {type(completion)!r}")
    if not isinstance(message_id, str) or not message_id:
        raise ConfigurationError("message_id must be a non-empty str")
    usage = completion.usage
    usage_metadata: UsageMetadata = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    message = _ai_message(
        completion,
        id=message_id,
        usage_metadata=usage_metadata,
        response_metadata={"finish_reason": completion.finish_reason},
    )
    if completion.refusal is not None:
        message.additional_kwargs[_REFUSAL_KEY] = completion.refusal
    return message


def ai_message_to_completion(message: AIMessage) -> Completion:
    """The :class:`Completion` that ``message`` stands for (inverse of the above).

    ``finish_reason`` is the provider's value as it came: ``response_metadata
    ["finish_reason"]`` (``ChatOpenAI``: ``stop``, ``length``, ``tool_calls``,
    ``content_filter``) or ``["stop_reason"]`` (``ChatAnthropic``: ``end_turn``,
    ``max_tokens``, ``tool_use``, ``refusal``, ...), else ``"tool_calls"`` when there are
    calls and ``"stop"`` otherwise (the core maps it:
    :func:`~agent_contract.messages.finish_reason_of`). ``refusal`` is OpenAI's refusal
    text (``additional_kwargs["refusal"]``, or ``refusal`` content blocks). Token usage
    comes from ``usage_metadata`` when present, else zero.

    Raises:
        ConfigurationError: ``message`` is not an AIMessage, or its usage counts are
            not ints >= 0.
    """
    if not isinstance(message, AIMessage):
        raise ConfigurationError(f"expected an AIMessage, got {type(message)!r}")
    calls = _join_calls(message)
    finish = _finish_reason(message) or ("tool_calls" if calls else "stop")
    meta = message.usage_metadata
    usage = (
        TokenUsage(input_tokens=meta["input_tokens"], output_tokens=meta["output_tokens"])
        if meta is not None
        else TokenUsage()
    )
    return Completion(
        text=_text(message.content),
        tool_calls=calls,
        finish_reason=finish,
        usage=usage,
        refusal=_refusal(message),
    )


def tool_message_value(content: str | list[str | dict[Any, Any]]) -> Any:
    """The value of a tool's ToolMessage ``content`` as the model reads it, for the
    contract's result: a list of text content blocks (what an MCP tool of
    langchain-mcp-adapters returns: ``[{"type": "text", "text": ..., "id": "lc_<uuid>"}]``)
    is its text, joined, as a plain ``create_agent`` passes it; in any other list of
    blocks, LangChain's random per-call block ``id`` (``lc_...``) is dropped, so the
    serialized result is the same on every run. A string, or a list of plain values (a
    tool that returned ``["mug", "tee"]``), is returned unchanged."""
    if not isinstance(content, list) or not content:
        return content
    blocks = [b for b in content if isinstance(b, dict) and isinstance(b.get("type"), str)]
    if len(blocks) != len(content):
        return content
    if all(b["type"] == "text" and isinstance(b.get("text"), str) for b in blocks):
        return "".join(b["text"] for b in blocks)
    return [
        {k: v for k, v in b.items() if not (k == "id" and str(v).startswith("lc_"))} for b in blocks
    ]


def _sent_as(text: str, args: Any) -> bool:
    """True when the raw argument ``text`` says ``args``: it parses as JSON to an equal
    value, or is blank and ``args`` is ``{}`` (no arguments, as every client reads it)."""
    if not text.strip():
        return bool(args == {})
    try:
        parsed: Any = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return bool(parsed == args)


def with_streamed_arguments(message: AIMessage, raw: Mapping[str, str]) -> AIMessage:
    """``message`` with each call's arguments as the model streamed them.

    ``raw`` maps call ids to the joined argument text of the streamed chunks
    (:class:`~agent_contract_langchain.streamed.StreamedCalls`). A valid call whose
    parsed ``args`` are not what its raw text says (langchain-core closed a cut or broken
    JSON text) moves to ``invalid_tool_calls`` with that text as its ``args``, as the
    unstreamed client leaves a call whose arguments do not parse; the call order is kept
    under :data:`CALL_ORDER_KEY`. Returns ``message`` itself when every call is as sent.
    """
    moved = [
        isinstance(tc.get("id"), str)
        and tc.get("id") in raw
        and not _sent_as(raw[tc["id"] or ""], tc.get("args"))
        for tc in message.tool_calls
    ]
    if not any(moved):
        return message
    valid: list[LCToolCall] = []
    invalid: list[InvalidToolCall] = []
    order: list[str] = []
    for tc, cut in zip(message.tool_calls, moved, strict=True):
        if cut:
            invalid.append(
                invalid_tool_call(
                    name=tc.get("name"),
                    args=raw[tc.get("id") or ""],
                    id=tc.get("id"),
                    error="the streamed arguments are not valid JSON",
                )
            )
            order.append(_INVALID_STR)
        else:
            valid.append(tc)
            order.append(_VALID)
    known = _read_order(
        message, n_valid=len(message.tool_calls), n_invalid=len(message.invalid_tool_calls)
    )
    kinds = [k for k in known or [] if k != _VALID] or [_INVALID_JSON] * len(
        message.invalid_tool_calls
    )
    order.extend(k or _INVALID_JSON for k in kinds)
    return message.model_copy(
        update={
            "tool_calls": valid,
            "invalid_tool_calls": [*invalid, *message.invalid_tool_calls],
            "additional_kwargs": {**message.additional_kwargs, CALL_ORDER_KEY: order},
        }
    )


def with_judged_calls(message: AIMessage, calls: Sequence[ToolCall]) -> AIMessage:
    """``message`` with every call in ``AIMessage.tool_calls``, its arguments the object
    the contract judged them to be.

    ``calls`` are the calls of a ``tool_calls`` verdict
    (:func:`~agent_contract.runtime.response.validate_response`: each has an id, a name
    and arguments normalized to a dict), in issue order. A call whose arguments came as
    JSON text holding an object (what :class:`~agent_contract_langchain.chat_model.
    ContractChatModel` carries as the model sent it, in ``invalid_tool_calls``) is
    accepted by the contract's rule, as on every other harness; ``create_agent`` runs
    only ``tool_calls``, so the message must hold it there. Returns ``message`` itself
    when its ``tool_calls`` already are ``calls`` and it has no invalid call. The
    calls are written with the text rule applied (a lone surrogate escaped, as in every
    :class:`~agent_contract.messages.Message`), so a real client can encode the next
    request.

    Raises:
        ConfigurationError: a call is not well-formed (:func:`is_well_formed`): such a
            call is never a ``tool_calls`` verdict's.
    """
    if not all(is_well_formed(c) for c in calls):
        raise ConfigurationError("only well-formed calls are judged runnable")
    # The text rule, as in every Message: the graph state (and so the next request a
    # real client encodes) holds escaped text, never a lone surrogate.
    wanted = [
        tool_call(name=name, args=args, id=call_id)
        for (call_id, name, args), _ in (
            escape_value((c.id, c.name, dict(c.arguments))) for c in calls
        )
    ]
    if not message.invalid_tool_calls and list(message.tool_calls) == wanted:
        return message
    kwargs = {k: v for k, v in message.additional_kwargs.items() if k != CALL_ORDER_KEY}
    return message.model_copy(
        update={"tool_calls": wanted, "invalid_tool_calls": [], "additional_kwargs": kwargs}
    )


def unbuilt_reply(exc: BaseException) -> str | None:
    """Why a provider client could not build the ``AIMessage`` of a reply, when ``exc``
    says its calls' arguments are not a JSON object, else ``None``.

    ``ChatOpenAI`` parses unstreamed arguments that are a JSON list (or number) and
    then fails to build the message (a pydantic ``ValidationError`` at
    ``tool_calls.N.args``, type ``dict_type``): the reply never exists as a message. The
    verdict is the one every other harness gives the same reply (the response
    contract's ``arguments_not_object``, stop ``invalid_response``), not ``model_error``;
    the call has no id to answer (the client lost it). The message names the call's
    position and the type sent.
    """
    errors = getattr(exc, "errors", None)
    if type(exc).__name__ != "ValidationError" or not callable(errors):
        return None
    try:
        found = errors(include_url=False)
    except TypeError:
        return None
    problems = []
    for error in found:
        loc = tuple(error.get("loc", ()))
        if not (len(loc) == 3 and loc[0] == "tool_calls" and loc[2] == "args"):
            return None
        if error.get("type") != "dict_type":
            return None
        problems.append(
            f"arguments of call {loc[1]} must be a JSON object, "
            f"got {type(error.get('input')).__name__}"
        )
    return "; ".join(problems) or None
