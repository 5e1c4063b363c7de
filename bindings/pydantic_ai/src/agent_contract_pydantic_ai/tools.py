"""The contract's tools as a PydanticAI toolset: :class:`ContractToolset`.

Every tool the contract registers is a PydanticAI tool with its JSON Schema unchanged
(``strict=False``, so a provider does not rewrite it) and a pass-through argument
validator: PydanticAI hands the arguments on as the model sent them, and the contract
validates them (Draft 2020-12, closed objects) when it plans the batch, before anything
runs. The toolset lists every registered tool, allowlisted or not, so that a call to one
outside the allowlist reaches the contract's ``not_allowed`` refusal; the model is offered
only the allowlisted ones (the capability filters the request).

``call_tool`` runs nothing by itself: it asks the run's :class:`RunState` (the contract's
capability sets it for the run, :data:`current_run_state`) what the call is, then

- answers a refused call with its bound refusal, without running it;
- runs an admitted call on the contract's executor (its timeout, serializer, size limit
  and classified errors) with ``state.aexecute``: an ``async def`` handler awaited on the
  run's loop, a sync one on the contract's worker pool, the loop woken when it ends;
- defers a write call with ``ApprovalRequired`` until a human decided (PydanticAI then
  ends the run with ``DeferredToolRequests``), and once decided runs it with
  ``state.execute`` (preview, idempotency key, verification), whatever arguments
  PydanticAI's own approval carries: the contract's decision is bound to the exact call.

A result goes back bound to the call's id: a success as ``ToolReturn`` (the contract's
content; its summary in ``metadata``, which the model never sees), an error as
``ToolFailed`` (PydanticAI's terminal failure: no retry prompt, no retry budget).
"""

from __future__ import annotations

import contextvars
from typing import Any, Final, NoReturn

import anyio.to_thread
from pydantic_ai import ToolFailed
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.messages import ToolReturn
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from agent_contract.errors import ApprovalError, ConfigurationError
from agent_contract.results import ToolResult, error_content
from agent_contract.runtime import Contract, PlannedCall, RunState

__all__ = [
    "PASS_THROUGH",
    "ContractToolset",
    "current_call",
    "current_run_state",
    "deliver",
    "not_admitted",
    "run_planned",
]

PASS_THROUGH: Final = SchemaValidator(core_schema.any_schema())
"""PydanticAI's argument validator for the contract's tools: it neither refuses nor changes
anything (the contract validates against the JSON Schema itself)."""

current_run_state: Final[contextvars.ContextVar[RunState | None]] = contextvars.ContextVar(
    "agent_contract_pydantic_ai_run_state", default=None
)
"""The run a :class:`ContractToolset` serves, set by the contract's capability for the
length of the run (PydanticAI runs tools in tasks of the run, which inherit it)."""

current_call: Final[contextvars.ContextVar[tuple[RunState, str] | None]] = contextvars.ContextVar(
    "agent_contract_pydantic_ai_call", default=None
)
"""``(the run, the tool_call_id)`` of the contract tool call being run (set by
:meth:`ContractToolset.call_tool` while it runs): an agent started inside it is a child
agent of that call (``ContractCapability.child``)."""

_PASSTHROUGH: Final = (ConfigurationError,)
"""Raised inside a tool call, a configuration error (a child agent's miswiring) is the
contract's, never a tool's failure the model reads: it goes out of the run."""

_NOT_ADMITTED: Final = "this call was not admitted by the contract"


def deliver(result: ToolResult) -> ToolReturn:
    """A ledger result as PydanticAI's tool result: ``ToolReturn`` for a success.

    Raises:
        ToolFailed: for an error result, with the contract's content (bound to the call
            by PydanticAI, no retry prompt added).
    """
    if not result.ok:
        raise ToolFailed(result.content)
    return ToolReturn(return_value=result.content, metadata={"agent_contract": result.summary()})


def not_admitted() -> NoReturn:
    """Answer a call the contract never planned (nothing is recorded: the ledger knows only
    the calls the model issued through the contract).

    Raises:
        ToolFailed: always, with a ``not_allowed`` error content.
    """
    raise ToolFailed(
        error_content("not_allowed", _NOT_ADMITTED, outcome="not_run", side_effects_possible=False)
    )


