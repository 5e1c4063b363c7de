"""``agent-contract check --wire``: every scenario run through real provider clients.

A *wire column* is a registered harness on one real client a binding declares
(:class:`~agent_contract.harnesses.WireClient`, in its plugin's ``wires``), named
``<harness>@<wire>`` (``langchain@openai``, ``pydantic-ai-stream@anthropic``). Its
:class:`WireHarness` keeps one :class:`~agent_contract.conformance.wire.ReplayServer`
for the whole column; per scenario it

1. points the server at the scenario's scripted model: each request the client sends
   is read back into the core's messages (:func:`request_messages`), handed to the
   scenario's :class:`~agent_contract.testing.FakeModel` (so every check that reads
   what the model was sent, ``model.calls``, reads what went over the wire), and its
   reply is rendered in the wire's format (JSON or a server-sent event stream);
2. builds the binding's real client pointed at the server (a placeholder key, no
   retries of its own) and runs the registered harness with that client in place of
   the scripted model.

So the reply the contract judges is the one the client parsed from the provider's
bytes, which is what a scripted chat model skips. The core learns no framework: the
binding builds the client, the core only speaks HTTP.

Some replies have no form on a wire (:func:`reply_no_form`): Anthropic's non-streamed
``tool_use.input`` is always a JSON object (cut or malformed argument text, or a list,
cannot be sent) and every Anthropic ``tool_use`` has an id; Anthropic has no content
filter finish reason and OpenAI no ``refusal`` finish reason. A scenario with such a
reply is *not checked* on that column, with the reason (:func:`scenario_no_form`),
never run in a lossy form and passed. A client whose distribution is not installed
leaves the column's cells not checked, naming the install.

Standard library only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from ..errors import ConfigurationError
from ..harnesses import (
    Harness,
    HarnessPlugin,
    Observation,
    RunInput,
    WireClient,
    capabilities_of,
)
from ..messages import Completion, Message, ToolCall, finish_reason_of
from ..model import Model
from ..registry import harness_plugins, load_harness
from ..runtime import RunResult
from ..tools import ToolSpec
from .base import Scenario
from .evaluate import error_fields
from .wire import RecordedRequest, ReplayServer, sent_finish_reason

__all__ = [
    "COLUMN_SECONDS",
    "STREAMED_CAPABILITY",
    "STREAM_EXTRA",
    "WireHarness",
    "column_name",
    "reply_no_form",
    "request_messages",
    "scenario_no_form",
    "stream_plan",
    "wire_harnesses",
]

COLUMN_SECONDS: Final = 3600.0
"""The replay server's lifetime for one column, in seconds (it stops by itself after
that; :func:`wire_harnesses` closes it when the check ends)."""

_PIECE_CHARS: Final = 8
"""The size of a stream's pieces, in characters, unless a scenario says otherwise."""
_PROBE_URL: Final = "http://127.0.0.1:9"
"""A base URL for building a client only to see that it can be built (never
contacted)."""
_VOCABULARY: Final[Mapping[str, frozenset[str]]] = {
    "openai": frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"}),
    "anthropic": frozenset(
        {
            "end_turn",
            "stop_sequence",
            "tool_use",
            "max_tokens",
            "refusal",
            "pause_turn",
            "model_context_window_exceeded",
        }
    ),
}
"""The finish (stop) reasons each API sends."""


def column_name(harness: str, client: WireClient) -> str:
    """``<harness>@<wire>``: the column of ``harness`` on ``client``."""
    return f"{harness}@{client.wire}"


# -- what has a form on a wire ---------------------------------------------------------------


def _object_text(arguments: Any) -> bool:
    """True when ``arguments`` are a JSON object, or text of one (``""`` is no
    arguments, ``{}``, on every harness)."""
    if isinstance(arguments, dict):
        return True
    if not isinstance(arguments, str):
        return False
    if arguments == "":
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def reply_no_form(reply: Completion, wire: str, streamed: bool) -> str | None:
    """Why ``reply`` cannot be sent on ``wire`` as scripted, or None when it can.

    Args:
        reply: the scripted reply.
        wire: ``"openai"`` or ``"anthropic"``.
        streamed: whether the request asked for a stream.
    """
    sent = sent_finish_reason(reply, wire)  # type: ignore[arg-type]
    meant = finish_reason_of(reply.finish_reason)
    if wire == "anthropic" and reply.refusal and not reply.text and meant == "stop":
        meant = "refusal"  # Anthropic's form of a refusal: its text, stop reason refusal
    api = "OpenAI's Chat Completions API" if wire == "openai" else "Anthropic's Messages API"
    if sent not in _VOCABULARY[wire] or finish_reason_of(sent) != meant:
        return f"{api} has no finish reason meaning {reply.finish_reason!r}"
    if wire == "openai":
        return None
    if reply.refusal and reply.text:
        return f"{api} has no refusal beside a text (a refusal is its text)"
    for call in reply.tool_calls:
        if call.id is None:
            return "every Anthropic tool_use block has an id; a call without one cannot be sent"
        if not streamed and not _object_text(call.arguments):
            return (
                "Anthropic's non-streamed tool_use input is always a JSON object; the "
                f"arguments {str(call.arguments)[:40]!r} cannot be sent unstreamed"
            )
    return None


