"""The contract suite for your own ``create_agent`` configuration (pytest).

Subclass :class:`CreateAgentContractSuite` and build your agent the way production does
in :meth:`~CreateAgentContractSuite.build_agent` from the three pieces the suite hands
you: a scripted chat model (your production model is replaced, the rest of your
configuration is not), the scenario's tools, and the contract's two middleware (put the
first first, the gate last, yours in between). Every contract scenario then runs through
that graph with :func:`~agent_contract_langchain.harness.run_graph`, on your checkpointer
and through your approval endpoint (see the class). :class:`AgentContractSuite` is
``check --agent``'s pytest twin. The example, the flags and the opt-outs:
``docs/SUITE.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent_contract.approval import Approval, PendingApproval
from agent_contract.conformance import Scenario, ScenarioOutcome
from agent_contract.conformance.suite import AgentContractSuite as CoreAgentContractSuite
from agent_contract.conformance.suite import ContractSuite, capability_flag
from agent_contract.errors import ApprovalError, CheckpointError, ConfigurationError
from agent_contract.harnesses import Decider, Harness, RunInput
from agent_contract.model import Model
from agent_contract.runtime import Contract, RunResult
from agent_contract.tools import ToolSpec

from .approvals import approvals_from
from .chat_model import ContractChatModel
from .harness import Mode
from .middleware import ContractMiddleware
from .resuming import resume_graph, run_options
from .suite_extras import CAPABILITIES, suite_tools
from .suite_store import SuiteStore

__all__ = ["AgentContractSuite", "CreateAgentContractSuite"]


class CreateAgentContractSuite(ContractSuite):
    """The contract suite over a ``create_agent`` graph you build in :meth:`build_agent`.

    **Your checkpointer.** A graph compiled with a checkpointer (a
    ``BaseCheckpointSaver``: ``SqliteSaver``, ``PostgresSaver``,
    :func:`~agent_contract_langchain.durable.sqlite_checkpointer`'s sealed saver...) is run
    on it: the approval scenarios pause and resume on your store, the thread scenario
    continues a thread there, and the crash scenarios restart in a fresh graph from
    :meth:`build_agent` that must reach the same store (compile the same saver, or one
    over the same database, each time: a saver made anew in every call loses the paused
    thread, and the restart fails naming it). Every scenario runs on a thread of its own
    (``run-<12 hex digits>``), so runs never meet on a shared store; the suite deletes
    nothing from it. A graph compiled without a checkpointer gets an ``InMemorySaver``
    for the test, shared by its rebuilds. The saver must suit :attr:`mode`:
    ``SqliteSaver`` is sync only (``"invoke"``, ``"stream"``); ``"ainvoke"`` needs one
    with async methods.

    **Your approval endpoint.** The scripted human's decisions on writes (approve,
    reject, edit, and a token replayed from another call) reach the paused run through
    :meth:`approval_endpoint`, in the shape of LangChain's human-in-the-loop decisions.
    Override it with your endpoint's code (what turns a reviewer's decision into the
    resume); the default resumes with
    :func:`~agent_contract_langchain.resuming.resume_graph`.
    """

    harness_name: ClassVar[str] = "create_agent"
    mode: ClassVar[Mode] = "invoke"
    """How the graph is driven: ``"invoke"`` (default), ``"ainvoke"`` or ``"stream"``
    (``stream_mode=["messages", "values"]``)."""
    _miswired: str | None = None
    supports_graph_commands: ClassVar[bool] = True
    """Command-returning tools are part of the scenario's tools."""
    supports_pauses: ClassVar[bool] = True
    """Pausing tools are part of the scenario's tools."""
    supports_threads: ClassVar[bool] = True
    """Runs continue a checkpointed thread (on your checkpointer, else an in-memory one)."""
    supports_crash_restart: ClassVar[bool] = True
    """The crash scenarios crash a resume at a named point and resume in a fresh graph
    from :meth:`build_agent` over the same checkpointer (yours, else the in-memory one)."""
    supports_durable_store: ClassVar[bool] = True
    """The checkpoint-integrity scenarios store the paused snapshot in the run store,
    tamper with its row and resume from what the reopened store reads back; a graph
    compiled without a checkpointer gets the sealed SQLite one for them, and its paused
    checkpoint's rows are tampered with too (:mod:`~agent_contract_langchain.suite_store`)."""
    has_write_tools: ClassVar[bool] = True
    """The write-approval scenarios pause on ``interrupt()`` and resume through
    :meth:`approval_endpoint` on your graph's checkpointer (an in-memory one when you
    compiled none in). Set it to ``False`` (they are then reported as skipped with this
    flag named) if your agent has no write tools."""

    def build_agent(self, chat_model: Any, tools: Sequence[Any], middleware: Sequence[Any]) -> Any:
        """Your ``create_agent`` configuration; return the compiled graph.

        Args:
            chat_model: a scripted ``BaseChatModel``; pass it as the model.
            tools: the scenario's tools (``StructuredTool``s); pass them all, plus any
                of your own.
            middleware: the contract's two middleware, ``[ContractMiddleware, its
                gate]``: pass ``[middleware[0], *yours, middleware[-1]]``.

        It is called once per scenario, and again for the fresh instance a crash
        scenario restarts in: compile in your checkpointer (kept) or none (the suite
        attaches an in-memory one).

        Raises:
            NotImplementedError: always, in the base class; override it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define build_agent(self, chat_model, tools, middleware)"
        )

    def approval_endpoint(
        self,
        graph: Any,
        contract: Contract,
        snapshot: Mapping[str, Any],
        pending: Sequence[PendingApproval],
        decisions: Mapping[str, Mapping[str, Any]],
        *,
        checkpoint: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        """Your approval endpoint: carry a reviewer's decisions into the paused run and
        continue it. Override it with the code your service runs when a reviewer
        decides; the default is the binding's own resume.

        Args:
            graph: the graph from :meth:`build_agent` holding the paused thread (after
                a crash, a fresh one over the same checkpointer).
            contract: the contract that graph's middleware holds.
            snapshot: the paused run's ``RunResult.snapshot`` (what your run store
                keeps; its run id is the thread id).
            pending: the approval requests the reviewer saw
                (``RunResult.pending_approvals``; each interrupt payload's
                ``agent_contract`` part).
            decisions: tool call id -> the reviewer's decision, in the shape of
                LangChain's human-in-the-loop decisions: ``{"type": "approve"}``,
                ``{"type": "reject", "message": str}`` or ``{"type": "edit",
                "edited_action": {"name": str, "args": dict}}``, each with
                ``"agent_contract": {"token": str, "decided_by": str}`` (the payload's
                token sent back; see :mod:`agent_contract_langchain.approvals`). Calls
                without a decision stay pending.
            checkpoint: stores each snapshot the resume produces; pass it on
                (``resume_graph(..., checkpoint=checkpoint)``): the crash scenarios
                restart from the last one stored. ``None`` on a restart.

        Returns:
            The resumed run's result (paused again, or ended), driven in :attr:`mode`.

        Raises:
            ApprovalError: a decision that does not fit (a call not in ``pending``, a
                replayed token, an edit that changes the tool): nothing runs, and the
                suite notes the refusal.
            CheckpointError: the thread cannot be read or resumed.
        """
        by_id = {p.tool_call_id: p for p in pending}
        approvals: list[Approval] = []
        for call_id, decision in decisions.items():
            request = by_id.get(call_id)
            if request is None:
                raise ApprovalError(f"no approval request for {call_id!r}", tool_call_id=call_id)
            approvals.extend(approvals_from(request, {"decisions": [decision]}))
        return resume_graph(
            graph, contract, snapshot, approvals, mode=self.mode, checkpoint=checkpoint
        )

    def harness(self) -> Harness:
        """Runs each scenario through :meth:`build_agent`'s graph in :attr:`mode`, on its
        checkpointer (else an in-memory one), with decisions through
        :meth:`approval_endpoint`."""

        def run(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
            attached: list[Any] = []  # shared by the rebuilds of this run
            store = SuiteStore(options, self.mode)  # the one attached, when none is compiled in
            human = _Reviewer(options.decider) if options.decider is not None else None
            if human is not None:
                options = dataclasses.replace(options, decider=human)

            def build() -> tuple[Any, Contract]:
                contract = options.contract(tools)
                contract_mw = ContractMiddleware(contract)
                graph = self.build_agent(
                    ContractChatModel(model=model),
                    suite_tools(contract, options.extras),
                    [contract_mw, contract_mw.inner()],
                )
                if not isinstance(getattr(graph, "checkpointer", None), BaseCheckpointSaver):
                    if not attached:
                        attached.append(store.saver)
                    graph = graph.copy(update={"checkpointer": attached[0]})
                return graph, contract

            def endpoint(
                graph: Any,
                contract: Contract,
                snapshot: Mapping[str, Any],
                approvals: list[Approval],
                checkpoint: Callable[[dict[str, Any]], None] | None,
            ) -> RunResult:
                pending = human.pending if human is not None else {}
                missing = [a.tool_call_id for a in approvals if a.tool_call_id not in pending]
                if missing:
                    raise ApprovalError(f"no pending approval for {missing}")
                decisions = {
                    a.tool_call_id: _as_reviewed(a, pending[a.tool_call_id]) for a in approvals
                }
                try:
                    return self.approval_endpoint(
                        graph,
                        contract,
                        snapshot,
                        list(pending.values()),
                        decisions,
                        checkpoint=checkpoint,
                    )
                except CheckpointError as exc:
                    if graph is not first and graph.checkpointer is not first.checkpointer:
                        self._miswired = (
                            f"the graph build_agent returned for the restart after a crash "
                            f"cannot resume the paused run ({exc}): compile the same "
                            f"checkpointer each time (the same saver, or one over the same "
                            f"database), not a new in-memory one"
                        )
                    raise

            first, contract = build()
            try:
                with store:
                    result = run_options(
                        first,
                        contract,
                        options,
                        mode=self.mode,
                        rebuild=build,
                        endpoint=store.guarded(endpoint) if attached else endpoint,
                    )
            except ConfigurationError as exc:
                if "gate" in str(exc):
                    self._miswired = str(exc)
                raise
            # No model step and no contract decision: the middleware never ran (a
            # contract decision always comes after a model step).
            unjudged = ("invalid_response", "middleware_stop")
            if result.usage.model_steps == 0 and result.stop_reason in unjudged:
                self._miswired = (
                    "the graph returned by build_agent never ran the ContractMiddleware it "
                    "was given: pass middleware=[*middleware, ...] to create_agent"
                )
            return result

        # The capabilities the suite's flags turn on (so ``check --harness module:factory``
        # on a suite's harness runs what the pytest suite runs).
        run.capabilities = tuple(  # type: ignore[attr-defined]
            capability
            for capability in CAPABILITIES
            if (flag := capability_flag(type(self), capability)) is not None and flag[1]
        )
        return run

    def run_contract_scenario(self, scenario: Scenario) -> ScenarioOutcome:
        """As in :class:`ContractSuite`, but a graph that drops the contract middleware
        fails with that diagnosis instead of a list of broken boundaries."""
        if type(self).build_agent is CreateAgentContractSuite.build_agent:
            self.build_agent(None, (), ())  # raises NotImplementedError, naming the class
        self._miswired = None
        outcome = super().run_contract_scenario(scenario)
        if self._miswired:
            pytest.fail(self._miswired, pytrace=False)
        return outcome


class _Reviewer:
    """The scenario's scripted human, remembering the approval requests it was shown
    (the endpoint gets them with the decisions)."""

    def __init__(self, inner: Decider) -> None:
        self.inner = inner
        self.pending: dict[str, PendingApproval] = {}

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        self.pending = {p.tool_call_id: p for p in pending}
        return self.inner(pending)

    def refused(self, exc: ApprovalError) -> None:
        self.inner.refused(exc)


def _as_reviewed(approval: Approval, pending: PendingApproval) -> dict[str, Any]:
    """``approval`` as a reviewer's decision in human-in-the-loop's shape (the inverse of
    :func:`~agent_contract_langchain.approvals.approvals_from`)."""
    binding = {"token": approval.token, "decided_by": approval.decided_by}
    if approval.decision == "edit":
        action = {"name": pending.name, "args": dict(approval.arguments or {})}
        return {"type": "edit", "edited_action": action, "agent_contract": binding}
    if approval.decision == "reject":
        return {"type": "reject", "message": approval.reason, "agent_contract": binding}
    return {"type": "approve", "agent_contract": binding}


class AgentContractSuite(CoreAgentContractSuite):
    """Contract probes of your own agent, as pytest tests (``check --agent``'s pytest
    twin); see :mod:`agent_contract_langchain.agent_check.probes` for the probes and
    :class:`agent_contract.conformance.suite.AgentContractSuite` for the three tests.

    Name your factory (your code that builds your ``create_agent`` from a chat model)::

        from agent_contract_langchain.testing import AgentContractSuite

        class TestShopAgent(AgentContractSuite):
            agent_factory = "shop.agent:build_agent"   # or the function itself
            effects = {"lookup_order": "read", "place_order": "write"}  # no contract yet
    """

    framework: ClassVar[str | None] = "langchain"
    mode: ClassVar[Mode] = "invoke"
    """How the agent is driven: ``"invoke"``, ``"ainvoke"`` or ``"stream"``."""
