"""The contract as ``create_agent`` middleware: a thin driver of the core RunState.

Two middleware instances, both wrap hooks only (composed inside the model and tools
nodes: no extra graph steps):

- :class:`ContractMiddleware`, **outermost**: before the model, it closes the last batch
  (a call another middleware answered without running it is recorded ``not_run``) and
  checks deadline, trace size and step budget; it hides the contract's stop messages
  from the model and offers only allowlisted tools; after the model, it judges the
  response (shape, ids, arguments) and plans the whole batch (tool-call budget,
  identical repeats, allowlist, JSON-Schema validation) before any call runs. On the
  tool side it answers refused calls without running them, validates arguments an
  outer layer rewrote, and runs admitted calls through the contract's executor
  (timeout, serializer, size limit, classified errors).
- :class:`~agent_contract_langchain.gate.ContractGate` (``ContractMiddleware.inner()``),
  **innermost**: counts every provider call, filters the final tool list, vouches for
  the model's real messages and reports every tool execution (see its module).

With no middleware of yours between them, ``ContractMiddleware.around()`` gives both
halves as one middleware (``_BothHalves``: the gate's hooks called straight from the
outer ones), sparing the wrapper ``create_agent`` puts around each middleware's hooks.

Each hook is one pass, in the order the work happens: prepare, run, record (the
private ``_driver`` package: each of its modules entered once, none calling back). A
model call: prepare (find the run, close the last batch, check, offer tools), the
model, record (judge, plan); a model failure becomes a stop
(:mod:`~agent_contract_langchain.attribution`). A tool call: prepare (find the run,
answer now or admit), run (the executor, or an approved write), record (the reply, a
``Command``'s state update).

A stop is a marked ``AIMessage`` without tool calls at the end of the model node's
result (:mod:`agent_contract_langchain.stops`): ``create_agent`` ends the run on it
whatever other middleware does, and the halted run refuses any further model or tool
call. The run's state travels in the config (:func:`~agent_contract_langchain.run_config.
contract_config`), so the graph's ``context=`` stays the team's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from agent_contract.runtime import Contract

from ._driver.prepare import Admitted, ModelStep, prepare_model_call, prepare_tool_call
from ._driver.record import record_model_response, record_tool_result
from ._driver.run import arun_tool_call, arun_write, run_tool_call, run_write
from ._inline_hooks import install as install_inline_hooks
from .attribution import NOT_A_MODEL_FAILURE, model_failure
from .gate import MODEL_NODE_ROUTES_BACK, ContractGate
from .stops import stop_response

__all__ = ["ContractMiddleware"]


class ContractMiddleware(AgentMiddleware):
    """Enforces a :class:`~agent_contract.runtime.Contract` inside ``create_agent``.

    Put it first and its gate last::

        contract_mw = ContractMiddleware(contract)
        create_agent(model, tools, middleware=contract_mw.around(*your_middleware))
        # = [contract_mw, *your_middleware, contract_mw.inner()]

    and invoke the graph with ``config=contract_config(contract.start(), config)`` (or
    use :func:`~agent_contract_langchain.run_graph`, which also sets the recursion limit).

    A child agent (a deepagents sub-agent, an agent wrapped as a tool) gets one too,
    for a child contract: ``ContractMiddleware(contract.child("researcher",
    tools=[...], allowlist=[...])).around()``; run inside a contract run's tool call,
    it is a child scope of that run (its own allowlist, the run's budget and trace; see
    docs/MULTI_AGENT.md and :mod:`~agent_contract_langchain.run_config`).

    Args:
        contract: the tools' allowlist, budget, redaction and executor. Its registry
            must name the tools given to ``create_agent``; a LangChain tool that is
            not registered is neither offered to the model nor run.

    Raises:
        ConfigurationError: at the first model call, when the stack has no gate
            (``inner()``), or when the graph was invoked without the run's config.
    """

    def __init__(self, contract: Contract) -> None:
        super().__init__()
        install_inline_hooks()  # LangSmith's hook wrappers inline while it does not trace
        self.contract = contract
        self._gate: ContractGate | None = None

    @property
    def name(self) -> str:
        """Middleware name used by ``create_agent``."""
        return "AgentContract"

    @property
    def gate_seen(self) -> bool:
        """Whether a model call has gone through this middleware's gate."""
        return self._gate is not None and self._gate.seen

    def inner(self) -> ContractGate:
        """The gate to put last in the middleware list (one per ContractMiddleware)."""
        if self._gate is None:
            self._gate = ContractGate(self.contract, name=f"{self.name}Gate")
        return self._gate

    def around(self, *middleware: Any) -> list[Any]:
        """The list to give ``create_agent``, as it is: ``[self, *middleware,
        self.inner()]``; with no ``middleware``, one middleware that is both halves (the
        gate's hooks called straight from this one's: the same checks in the same order,
        without the layer ``create_agent`` adds per middleware, a LangSmith ``traceable``
        wrapper and a composition per hook call; see docs/PERFORMANCE.md)."""
        if not middleware:
            return [_BothHalves(self)]
        return [self, *middleware, self.inner()]

    # -- model -------------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """Budget checks, allowlisted tools, response judgment, batch planning."""
        step = prepare_model_call(self.contract, request)
        if not isinstance(step, ModelStep):
            return step
        try:
            response = handler(step.request)
        except NOT_A_MODEL_FAILURE:
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return stop_response(step.state, model_failure(exc, step.notes, step.calls_before))
        return record_model_response(step, response, gate_seen=self.gate_seen)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        step = prepare_model_call(self.contract, request)
        if not isinstance(step, ModelStep):
            return step
        try:
            response = await handler(step.request)
        except NOT_A_MODEL_FAILURE:
            raise
        except Exception as exc:  # noqa: BLE001 - any model failure is a typed stop
            return stop_response(step.state, model_failure(exc, step.notes, step.calls_before))
        return record_model_response(step, response, gate_seen=self.gate_seen)

    # -- tools -------------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer refused calls; run admitted ones under the contract's executor."""
        step = prepare_tool_call(self.contract, request)
        if not isinstance(step, Admitted):
            return step
        if step.planned.approval is not None:
            return run_write(step, handler)
        return record_tool_result(step, run_tool_call(step, handler))

    async def awrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call` (an async tool is cancelled at its timeout)."""
        step = prepare_tool_call(self.contract, request)
        if not isinstance(step, Admitted):
            return step
        if step.planned.approval is not None:
            return await arun_write(step, handler)
        return record_tool_result(step, await arun_tool_call(step, handler))


def _model_response(response: ModelResponse[Any] | AIMessage) -> ModelResponse[Any]:
    """``response`` as ``create_agent`` hands an inner middleware's result to the outer
    one: an ``AIMessage`` becomes a ``ModelResponse`` holding it."""
    if isinstance(response, AIMessage):
        return ModelResponse(result=[response])
    return response


class _BothHalves(ContractMiddleware):
    """:class:`ContractMiddleware` and its gate with nothing between them, as one
    middleware (what :meth:`ContractMiddleware.around` gives when there is no middleware
    of yours): each hook calls the outer middleware's, with the gate's hook as its
    handler, exactly as ``create_agent`` composes two adjacent middleware, minus the
    wrapper and composition it adds per middleware. A ``ContractMiddleware`` itself, so
    a stack holding it is known to have the contract (``check --agent``); the outer
    middleware's hooks are the ones called (a subclass's included), and its gate is
    this one's :meth:`inner`.
    """

    def __init__(self, outer: ContractMiddleware) -> None:
        AgentMiddleware.__init__(self)
        self.contract = outer.contract
        self._outer = outer
        self._gate = outer.inner()

    @property
    def name(self) -> str:
        """The outer middleware's name (it is not in the stack itself)."""
        return self._outer.name

    def around(self, *middleware: Any) -> list[Any]:
        """The outer middleware's :meth:`~ContractMiddleware.around`."""
        return self._outer.around(*middleware)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        """The outer hook, the gate's as its handler."""
        gate = self.inner()

        def inner(request: ModelRequest[Any]) -> ModelResponse[Any]:
            return _model_response(gate.wrap_model_call(request, handler))

        return self._outer.wrap_model_call(request, inner)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        """Async :meth:`wrap_model_call`."""
        gate = self.inner()

        async def inner(request: ModelRequest[Any]) -> ModelResponse[Any]:
            return _model_response(await gate.awrap_model_call(request, handler))

        return await self._outer.awrap_model_call(request, inner)

    def wrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """The outer hook, the gate's as its handler."""
        gate = self.inner()
        return self._outer.wrap_tool_call(request, lambda r: gate.wrap_tool_call(r, handler))

    async def awrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        gate = self.inner()
        return await self._outer.awrap_tool_call(
            request, lambda r: gate.awrap_tool_call(r, handler)
        )

    if not MODEL_NODE_ROUTES_BACK:
        # The gate's route back to the model on langchain up to 1.3.x (see the gate's
        # module doc); it changes nothing in the state.

        def after_model(self, state: Any, runtime: Any) -> None:
            """Nothing (the route back to the model, up to langchain 1.3.x)."""
            return None

        async def aafter_model(self, state: Any, runtime: Any) -> None:
            """Nothing (the route back to the model, up to langchain 1.3.x)."""
            return None
