"""The LangChain harness: ``create_agent`` + :class:`ContractMiddleware`, returning the
same :class:`~agent_contract.runtime.RunResult` as the offline loop.

Three ways to drive the graph, all through the same middleware:

- ``"invoke"``: ``graph.invoke``;
- ``"ainvoke"``: ``graph.ainvoke`` (async hooks, async tool path), on an event loop of
  its own; the ``a``-prefixed entry points (:func:`arun_agent`, :func:`aresume_agent`,
  :func:`arun_graph`, :func:`aresume_graph`) run in the caller's loop instead, which an
  async checkpointer (``AsyncSqliteSaver``) needs: one loop owns it;
- ``"stream"``: ``graph.stream(stream_mode=["messages", "updates", "values"])``: the tool
  calls must arrive through the ``messages`` stream (the path ``GenericFakeChatModel``
  breaks); the last ``values`` chunk gives the final state.

Every run gets the recursion limit derived from its budget
(:func:`~agent_contract_langchain.run_config.recursion_limit`) and its state in the
config (:func:`~agent_contract_langchain.run_config.contract_config`); the graph's
``context=`` is the team's (``graph_context``). How the run ended is named by
:func:`~agent_contract_langchain.driving.stop_for`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Unpack, get_args

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.pools import run_async
from agent_contract.runtime import (
    Contract,
    RunInput,
    RunOptions,
    RunResult,
    RunState,
    interruptible,
)
from agent_contract.runtime.history import history_size_stop
from agent_contract.tools import ToolRegistry, ToolSpec

from ._inline_hooks import inline_hooks
from .chat_model import ContractChatModel
from .driving import Ended, Mode, adrive, check_loop, drive, issue_order, stop_for
from .messages import from_langchain_messages, to_langchain_messages
from .middleware import ContractMiddleware
from .run_config import contract_config, recursion_limit
from .sealed import SealedSerializer
from .stops import without_stops
from .structured import response_format_for
from .tools import to_langchain_tools

__all__ = [
    "MODES",
    "Mode",
    "arun_agent",
    "arun_graph",
    "build_agent",
    "run_agent",
    "run_agent_input",
    "run_async",
    "run_graph",
]

MODES: Final[tuple[str, ...]] = get_args(Mode)

_FOREIGN: Final = "answered by another middleware without running"


def build_agent(
    model: Model | BaseChatModel,
    contract: Contract,
    *,
    system: str | None = None,
    checkpointer: Any = None,
    middleware: Sequence[Any] = (),
    tools: Sequence[Any] | None = None,
    **create_agent_options: Any,
) -> Any:
    """``create_agent`` over the contract's tools, the contract's middleware around yours.

    Args:
        model: any agent_contract Model (wrapped in :class:`ContractChatModel`), or a
            LangChain chat model, used as it is (a ``ChatOpenAI`` from
            :func:`~agent_contract_langchain.providers.build_chat_model`).
        contract: tools, allowlist, budget, redaction.
        system: system prompt.
        checkpointer: a LangGraph checkpointer, or None.
        middleware: more middleware, placed between the contract's two
            (``[ContractMiddleware, *middleware, its gate]``).
        tools: the LangChain tools to give ``create_agent`` (default: the contract's
            registry, converted with :func:`to_langchain_tools`).
        **create_agent_options: passed to ``create_agent`` (``response_format``,
            ``context_schema``, ``store``, ...); a contract with an ``answer_format``
            gets the matching ``response_format`` unless one is given.

    Returns:
        The compiled graph.
    """
    if contract.answer_format is not None:  # the contract's structured answer
        create_agent_options.setdefault(
            "response_format", response_format_for(contract.answer_format)
        )
    return create_agent(
        model if isinstance(model, BaseChatModel) else ContractChatModel(model=model),
        tools=list(tools) if tools is not None else to_langchain_tools(contract.registry),
        system_prompt=system,
        middleware=ContractMiddleware(contract).around(*middleware),
        checkpointer=checkpointer,
        **create_agent_options,
    )


def _start(
    graph: Any,
    state: RunState,
    messages: Sequence[Message],
    config: Mapping[str, Any] | None,
    resume: Command[Any] | None,
) -> tuple[Any, dict[str, Any]]:
    """The payload and config of one invocation."""
    checkpointer = getattr(graph, "checkpointer", None)
    if checkpointer is not None and not isinstance(
        getattr(checkpointer, "serde", None), SealedSerializer
    ):
        # A checkpointer writes the graph state to disk: a secret handed to the run must
        # not be stored, so a run on a checkpointer of your own gets its input redacted
        # (the model sees the redaction marker). The binding's own (sqlite_checkpointer)
        # stores every value encrypted, so there the model gets the input as it is, as on
        # every other harness.
        redact = state.view.contract.redaction.redact_value
        messages = [Message.from_dict(redact(m.to_dict())) for m in messages]
    payload: Any = resume if resume is not None else {"messages": to_langchain_messages(messages)}
    limit = recursion_limit(
        graph,
        state.view.contract.budget,
        used_model_steps=state.view.usage().model_steps,
        resuming=resume is not None,
    )
    return payload, contract_config(state, config, recursion_limit=limit)


def _refused_input(
    state: RunState,
    messages: Sequence[Message],
    system: str | None,
    resume: Command[Any] | None,
    harness: str,
) -> RunResult | None:
    """The run ended at once when its input turns are over the budget's history limits
    (:func:`~agent_contract.runtime.history.history_size_stop`), before any of them is
    converted or handed to the graph; else ``None``. A resume hands no turns."""
    if resume is not None:
        return None
    stop = history_size_stop(state.view.contract.budget, messages)
    if stop is None:
        return None
    transcript = list(messages)
    if system is not None:
        transcript.insert(0, Message(role="system", content=system))
    return state.finish(stop, messages=transcript, harness=harness)


def _result(state: RunState, ended: Ended, system: str | None, harness: str) -> RunResult:
    final = list(ended.final.get("messages", ()))
    for message in final:
        if isinstance(message, ToolMessage):  # a call another layer answered, unrun
            state.layers.refuse_unrun(str(message.tool_call_id), _FOREIGN)
    stop = stop_for(state, ended)
    transcript = from_langchain_messages(issue_order(without_stops(final)))
    if system is not None:
        transcript.insert(0, Message(role="system", content=system))
    return state.finish(stop, messages=transcript, harness=harness)


def run_graph(
    graph: Any,
    state: RunState,
    messages: Sequence[Message],
    *,
    mode: Mode = "invoke",
    config: Mapping[str, Any] | None = None,
    system: str | None = None,
    resume: Command[Any] | None = None,
    graph_context: Any = None,
) -> RunResult:
    """Drive a compiled contract agent once and build the RunResult.

    Args:
        graph: from :func:`build_agent` (or any ``create_agent`` graph whose middleware
            includes a ContractMiddleware for ``state.view.contract`` and its gate).
        state: from ``contract.start()``.
        messages: the input turns (history, then the new user message).
        mode: ``"invoke"``, ``"ainvoke"`` or ``"stream"``.
        config: LangGraph config (``thread_id`` for checkpointers); the run's state and
            its derived ``recursion_limit`` are added.
        system: the system prompt the graph was built with, to put first in the
            transcript as the offline loop does.
        resume: a ``Command(resume=...)`` to continue an interrupted thread instead of
            starting from ``messages``.
        graph_context: the graph's runtime ``context=`` (your ``context_schema``'s
            value), passed through untouched.

    With a checkpointer on ``graph`` the input messages are redacted first, since the
    graph state is written to disk, unless it stores its values encrypted (the
    binding's :func:`~agent_contract_langchain.durable.sqlite_checkpointer`).

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: unknown ``mode``, tool calls lost from the stream, or an
            async checkpointer bound to another event loop (use :func:`arun_graph`).
        CheckpointError: the graph's checkpoint cannot be read.
        RunInterrupted: Ctrl-C, a signal or ``SystemExit`` interrupted the run; it
            carries the run paused ``interrupted`` (see
            :func:`agent_contract.runtime.interruptible`).
    """
    if mode not in MODES:
        raise ConfigurationError(f"unknown mode {mode!r}; expected one of {MODES}")
    if mode == "ainvoke":
        return run_async(
            arun_graph(
                graph,
                state,
                messages,
                config=config,
                system=system,
                resume=resume,
                graph_context=graph_context,
            )
        )
    refused = _refused_input(state, messages, system, resume, f"langchain-{mode}")
    if refused is not None:
        return refused
    payload, cfg = _start(graph, state, messages, config, resume)
    # Ctrl-C, SIGTERM or SystemExit: the run pauses ``interrupted`` (RunInterrupted).
    with interruptible(state, messages, harness=f"langchain-{mode}"):
        ended = drive(graph, payload, cfg, graph_context, mode)
    return _result(state, ended, system, f"langchain-{mode}")


async def arun_graph(
    graph: Any,
    state: RunState,
    messages: Sequence[Message],
    *,
    config: Mapping[str, Any] | None = None,
    system: str | None = None,
    resume: Command[Any] | None = None,
    graph_context: Any = None,
) -> RunResult:
    """:func:`run_graph` with ``ainvoke`` in the running event loop (the one that owns
    an async checkpointer); ``harness`` is ``"langchain-ainvoke"``.

    Raises:
        ConfigurationError: the checkpointer is bound to another event loop.
        ScriptExhaustedError, CheckpointError: as :func:`run_graph`.
    """
    check_loop(graph)
    refused = _refused_input(state, messages, system, resume, "langchain-ainvoke")
    if refused is not None:
        return refused
    payload, cfg = _start(graph, state, messages, config, resume)
    with interruptible(state, messages, harness="langchain-ainvoke"), inline_hooks():
        ended = await adrive(graph, payload, cfg, graph_context)
    return _result(state, ended, system, "langchain-ainvoke")


def _agent_run(
    model: Model | BaseChatModel,
    contract: Contract,
    options: RunInput,
    checkpointer: Any,
    create_agent_options: Mapping[str, Any],
) -> tuple[Any, RunState, dict[str, Any] | None]:
    """The graph, the started run and its config (a thread per run on a checkpointer)."""
    graph = build_agent(
        model, contract, system=options.system, checkpointer=checkpointer, **create_agent_options
    )
    state = options.start(contract)
    config = (
        {"configurable": {"thread_id": state.view.run_id}} if checkpointer is not None else None
    )
    return graph, state, config


def run_agent(
    model: Model | BaseChatModel,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    mode: Mode = "invoke",
    checkpointer: Any = None,
    graph_context: Any = None,
    create_agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """The LangChain twin of :func:`agent_contract.run`: the same arguments (less
    ``max_output_tokens`` and ``temperature``, which belong to the chat model), the same
    result.

    Builds ``create_agent`` with the contract's middleware, runs it once in ``mode``
    and returns a :class:`RunResult` (``harness`` is ``"langchain-<mode>"``).

    Args:
        mode: ``"invoke"``, ``"ainvoke"`` or ``"stream"``.
        checkpointer: a LangGraph checkpointer; the run's thread id is its run id, a
            write pauses on ``interrupt()`` (resume with :func:`resume_agent`), and the
            input is redacted before it is stored (unless the checkpointer encrypts
            its values: :func:`~.durable.sqlite_checkpointer`). An async one needs
            :func:`arun_agent`.
        graph_context: the graph's runtime ``context=`` (for ``context_schema``).
        create_agent_options: passed to ``create_agent`` (``middleware``,
            ``response_format``, ``context_schema``, ...; None: none).
        **options: the run's keywords, as :func:`agent_contract.run` takes them (see
            :class:`~agent_contract.runtime.RunOptions`); ``context`` holds application
            values for context-aware tools (``ToolContext.values``).

    The keyword front door of :func:`run_agent_input`: it builds the run's
    :class:`~agent_contract.runtime.RunInput` from its keywords, and nothing else.

    Raises:
        ScriptExhaustedError: a scripted model ran dry.
        ConfigurationError: bad wiring.
        CheckpointError: the checkpoint cannot be read.
    """
    request = RunInput.of(user_message, **options)
    return run_agent_input(
        model,
        request.contract(tools),
        request,
        mode=mode,
        checkpointer=checkpointer,
        graph_context=graph_context,
        **(create_agent_options or {}),
    )


def run_agent_input(
    model: Model | BaseChatModel,
    contract: Contract,
    options: RunInput,
    *,
    mode: Mode = "invoke",
    checkpointer: Any = None,
    graph_context: Any = None,
    **create_agent_options: Any,
) -> RunResult:
    """Build ``create_agent`` over ``contract`` and run it once on ``options`` (the one
    signature the front doors and the durable runner call).

    Args:
        contract: the run's contract, usually ``options.contract(tools)`` (no contract
            setting is read from ``options``).
        options: the run's input: its system message is the graph's system prompt, its
            history and user message the input turns; its run id, caller and context
            start the run.
        mode: as :func:`run_agent`.
        checkpointer: as :func:`run_agent`.
        graph_context: as :func:`run_agent`.
        **create_agent_options: passed to ``create_agent``, as :func:`run_agent`'s
            ``create_agent_options``.

    Raises:
        ScriptExhaustedError, ConfigurationError, CheckpointError: as :func:`run_agent`.
    """
    graph, state, config = _agent_run(model, contract, options, checkpointer, create_agent_options)
    return run_graph(
        graph,
        state,
        options.turns(),
        mode=mode,
        system=options.system,
        config=config,
        graph_context=graph_context,
    )


async def arun_agent(
    model: Model | BaseChatModel,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    checkpointer: Any = None,
    graph_context: Any = None,
    create_agent_options: Mapping[str, Any] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """:func:`run_agent` with ``ainvoke`` in the running event loop: use it with an async
    checkpointer (``AsyncSqliteSaver``) opened in that loop.

    Raises:
        ConfigurationError: the checkpointer is bound to another event loop.
        ScriptExhaustedError, CheckpointError: as :func:`run_agent`.
    """
    request = RunInput.of(user_message, **options)
    graph, state, config = _agent_run(
        model, request.contract(tools), request, checkpointer, create_agent_options or {}
    )
    return await arun_graph(
        graph,
        state,
        request.turns(),
        system=request.system,
        config=config,
        graph_context=graph_context,
    )