STREAM_EXTRA: Final = "stream"
"""The :attr:`~agent_contract.conformance.base.Scenario.extras` kind that says how a
wire column streams the scenario's replies: ``"pieces:<n>"`` (text and argument pieces
of ``n`` characters) and ``"interleaved"`` (the pieces of a reply's tool calls by turns,
:attr:`~agent_contract.conformance.wire.ReplayServer.interleave`)."""
STREAMED_CAPABILITY: Final = "streamed_replies"
"""The capability of a column whose client reads the model's reply as a stream of
pieces (every wire column declares it; an unstreamed client's column says no form)."""


def stream_plan(extras: Mapping[str, Sequence[str]]) -> tuple[int | None, bool]:
    """``(piece characters or None, interleaved)`` from a scenario's ``stream`` extras
    (:data:`STREAM_EXTRA`).

    Raises:
        ConfigurationError: an item that is neither ``pieces:<n>`` (n >= 1) nor
            ``interleaved``.
    """
    pieces: int | None = None
    interleaved = False
    for item in extras.get(STREAM_EXTRA, ()):
        name, _, value = item.partition(":")
        if name == "pieces" and value.isdigit() and int(value) >= 1:
            pieces = int(value)
        elif item == "interleaved":
            interleaved = True
        else:
            raise ConfigurationError(f"unknown stream extra {item!r}")
    return pieces, interleaved


def scenario_no_form(scenario: Scenario, wire: str, streamed: bool) -> str | None:
    """Why some scripted reply of ``scenario`` cannot be sent on ``wire`` (the first
    such reply's reason, naming its place in the script), or None. A scripted callable
    is judged when it replies (:class:`WireHarness` refuses the run then). A scenario
    streamed in pieces (:data:`STREAM_EXTRA`) has no form on an unstreamed client, and
    one whose calls interleave none on Anthropic's stream (one content block at a
    time)."""
    if STREAM_EXTRA in scenario.extras:
        _, interleaved = stream_plan(scenario.extras)
        if not streamed:
            return "the scenario's replies are streamed in pieces; this client does not stream"
        if interleaved and wire == "anthropic":
            return (
                "Anthropic's Messages API streams one content block at a time: tool calls "
                "whose pieces interleave cannot be sent"
            )
    for number, item in enumerate(scenario.script, start=1):
        reply = Completion(text=item) if isinstance(item, str) else item
        if not isinstance(reply, Completion):
            continue
        reason = reply_no_form(reply, wire, streamed)
        if reason is not None:
            return f"reply {number}: {reason}"
    return None


# -- reading a request back into the core's messages -----------------------------------------


def _text_of(content: Any) -> str:
    """The text of a message ``content``: a string, or the joined ``text`` of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _arguments_of(text: Any) -> Any:
    """Argument text as sent, parsed when it is JSON (kept as the text when not)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _status_of(content: str, is_error: bool = False) -> str:
    """A tool message's status: the wire carries none on OpenAI (and ``is_error`` on
    Anthropic); the contract's error content says it (read as the suite reads it)."""
    return "error" if is_error or error_fields(content)[0] is not None else "success"


def _tool_message(
    call_id: str, content: str, names: Mapping[str, str], is_error: bool = False
) -> Message:
    """The tool message a wire's tool result stands for (``-`` for a missing id, the
    name of the call it answers when the request carried that call)."""
    return Message(
        role="tool",
        content=content,
        tool_call_id=call_id or "-",
        name=names.get(call_id),
        status=_status_of(content, is_error),  # type: ignore[arg-type]
    )