def _state_for(contract: Contract) -> RunState:
    state = current_run_state.get()
    outer = current_call.get()
    if state is not None and state.view.contract is not contract and outer is not None:
        raise ConfigurationError(
            f"a ContractToolset runs inside tool call {outer[1]!r} of a contract run "
            "without its own ContractCapability: run the inner agent as a child agent of "
            "that call, agent.run(..., capabilities=[ContractCapability.child(contract)]) "
            "with contract = the run's Contract's .child(name, tools=...) "
            "(see docs/MULTI_AGENT.md)"
        )
    if state is None or state.view.contract is not contract:
        raise ConfigurationError(
            "ContractToolset runs only under its ContractCapability: "
            "agent.run(..., capabilities=[ContractCapability(contract.start())]) "
            "(or agent_contract_pydantic_ai.run_agent)"
        )
    return state


async def _write(state: RunState, planned: PlannedCall, approved: bool) -> ToolReturn:
    """A write call: deferred until a human decided, then run once by the contract."""
    done = state.view.result_for(planned.call_id)
    if done is not None:
        return deliver(done)
    if state.view.decision_for(planned.call_id) is None:
        if approved:  # PydanticAI's approval without the contract's decision: fail closed
            raise ApprovalError(
                f"call {planned.call_id!r} was approved to PydanticAI, but the contract has "
                "no decision for it: decide through resume_agent (or RunState.resume)",
                tool_call_id=planned.call_id,
            )
        pending = planned.approval
        summary = {"tool_call_id": planned.call_id, "name": pending.name if pending else ""}
        raise ApprovalRequired(metadata={"agent_contract": summary})
    return deliver(await anyio.to_thread.run_sync(state.execute, planned))


async def run_planned(
    state: RunState, planned: PlannedCall, *, approved: bool = False
) -> ToolReturn:
    """Answer or run one planned call through the contract (see the module doc).

    Raises:
        ToolFailed: the call's result is an error (refused, failed, timed out...).
        ApprovalRequired: a write call waits for a human decision.
        ApprovalError: PydanticAI approved a write the contract has no decision for.
    """
    if planned.refusal is not None:
        return deliver(planned.refusal)
    if planned.approval is not None:
        return await _write(state, planned, approved)
    answered = state.view.result_for(planned.call_id)
    if answered is not None:  # run once: a layer calling the tool again gets the same answer
        return deliver(answered)
    return deliver(await state.aexecute(planned, passthrough=_PASSTHROUGH))


class ContractToolset(AbstractToolset[Any]):
    """The tools of ``contract`` as a PydanticAI toolset (see the module doc).

    Args:
        contract: the tools, allowlist, budget and executor.
        max_retries: PydanticAI's per-tool retry budget; the contract's own budget ends a
            run first (it never asks for a retry itself), so this only keeps PydanticAI's
            per-name counters (an unknown tool called again) from ending a run before it.

    Raises:
        ConfigurationError: (from ``call_tool``) the toolset runs without its capability.
    """

    def __init__(self, contract: Contract, *, max_retries: int | None = None) -> None:
        self.contract = contract
        budget = contract.budget
        self.max_retries = (
            max_retries
            if max_retries is not None
            else max(budget.max_tool_calls, budget.max_model_steps) + 1
        )

    @property
    def id(self) -> str:
        """The toolset's id: ``agent_contract``."""
        return "agent_contract"

    @property
    def label(self) -> str:
        """Its name in PydanticAI's messages."""
        return "the agent-contract toolset"

    def definitions(self) -> list[ToolDefinition]:
        """Every registered tool as a ``ToolDefinition`` (JSON Schema unchanged, not strict)."""
        return [
            ToolDefinition(
                name=spec.name,
                description=spec.description,
                parameters_json_schema=dict(spec.parameters),
                strict=False,
            )
            for spec in self.contract.registry
        ]

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """Every registered tool, with the pass-through validator."""
        return {
            definition.name: ToolsetTool(
                toolset=self,
                tool_def=definition,
                max_retries=self.max_retries,
                args_validator=PASS_THROUGH,
            )
            for definition in self.definitions()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Answer or run the call ``ctx.tool_call_id`` through the contract; ``tool_args``
        are not used (the contract runs the arguments it validated, or a human decided).

        Raises:
            ToolFailed, ApprovalRequired, ApprovalError: as :func:`run_planned`.
            ConfigurationError: no contract run is active for this toolset.
        """
        state = _state_for(self.contract)
        planned = state.view.planned_call(str(ctx.tool_call_id or ""))
        if planned is None:
            answered = state.view.result_for(str(ctx.tool_call_id or ""))
            if answered is not None:
                return deliver(answered)
            not_admitted()
        token = current_call.set((state, planned.call_id))  # an agent it starts is a child
        try:
            return await run_planned(
                state, planned, approved=bool(getattr(ctx, "tool_call_approved", False))
            )
        finally:
            current_call.reset(token)
