"""Running an admitted tool call (see :mod:`.prepare`).

:func:`run_tool_call` runs the tool node's handler under the contract's executor
(timeout, classified errors; the call's :class:`~agent_contract.tools.ToolContext` in
:data:`~agent_contract_langchain.tools.current_tool_context`) and gives the result and
the state update of a tool that returned a ``Command`` (see
:mod:`~agent_contract_langchain.graph_commands`). :func:`run_write` runs a write call:
it waits for its decision and runs once approved, through the tool node
(:mod:`~agent_contract_langchain.approvals`). LangGraph's control flow goes through
(:mod:`~agent_contract_langchain.control`).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from agent_contract.errors import ConfigurationError, ToolError
from agent_contract.results import ToolResult
from agent_contract.runtime import RunState
from agent_contract.tools import ToolContext

from .. import approvals
from ..control import CONTROL_FLOW, ResumeRefused, check_resume
from ..graph_commands import CommandRefusedError, split_command
from ..messages import tool_message_value
from ..run_config import ActiveCall, active_call, call_scope
from ..sealed import TypeNotAllowedError, check_update_types
from ..tools import RawValue, current_tool_context, framework_runner
from .prepare import Admitted
from .requests import with_visible_arguments

__all__ = [
    "REPORTED",
    "Ran",
    "arun_tool_call",
    "arun_write",
    "reported_error",
    "run_tool_call",
    "run_write",
]

Ran = tuple[ToolResult, dict[str, Any] | None]
"""A call's result and, when its tool returned a ``Command``, the rest of its update."""


_PASSTHROUGH: Final = (*CONTROL_FLOW, ConfigurationError)
"""LangGraph's control flow, and a configuration error raised inside the tool call: a
child agent's miswiring (``ChildScopeRefused``: outside the contract, or under a
contract not made from the run's; a child's middleware without its gate) is the
contract's, never a tool's failure the model reads: it goes out of the run."""


class _ToolReportedError(ToolError):
    """A foreign tool (or a layer inside the contract) answered with an error message."""


REPORTED: Final = "the tool reported an error"
"""What the model reads of an error a tool reported, unless the contract's
``expose_exception_text`` shows the tool's own text (redacted) after it."""


def _reported_text(content: Any) -> str:
    """The text of an error ``ToolMessage``'s content: a string, or the text of its
    content blocks (what langchain-mcp-adapters returns)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
        ]
        return "\n".join(p for p in parts if p)
    return ""


def reported_error(message: ToolMessage, expose: bool) -> ToolError:
    """The error a tool's error ``ToolMessage`` stands for, under the same exposure policy
    as an exception a tool raises: :data:`REPORTED`, then the tool's text when
    ``expose`` (``Contract(expose_exception_text=True)``; redacted with the result)."""
    text = _reported_text(message.content).strip() if expose else ""
    return _ToolReportedError(f"{REPORTED}: {text}" if text else REPORTED)


@dataclass(slots=True)
class _Output:
    """Reads what the tool handler of one call returned."""

    state: RunState
    call_id: str
    config: Mapping[str, Any] | None = None
    """The tool task's config (its checkpointer: :func:`check_update_types`)."""
    update: dict[str, Any] | None = None
    """The state update of the ``Command`` the tool returned, once it returned one."""

    def answered(self, output: Any) -> Any:
        """:meth:`value`, once the run is told the handler answered (another layer
        may have answered in the tool's place)."""
        self.state.layers.answered_unrun(self.call_id)
        return self.value(output)

    def value(self, output: Any) -> Any:
        """The raw value inside ``output``.

        Raises:
            CommandRefusedError: a ``Command`` the contract refuses (its update holding
                a type the run's sealed checkpointer does not store, too).
            ToolError: a ToolMessage with the status ``error``.
        """
        if isinstance(output, Command):
            message, self.update = split_command(output, self.call_id)
            try:
                check_update_types(self.config, self.update)
            except TypeNotAllowedError as exc:
                raise CommandRefusedError(
                    f"the tool returned a state update holding {', '.join(exc.types)}, a type "
                    "the run's checkpointer does not store (its allowed_types); the update "
                    "was dropped"
                ) from None
            output = message
        if isinstance(output, ToolMessage):
            if output.status == "error":
                raise reported_error(output, self.state.view.contract.expose_exception_text)
            if isinstance(output.artifact, RawValue):
                return output.artifact.value
            return tool_message_value(output.content)
        return output


