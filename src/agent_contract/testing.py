"""Test doubles for the model boundary: a scripted :class:`FakeModel` and the
deterministic :class:`DemoModel`. No pytest import here; any test runner works.

Script a FakeModel three ways: literal strings (final answers), :class:`Completion`
objects (built with :func:`tool_call` / :func:`tool_calls`), or callables that read
the transcript and return either. It records every call and raises
:class:`~agent_contract.errors.ScriptExhaustedError` when the script runs out; it never
returns ``""`` and never wraps around.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from .errors import ConfigurationError, ScriptExhaustedError
from .messages import Completion, Message, TokenUsage, ToolCall
from .text import copy_json

__all__ = [
    "AUTO_ID",
    "MAX_REQUEST_CHARS",
    "DemoModel",
    "FakeModel",
    "Reply",
    "estimate_tokens",
    "tool_call",
    "tool_calls",
]

AUTO_ID: Final = "\x00auto"
"""Marker id: the FakeModel replaces it with ``call_<step>_<n>`` when it replies."""

Reply = str | Completion | Callable[[list[Message]], "str | Completion"]


def estimate_tokens(text: str) -> int:
    """A crude token estimate, ``max(1, len(text) // 4)``: fine for fakes, never for billing."""
    return max(1, len(text) // 4)


def tool_call(name: str, arguments: Any = None, *, id: str | None = AUTO_ID) -> Completion:
    """A completion that requests one tool call.

    Args:
        name: the tool.
        arguments: a dict normally; anything else to script a malformed call.
        id: the tool_call_id; by default a deterministic id is assigned at reply time;
            pass ``None`` to script a call with a missing id.
    """
    return tool_calls((name, {} if arguments is None else arguments, id))


def tool_calls(*calls: tuple[Any, ...] | ToolCall) -> Completion:
    """A completion that requests several calls at once (in this order).

    Each call is a ``ToolCall``, a ``(name, arguments)`` pair, or a
    ``(name, arguments, id)`` triple.

    Raises:
        ConfigurationError: a call is not one of those shapes.
    """
    built: list[ToolCall] = []
    for call in calls:
        if isinstance(call, ToolCall):
            built.append(call)
        elif isinstance(call, tuple) and len(call) in (2, 3):
            call_id = call[2] if len(call) == 3 else AUTO_ID
            built.append(ToolCall(id=call_id, name=call[0], arguments=call[1]))
        else:
            raise ConfigurationError(f"not a tool call: {call!r}")
    return Completion(tool_calls=tuple(built), finish_reason="tool_calls")


def _materialize(completion: Completion, step: int, prompt: int) -> Completion:
    calls = tuple(
        ToolCall(id=f"call_{step}_{n}", name=c.name, arguments=copy_json(c.arguments))
        if c.id == AUTO_ID
        else c
        for n, c in enumerate(completion.tool_calls, start=1)
    )
    usage = completion.usage
    if usage == TokenUsage():
        usage = TokenUsage(
            input_tokens=prompt,
            output_tokens=estimate_tokens(
                completion.text or json.dumps([c.to_dict() for c in calls], default=str)
            ),
        )
    return Completion(
        text=completion.text,
        tool_calls=calls,
        finish_reason=completion.finish_reason,
        usage=usage,
        refusal=completion.refusal,
    )


class FakeModel:
    """A scripted, deterministic :class:`~agent_contract.model.Model`.

    Args:
        script: the replies, in order.
        stateless: pick the reply by the number of assistant messages already in the
            transcript instead of an in-memory counter, so that a run resumed in
            another process continues where it stopped.

    Attributes:
        calls: one dict per call, ``{"messages", "tools", "max_output_tokens",
            "temperature"}``, in call order (copies: later mutation does not leak in).
    """

    def __init__(self, script: Sequence[Reply], *, stateless: bool = False) -> None:
        self._script: tuple[Reply, ...] = tuple(script)
        for reply in self._script:
            if not (isinstance(reply, str | Completion) or callable(reply)):
                raise ConfigurationError(f"not a scripted reply: {reply!r}")
        self.stateless = stateless
        self.calls: list[dict[str, Any]] = []
        self._position = 0
        self._tools_copy: list[dict[str, Any]] | None = None
        self._counted: tuple[tuple[Message, ...], int, int] = ((), 0, 0)
        self._lock = threading.Lock()

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        max_output_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Completion:
        """Return the next scripted reply.

        Raises:
            ScriptExhaustedError: no reply is left for this step.
            ConfigurationError: a callable reply returned neither a str nor a Completion.
        """
        with self._lock:
            self.calls.append(
                {
                    "messages": list(messages),
                    "tools": self._record_tools(tools),
                    "max_output_tokens": max_output_tokens,
                    "temperature": temperature,
                }
            )
            assistants, prompt = self._counts(messages)
            if self.stateless:
                index = assistants
            else:
                index = self._position
                self._position += 1
            if index >= len(self._script):
                raise ScriptExhaustedError(len(self.calls), len(self._script))
            reply = self._script[index]
        if callable(reply) and not isinstance(reply, str | Completion):
            reply = reply(list(messages))
        if isinstance(reply, str):
            reply = Completion(text=reply)
        if not isinstance(reply, Completion):
            raise ConfigurationError(f"a scripted callable returned {type(reply).__name__}")
        return _materialize(reply, index + 1, prompt)

    def _counts(self, messages: Sequence[Message]) -> tuple[int, int]:
        """``(assistant turns, estimated prompt tokens)`` of ``messages``, counted from
        where the previous call's transcript left off when it is a prefix of this one
        (so a step does not walk the whole history). The caller holds the lock."""
        prefix, assistants, tokens = self._counted
        if len(messages) >= len(prefix) and tuple(messages[: len(prefix)]) == prefix:
            rest = messages[len(prefix) :]
        else:
            rest, assistants, tokens = messages, 0, 0
        for message in rest:
            assistants += message.role == "assistant"
            tokens += estimate_tokens(message.content)
        self._counted = (tuple(messages), assistants, tokens)
        return assistants, tokens

    def _record_tools(self, tools: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """A private copy of the tool definitions; consecutive calls offering equal
        definitions share one copy (deep-copying schemas on every step would make the
        test double the most expensive part of a run)."""
        if tools is None:
            return None
        if self._tools_copy is not None and list(tools) == self._tools_copy:
            return self._tools_copy
        self._tools_copy = copy.deepcopy(list(tools))
        return self._tools_copy

    def last_messages(self) -> list[Message]:
        """The transcript sent on the most recent call.

        Raises:
            AssertionError: the model was never called.
        """
        if not self.calls:
            raise AssertionError("model was never called")
        return list(self.calls[-1]["messages"])

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used (counter mode)."""
        return max(0, len(self._script) - self._position)


MAX_REQUEST_CHARS: Final = 2_000
"""The demo model reads at most this many characters of a request (a prefix); a longer
request gets a plain refusal (a direct answer, no tool call). Its patterns are linear-time (possessive
quantifiers, anchored, on stripped text), so a request of any size costs time in
proportion to this bound, not to the request."""

_CALCULATE = re.compile(r"(?:calculate|计算)\s*+[:：]?\s*+(?P<arg>.+)", re.I | re.S)
_POLICY = re.compile(r"(?:look\s++up\s++policy|查询政策)\s*+[:：]?\s*+(?P<arg>.+)", re.I | re.S)
_LOOKUP_ORDER = re.compile(
    r"(?:look\s++up\s++order|查询订单)\s*+[:：]?\s*+(?P<arg>\S++)", re.I | re.S
)
_REFUND_ORDER = re.compile(r"(?:refund\s++order|退款订单)\s*+[:：]?\s*+(?P<arg>\S++)", re.I | re.S)
_CJK = re.compile(r"[\u3400-\u9fff]")


class DemoModel:
    """A deterministic stand-in for a real model, for the demo CLI.

    - ``calculate <expr>`` or ``计算 <expr>``: one ``calculator`` call.
    - ``look up policy <topic>`` or ``查询政策 <topic>``: one ``policy_lookup`` call.
    - ``look up order <id>`` or ``查询订单 <id>``: one ``lookup_order`` call.
    - ``refund order <id>`` or ``退款订单 <id>``: ``lookup_order``, then ``refund_order``
      for the refundable amount (a write: the run pauses for approval).
    - anything else: a direct answer, no tools.

    After a tool result it answers in words that cite the result (and a policy's source
    id); after a tool error it says so plainly, with the error kind. It is stateless:
    everything it needs is in the transcript.
    """

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        max_output_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Completion:
        """Reply to the transcript (see the class doc)."""
        user = next((m for m in reversed(messages) if m.role == "user"), None)
        text = user.content if user else ""
        request = text[:MAX_REQUEST_CHARS].strip()  # all the model ever reads
        chinese = bool(_CJK.search(request))
        if len(text) > MAX_REQUEST_CHARS:
            return Completion(text=_too_long(len(text), chinese))
        step = sum(1 for m in messages if m.role == "assistant") + 1
        last = messages[-1] if messages else None
        refund = _REFUND_ORDER.fullmatch(request)
        if (
            refund
            and last is not None
            and last.role == "tool"
            and last.name == "lookup_order"
            and last.status == "success"
        ):
            order = json.loads(last.content)
            arguments = {
                "order_id": order["order_id"],
                "amount_cents": order["refundable_cents"],
                "reason": "customer request",
            }
            return tool_call("refund_order", arguments, id=f"call_{step}_1")
        if last is not None and last.role == "tool":
            results = []
            for message in reversed(messages):
                if message.role != "tool":
                    break
                results.append(message)
            results.reverse()
            return Completion(text=" ".join(_describe(m, chinese) for m in results))
        offered = {t.get("function", {}).get("name") for t in tools or ()}
        for pattern, tool, key in (
            (_CALCULATE, "calculator", "expression"),
            (_POLICY, "policy_lookup", "topic"),
            (_LOOKUP_ORDER, "lookup_order", "order_id"),
            (_REFUND_ORDER, "lookup_order", "order_id"),
        ):
            match = pattern.fullmatch(request)
            if match and tool in offered:
                return tool_call(tool, {key: match["arg"]}, id=f"call_{step}_1")
        if chinese:
            text = (
                "（演示模型）这个请求不需要工具，直接回答：工具调用是模型提出结构化请求、"
                "由运行时校验并执行的过程。试试“计算 1 + 2”或“查询政策 privacy”。"
            )
        else:
            text = (
                "(demo model) No tool is needed for this, so here is a direct answer: "
                "tool calling means the model proposes a structured call and the runtime "
                "validates it, runs it from an allowlist and returns the result bound to "
                "the call id. Try 'calculate 1 + 2' or 'look up policy privacy'."
            )
        return Completion(text=text)


def _too_long(chars: int, chinese: bool) -> str:
    if chinese:
        return (
            f"（演示模型）这个请求有 {chars} 个字符；演示模型最多读取 {MAX_REQUEST_CHARS} 个字符。"
        )
    return (
        f"(demo model) This request is {chars} characters long; the demo model reads at "
        f"most {MAX_REQUEST_CHARS}. Please send a shorter request."
    )


def _describe(message: Message, chinese: bool) -> str:
    try:
        data: Any = json.loads(message.content)
    except ValueError:
        data = message.content
    if message.status == "error":
        kind = data.get("error", "tool_error") if isinstance(data, Mapping) else "tool_error"
        detail = data.get("message", "") if isinstance(data, Mapping) else ""
        if chinese:
            return f"工具 {message.name} 未能完成请求（{kind}）：{detail}"
        return f"The {message.name} tool could not complete the request ({kind}): {detail}"
    if isinstance(data, Mapping) and {"note", "arguments", "result"} <= set(data):
        # A write a human edited before it ran: describe its result, and say so.
        inner = data["result"]
        text = inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
        shown = _describe(replace(message, content=text), chinese)
        edited = (
            "（参数在执行前已由人工修改。）" if chinese else " (A human edited it before it ran.)"
        )
        return shown + edited
    if isinstance(data, Mapping) and "source_id" in data:
        if chinese:
            return f"政策《{data.get('title')}》：{data.get('text')}（来源：{data['source_id']}）"
        return f"Policy '{data.get('title')}': {data.get('text')} (source: {data['source_id']})"
    if isinstance(data, Mapping) and "refund_id" in data:
        if chinese:
            return f"订单 {data['order_id']} 已退款 {data['amount_cents']} 分（退款编号 {data['refund_id']}）。"
        return (
            f"Refunded {data['amount_cents']} cents on order {data['order_id']} "
            f"(refund {data['refund_id']})."
        )
    if isinstance(data, Mapping) and data.get("already_applied"):
        record = data.get("record") or {}
        return (
            f"The refund on order {record.get('order_id')} had already been applied "
            f"(refund {record.get('refund_id')}); it was not applied again."
        )
    if isinstance(data, Mapping) and "placed_on" in data:
        if chinese:
            return f"订单 {data['order_id']}：状态 {data['status']}，金额 {data['total']}。"
        return (
            f"Order {data['order_id']} is {data['status']} (placed {data['placed_on']}, "
            f"total {data['total']}, refundable {data['refundable']})."
        )
    if isinstance(data, Mapping) and "result" in data:
        if chinese:
            return f"{data.get('expression')} 的计算结果是 {data['result']}。"
        return f"The result of {data.get('expression')} is {data['result']}."
    return f"The {message.name} tool returned: {message.content}"
