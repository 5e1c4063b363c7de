"""A local replay server speaking two provider wire formats, for tests and ``check``.

:class:`ReplayServer` listens on ``127.0.0.1`` (a free port) and answers

- the OpenAI Chat Completions API, ``POST /v1/chat/completions``: a JSON reply, or with
  ``"stream": true`` a server-sent event stream of ``chat.completion.chunk`` objects
  ending ``data: [DONE]`` (a last usage chunk when ``stream_options.include_usage``);
- the Anthropic Messages API, ``POST /v1/messages``: a JSON ``message``, or with
  ``"stream": true`` the event stream ``message_start``, ``content_block_start`` /
  ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
  ``content_block_stop`` per block, ``message_delta`` (``stop_reason``, usage),
  ``message_stop``;

by replaying scripted replies, the core's :class:`~agent_contract.messages.Completion`
values, one per request, in order, whichever API asks (or from a function of the
request). Real client classes pointed at it (``base_url``) parse the same bytes they
would parse from the provider, which is what a scripted chat model skips.

What a reply becomes on the wire:

- ``text`` is the message content (the stream cuts it into pieces of
  ``chunk_chars``); a tool call's arguments are JSON text (a ``str`` is sent as it is,
  so cut or malformed argument text can be scripted; Anthropic's non-streamed
  ``input`` is always an object, as the API sends it: the parsed text, or ``{}`` when
  it is not an object);
- ``finish_reason`` is sent as it is to OpenAI clients and mapped for Anthropic ones
  (``stop`` -> ``end_turn``, ``tool_calls`` -> ``tool_use``, ``length`` ->
  ``max_tokens``, ``content_filter`` -> ``refusal``), and the reverse for Anthropic
  names sent to OpenAI clients;
- ``refusal`` is OpenAI's ``message.refusal`` (streamed as ``refusal`` deltas); the
  Anthropic API has no such field, so there a refusal is the message text with the stop
  reason ``refusal``;
- ``usage`` gives the token counts of both formats;
- call ids are sent as scripted, or with ``ids="provider"`` rewritten to the
  provider's shape (``call_`` + 24 characters, ``toolu_01`` + 22), the same scripted
  id always to the same wire id (:meth:`ReplayServer.wire_id`);
- a :class:`Fault` in the script answers with an HTTP error (a provider-shaped error
  body, ``Retry-After`` when given), after a delay, or cuts a stream part way.

The server is bounded and stops by itself: at most ``max_requests`` requests (later ones
get a 503) and ``max_body_bytes`` per request body (413), and it shuts down after
``lifetime`` seconds even if nobody closes it. Use it as a context manager::

    with ReplayServer([Completion(text="5")]) as server:
        client = SomeClient(base_url=server.openai_base_url, api_key="test")

Every request is recorded (:attr:`ReplayServer.requests`), and a script that runs dry
answers a 500 naming it and sets :attr:`ReplayServer.exhausted`, loudly rather than
with an empty reply.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, Literal

from ..errors import ConfigurationError
from ..messages import Completion, ToolCall
from ..streaming import call_pieces, text_pieces

__all__ = [
    "ANTHROPIC_PATH",
    "OPENAI_PATH",
    "Cut",
    "Fault",
    "RecordedRequest",
    "ReplayServer",
    "Reply",
    "Wire",
    "sent_finish_reason",
]

OPENAI_PATH: Final = "/v1/chat/completions"
"""The OpenAI Chat Completions endpoint."""
ANTHROPIC_PATH: Final = "/v1/messages"
"""The Anthropic Messages endpoint."""

Wire = Literal["openai", "anthropic"]
"""Which provider API a request spoke."""

_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

_POLL_SECONDS: Final = 0.02
"""How often the serving thread looks for a shutdown request (``serve_forever``'s
``poll_interval``; its default of 0.5 s made every ``close`` take that long)."""

_TO_ANTHROPIC: Final = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_TO_OPENAI: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


@dataclass(frozen=True, kw_only=True)
class Fault:
    """A scripted failure: what the server answers instead of a reply.

    The default is an HTTP 500. A ``status`` of 200 with ``delay`` answers nothing until
    the delay has passed and then replays ``then`` (a slow server, for client
    timeouts).
    """

    status: int = 500
    """The HTTP status code sent."""
    retry_after: float | None = None
    """Seconds sent in a ``Retry-After`` header (whole seconds when integral); None:
    no header."""
    message: str = "the replay server was told to fail this request"
    """The error message in the provider-shaped error body."""
    delay: float = 0.0
    """Seconds to wait before answering (cut short when the server stops)."""
    then: Completion | None = None
    """For ``status=200``: the reply sent after the delay."""

    def __post_init__(self) -> None:
        if not 100 <= self.status <= 599:
            raise ConfigurationError(f"Fault.status must be an HTTP status, got {self.status}")
        if self.status == 200 and self.then is None:
            raise ConfigurationError("Fault(status=200) needs the reply to send: then=")
        if self.delay < 0:
            raise ConfigurationError("Fault.delay must be >= 0 seconds")


@dataclass(frozen=True, kw_only=True)
class Cut:
    """A reply whose stream stops part way: the connection closes after ``events``
    events of ``reply``'s stream, without the end of the stream (no ``[DONE]``, no
    ``message_stop``). A request that is not streamed gets a body cut in the middle
    (fewer bytes than its ``Content-Length``)."""

    reply: Completion
    """The reply whose stream is cut."""
    events: int = 2
    """How many events are sent before the connection closes (>= 0)."""

    def __post_init__(self) -> None:
        if self.events < 0:
            raise ConfigurationError("Cut.events must be >= 0")


Reply = Completion | Fault | Cut
"""One scripted answer: a reply, a failure, or a cut stream."""


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """One request the server received."""

    wire: Wire | None
    """The API it spoke (None: an unknown path)."""
    path: str
    """The request path."""
    headers: Mapping[str, str]
    """Its headers, names lower-cased."""
    body: Any
    """The JSON body (None when it was not JSON)."""

    @property
    def stream(self) -> bool:
        """True when the client asked for a stream."""
        return isinstance(self.body, dict) and self.body.get("stream") is True


@dataclass
class _Script:
    replies: list[Reply] | None
    function: Callable[[RecordedRequest], Reply] | None
    used: int = 0
    guard: threading.Lock = field(default_factory=threading.Lock)

    def next(self, request: RecordedRequest) -> Reply | None:
        with self.guard:
            self.used += 1
            if self.function is not None:
                return self.function(request)
            if self.replies is None or not self.replies:
                return None
            return self.replies.pop(0)


class _QuietServer(ThreadingHTTPServer):
    """A threading HTTP server that does not print a client that went away (a reset
    connection is the client's business: a timeout, a cut stream, a closed pool)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore a connection error; anything else is printed as usual."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _script_of(replies: Sequence[Reply] | Callable[[RecordedRequest], Reply]) -> _Script:
    """A script of replies, or of a function of the request.

    Raises:
        ConfigurationError: an item that is not a reply.
    """
    if callable(replies):
        return _Script(replies=None, function=replies)
    items = list(replies)
    for item in items:
        if not isinstance(item, (Completion, Fault, Cut)):
            raise ConfigurationError(
                f"a replay script holds Completion, Fault or Cut, got {type(item)!r}"
            )
    return _Script(replies=items, function=None)


def _random_id(length: int) -> str:
    raw = uuid.uuid4().bytes + uuid.uuid4().bytes
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in raw[:length])


