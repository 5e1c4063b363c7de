"""Broken PydanticAI wirings, one defect each, and their correct twins: a subclass of
``ContractCapability``, a team's model wrapper (PydanticAI's ``WrapperModel``), a team's
tool conversion and a team's run driver. Imported only when the PydanticAI binding is
installed.

The team's harness (:func:`agent_harness`) is the binding's suite harness with its
pieces spelled out: the agent from ``build_agent``, the run started from the contract,
driven ``run_sync`` under the team's capability (a ``ContractCapability``, or a subclass
of it), approvals answered through ``resume_agent``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import capture_run_messages
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequestPart,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model as PydanticModel
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from agent_contract.harnesses import Harness, RunInput, settle_approvals
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.runtime import Contract, RunResult, RunState
from agent_contract.tools import ToolSpec
from agent_contract_pydantic_ai import driving
from agent_contract_pydantic_ai.capability import ContractCapability
from agent_contract_pydantic_ai.harness import child_runner, resume_agent
from agent_contract_pydantic_ai.model import contract_model
from agent_contract_pydantic_ai.plugin import CAPABILITIES, NOT_EXPRESSIBLE

from .harnesses import permissive_schema

Start = Callable[[RunInput, Contract], RunState]
"""How the team's driver starts a run of ``contract`` for the run's input."""

GENERIC = json.dumps(
    {
        "error": "invalid_arguments",
        "message": "invalid arguments, please try again",
        "outcome": "not_run",
        "side_effects_possible": False,
    }
)


# -- a subclass of ContractCapability ---------------------------------------------------


class TerseValidationCapability(ContractCapability):
    """A team's subclass that 'simplifies' validation errors for the model: every
    ``invalid_arguments`` result the model gets next loses its path and constraint."""

    def ledger_parts(
        self, parts: Sequence[ModelRequestPart], order: dict[str, int]
    ) -> list[ModelRequestPart]:
        out = super().ledger_parts(parts, order)
        return [
            dataclasses.replace(p, content=GENERIC)
            if isinstance(p, ToolReturnPart) and '"invalid_arguments"' in str(p.content)
            else p
            for p in out
        ]


class EchoingRefusalCapability(ContractCapability):
    """A team's subclass that adds a refused call's arguments to the error the model
    gets next, 'for debugging'."""

    def __init__(self, state: RunState, **kwargs: Any) -> None:
        super().__init__(state, **kwargs)
        self.arguments: dict[str, str] = {}

    def judge(self, response: ModelResponse) -> ModelResponse:
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                self.arguments[part.tool_call_id] = part.args_as_json_str()
        return super().judge(response)

    def ledger_parts(
        self, parts: Sequence[ModelRequestPart], order: dict[str, int]
    ) -> list[ModelRequestPart]:
        out = super().ledger_parts(parts, order)
        return [
            dataclasses.replace(
                p, content=f"{p.content} (arguments: {self.arguments.get(p.tool_call_id)})"
            )
            if isinstance(p, ToolReturnPart) and '"error"' in str(p.content)
            else p
            for p in out
        ]


class PlainCapability(ContractCapability):
    """The correct twin: a subclass that changes nothing."""

    def ledger_parts(
        self, parts: Sequence[ModelRequestPart], order: dict[str, int]
    ) -> list[ModelRequestPart]:
        return super().ledger_parts(parts, order)


# -- a model wrapper ---------------------------------------------------------------------


class NormalizingModel(WrapperModel):
    """A team's model wrapper (logging, a fallback chain) that rebuilds each response
    from its parts, so the finish reason and the provider's details (the refusal) are
    lost (``keep=True``: the response handed on as it is, the twin)."""

    def __init__(self, wrapped: PydanticModel, *, keep: bool = False) -> None:
        super().__init__(wrapped)
        self.keep = keep

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await super().request(messages, model_settings, model_request_parameters)
        if self.keep:
            return response
        return ModelResponse(
            parts=response.parts, usage=response.usage, model_name=response.model_name
        )


# -- the team's run driver ---------------------------------------------------------------


def _drive(
    agent: Any, state: RunState, messages: Sequence[Message], capability: type[ContractCapability]
) -> RunResult:
    """``drive_agent`` (``run_sync``) with the team's capability class in the run."""
    stop = state.check_before_model_call(messages, count_step=False)
    if stop is not None:
        return state.finish(stop, messages=messages, harness="pydantic-ai")
    _, options = driving._run_options(state, messages, None)
    own = capability(state)
    options["capabilities"] = [own]
    with capture_run_messages() as captured:
        return driving._settle(
            state,
            lambda: driving.run_sync_on_own_loop(agent, options),
            captured,
            own,
            "pydantic-ai",
        )


def agent_harness(
    *,
    capability: type[ContractCapability] = ContractCapability,
    model: Callable[[PydanticModel], PydanticModel] = lambda m: m,
    tools: Callable[[list[ToolSpec]], list[ToolSpec]] = lambda t: t,
    start: Start = lambda options, contract: options.start(contract),
) -> Harness:
    """A team's PydanticAI wiring (``run_sync``) with one piece swapped in: its
    capability class, its model wrapper, its tool conversion, how it starts a run."""

    def harness(base_model: Model, base_tools: list[ToolSpec], options: RunInput) -> RunResult:
        adapted = tools(base_tools)
        wrapped = model(contract_model(base_model))
        plan = options.sub_agent  # the sub-agent hook: its child delegates as the binding's
        contract = (
            options.contract(adapted)
            if plan is None
            else plan.contract(adapted, options.contract, child_runner(plan.model, "run_sync"))
        )
        agent = driving.build_agent(wrapped, contract)
        result = _drive(agent, start(options, contract), options.messages(), capability)
        return settle_approvals(
            result,
            lambda snapshot, approvals, checkpoint=None: resume_agent(
                wrapped, contract, snapshot, approvals, checkpoint=checkpoint
            ),
            options,
            restart=lambda snapshot, approvals: resume_agent(
                wrapped, options.contract(tools(base_tools)), snapshot, approvals
            ),
        )

    harness.capabilities = CAPABILITIES  # type: ignore[attr-defined]
    harness.not_expressible = NOT_EXPRESSIBLE["run_sync"]  # type: ignore[attr-defined]
    return harness


def without_caller(options: RunInput, contract: Contract) -> RunState:
    """A driver that starts the run from the contract alone: its run id and context,
    no caller."""
    return contract.start(run_id=options.run_id, context=options.context)


def open_conversion(tools: list[ToolSpec]) -> list[ToolSpec]:
    """A team's conversion of its PydanticAI tools into ``ToolSpec``s that leaves the
    schema open ('PydanticAI validates its own tools')."""
    return permissive_schema(tools)