@contextmanager
def _handler_frame(context: ToolContext, scope: ActiveCall) -> Iterator[None]:
    """The frame one handler run executes in: the call's tool context and its scope set
    (an agent the tool starts is a child scope), and a refused resume value LangGraph
    raised inside it recognised (:func:`~agent_contract_langchain.control.check_resume`)."""
    current_tool_context.set(context)
    token = active_call.set(scope)
    try:
        yield
    except Exception as exc:
        check_resume(exc)
        raise
    finally:
        active_call.reset(token)


@contextmanager
def _resume_refusal_raised() -> Iterator[None]:
    """Raise a refused resume value as LangGraph raised it, out of the executor that
    carried it (:class:`~agent_contract_langchain.control.ResumeRefused`)."""
    try:
        yield
    except ResumeRefused as exc:
        raise exc.error from None


def run_tool_call(step: Admitted, handler: Callable[[Any], ToolMessage | Command[Any]]) -> Ran:
    """Run ``step`` through ``handler`` (the tool node, and what sits inside the contract)
    under the contract's executor.

    Raises:
        Exception: LangGraph's control flow (a refused resume value as LangGraph raised
            it).
    """
    request = step.request
    output = _Output(step.state, step.planned.call_id, request.runtime.config)
    scope = call_scope(step.state, step.planned.call_id, request.runtime.config)

    def invoke(context: ToolContext) -> Any:
        with _handler_frame(context, scope):
            returned = handler(request)
        return output.answered(returned)

    with _resume_refusal_raised():
        result = step.state.execute(step.planned, invoke, passthrough=_PASSTHROUGH)
    return result, output.update


async def arun_tool_call(
    step: Admitted,
    handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
) -> Ran:
    """Async :func:`run_tool_call` (an async tool is cancelled at its timeout)."""
    request = step.request
    output = _Output(step.state, step.planned.call_id, request.runtime.config)
    scope = call_scope(step.state, step.planned.call_id, request.runtime.config)

    async def ainvoke(context: ToolContext) -> Any:
        with _handler_frame(context, scope):
            returned = await handler(request)
        return output.answered(returned)

    with _resume_refusal_raised():
        result = await step.state.aexecute(step.planned, ainvoke, passthrough=_PASSTHROUGH)
    return result, output.update


def run_write(step: Admitted, handler: Callable[[Any], ToolMessage | Command[Any]]) -> ToolMessage:
    """Run the write call ``step`` once approved and answer it
    (:func:`~agent_contract_langchain.approvals.write_call`), the approved write running
    through ``handler`` (the graph's tool node) with the decided arguments, so a tool
    adopted with ``from_langchain_tool`` gets its injected arguments; the update of a
    ``Command`` it returns is not applied.

    Raises:
        ApprovalError: resumed without a decision, or with one that does not fit.
    """
    output = _Output(step.state, step.planned.call_id)

    def run_tool(arguments: dict[str, Any]) -> Any:
        return output.value(handler(with_visible_arguments(step.request, arguments)))

    token = framework_runner.set((step.planned.call.name, run_tool))
    try:
        return approvals.write_call(step.state, step.planned)
    finally:
        framework_runner.reset(token)


async def arun_write(
    step: Admitted, handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]]
) -> ToolMessage:
    """Async :func:`run_write`: the decision and the write run on a worker thread; the
    tool node's async handler runs on this event loop (free meanwhile: it awaits the
    thread)."""
    output = _Output(step.state, step.planned.call_id)
    loop = asyncio.get_running_loop()

    def run_tool(arguments: dict[str, Any]) -> Any:
        ran = handler(with_visible_arguments(step.request, arguments))
        return output.value(asyncio.run_coroutine_threadsafe(_awaited(ran), loop).result())

    context = contextvars.copy_context()
    context.run(framework_runner.set, (step.planned.call.name, run_tool))
    return await asyncio.to_thread(context.run, approvals.write_call, step.state, step.planned)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