class ReplayServer:
    """An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 replaying a script.

    Args:
        replies: the replies in order (one per request, whichever API asks), or a
            function of the :class:`RecordedRequest` returning the reply.
        model: the model name in replies.
        ids: ``"scripted"`` (call ids sent as scripted) or ``"provider"`` (rewritten to
            the provider's shape, see :meth:`wire_id`).
        chunk_chars: the size, in characters, of the text and argument pieces a stream
            sends (>= 1).
        max_requests: requests answered; later ones get a 503 (>= 1).
        max_body_bytes: the largest request body read; a larger one gets a 413.
        lifetime: seconds after which the server stops by itself (> 0).
        keep_alive: keep a client's connection open between requests (HTTP/1.1's
            default); ``False`` answers every request with ``Connection: close``, so a
            client that is never closed (a cached provider client) holds no idle
            socket afterwards.

    Raises:
        ConfigurationError: a bad setting, or a script item that is not a reply.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[RecordedRequest], Reply],
        *,
        model: str = "replay-model",
        ids: Literal["scripted", "provider"] = "scripted",
        chunk_chars: int = 8,
        max_requests: int = 200,
        max_body_bytes: int = 4_000_000,
        lifetime: float = 120.0,
        keep_alive: bool = True,
    ) -> None:
        self._script = _script_of(replies)
        self.keep_alive = keep_alive
        if ids not in ("scripted", "provider"):
            raise ConfigurationError(f"ids must be 'scripted' or 'provider', got {ids!r}")
        if chunk_chars < 1 or max_requests < 1 or max_body_bytes < 1 or lifetime <= 0:
            raise ConfigurationError(
                "chunk_chars, max_requests and max_body_bytes must be >= 1, lifetime > 0"
            )
        self.model = model
        """The model name sent in replies."""
        self.ids = ids
        self.chunk_chars = chunk_chars
        self.interleave = False
        """Stream the pieces of a reply's tool calls by turns (OpenAI: one piece of each
        call in index order, then the next), as a client must join them by index; an
        Anthropic stream sends one content block at a time."""
        self.max_requests = max_requests
        self.max_body_bytes = max_body_bytes
        self.requests: list[RecordedRequest] = []
        """Every request received, in order."""
        self.exhausted = False
        """True once a request found the script empty."""
        self._stopped = threading.Event()
        self._guard = threading.Lock()
        self._wire_ids: dict[tuple[Wire, str], str] = {}
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            name="agent-contract-replay",
            daemon=True,
        )
        self._thread.start()
        self._timer = threading.Timer(lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()

    @property
    def port(self) -> int:
        """The TCP port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic clients' ``base_url``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI clients' ``base_url``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The Anthropic clients' ``base_url`` (they add ``/v1/messages``)."""
        return self.url

    @property
    def stopped(self) -> bool:
        """True once the server has stopped (closed, or its lifetime ran out)."""
        return self._stopped.is_set()

    def wire_id(self, scripted: str, wire: Wire) -> str:
        """The id a scripted call id is sent as on ``wire`` (itself with
        ``ids="scripted"``): ``call_`` + 24 characters (OpenAI) or ``toolu_01`` + 22
        (Anthropic), derived from the scripted id, so it is stable across requests."""
        if self.ids == "scripted":
            return scripted
        with self._guard:
            known = self._wire_ids.get((wire, scripted))
            if known is None:
                digest = hashlib.sha256(f"{wire}:{scripted}".encode()).digest()
                tail = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest)
                known = f"call_{tail[:24]}" if wire == "openai" else f"toolu_01{tail[:22]}"
                self._wire_ids[(wire, scripted)] = known
            return known

    def replay(self, replies: Sequence[Reply] | Callable[[RecordedRequest], Reply]) -> None:
        """Start over with a new script: ``replies`` as in the constructor; the recorded
        requests, the request count (the constructor's ``max_requests`` counts from here) and
        :attr:`exhausted` are reset. One server can so serve many runs in turn
        (``check --wire`` keeps one per column).

        Raises:
            ConfigurationError: a script item that is not a reply.
        """
        script = _script_of(replies)
        with self._guard:
            self.requests = []
        self.exhausted = False
        self._script = script

    def close(self) -> None:
        """Stop serving (idempotent); a delayed answer in progress ends at once."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._timer.cancel()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what a request gets --------------------------------------------------------

    def _record(self, request: RecordedRequest) -> int:
        with self._guard:
            self.requests.append(request)
            return len(self.requests)

    def _next(self, request: RecordedRequest) -> Reply | None:
        reply = self._script.next(request)
        if reply is None:
            self.exhausted = True
        return reply

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds``; False when the server stopped meanwhile."""
        return not self._stopped.wait(seconds)


