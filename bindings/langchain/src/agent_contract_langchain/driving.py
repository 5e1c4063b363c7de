"""Driving a compiled contract graph once, and naming how it ended.

:func:`drive` (sync) and :func:`adrive` (async, in the caller's event loop) run the graph
in one of three modes and return an :class:`Ended`: the final state, the pending
interrupts, the last node that ran and the exception that ended it, if any.
:func:`stop_for` turns that into the run's stop:

- a ``GraphRecursionError``: the contract's own stop if it had halted, else
  ``max_graph_steps`` (the limit derived from the budget);
- an exception a stock middleware raised (defined in ``langchain.agents.middleware``,
  e.g. ``ToolCallLimitExceededError``): ``middleware_stop`` naming it, unless the
  contract had stopped first (an answer another layer then blocked is not an answer);
- interrupts: ``pending_approval`` when all are the contract's write approvals, else
  ``interrupted`` (a HITL review, an ``interrupt()`` in a tool): resumable;
- otherwise the contract's stop, or, when the graph ended without a contract decision,
  ``middleware_stop`` naming the node that ended it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langgraph.errors import GraphRecursionError

from agent_contract.errors import ConfigurationError
from agent_contract.runtime import RunState, Stop

from .approvals import is_approval_payload
from .errors import framework_errors
from .messages import from_langchain
from .sealed import check_state_types

__all__ = ["Ended", "Mode", "adrive", "check_loop", "drive", "issue_order", "stop_for"]

Mode = Literal["invoke", "ainvoke", "stream"]

_MIDDLEWARE_MODULES = "langchain.agents.middleware"


@dataclass(kw_only=True)
class Ended:
    """How one invocation of a graph ended."""

    final: dict[str, Any] = field(default_factory=dict)
    """The final state values (empty when the graph raised)."""
    interrupts: tuple[Any, ...] = ()
    """The interrupts the thread waits on."""
    last_node: str | None = None
    """The node that ran last, when known."""
    error: BaseException | None = None
    """What ended it, when it raised a recursion limit or a middleware's exception."""
    limit: int = 0
    """The recursion limit it ran under."""


def _caught(exc: BaseException) -> bool:
    return isinstance(exc, GraphRecursionError) or type(exc).__module__.startswith(
        _MIDDLEWARE_MODULES
    )


def check_loop(graph: Any) -> None:
    """Refuse a checkpointer bound to another event loop than the running one (an
    ``AsyncSqliteSaver`` opened elsewhere), before anything runs.

    Raises:
        ConfigurationError: it is bound to another loop.
    """
    loop = getattr(getattr(graph, "checkpointer", None), "loop", None)
    if loop is None:
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is not running:
        raise ConfigurationError(
            "the graph's checkpointer is bound to another event loop: open the async "
            "checkpointer in the loop that runs the graph and drive it with "
            "arun_agent / aresume_agent (or arun_graph / aresume_graph) there"
        )


def _streamed_ids(graph: Any, config: Mapping[str, Any]) -> set[str]:
    if getattr(graph, "checkpointer", None) is None:
        return set()
    messages = graph.get_state(config).values.get("messages", ())
    return {str(m.id) for m in messages if getattr(m, "id", None)}


def _check_streamed_calls(streamed: Sequence[Any], produced: Sequence[Any]) -> None:
    """Every tool call in the messages this invocation produced must have come through
    the messages stream (a call streamed among ``invalid_tool_calls`` counts: its
    arguments came as JSON text holding an object, which the contract accepts and moves
    to ``tool_calls``, see :func:`~agent_contract_langchain.messages.with_judged_calls`).

    A call is matched by its id, or else by its message: a produced message whose calls
    streamed under its id, as many as it holds, had an id changed in place after it
    streamed (that edit is the contract's gate to judge, and it refuses it as a broken
    history); a message holding more calls than it streamed, or one never streamed,
    lost calls.

    Raises:
        ConfigurationError: naming the ids of the calls that never came through the stream.
    """
    sent: set[Any] = set()
    by_message: dict[Any, set[Any]] = {}
    for message in streamed:
        if isinstance(message, AIMessage | AIMessageChunk):
            for call in (*message.tool_calls, *message.invalid_tool_calls):
                sent.add(call["id"])
                by_message.setdefault(message.id, set()).add(call["id"])
    lost: list[str] = []
    for message in produced:
        if not isinstance(message, AIMessage):
            continue
        missing = [call["id"] for call in message.tool_calls if call["id"] not in sent]
        if missing and len(message.tool_calls) > len(by_message.get(message.id, ())):
            lost.extend(str(i) for i in missing)
    if lost:
        raise ConfigurationError(f"tool calls missing from the messages stream: {sorted(lost)}")


def _input_ids(payload: Any) -> set[str]:
    """The ids of the input messages (the history and the new turn), which this
    invocation did not produce; a message without one gets one here (the payload's
    messages are the driver's own fresh objects)."""
    if not isinstance(payload, Mapping):
        return set()
    ids: set[str] = set()
    for message in payload.get("messages", ()):
        if isinstance(message, BaseMessage):
            if message.id is None:
                message.id = f"input-{uuid.uuid4().hex}"
            ids.add(str(message.id))
    return ids


