"""Streamed replies judged on what the model sent, not on LangChain's repair of it.

When a chat model streams (``graph.stream(stream_mode="messages")``, ``astream``, a
client built with ``streaming=True``), langchain-core joins the tool-call chunks of the
reply and parses their argument text with ``parse_partial_json``, which *closes* cut or
broken JSON: ``{"amount": 10`` (a reply cut by ``max_tokens`` inside ``{"amount":
1000}``) becomes ``{"amount": 10}``; then the chunk list is dropped when the chunk
becomes the ``AIMessage`` (``message_chunk_to_message``). The raw text survives only in
the chunks as they arrive (``on_llm_new_token(..., chunk=...)``).

:class:`StreamedCalls` is a callback handler that keeps, per model run, the joined raw
argument text of each streamed call (chunks merged as langchain-core merges them: by
``index``, ``args`` and ``name`` concatenated, the first ``id`` kept). The contract's
gate collects them around the one model call it passes (:func:`collecting`: the handler
is attached to every callback manager configured in that context, through
langchain-core's ``register_configure_hook``), then
:func:`~agent_contract_langchain.messages.with_streamed_arguments` puts the text back in
the ``AIMessage``: a call whose parsed arguments are not what its raw text says moves to
``invalid_tool_calls`` holding that text, exactly as the unstreamed client leaves a call
whose arguments do not parse. The contract then refuses it as it refuses the unstreamed
one (``unparseable_arguments``: ``invalid_response``, or ``truncated_response`` when the
finish reason says the reply was cut).

The handler does not make a model stream (it is no streaming handler): what a model does
unstreamed is unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.tracers.context import register_configure_hook

from .messages import _json_text

__all__ = ["RawCall", "StreamedCalls", "argument_text", "collecting"]


def argument_text(arguments: Any) -> str:
    """The argument text a model streams for a call with ``arguments``: a string as it
    is (a cut or malformed text stays so; an empty one is no arguments, as every client
    reads it), any other value as JSON (non-ASCII kept; a list or a number stays what it
    is, for the contract to refuse).

    Raises:
        ConfigurationError: ``arguments`` cannot be written as JSON (e.g. a set).
    """
    return arguments if isinstance(arguments, str) else _json_text(arguments)


@dataclass
class RawCall:
    """One streamed tool call as its chunks carried it."""

    id: str | None = None
    """The first non-empty id of its chunks."""
    name: str = ""
    """Its name chunks, joined."""
    args: str = ""
    """Its argument chunks, joined: the text the model sent."""


@dataclass
class _Run:
    calls: dict[int, RawCall] = field(default_factory=dict)
    loose: list[RawCall] = field(default_factory=list)  # chunks without an index


class StreamedCalls(BaseCallbackHandler):
    """Collects the raw streamed tool-call chunks of every model run it sees (see the
    module doc). Thread-safe; runs inline on the async path (no executor hop)."""

    run_inline = True

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, **kwargs: Any) -> None:
        """Nothing. Defined so that LangChain does not fall back to ``on_llm_start``,
        which first renders the whole history as text (every step: a cost that grew
        with the run)."""

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Merge the chunk's ``tool_call_chunks`` into its run's raw calls."""
        message = getattr(chunk, "message", None)
        if not isinstance(message, AIMessageChunk) or not message.tool_call_chunks:
            return
        with self._lock:
            run = self._runs.setdefault(run_id, _Run())
            for part in message.tool_call_chunks:
                index = part.get("index")
                if isinstance(index, int):
                    call = run.calls.setdefault(index, RawCall())
                else:
                    call = RawCall()
                    run.loose.append(call)
                if part.get("id") and call.id is None:
                    call.id = part.get("id")
                call.name += part.get("name") or ""
                call.args += part.get("args") or ""

    def arguments(self) -> dict[str, str]:
        """The raw argument text of every streamed call seen, by call id (calls without
        an id are left out: the contract refuses them for that)."""
        with self._lock:
            found: dict[str, str] = {}
            for run in self._runs.values():
                for call in [*(run.calls[i] for i in sorted(run.calls)), *run.loose]:
                    if call.id:
                        found[call.id] = call.args
            return found


_ACTIVE: ContextVar[StreamedCalls | None] = ContextVar("agent_contract_streamed", default=None)
register_configure_hook(_ACTIVE, inheritable=False)


@contextmanager
def collecting() -> Iterator[StreamedCalls]:
    """A fresh :class:`StreamedCalls` attached to every model run started inside the
    block (in this context: a thread's or a task's)."""
    handler = StreamedCalls()
    token = _ACTIVE.set(handler)
    try:
        yield handler
    finally:
        _ACTIVE.reset(token)