# -- rendering a Completion in each wire format ----------------------------------------


def _arguments_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _openai_finish(reason: str) -> str:
    return _TO_OPENAI.get(reason, reason)


def _anthropic_stop(reason: str) -> str:
    return _TO_ANTHROPIC.get(reason, reason)


def sent_finish_reason(reply: Completion, wire: Wire) -> str:
    """The finish reason (OpenAI) or stop reason (Anthropic) the server sends for
    ``reply`` on ``wire`` (see the module doc)."""
    return _openai_finish(reply.finish_reason) if wire == "openai" else _anthropic_stop_of(reply)


def _openai_usage(reply: Completion) -> dict[str, int]:
    usage = reply.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _openai_json(server: ReplayServer, reply: Completion) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text if reply.text or not (reply.tool_calls or reply.refusal) else None,
        "refusal": reply.refusal,
    }
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": None if call.id is None else server.wire_id(call.id, "openai"),
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{_random_id(29)}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": server.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _openai_finish(reply.finish_reason),
            }
        ],
        "usage": _openai_usage(reply),
        "system_fingerprint": "fp_replay",
    }


def _openai_chunks(
    server: ReplayServer, reply: Completion, include_usage: bool
) -> Iterator[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{_random_id(29)}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": server.model,
        "system_fingerprint": "fp_replay",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    if reply.refusal:
        for piece in text_pieces(reply.refusal, server.chunk_chars):
            yield chunk({"refusal": piece})
    if reply.text:
        for piece in text_pieces(reply.text, server.chunk_chars):
            yield chunk({"content": piece})
    texts = [_arguments_text(call) for call in reply.tool_calls]
    started: set[int] = set()
    for index, piece in call_pieces(texts, server.chunk_chars, interleave=server.interleave):
        if index in started:
            delta: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
        else:  # a call's first piece carries its id and name
            started.add(index)
            call = reply.tool_calls[index]
            delta = {
                "index": index,
                "id": None if call.id is None else server.wire_id(call.id, "openai"),
                "type": "function",
                "function": {"name": call.name, "arguments": piece},
            }
        yield chunk({"tool_calls": [delta]})
    yield chunk({}, _openai_finish(reply.finish_reason))
    if include_usage:
        yield {**base, "choices": [], "usage": _openai_usage(reply)}


def _anthropic_input(call: ToolCall) -> Any:
    """A non-streamed ``tool_use`` block's ``input``: always an object, as the API
    sends it (argument text that is not one becomes ``{}``; only a stream carries the
    raw text, in its ``input_json_delta`` pieces)."""
    arguments = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def _anthropic_text(reply: Completion) -> str:
    """The text block of a reply on the Anthropic wire: a refusal has no field of its
    own there, so its text is the message text (with the stop reason ``refusal``)."""
    return reply.text or reply.refusal or ""


def _anthropic_stop_of(reply: Completion) -> str:
    """The ``stop_reason`` sent: ``refusal`` for a scripted refusal that finished
    normally, else the mapped finish reason."""
    if reply.refusal and not reply.text and reply.finish_reason in ("stop", "end_turn"):
        return "refusal"
    return _anthropic_stop(reply.finish_reason)


def _anthropic_json(server: ReplayServer, reply: Completion) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if _anthropic_text(reply):
        content.append({"type": "text", "text": _anthropic_text(reply)})
    for call in reply.tool_calls:
        content.append(
            {
                "type": "tool_use",
                "id": server.wire_id(call.id or "", "anthropic"),
                "name": call.name,
                "input": _anthropic_input(call),
            }
        )
    return {
        "id": f"msg_01{_random_id(22)}",
        "type": "message",
        "role": "assistant",
        "model": server.model,
        "content": content,
        "stop_reason": _anthropic_stop_of(reply),
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
        },
    }


