"""The contract suite's sub-agent hook: a run whose top agent delegates to a child agent.

A :class:`SubAgentPlan` (:attr:`~agent_contract.runtime.input.RunInput.sub_agent`,
capability ``sub_agents``) asks a harness to give the run one more tool,
:attr:`SubAgentPlan.tool` (``delegate(text)``), each call of which runs a child agent
on :attr:`SubAgentPlan.model` under the run's child contract,
``contract.child(agent, tools=..., allowlist=...)`` (:meth:`SubAgentPlan.child`), as a
child scope of that call, the way the harness's framework runs an agent inside a tool
(see docs/MULTI_AGENT.md). The tool's result is the child's answer; the contract's
rules do the rest (the run's budget, the child's allowlist, a fresh scope per call, a
child's stop ending the run).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .model import Model
from .runtime import Contract
from .tools import ToolContext, ToolSpec

__all__ = ["DELEGATE_PARAMETERS", "RunChild", "SubAgentPlan"]

RunChild = Callable[[Contract, ToolContext, str], str | Awaitable[str]]
"""``run_child(child, context, text) -> answer``: how a harness runs the child agent on
``text`` under the child contract ``child`` inside the tool call ``context`` names (an
``async def`` one is awaited)."""

DELEGATE_PARAMETERS: Final = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
"""The delegating tool's parameters: the child's user message, ``text``."""


@dataclass(frozen=True, kw_only=True)
class SubAgentPlan:
    """A child agent the run's top agent delegates to (see the module doc)."""

    agent: str
    """The child agent's name (its scope in the trace)."""
    model: Model
    """The child's model (one for every delegation: a script continues where it
    stopped)."""
    tools: tuple[ToolSpec, ...]
    """The child's tools."""
    allowlist: tuple[str, ...] | None = None
    """The names of those it may run (None: all of them)."""
    tool: str = "delegate"
    """The name of the parent's delegating tool."""

    def child(self, contract: Contract) -> Contract:
        """The child's contract, made from the run's ``contract`` by
        :meth:`~agent_contract.runtime.contract.Contract.child`.

        Raises:
            ConfigurationError: as ``Contract.child`` (an allowlist naming a tool that is
                not among :attr:`tools`, or a write tool).
        """
        return contract.child(self.agent, tools=list(self.tools), allowlist=self.allowlist)

    def contract(
        self,
        tools: Sequence[ToolSpec],
        build: Callable[[list[ToolSpec]], Contract],
        run_child: RunChild,
    ) -> Contract:
        """The run's contract, ``build(tools + [the delegating tool])``, whose delegating
        tool's each call runs ``run_child(child, context, text)``: the child agent on
        ``text`` under ``child`` (:meth:`child` of that contract, made once), inside the
        call ``context.tool_call_id``, returning its answer. An ``async def``
        ``run_child`` makes the tool's handler ``async def`` too.

        Raises:
            ConfigurationError: as ``build`` and :meth:`child`.
        """
        made: list[Contract] = []
        handler: Callable[..., Any]
        if inspect.iscoroutinefunction(run_child):

            async def delegate_async(context: ToolContext, text: str) -> str:
                return await run_child(made[0], context, text)  # type: ignore[no-any-return]

            handler = delegate_async
        else:

            def delegate(context: ToolContext, text: str) -> str:
                return run_child(made[0], context, text)  # type: ignore[return-value]

            handler = delegate
        spec = ToolSpec(
            name=self.tool,
            description=f"Ask the {self.agent} agent; returns its answer.",
            parameters=DELEGATE_PARAMETERS,
            handler=handler,
            needs_context=True,
        )
        contract = build([*tools, spec])
        made.append(self.child(contract))
        return contract
