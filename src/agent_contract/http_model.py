"""A real model for the offline loop: any OpenAI-compatible Chat Completions server.

:class:`OpenAICompatibleModel` is the other implementation of the one
:class:`~agent_contract.model.Model` protocol (beside the scripted fakes): it POSTs the
transcript to ``{base_url}/chat/completions`` with the standard library only
(``http.client``; no proxy is read) and maps the reply to a
:class:`~agent_contract.messages.Completion`:

- a tool call's arguments stay the text the server sent (the response contract parses
  and judges them, so cut or malformed arguments are refused, never repaired);
- ``finish_reason`` is passed through untouched (``""`` when the server sent none);
- ``usage`` becomes :class:`~agent_contract.messages.TokenUsage`.

Failures follow one rule set:

- a 4xx other than 429 is raised at once (:class:`~agent_contract.errors.ModelHTTPError`,
  kind ``refused_request``): the same request fails the same way forever;
- a 429, a 5xx, a timeout or a broken connection (a stream cut part way included) is
  retried up to ``max_retries`` times, each wait drawn with *full jitter*
  (uniformly from 0 to ``min(max_backoff, backoff * 2**attempt)`` seconds), or the
  server's ``Retry-After`` when it sent one (a ``Retry-After`` over ``max_backoff``
  is not waited for: the error is raised); then raised, classified;
- a 2xx whose body is not the API's shape is ``bad_reply`` (not retried).

The loops turn any of these into the stop ``model_error``.

The key: the ``api_key`` argument, else the environment variable ``api_key_env``
(``OPENAI_API_KEY``), else, only for a server on this machine (``127.0.0.1``,
``localhost``, ``::1``), a placeholder (local servers ignore it). An empty key is
refused when the model is made, not by a 401 five layers down.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from .errors import ConfigurationError, ModelHTTPError, ModelHTTPErrorKind
from .messages import Completion, Message, TokenUsage, ToolCall

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_PLACEHOLDER_KEY",
    "OpenAICompatibleModel",
    "completion_from_chunks",
    "completion_from_json",
    "local_url",
    "resolve_api_key",
]

LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts whose servers may be keyless: a placeholder key is sent to them."""
LOCAL_PLACEHOLDER_KEY: Final = "not-needed"
"""The key sent to a local server when none is given."""

_RETRIED_STATUS: Final = frozenset({408, 409, 429})


def local_url(url: str) -> bool:
    """True when ``url``'s host is this machine (:data:`LOCAL_HOSTS`)."""
    return (urlsplit(url).hostname or "") in LOCAL_HOSTS


def resolve_api_key(api_key: str | None, base_url: str, api_key_env: str) -> str:
    """The key to send to ``base_url``: ``api_key``, else the environment variable
    ``api_key_env``, else, only for a local server (:func:`local_url`),
    :data:`LOCAL_PLACEHOLDER_KEY`.

    Raises:
        ConfigurationError: no key for a server that is not local, or an empty (blank)
            key, given or read.
    """
    if api_key is None:
        api_key = os.environ.get(api_key_env)
        if api_key is None and local_url(base_url):
            api_key = LOCAL_PLACEHOLDER_KEY
    if api_key is None or not api_key.strip():
        raise ConfigurationError(
            f"an api key is required for {base_url}: pass the api_key argument, or set "
            f"the environment variable {api_key_env}"
        )
    return api_key


def _retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (a number or an HTTP date), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds)