def _openai_messages(body: Mapping[str, Any]) -> list[Message]:
    messages: list[Message] = []
    names: dict[str, str] = {}
    for item in body.get("messages") or ():
        role = item.get("role")
        text = _text_of(item.get("content"))
        if role in ("system", "developer"):
            messages.append(Message(role="system", content=text))
        elif role == "user":
            messages.append(Message(role="user", content=text))
        elif role == "assistant":
            calls = []
            for call in item.get("tool_calls") or ():
                function = call.get("function") or {}
                calls.append(
                    ToolCall(
                        id=call.get("id"),
                        name=str(function.get("name", "")),
                        arguments=_arguments_of(function.get("arguments", "")),
                    )
                )
                names[str(call.get("id"))] = str(function.get("name", ""))
            messages.append(Message(role="assistant", content=text, tool_calls=tuple(calls)))
        elif role == "tool":
            messages.append(_tool_message(str(item.get("tool_call_id") or ""), text, names))
    return messages


def _anthropic_messages(body: Mapping[str, Any]) -> list[Message]:
    messages: list[Message] = []
    system = _text_of(body.get("system"))
    if system:
        messages.append(Message(role="system", content=system))
    names: dict[str, str] = {}
    for item in body.get("messages") or ():
        role = item.get("role")
        content = item.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if role == "assistant":
            calls = []
            for block in blocks:
                if block.get("type") == "tool_use":
                    calls.append(
                        ToolCall(
                            id=block.get("id"),
                            name=str(block.get("name", "")),
                            arguments=block.get("input", {}),
                        )
                    )
                    names[str(block.get("id"))] = str(block.get("name", ""))
            messages.append(
                Message(role="assistant", content=_text_of(blocks), tool_calls=tuple(calls))
            )
            continue
        text_parts = []
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                result = _text_of(block.get("content"))
                messages.append(_tool_message(call_id, result, names, bool(block.get("is_error"))))
            elif block.get("type") == "text":
                text_parts.append(str(block.get("text", "")))
        if text_parts or not any(b.get("type") == "tool_result" for b in blocks):
            messages.append(Message(role="user", content="".join(text_parts)))
    return messages