def _anthropic_events(server: ReplayServer, reply: Completion) -> Iterator[tuple[str, Any]]:
    message = _anthropic_json(server, reply)
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": reply.usage.input_tokens, "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": start}
    blocks: list[tuple[dict[str, Any], str, str, str]] = []
    if _anthropic_text(reply):
        blocks.append(({"type": "text", "text": ""}, "text_delta", "text", _anthropic_text(reply)))
    for call in reply.tool_calls:
        block = {
            "type": "tool_use",
            "id": server.wire_id(call.id or "", "anthropic"),
            "name": call.name,
            "input": {},
        }
        blocks.append((block, "input_json_delta", "partial_json", _arguments_text(call)))
    for index, (block, delta_type, key, text) in enumerate(blocks):
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        for piece in text_pieces(text, server.chunk_chars):
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": delta_type, key: piece},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _anthropic_stop_of(reply), "stop_sequence": None},
            "usage": {"output_tokens": reply.usage.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _error_body(wire: Wire | None, status: int, message: str) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error" if wire == "anthropic" else "server_error")
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _handler_for(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "agent-contract-replay"
        sys_version = ""
        timeout = 30.0  # seconds an idle keep-alive connection is kept

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: requests are recorded, not logged."""

        def end_headers(self) -> None:
            """End the headers; without keep-alive, say the connection closes."""
            if not server.keep_alive and not self.close_connection:
                self.send_header("Connection", "close")
                self.close_connection = True
            super().end_headers()

        def do_GET(self) -> None:
            """Only POST is served."""
            self._error(None, 404, f"no such endpoint: GET {self.path}")

        def do_POST(self) -> None:
            """Answer one API request with the next scripted reply."""
            path = self.path.split("?", 1)[0]
            wire: Wire | None = (
                "openai"
                if path in (OPENAI_PATH, "/chat/completions")
                else "anthropic"
                if path in (ANTHROPIC_PATH, "/messages")
                else None
            )
            length = int(self.headers.get("Content-Length") or 0)
            if length > server.max_body_bytes:
                self.close_connection = True
                self._error(wire, 413, f"request body of {length} bytes is over the limit")
                return
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = RecordedRequest(
                wire=wire,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            count = server._record(request)
            if wire is None:
                self._error(None, 404, f"no such endpoint: POST {path}")
                return
            if not isinstance(body, dict):
                self._error(wire, 400, "the request body is not a JSON object")
                return
            if count > server.max_requests:
                self._error(wire, 503, f"the replay server answers {server.max_requests} requests")
                return
            try:
                reply = server._next(request)
            except Exception as exc:  # noqa: BLE001 - a script function's bug, answered loudly
                self._error(wire, 500, f"the replay script raised {type(exc).__name__}: {exc}")
                return
            if reply is None:
                self._error(wire, 500, f"the replay script ran dry on request {count}")
                return
            if isinstance(reply, Fault):
                if reply.delay and not server._wait(reply.delay):
                    self.close_connection = True
                    return
                if reply.status != 200:
                    self._error(wire, reply.status, reply.message, reply.retry_after)
                    return
                if reply.then is None:  # checked in Fault; kept for the type checker
                    self._error(wire, 500, "Fault(status=200) without a reply")
                    return
                reply = reply.then
            cut = reply.events if isinstance(reply, Cut) else None
            completion = reply.reply if isinstance(reply, Cut) else reply
            if request.stream:
                self._stream(wire, completion, body, cut)
            else:
                data = (
                    _openai_json(server, completion)
                    if wire == "openai"
                    else _anthropic_json(server, completion)
                )
                self._json(wire, 200, data, cut=cut is not None)

        # -- writing ----------------------------------------------------------------

        def _provider_headers(self, wire: Wire | None) -> None:
            if wire == "anthropic":
                self.send_header("request-id", f"req_011{_random_id(21)}")
                self.send_header("anthropic-ratelimit-requests-limit", "4000")
                self.send_header("anthropic-ratelimit-requests-remaining", "3999")
            else:
                self.send_header("x-request-id", f"req_{_random_id(32)}")
                self.send_header("openai-processing-ms", "12")
                self.send_header("openai-version", "2020-10-01")
                self.send_header("x-ratelimit-limit-requests", "10000")
                self.send_header("x-ratelimit-remaining-requests", "9999")

        def _json(self, wire: Wire | None, status: int, data: Any, *, cut: bool = False) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self._provider_headers(wire)
            if cut:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2] if cut else payload)

        def _error(
            self,
            wire: Wire | None,
            status: int,
            message: str,
            retry_after: float | None = None,
        ) -> None:
            payload = json.dumps(_error_body(wire, status, message)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if retry_after is not None:
                seconds = int(retry_after) if float(retry_after).is_integer() else retry_after
                self.send_header("Retry-After", str(seconds))
            if wire == "openai" and status == 429:
                self.send_header("x-ratelimit-remaining-requests", "0")
            self._provider_headers(wire)
            self.end_headers()
            self.wfile.write(payload)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _stream(
            self, wire: Wire, reply: Completion, body: dict[str, Any], cut: int | None
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self._provider_headers(wire)
            if cut is not None:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            events: list[bytes] = []
            if wire == "openai":
                options = body.get("stream_options")
                usage = isinstance(options, dict) and options.get("include_usage") is True
                for data in _openai_chunks(server, reply, usage):
                    events.append(f"data: {json.dumps(data)}\n\n".encode())
                events.append(b"data: [DONE]\n\n")
            else:
                for name, data in _anthropic_events(server, reply):
                    events.append(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            try:
                for number, event in enumerate(events):
                    if cut is not None and number >= cut:
                        return  # the connection closes with the stream unfinished
                    self._chunk(event)
                self._chunk(b"")  # the chunked body's end
            except OSError:  # the client went away
                self.close_connection = True

    return Handler