def _wire_message(message: Message) -> dict[str, Any]:
    """One transcript message in the Chat Completions request shape."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["content"] = message.content or None
        data["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in message.tool_calls
        ]
    return data


def _usage(data: Any) -> TokenUsage:
    if not isinstance(data, dict):
        return TokenUsage()
    prompt, completion = data.get("prompt_tokens"), data.get("completion_tokens")
    return TokenUsage(
        input_tokens=prompt if isinstance(prompt, int) and prompt >= 0 else 0,
        output_tokens=completion if isinstance(completion, int) and completion >= 0 else 0,
    )


def _bad(message: str) -> ModelHTTPError:
    return ModelHTTPError(message, kind="bad_reply", status=200)


def _call(raw: Any) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise _bad("a tool call in the reply is not an object with a function")
    function = raw["function"]
    name = function.get("name")
    call_id = raw.get("id")
    arguments = function.get("arguments", "")
    return ToolCall(
        id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
    )


def completion_from_json(data: Any) -> Completion:
    """A Chat Completions JSON reply as a Completion (see the module doc).

    Raises:
        ModelHTTPError: kind ``bad_reply``, the body is not a chat completion.
    """
    if not isinstance(data, dict):
        raise _bad("the reply is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _bad("the reply has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _bad("the reply's choice has no message")
    content = message.get("content")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _bad("the reply's tool_calls is not a list")
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    return Completion(
        text=content if isinstance(content, str) else "",
        tool_calls=tuple(_call(c) for c in calls),
        finish_reason=finish if isinstance(finish, str) else "",
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        usage=_usage(data.get("usage")),
    )


def completion_from_chunks(chunks: Iterator[Any]) -> Completion:
    """A streamed reply (the ``chat.completion.chunk`` objects, in order) as one
    Completion: the text pieces joined, each call's argument pieces joined by its
    ``index`` (the raw text, never repaired), the refusal pieces joined, the last finish
    reason and usage.

    Raises:
        ModelHTTPError: kind ``bad_reply``, a chunk is not a completion chunk.
    """
    text: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = ""
    usage = TokenUsage()
    for chunk in chunks:
        if not isinstance(chunk, dict):
            raise _bad("a stream event is not a JSON object")
        if chunk.get("usage"):
            usage = _usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise _bad("a stream event's choices is not a list")
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if isinstance(choice.get("finish_reason"), str):
                finish = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise _bad("a stream event's delta is not an object")
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                refusal.append(delta["refusal"])
            for piece in delta.get("tool_calls") or []:
                if not isinstance(piece, dict) or not isinstance(piece.get("index"), int):
                    raise _bad("a streamed tool call has no index")
                call = calls.setdefault(piece["index"], {"id": None, "name": "", "args": []})
                if isinstance(piece.get("id"), str):
                    call["id"] = piece["id"]
                function = piece.get("function") or {}
                if isinstance(function.get("name"), str):
                    call["name"] += function["name"]
                if isinstance(function.get("arguments"), str):
                    call["args"].append(function["arguments"])
    return Completion(
        text="".join(text),
        tool_calls=tuple(
            ToolCall(id=c["id"], name=c["name"], arguments="".join(c["args"]))
            for _, c in sorted(calls.items())
        ),
        finish_reason=finish,
        refusal="".join(refusal) or None,
        usage=usage,
    )


class _Retry(Exception):
    """One attempt failed in a way worth retrying."""

    def __init__(self, error: ModelHTTPError, wait: float | None) -> None:
        self.error = error
        self.wait = wait
        super().__init__(str(error))


class OpenAICompatibleModel:
    """A :class:`~agent_contract.model.Model` over an OpenAI-compatible Chat
    Completions server (OpenAI, vLLM, llama.cpp, LM Studio, Ollama's ``/v1``).

    Args:
        model: the model name sent in each request.
        base_url: the API root, ending before ``/chat/completions`` (e.g.
            ``http://127.0.0.1:8000/v1``); ``http`` or ``https``.
        api_key: the key; None reads ``api_key_env``, then falls back to a placeholder
            for a local ``base_url`` only.
        api_key_env: the environment variable read when ``api_key`` is None.
        timeout: seconds a request may wait on the socket (connecting, or between
            bytes of the reply) before it counts as a ``timeout`` failure (> 0).
        max_retries: retries after the first attempt, for 429, 5xx, timeouts and
            broken connections (>= 0).
        backoff: the first retry's jitter ceiling, in seconds; it doubles per retry.
        max_backoff: the largest wait, in seconds, jittered or asked by ``Retry-After``.
        stream: ask for a server-sent event stream and join it.
        extra_body: more request fields (``{"top_p": 0.9}``), sent as given.
        sleep: how to wait between attempts (seconds; ``time.sleep``), for tests.
        jitter: returns a float in [0, 1) drawing each jittered wait
            (``random.random``), for tests.

    Raises:
        ConfigurationError: an empty or missing key (for a server that is not local), a
            ``base_url`` that is not ``http(s)://host...``, or a bad number.

    Each call's requests are kept in :attr:`attempts` (how many the last call made).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        stream: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"base_url must be http(s)://host[:port]/path, got {base_url!r}"
            )
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError("model must be a non-empty model name")
        if timeout <= 0 or max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise ConfigurationError("timeout must be > 0; max_retries, backoff, max_backoff >= 0")
        api_key = resolve_api_key(api_key, base_url, api_key_env)
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.stream = stream
        self.extra_body = dict(extra_body or {})
        self.attempts = 0
        """How many requests the last :meth:`complete` made, retries included."""
        self._key = api_key
        self._sleep = sleep
        self._jitter = jitter
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._path = (parts.path.rstrip("/") or "") + "/chat/completions"

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(model={self.model!r}, base_url={self.base_url!r})"

    def request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        max_output_tokens: int,
        temperature: float,
    ) -> dict[str, Any]:
        """The JSON body one call sends (the transcript, the tools, the limits)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in messages],
            "max_tokens": max_output_tokens,
            "temperature": temperature,
        }
        if tools:
            body["tools"] = list(tools)
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.extra_body)
        return body

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        max_output_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Completion:
        """POST the transcript and return the reply as a Completion (see the module doc).

        Raises:
            ModelHTTPError: the request was refused (4xx other than 429, at once), or
                failed after ``max_retries`` retries (429, 5xx, timeout, connection),
                or the reply is not a chat completion.
        """
        payload = json.dumps(
            self.request_body(messages, tools, max_output_tokens, temperature),
            ensure_ascii=False,
        ).encode()
        self.attempts = 0
        while True:
            self.attempts += 1
            try:
                return self._attempt(payload)
            except _Retry as retry:
                retry.error.attempts = self.attempts
                if self.attempts > self.max_retries:
                    raise retry.error from retry.error.__cause__
                wait = retry.wait
                if wait is None:
                    ceiling = min(self.max_backoff, self.backoff * 2 ** (self.attempts - 1))
                    wait = self._jitter() * ceiling
                elif wait > self.max_backoff:
                    raise ModelHTTPError(
                        f"{retry.error} (Retry-After {wait:g}s is over max_backoff "
                        f"{self.max_backoff:g}s)",
                        kind=retry.error.kind,
                        status=retry.error.status,
                        attempts=self.attempts,
                    ) from retry.error
                self._sleep(wait)
            except ModelHTTPError as error:
                error.attempts = self.attempts
                raise

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _attempt(self, payload: bytes) -> Completion:
        """One request; raises :class:`_Retry` for a failure worth another attempt."""
        connection = self._connection()
        try:
            try:
                connection.request(
                    "POST",
                    self._path,
                    body=payload,
                    headers={
                        "Content-Type": "application/json",
                        "Accept": "text/event-stream" if self.stream else "application/json",
                        "Authorization": f"Bearer {self._key}",
                        "User-Agent": "agent-contract",
                    },
                )
                response = connection.getresponse()
                status = response.status
                if status >= 400:
                    body = response.read(64_000)
                    self._refuse(status, body, response.getheader("Retry-After"))
                if not 200 <= status < 300:
                    raise ModelHTTPError(
                        f"the server answered HTTP {status}", kind="bad_reply", status=status
                    )
                if self.stream:
                    return completion_from_chunks(_events(response))
                raw = response.read()
            except TimeoutError as exc:
                raise _Retry(
                    ModelHTTPError(f"no reply within {self.timeout:g}s", kind="timeout"), None
                ) from exc
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                raise _Retry(
                    ModelHTTPError(
                        f"the connection failed: {type(exc).__name__}", kind="connection"
                    ),
                    None,
                ) from exc
        finally:
            connection.close()
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise _bad("the reply is not JSON") from exc
        return completion_from_json(data)

    def _refuse(self, status: int, body: bytes, retry_after: str | None) -> None:
        """Raise for an HTTP error status: at once, or as a retry."""
        detail = _error_message(body)
        if status == 429 or status >= 500 or status in _RETRIED_STATUS:
            kind: ModelHTTPErrorKind = "rate_limited" if status == 429 else "server_error"
            raise _Retry(
                ModelHTTPError(f"HTTP {status}: {detail}", kind=kind, status=status),
                _retry_after(retry_after),
            )
        raise ModelHTTPError(f"HTTP {status}: {detail}", kind="refused_request", status=status)


def _error_message(body: bytes) -> str:
    """The ``error.message`` of a provider error body (capped), or its start."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace") or "(no body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:500]
    return "(no error message)"


def _events(response: http.client.HTTPResponse) -> Iterator[Any]:
    """The JSON ``data:`` events of a server-sent event stream, up to ``[DONE]``.

    Raises:
        http.client.IncompleteRead: the stream ended without ``[DONE]`` (cut).
        ModelHTTPError: kind ``bad_reply``, an event is not JSON.
    """
    data: list[str] = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
            continue
        if line or not data:
            continue  # a comment, an event name, or a blank line between events
        event = "\n".join(data)
        data = []
        if event == "[DONE]":
            return
        try:
            yield json.loads(event)
        except ValueError as exc:
            raise _bad("a stream event is not JSON") from exc
    raise http.client.IncompleteRead(b"", None)
