"""The binding's harnesses, as the core's registry sees them (entry-point group
``agent_contract.harnesses`` in this package's ``pyproject.toml``).

- ``pydantic-ai``, ``pydantic-ai-async``, ``pydantic-ai-stream``: a PydanticAI ``Agent``
  with the contract's capability and toolset, driven with ``run_sync``, ``run`` or
  ``run_stream_events``; ``pydantic-ai`` is checked by default and can run the demo
  durably (the contract's snapshot is all it needs to resume);
- ``plain-pydantic-ai``: the control, a plain ``Agent`` with stock tools and settings
  (:mod:`agent_contract_pydantic_ai.baseline`), expected to break.

What a harness cannot express is declared, with the reason, in
:data:`NOT_EXPRESSIBLE` (the harness's ``not_expressible`` attribute).

Importing this module imports no PydanticAI: each harness loads it when it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from agent_contract.harnesses import (
    CORE_CAPABILITIES,
    Harness,
    HarnessPlugin,
    SnapshotRunner,
    WireClient,
    mode_plugins,
)

if TYPE_CHECKING:
    from .driving import Mode

__all__ = [
    "CAPABILITIES",
    "CONTROL_CAPABILITIES",
    "MISSING_ID_ON_THE_STREAM",
    "NOT_EXPRESSIBLE",
    "NULL_ID_UNPARSED",
    "PLAIN_PYDANTIC_AI",
    "PYDANTIC_AI",
    "PYDANTIC_AI_ASYNC",
    "PYDANTIC_AI_STREAM",
    "STACK",
    "WIRE_KEY",
    "WIRE_MODEL",
    "snapshot_runner",
    "wire_clients",
]

STACK: Final = ("pydantic-ai-slim",)
"""The distributions whose versions a report of these harnesses shows."""

CAPABILITIES: Final[tuple[str, ...]] = (
    *CORE_CAPABILITIES,
    "crash_restart",
    "durable_store",
    "sub_agents",
)
"""What the contract harnesses express: the contract's own features (timeouts, write
tools), the crash/restart hook (a resume crashed at a named point continues in a
fresh agent from the stored snapshot) and the checkpoint-integrity hook (the paused
snapshot, the agent's only durable state, stored in the run store and reopened after a
tampering). The framework pieces of the suite's stack scenarios are named after LangChain's
(middleware, graph commands, interrupts, checkpointed threads) and are not applied here."""

CONTROL_CAPABILITIES: Final[tuple[str, ...]] = tuple(CORE_CAPABILITIES)
"""What the control expresses (no framework extras either)."""

MISSING_ID_ON_THE_STREAM: Final = (
    "PydanticAI's streaming parts manager gives a streamed tool call without an id one of "
    "its own (pyd_ai_<hex>, `tool_call_id or _generate_tool_call_id()`) before any hook "
    "sees the response, so the contract never sees that the model sent none: the call "
    "runs, bound to the invented id (binding holds; the missing-id refusal cannot happen)"
)

NOT_EXPRESSIBLE: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "run_sync": MappingProxyType({}),
        "run": MappingProxyType({}),
        "stream": MappingProxyType({"missing_call_id": MISSING_ID_ON_THE_STREAM}),
    }
)
"""Per mode: scenario name -> why the harness cannot express it (the harness's
``not_expressible`` attribute). Listed in docs/MIGRATION_PYDANTIC_AI.md too."""


def _suite_harness(mode: Mode) -> Harness:
    from .harness import suite_harness

    harness = suite_harness(mode)
    streams = ("streamed_replies",) if mode == "stream" else ()  # its model streams in pieces
    harness.capabilities = (*CAPABILITIES, *streams)  # type: ignore[attr-defined]
    harness.not_expressible = NOT_EXPRESSIBLE[mode]  # type: ignore[attr-defined]
    return harness


def _control() -> Harness:
    from .baseline import plain_pydantic_ai_harness

    return plain_pydantic_ai_harness


def snapshot_runner() -> SnapshotRunner:
    """The ``pydantic-ai`` harness as a durable runner: a run paused for approval resumes
    in another process from the contract's snapshot alone (PydanticAI keeps no state of
    its own between runs; the history is rebuilt from the snapshot's transcript). It runs
    :func:`~agent_contract_pydantic_ai.harness.run_agent_input` with ``run_sync`` and
    resumes with :func:`~agent_contract_pydantic_ai.harness.resume_agent`; PydanticAI is
    imported here, when it is used."""
    from .harness import resume_agent, run_agent_input

    return SnapshotRunner(run_agent_input, resume_agent)


WIRE_MODEL: Final = "replay-model"
"""The model name the wire columns' models ask for (the replay server answers any)."""
WIRE_KEY: Final = "sk-replay-placeholder"
"""The placeholder key the wire columns' clients send (the replay server reads none)."""


NULL_ID_UNPARSED: Final = (
    "OpenAIChatModel validates an unstreamed reply with the OpenAI SDK's types, which "
    "need every tool call's id: a call without one makes the whole reply an "
    "UnexpectedModelBehavior (stop model_error) before any hook sees it"
)
"""Why ``missing_call_id`` cannot be expressed on ``OpenAIChatModel`` unstreamed."""


def _openai_model(base_url: str) -> Any:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=base_url, api_key=WIRE_KEY, max_retries=0, timeout=30)
    return OpenAIChatModel(WIRE_MODEL, provider=OpenAIProvider(openai_client=client))


def _anthropic_model(base_url: str) -> Any:
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(base_url=base_url, api_key=WIRE_KEY, max_retries=0, timeout=30)
    return AnthropicModel(WIRE_MODEL, provider=AnthropicProvider(anthropic_client=client))


def _close_model(model: Any) -> None:
    """Close the SDK client of a wire column's model on the loop it ran on
    (:func:`~agent_contract_pydantic_ai.driving.close_model_client`)."""
    from .driving import close_model_client

    close_model_client(model)


def wire_clients(mode: str) -> tuple[WireClient, ...]:
    """The real models ``check --wire`` runs the harness of ``mode`` on: PydanticAI's
    ``OpenAIChatModel`` and ``AnthropicModel``, each over its SDK's async client
    pointed at the replay server with a placeholder key and no retries; the ``stream``
    mode's model calls stream (``run_stream_events``)."""
    streamed = mode == "stream"
    return (
        WireClient(
            wire="openai",
            client="OpenAIChatModel",
            streamed=streamed,
            distribution="openai",
            install="pip install 'agent-contract-pydantic-ai[openai]'",
            build=_openai_model,
            close=_close_model,
            not_expressible={} if streamed else {"missing_call_id": NULL_ID_UNPARSED},
        ),
        WireClient(
            wire="anthropic",
            client="AnthropicModel",
            streamed=streamed,
            distribution="anthropic",
            install="pip install 'agent-contract-pydantic-ai[anthropic]'",
            build=_anthropic_model,
            close=_close_model,
        ),
    )


PYDANTIC_AI, PYDANTIC_AI_ASYNC, PYDANTIC_AI_STREAM = mode_plugins(
    _suite_harness,
    (
        ("pydantic-ai", "run_sync", "run_sync"),
        ("pydantic-ai-async", "run", "run"),
        ("pydantic-ai-stream", "stream", "run_stream_events"),
    ),
    description="a PydanticAI Agent with ContractCapability",
    durable=snapshot_runner,
    versions=STACK,
    wires=wire_clients,
)
PLAIN_PYDANTIC_AI: Final = HarnessPlugin(
    name="plain-pydantic-ai",
    description="a plain PydanticAI Agent without the contract",
    load=_control,
    role="control",
    default=True,
    versions=STACK,
)
