"""Provider wire replies written by hand, as the OpenAI Chat Completions and Anthropic
Messages APIs send them (JSON, or SSE when the client streams), served with no socket by an
``httpx.MockTransport`` (the Anthropic SDK's ``httpx2`` fork for Anthropic): the real
clients parse them with their own code. Shared by the LangChain and PydanticAI tests of
real clients."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import httpx2

PROVIDERS = ("openai", "anthropic")
"""The providers whose wire formats are written here."""

Finish = Literal["stop", "tool_calls", "length", "content_filter", "refusal"]


@dataclass(frozen=True)
class Reply:
    """One scripted reply: text, calls ``(id, name, raw argument text)``, the finish."""

    text: str = ""
    calls: tuple[tuple[str, str, str], ...] = ()
    finish: Finish = "stop"
    refusal: str | None = None


def _pieces(text: str) -> list[str]:
    """``text`` in three chunks, as a provider streams argument text."""
    third = max(1, len(text) // 3)
    return [p for p in (text[:third], text[third : 2 * third], text[2 * third :]) if p]


# -- OpenAI Chat Completions ----------------------------------------------------------

_OPENAI_FINISH = {"refusal": "stop"}


def _openai_json(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    if reply.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in reply.calls
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _OPENAI_FINISH.get(reply.finish, reply.finish),
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }


def _openai_sse(reply: Reply) -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        out.append(chunk({"content": reply.text}))
    if reply.refusal is not None:
        out.append(chunk({"refusal": reply.refusal}))
    for index, (cid, name, args) in enumerate(reply.calls):
        head = {"index": index, "id": cid, "type": "function"}
        out.append(chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}))
        for piece in _pieces(args):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _OPENAI_FINISH.get(reply.finish, reply.finish)))
    return "".join(out) + "data: [DONE]\n\n"


# -- Anthropic Messages ---------------------------------------------------------------

_ANTHROPIC_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
}


def _anthropic_json(reply: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for cid, name, args in reply.calls:  # the API sends a parsed object unstreamed
        content.append({"type": "tool_use", "id": cid, "name": name, "input": json.loads(args)})
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": _ANTHROPIC_FINISH[reply.finish],
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }


def _anthropic_sse(reply: Reply) -> str:
    def event(kind: str, body: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **body})}\n\n"

    start = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    out = [event("message_start", {"message": start})]
    index = 0
    if reply.text:
        block = {"type": "text", "text": ""}
        out.append(event("content_block_start", {"index": index, "content_block": block}))
        delta = {"type": "text_delta", "text": reply.text}
        out.append(event("content_block_delta", {"index": index, "delta": delta}))
        out.append(event("content_block_stop", {"index": index}))
        index += 1
    for cid, name, args in reply.calls:
        block = {"type": "tool_use", "id": cid, "name": name, "input": {}}
        out.append(event("content_block_start", {"index": index, "content_block": block}))
        for piece in _pieces(args):
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.append(event("content_block_delta", {"index": index, "delta": delta}))
        out.append(event("content_block_stop", {"index": index}))
        index += 1
    finish = {"stop_reason": _ANTHROPIC_FINISH[reply.finish], "stop_sequence": None}
    out.append(event("message_delta", {"delta": finish, "usage": {"output_tokens": 5}}))
    out.append(event("message_stop", {}))
    return "".join(out)


# -- the wire ---------------------------------------------------------------------------


@dataclass
class Wire:
    """A scripted provider: each request gets the next reply, as JSON or SSE."""

    replies: list[Reply]
    provider: Literal["openai", "anthropic"]
    streamed: list[bool] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        # the OpenAI SDK uses httpx, the Anthropic SDK its fork httpx2 (same API)
        http = httpx if self.provider == "openai" else httpx2
        if not self.replies:
            return http.Response(500, json={"error": {"message": "script ran out"}})
        reply = self.replies.pop(0)
        stream = bool(json.loads(request.content or b"{}").get("stream"))
        self.streamed.append(stream)
        if stream:
            body = _openai_sse(reply) if self.provider == "openai" else _anthropic_sse(reply)
            return http.Response(200, text=body, headers={"content-type": "text/event-stream"})
        data = _openai_json(reply) if self.provider == "openai" else _anthropic_json(reply)
        return http.Response(200, json=data)


def chat_model(wire: Wire, *, streaming: bool) -> Any:
    """LangChain's real client class for ``wire``'s provider, pointed at it (no socket)."""
    import anthropic
    import langchain_anthropic
    import langchain_openai

    transport = httpx.MockTransport(wire)
    # `streaming=False` set explicitly would turn streaming off under graph.stream too
    flag: dict[str, Any] = {"streaming": True} if streaming else {}
    if wire.provider == "openai":
        return langchain_openai.ChatOpenAI(
            model="gpt-test",
            api_key="sk-test",
            max_retries=0,
            **flag,
            http_client=httpx.Client(transport=transport),
            http_async_client=httpx.AsyncClient(transport=transport),
        )
    chat = langchain_anthropic.ChatAnthropic(
        model="claude-test", api_key="sk-ant-test", max_retries=0, **flag
    )
    # ChatAnthropic takes no http client; its clients are cached properties.
    mock = httpx2.MockTransport(wire)
    chat.__dict__["_client"] = anthropic.Anthropic(
        api_key="sk-ant-test", http_client=httpx2.Client(transport=mock), max_retries=0
    )
    chat.__dict__["_async_client"] = anthropic.AsyncAnthropic(
        api_key="sk-ant-test", http_client=httpx2.AsyncClient(transport=mock), max_retries=0
    )
    return chat