def _tools_of(body: Mapping[str, Any], wire: str) -> list[dict[str, Any]] | None:
    """The tools offered, in the OpenAI function-tool shape the core's models get."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    if wire == "openai":
        return [dict(t) for t in tools]
    return [
        {
            "type": "function",
            "function": {
                "name": t.get("name", ""),
                "description": t.get("description", ""),
                "parameters": t.get("input_schema", {}),
            },
        }
        for t in tools
    ]


def request_messages(
    request: RecordedRequest,
) -> tuple[list[Message], list[dict[str, Any]] | None, int, float]:
    """What a client's request asks of the model, in the core's terms:
    ``(messages, tools, max_output_tokens, temperature)``.

    The messages are read back from the wire's shape (OpenAI ``messages`` with
    ``tool_calls`` and ``tool`` turns; Anthropic ``system`` and content blocks,
    ``tool_use`` and ``tool_result``); argument text is parsed when it is JSON; a tool
    message's status is read from the contract's error content (OpenAI sends none) or
    ``is_error``. Tools come in the OpenAI function-tool shape (``{"type":
    "function", "function": {"name", "description", "parameters"}}``).

    Raises:
        ConfigurationError: a request of no known wire, or a body that is not an object.
    """
    body = request.body
    if request.wire is None or not isinstance(body, dict):
        raise ConfigurationError(f"not a model request: {request.path}")
    reader = _openai_messages if request.wire == "openai" else _anthropic_messages
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or 512
    temperature = body.get("temperature")
    return (
        reader(body),
        _tools_of(body, request.wire),
        int(limit),
        float(temperature) if isinstance(temperature, (int, float)) else 0.0,
    )


# -- the column ----------------------------------------------------------------------------------


class WireHarness:
    """One wire column: the registered harness ``plugin`` run on the real ``client``
    over a replay server (see the module doc). A harness for
    :func:`~agent_contract.conformance.check.run_check` (its ``capabilities`` and
    ``not_expressible`` are the registered harness's; :meth:`no_form` and
    :attr:`unavailable` say what it cannot check).

    Args:
        plugin: the registered harness.
        client: the client the binding declares for it.
    """

    def __init__(self, plugin: HarnessPlugin, client: WireClient) -> None:
        self.plugin = plugin
        self.client = client
        self.name = column_name(plugin.name, client)
        """The column's name, ``<harness>@<wire>``."""
        self.description = f"{plugin.description}, on {client.client} over the {client.wire} wire"
        """One line for reports."""
        self._inner: Harness | None = None
        self._server: ReplayServer | None = None
        self._guard = threading.Lock()
        self._unavailable: str | None = None

    @property
    def unavailable(self) -> str | None:
        """Why the column cannot run at all (building its client raised ImportError:
        its distribution is not installed; the install is named), or None."""
        if self._unavailable is None:
            try:
                self.client.build(_PROBE_URL)
                self._unavailable = ""
            except ImportError as exc:
                self._unavailable = (
                    f"{self.client.distribution} is not installed ({self.client.install}): {exc}"
                )
        return self._unavailable or None

    @property
    def wire_info(self) -> dict[str, Any]:
        """``{"harness", "wire", "client", "streamed", "distribution"}`` (reports)."""
        return {
            "harness": self.plugin.name,
            "wire": self.client.wire,
            "client": self.client.client,
            "streamed": self.client.streamed,
            "distribution": self.client.distribution,
        }

    def no_form(self, scenario: Scenario) -> str | None:
        """Why ``scenario`` has no form on this column's wire (see
        :func:`scenario_no_form`), or None."""
        return scenario_no_form(scenario, self.client.wire, self.client.streamed)

    def _harness(self) -> Harness:
        if self._inner is None:
            self._inner = load_harness(self.plugin.name)
        return self._inner

    @property
    def capabilities(self) -> frozenset[str]:
        """The registered harness's capabilities, and :data:`STREAMED_CAPABILITY` (a
        column whose client does not stream says no form for those scenarios)."""
        return capabilities_of(self._harness()) | {STREAMED_CAPABILITY}

    @property
    def not_expressible(self) -> Mapping[str, str]:
        """The registered harness's declarations and the client's (scenario name ->
        reason)."""
        own = getattr(self._harness(), "not_expressible", None) or {}
        return {**own, **self.client.not_expressible}

    def server(self) -> ReplayServer:
        """The column's replay server, started on first use."""
        with self._guard:
            if self._server is None or self._server.stopped:
                self._server = ReplayServer(
                    [], lifetime=COLUMN_SECONDS, max_requests=500, keep_alive=False
                )
            return self._server

    def base_url(self) -> str:
        """The API root the column's client is pointed at."""
        server = self.server()
        return server.openai_base_url if self.client.wire == "openai" else server.anthropic_base_url

    def __call__(
        self, model: Model, tools: list[ToolSpec], options: RunInput
    ) -> RunResult | Observation:
        """Run one scenario: ``model`` (the scenario's scripted model) answers the
        client's requests through the server; the registered harness runs the client.

        Raises:
            ConfigurationError: a reply had no form on the wire as the request asked
                for it (the column's ``streamed`` is wrong, or a scripted callable's
                reply): reported as the scenario's crash, with the reason.
        """
        server = self.server()
        unsent: list[str] = []

        def reply(request: RecordedRequest) -> Completion:
            messages, offered, limit, temperature = request_messages(request)
            completion = model.complete(messages, offered, limit, temperature)
            reason = reply_no_form(completion, self.client.wire, request.stream)
            if reason is not None:
                unsent.append(reason)
            return completion

        server.replay(reply)
        pieces, server.interleave = stream_plan(options.extras)
        server.chunk_chars = pieces or _PIECE_CHARS
        client = self.client.build(self.base_url())
        try:
            result = self._harness()(client, tools, options)
        finally:
            server.chunk_chars, server.interleave = _PIECE_CHARS, False
            if self.client.close is not None:
                self.client.close(client)
        if unsent:
            raise ConfigurationError(
                f"a reply had no form on {self.name} (requests streamed: "
                f"{[r.stream for r in server.requests]}): {unsent[0]}"
            )
        return result

    def close(self) -> None:
        """Stop the column's server (idempotent)."""
        with self._guard:
            if self._server is not None:
                self._server.close()


def _columns() -> list[WireHarness]:
    return [WireHarness(p, c) for p in harness_plugins() if p.role == "contract" for c in p.wires]


@contextmanager
def wire_harnesses(names: Sequence[str] = ()) -> Iterator[dict[str, WireHarness]]:
    """The wire columns by name, in registry order; their servers are closed on exit.

    Args:
        names: the columns wanted, each a column name (``langchain@openai``), a
            registered harness's name (its columns) or a wire's (``openai``: every
            column on it), in that order; empty: every column every installed binding
            declares.

    Raises:
        ConfigurationError: a name that matches no column (the known ones are named), or
            no column at all.
    """
    known = {c.name: c for c in _columns()}
    chosen: dict[str, WireHarness] = {}
    for name in names:
        found = [c for c in known.values() if name in (c.name, c.plugin.name, c.client.wire)]
        if not found:
            raise ConfigurationError(
                f"no wire column {name!r}; known: {', '.join(known) or 'none'}"
            )
        chosen.update((c.name, c) for c in found)
    if not names:
        chosen = known
    if not chosen:
        raise ConfigurationError(
            "no installed binding declares a wire column (install a binding with its "
            "openai or anthropic extra)"
        )
    try:
        yield chosen
    finally:
        for column in chosen.values():
            column.close()
