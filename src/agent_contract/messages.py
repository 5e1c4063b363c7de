"""The data that crosses the model boundary: messages, tool calls, completions.

All types are frozen, keyword-only dataclasses, validated when constructed, so a
typo'd role or a non-string id fails where it is made, not three steps later.
Construction checks *types*; whether a completion obeys the response contract
(exactly one of a final text or tool calls, ids present and unique, arguments a JSON
object) is judged separately by :func:`agent_contract.runtime.validate_response`,
because a model is allowed to *say* something malformed and the runtime must be
able to hold it in order to refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from .canonical import canonical_json, field_dict
from .errors import ConfigurationError
from .text import escape_value

__all__ = [
    "FINISH_REASONS",
    "PROVIDER_FINISH_REASONS",
    "ROLES",
    "Completion",
    "FinishReason",
    "Message",
    "Role",
    "TokenUsage",
    "ToolCall",
    "ToolStatus",
    "canonical_json",
    "finish_reason_of",
]

Role = Literal["system", "user", "assistant", "tool"]
ROLES: Final[tuple[str, ...]] = ("system", "user", "assistant", "tool")
"""The closed set of message roles."""

ToolStatus = Literal["success", "error"]

FinishReason = Literal[
    "stop", "tool_calls", "length", "content_filter", "refusal", "paused", "other"
]
"""Why a model stopped writing its reply, in the contract's words (the judging of a
response reads it, :mod:`agent_contract.runtime.judging`):

- ``stop``: the model finished its turn (an answer, or calls: judged by the content);
- ``tool_calls``: the model finished its turn with tool calls;
- ``length``: the reply was cut by the output limit (``max_tokens``): never an answer,
  and its tool calls never run (stop ``truncated_response``);
- ``content_filter``: the provider's filter cut or withheld the reply (stop
  ``content_filtered``);
- ``refusal``: the model declined (stop ``refused``);
- ``paused``: the provider paused a long turn to be continued (Anthropic's
  ``pause_turn``): unfinished, like ``length``;
- ``other``: a value this package does not know: the reply is judged by its content.
"""

FINISH_REASONS: Final[tuple[str, ...]] = FinishReason.__args__  # type: ignore[attr-defined]
"""Every :data:`FinishReason`, in declaration order."""

PROVIDER_FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    # OpenAI Chat Completions `choices[].finish_reason`
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    # Anthropic Messages `stop_reason`
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "pause_turn": "paused",
    "refusal": "refusal",
    # PydanticAI's `ModelResponse.finish_reason` (OpenTelemetry values; `stop`, `length`
    # and `content_filter` as above)
    "tool_call": "tool_calls",
    # the contract's own names
    "paused": "paused",
}
"""A provider's finish (stop) reason -> the :data:`FinishReason` it means. Keys are
compared lower-cased; an unknown value is ``other``."""


def finish_reason_of(value: str | None) -> FinishReason:
    """The :data:`FinishReason` a provider's ``value`` means (see
    :data:`PROVIDER_FINISH_REASONS`): ``None`` or ``""`` (none sent) is ``stop``, a value
    not in the table ``other``."""
    if not value:
        return "stop"
    return PROVIDER_FINISH_REASONS.get(value.strip().lower(), "other")


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A model's request to run a tool. The model never executes anything.

    ``arguments`` holds whatever the model produced: normally a ``dict`` (a JSON
    object), but a model may emit a JSON string, a list or unparseable text, and the
    response validator must be able to see that to refuse it (an empty string is no
    arguments, ``{}``, on every harness).
    """

    id: str | None
    """The ``tool_call_id`` that the tool message answering this call must carry.
    ``None`` means the model sent none (a contract violation)."""
    name: str
    """The tool the model asks for; not trusted until checked against the registry."""
    arguments: Any = field(default_factory=dict)
    """The arguments as the model sent them (normally a dict)."""

    def __post_init__(self) -> None:
        if self.id is not None and not isinstance(self.id, str):
            raise ConfigurationError(f"ToolCall.id must be a str or None, got {type(self.id)!r}")
        if not isinstance(self.name, str):
            raise ConfigurationError(f"ToolCall.name must be a str, got {type(self.name)!r}")
        if isinstance(self.arguments, Mapping) and not isinstance(self.arguments, dict):
            object.__setattr__(self, "arguments", dict(self.arguments))

    def to_dict(self) -> dict[str, Any]:
        """The call as a JSON-ready dict: ``{"id", "name", "arguments"}``."""
        return field_dict(self)

    @cached_property
    def canonical_arguments(self) -> str:
        """:func:`canonical_json` of :attr:`arguments`, computed once per call and shared
        by everything that needs it (the repeated-call key, the approval token, the
        idempotency key, the rewritten-arguments check). A call's arguments are never
        changed in place (every handler gets its own deep copy), so the text stays
        that of the arguments. Never raises."""
        return canonical_json(self.arguments)