def _stream(graph: Any, payload: Any, config: Any, context: Any, ended: Ended) -> None:
    before = _streamed_ids(graph, config) | _input_ids(payload)
    streamed: list[BaseMessage] = []
    for mode, chunk in graph.stream(
        payload, config=config, context=context, stream_mode=["messages", "updates", "values"]
    ):
        if mode == "messages":
            streamed.append(chunk[0])
        elif mode == "values":
            ended.final = chunk
        elif mode == "updates" and isinstance(chunk, Mapping):
            for node in chunk:
                if node == "__interrupt__":
                    ended.interrupts = tuple(chunk[node])
                else:
                    ended.last_node = str(node)
    # New messages are told by id: a checkpointed thread's earlier turns are in the
    # final state too, and their calls were streamed in their own turn.
    produced = [m for m in ended.final.get("messages", ()) if str(m.id) not in before]
    _check_streamed_calls(streamed, produced)


def _last_node(graph: Any, config: Mapping[str, Any]) -> str | None:
    history = list(graph.get_state_history(config, limit=2))
    return _node_of(history)


async def _alast_node(graph: Any, config: Mapping[str, Any]) -> str | None:
    history = [s async for s in graph.aget_state_history(config, limit=2)]
    return _node_of(history)


def _node_of(history: Sequence[Any]) -> str | None:
    if len(history) < 2 or not history[1].next:
        return None
    return str(history[1].next[-1])


def drive(graph: Any, payload: Any, config: dict[str, Any], context: Any, mode: Mode) -> Ended:
    """Run ``graph`` once in ``mode`` (``invoke`` or ``stream``).

    Raises:
        ConfigurationError: tool calls lost from the stream, or bad wiring.
        CheckpointError: the checkpoint cannot be read, or the graph's state declares a
            type its sealed checkpointer does not store (``TypeNotAllowedError``, before
            anything runs).
    """
    check_state_types(graph)
    ended = Ended(limit=int(config.get("recursion_limit", 0)))
    with framework_errors():
        try:
            if mode == "stream":
                _stream(graph, payload, config, context, ended)
            else:
                ended.final = graph.invoke(payload, config=config, context=context)
        except Exception as exc:
            if not _caught(exc):
                raise
            ended.error = exc
        if getattr(graph, "checkpointer", None) is not None:
            current = graph.get_state(config)
            ended.interrupts = tuple(current.interrupts)
            if not ended.final:
                ended.final = dict(current.values)
            if ended.last_node is None:
                ended.last_node = _last_node(graph, config)
    return ended


async def adrive(graph: Any, payload: Any, config: dict[str, Any], context: Any) -> Ended:
    """Run ``graph`` once with ``ainvoke``, in the running event loop (the checkpointer
    is read with its async methods, on the same loop).

    Raises:
        ConfigurationError: the checkpointer is bound to another loop, or bad wiring.
        CheckpointError: the checkpoint cannot be read, or the graph's state declares a
            type its sealed checkpointer does not store (``TypeNotAllowedError``, before
            anything runs).
    """
    check_loop(graph)
    check_state_types(graph)
    ended = Ended(limit=int(config.get("recursion_limit", 0)))
    with framework_errors():
        try:
            ended.final = await graph.ainvoke(payload, config=config, context=context)
        except Exception as exc:
            if not _caught(exc):
                raise
            ended.error = exc
        if getattr(graph, "checkpointer", None) is not None:
            current = await graph.aget_state(config)
            ended.interrupts = tuple(current.interrupts)
            if not ended.final:
                ended.final = dict(current.values)
            ended.last_node = await _alast_node(graph, config)
    return ended


def issue_order(messages: Sequence[Any]) -> list[Any]:
    """``messages`` with the tool messages after each AIMessage in the order of its
    ``tool_calls`` (another middleware may answer a call before the tool node does)."""
    ordered: list[Any] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        ordered.append(message)
        index += 1
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        run: list[Any] = []
        while index < len(messages) and isinstance(messages[index], ToolMessage):
            run.append(messages[index])
            index += 1
        rank = {str(c.get("id")): n for n, c in enumerate(message.tool_calls)}
        ordered.extend(sorted(run, key=lambda m: rank.get(str(m.tool_call_id), len(rank))))
    return ordered


def _preview(final: Mapping[str, Any]) -> str:
    for message in reversed(list(final.get("messages", ()))):
        if isinstance(message, AIMessage):
            text = from_langchain(message).content
            return f": {text[:120]!r}" if text else ""
    return ""


def stop_for(state: RunState, ended: Ended) -> Stop | None:
    """The stop to finish the run with (``None``: the contract's own; see the module doc)."""
    halted = state.view.halted
    if isinstance(ended.error, GraphRecursionError):
        if halted is not None:
            return None
        return Stop(
            reason="max_graph_steps",
            detail=f"the graph ran {ended.limit} supersteps (its recursion limit, derived "
            "from max_model_steps and the stack's node hooks) without ending",
        )
    if ended.error is not None:
        if halted is not None and halted.reason != "answered":
            return None
        return Stop(reason="middleware_stop", detail=f"{type(ended.error).__name__} ended the run")
    if ended.interrupts:
        foreign = [i for i in ended.interrupts if not is_approval_payload(i.value)]
        if not foreign:
            return None  # the pending_approval pause
        ids = ", ".join(str(getattr(i, "id", "?")) for i in foreign)
        return Stop(reason="interrupted", detail=f"waiting on {len(foreign)} interrupt(s): {ids}")
    if halted is not None:
        return None
    node = ended.last_node or "a middleware"
    return Stop(
        reason="middleware_stop",
        detail=f"{node} ended the run before the contract decided{_preview(ended.final)}",
    )
