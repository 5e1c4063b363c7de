"""The binding's harnesses, as the core's registry sees them (entry-point group
``agent_contract.harnesses`` in this package's ``pyproject.toml``).

- ``langchain``, ``langchain-async``, ``langchain-stream``: ``create_agent`` with
  :class:`~agent_contract_langchain.middleware.ContractMiddleware`, driven with
  ``invoke``, ``ainvoke`` or ``stream``; ``langchain`` is checked by default and can run
  the demo durably (a checkpointer on the data folder's store: SQLite or PostgreSQL).
- ``plain-create-agent``: the control, a bare ``create_agent`` without the contract
  (:mod:`agent_contract_langchain.controls.plain_create_agent`), expected to break.

Importing this module imports no LangChain: each harness loads it when it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from agent_contract.harnesses import (
    DurableRunner,
    Harness,
    HarnessPlugin,
    WireClient,
    mode_plugins,
)

from .controls import PLAIN_CREATE_AGENT_NAME

if TYPE_CHECKING:
    from .harness import Mode

__all__ = [
    "LANGCHAIN",
    "LANGCHAIN_ASYNC",
    "LANGCHAIN_STREAM",
    "LIST_ARGUMENTS_UNBUILT",
    "PLAIN_CREATE_AGENT",
    "STACK",
    "STREAMED_REFUSAL_DROPPED",
    "WIRE_KEY",
    "WIRE_MODEL",
    "agent_probes",
    "sqlite_agent_runner",
    "wire_clients",
]

STACK: Final = ("langchain", "langchain-core", "langgraph")
"""The distributions whose versions a report of these harnesses shows."""


def _suite_harness(mode: Mode) -> Harness:
    from .resuming import suite_harness

    return suite_harness(mode)


def _control() -> Harness:
    from .controls.plain_create_agent import plain_create_agent_harness

    return plain_create_agent_harness


def sqlite_agent_runner() -> DurableRunner:
    """The ``langchain`` harness as a durable runner: ``create_agent`` with LangGraph's
    checkpointer on the run's store (``SqliteSaver`` in ``folder/checkpoints.sqlite3``,
    :data:`~agent_contract_langchain.durable.CHECKPOINT_FILE`, or ``PostgresSaver`` in a
    ``postgresql://`` store's database; sealed, read with an allowlist of types), so a run paused for approval resumes in another process (the contract's
    snapshot holds the rest, with the paused checkpoint's seal). The runner is the module
    :mod:`agent_contract_langchain.durable` (its ``run``, ``resume``, ``forget`` and
    ``kept``), imported here, when it is used, with LangChain."""
    from . import durable

    return durable


WIRE_MODEL: Final = "replay-model"
"""The model name the wire columns' clients ask for (the replay server answers any)."""
WIRE_KEY: Final = "sk-replay-placeholder"
"""The placeholder key the wire columns' clients send (the replay server reads none)."""


LIST_ARGUMENTS_UNBUILT: Final = (
    "ChatOpenAI cannot build the AIMessage of an unstreamed reply whose call arguments are "
    "a JSON list (a pydantic ValidationError at tool_calls.N.args): the run stops "
    "invalid_response, as everywhere, but the call is lost with the message, so it has no "
    "id to answer invalid_call"
)
"""Why ``arguments_not_object`` cannot be expressed on ``ChatOpenAI`` unstreamed."""
STREAMED_REFUSAL_DROPPED: Final = (
    "ChatOpenAI's streamed chunks drop OpenAI's delta.refusal (langchain-openai reads a "
    "refusal only from an unstreamed message): the reply reaches the contract empty and "
    "stops invalid_response, the refusal text lost before any hook sees it"
)
"""Why ``provider_refusal`` cannot be expressed on ``ChatOpenAI`` streamed."""


def _chat_openai(base_url: str) -> Any:
    """A ``ChatOpenAI`` with httpx clients of its own, closed after its scenario
    (:func:`~agent_contract_langchain.providers.close_chat_model`)."""
    import httpx
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    return ChatOpenAI(
        model=WIRE_MODEL,
        base_url=base_url,
        api_key=SecretStr(WIRE_KEY),
        max_retries=0,
        timeout=30,
        http_client=httpx.Client(timeout=30),
        http_async_client=httpx.AsyncClient(timeout=30),
    )


def _close_chat_model(chat: Any) -> None:
    from .providers import close_chat_model

    close_chat_model(chat)


def _chat_anthropic(base_url: str) -> Any:
    from langchain_anthropic import ChatAnthropic
    from pydantic import SecretStr

    return ChatAnthropic(  # type: ignore[call-arg]
        model_name=WIRE_MODEL,
        base_url=base_url,
        api_key=SecretStr(WIRE_KEY),
        max_retries=0,
        default_request_timeout=30,
        max_tokens=1024,
    )


def wire_clients(mode: str) -> tuple[WireClient, ...]:
    """The real clients ``check --wire`` runs the harness of ``mode`` on:
    ``ChatOpenAI`` (langchain-openai) and ``ChatAnthropic`` (langchain-anthropic), each
    pointed at the replay server with a placeholder key and no retries; the ``stream``
    mode's model calls stream (``graph.stream(stream_mode="messages")``)."""
    streamed = mode == "stream"
    unbuilt = (
        {"provider_refusal": STREAMED_REFUSAL_DROPPED}
        if streamed
        else {"arguments_not_object": LIST_ARGUMENTS_UNBUILT}
    )
    return (
        WireClient(
            wire="openai",
            client="ChatOpenAI",
            streamed=streamed,
            distribution="langchain-openai",
            install="pip install 'agent-contract-langchain[openai]'",
            build=_chat_openai,
            close=_close_chat_model,
            not_expressible=unbuilt,
        ),
        WireClient(
            wire="anthropic",
            client="ChatAnthropic",
            streamed=streamed,
            distribution="langchain-anthropic",
            install="pip install 'agent-contract-langchain[anthropic]'",
            build=_chat_anthropic,
        ),
    )


LANGCHAIN, LANGCHAIN_ASYNC, LANGCHAIN_STREAM = mode_plugins(
    _suite_harness,
    (
        ("langchain", "invoke", "invoke"),
        ("langchain-async", "ainvoke", "ainvoke"),
        ("langchain-stream", "stream", "stream"),
    ),
    description="create_agent with ContractMiddleware",
    durable=sqlite_agent_runner,
    versions=STACK,
    wires=wire_clients,
)
PLAIN_CREATE_AGENT: Final = HarnessPlugin(
    name=PLAIN_CREATE_AGENT_NAME,
    description="a bare create_agent without the contract",
    load=_control,
    role="control",
    default=True,
    versions=STACK,
)


def agent_probes(
    spec: str, *, mode: str = "invoke", effects: Mapping[str, str] | None = None
) -> Any:
    """``agent-contract check --agent``'s builder (entry-point group
    ``agent_contract.agents``): see :func:`agent_contract_langchain.agent_check.probes.
    agent_probes`; LangChain is imported here, when it is used."""
    from .agent_check.probes import agent_probes as build

    if mode not in ("invoke", "ainvoke", "stream"):
        from agent_contract.errors import ConfigurationError

        raise ConfigurationError(f"unknown mode {mode!r}; expected invoke, ainvoke or stream")
    return build(spec, mode=mode, effects=effects)  # type: ignore[arg-type]