def _tool_calls(calls: Any) -> tuple[ToolCall, ...]:
    """``calls`` as a tuple of ToolCall.

    Raises:
        ConfigurationError: an item is not a ToolCall.
    """
    items = tuple(calls)
    for call in items:
        if not isinstance(call, ToolCall):
            raise ConfigurationError(f"tool_calls must hold ToolCall, got {type(call)!r}")
    return items


@dataclass(frozen=True, kw_only=True)
class Message:
    """One turn of a conversation.

    ``assistant`` messages carry either ``content`` (an answer) or ``tool_calls`` (a
    request); ``tool`` messages carry the ``tool_call_id`` they answer and a
    ``status``.

    Text is valid UTF-8 once a message is made: a lone surrogate anywhere in it (the
    content, the name, ids, a call's name or arguments) is escaped by the text rule's
    one escape (:mod:`agent_contract.text`), and :attr:`escaped_chars` counts them.
    """

    role: Role
    """One of :data:`ROLES`, a closed set."""
    content: str = ""
    """The text of the turn."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Set on assistant messages that request tools."""
    tool_call_id: str | None = None
    """Set on (and required for) tool messages: the id of the call it answers."""
    name: str | None = None
    """On tool messages, the tool's name."""
    status: ToolStatus | None = None
    """On tool messages, ``"success"`` or ``"error"``."""
    escaped_chars: int = field(default=0, compare=False)
    """How many lone surrogates were escaped in this message's text, here or before it
    was stored (a message read back from a store keeps its count)."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ConfigurationError(f"unknown role {self.role!r}, expected one of {ROLES}")
        if not isinstance(self.content, str):
            raise ConfigurationError(f"Message.content must be a str, got {type(self.content)!r}")
        object.__setattr__(self, "tool_calls", _tool_calls(self.tool_calls))
        self._escape_text()
        if self.tool_calls and self.role != "assistant":
            raise ConfigurationError("only assistant messages carry tool_calls")
        if self.role == "tool":
            if not self.tool_call_id:
                raise ConfigurationError("a tool message needs the tool_call_id it answers")
            if self.status not in ("success", "error"):
                raise ConfigurationError("a tool message needs status 'success' or 'error'")
        elif self.tool_call_id is not None or self.status is not None:
            raise ConfigurationError("tool_call_id and status belong on tool messages only")

    def _escape_text(self) -> None:
        """Apply the text rule's escape to every string of the message (see the class doc)."""
        count = self.escaped_chars
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigurationError(f"Message.escaped_chars must be an int >= 0, got {count!r}")
        for name in ("content", "name", "tool_call_id"):
            value = getattr(self, name)
            if isinstance(value, str):
                escaped, found = escape_value(value)
                if found:
                    object.__setattr__(self, name, escaped)
                    count += found
        calls = []
        for call in self.tool_calls:
            (call_id, call_name, arguments), found = escape_value(
                (call.id, call.name, call.arguments)
            )
            count += found
            calls.append(
                ToolCall(id=call_id, name=call_name, arguments=arguments) if found else call
            )
        object.__setattr__(self, "tool_calls", tuple(calls))
        object.__setattr__(self, "escaped_chars", count)

    def to_dict(self) -> dict[str, Any]:
        """The message as a JSON-ready dict; empty optional fields are left out."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        if self.status is not None:
            data["status"] = self.status
        if self.escaped_chars:
            data["escaped_chars"] = self.escaped_chars
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Inverse of :meth:`to_dict`.

        Raises:
            ConfigurationError: the dict does not describe a valid message.
        """
        try:
            calls = tuple(
                ToolCall(id=c.get("id"), name=c["name"], arguments=c.get("arguments", {}))
                for c in data.get("tool_calls", ())
            )
            return cls(
                role=data["role"],
                content=data.get("content", ""),
                tool_calls=calls,
                tool_call_id=data.get("tool_call_id"),
                name=data.get("name"),
                status=data.get("status"),
                escaped_chars=_count(data.get("escaped_chars", 0)),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigurationError(f"not a message dict: {type(exc).__name__}") from exc


def _count(value: Any) -> int:
    """A stored ``escaped_chars``: an int >= 0.

    Raises:
        TypeError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"escaped_chars must be an int >= 0, got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class TokenUsage:
    """Token counts a model reported for one completion (estimates for fakes).

    Not the run's usage: what a run used (model steps, tool calls, seconds) is
    :class:`~agent_contract.budget.RunUsage`.
    """

    input_tokens: int = 0
    """Tokens in the prompt, including the whole replayed history."""
    output_tokens: int = 0
    """Tokens in the reply."""

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigurationError(f"TokenUsage.{name} must be an int >= 0, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Completion:
    """What a model returns for one call.

    Legal shapes (judged by :func:`agent_contract.runtime.validate_response`): a final
    answer (non-empty ``text``, no ``tool_calls``) or a request (``tool_calls``, empty
    ``text``). Anything else is a contract violation, never an answer.
    """

    text: str = ""
    """The answer text; empty when the model requests tools."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls requested, in the order the model issued them."""
    finish_reason: str = "stop"
    """Why the model stopped: a :data:`FinishReason` or a provider's own value (OpenAI's
    ``finish_reason``, Anthropic's ``stop_reason``; :func:`finish_reason_of` maps it).
    Contract input: ``length`` (``max_tokens``) and ``pause_turn`` stop the run with
    ``truncated_response``, ``content_filter`` with ``content_filtered``, ``refusal`` with
    ``refused``; none of them is ever an answer and their tool calls never run."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Token counts for this call."""
    refusal: str | None = None
    """The provider's refusal text (OpenAI's ``message.refusal``), or ``None``: a
    completion that carries one is a refusal whatever its finish reason (stop
    ``refused``, the text redacted in the stop's detail)."""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigurationError(f"Completion.text must be a str, got {type(self.text)!r}")
        object.__setattr__(self, "tool_calls", _tool_calls(self.tool_calls))
        if not isinstance(self.finish_reason, str):
            raise ConfigurationError("Completion.finish_reason must be a str")
        if not isinstance(self.usage, TokenUsage):
            raise ConfigurationError("Completion.usage must be a TokenUsage")
        if self.refusal is not None and not isinstance(self.refusal, str):
            raise ConfigurationError("Completion.refusal must be a str or None")

    @property
    def finish(self) -> FinishReason:
        """:attr:`finish_reason` as a :data:`FinishReason` (a refusal text makes it
        ``refusal``)."""
        return "refusal" if self.refusal is not None else finish_reason_of(self.finish_reason)

    @property
    def wants_tools(self) -> bool:
        """True when the completion requests at least one tool call."""
        return bool(self.tool_calls)
