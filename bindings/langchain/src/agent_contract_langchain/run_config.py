"""How a run's state travels through a LangGraph run, and the recursion limit it gets.

The contract's :class:`~agent_contract.runtime.RunState` travels in the run's config,
``config["configurable"]["agent_contract"] = {<contract key>: RunState}``, never in the
graph's ``context=``: the team's ``context_schema`` and every tool that reads
``runtime.context`` (``ToolRuntime``) keep theirs. :func:`contract_config` builds that
config; the middleware finds the state with ``langgraph.config.get_config()`` (model
hooks) or ``request.runtime.config`` (tool hooks). LangGraph copies only ``str``,
``int``, ``float`` and ``bool`` values of ``configurable`` into checkpoint metadata,
so the state is never written to a checkpoint or a trace. Entries are keyed by
contract, so a graph nested in a tool whose run was started under another contract
finds its own.

**One contract over a tree of agents.** An agent that runs inside a tool call of a
contract run (a deepagents ``task`` sub-agent, an agent wrapped as a tool) inherits
the parent's config, so its contract hooks would find the parent's run. The tool
call being run is known instead (:data:`active_call`, set by the driver around the
tool's handler): a hook of an agent inside it opens (or finds again) a **child scope**
of that run (``Contract.start(parent=..., parent_call_id=...)``): its own history,
ledger and allowlist (its middleware's contract, e.g. ``contract.child("researcher",
tools=[...])``), the run's budget and trace. An agent inside a tool call whose model
calls no contract gate passes is refused before its model is called
(:class:`ScopeWatch`, a callback :func:`contract_config` adds: :class:`ChildOutsideContract`).

:func:`recursion_limit` derives LangGraph's step limit from the budget and the stack's
node hooks, so a miswired stack ends with a named stop in milliseconds instead of
9,999 supersteps.
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager

from agent_contract.budget import Budget
from agent_contract.errors import ConfigurationError
from agent_contract.runtime import ChildScopeRefused, Contract, RunState, Stop, Terms

from ._memo import CheckedHistory, HistoryPrefix

__all__ = [
    "RUNS_KEY",
    "WATCH",
    "ActiveCall",
    "ChildOutsideContract",
    "RunNotes",
    "ScopeWatch",
    "active_call",
    "call_scope",
    "contract_config",
    "contract_key",
    "gated",
    "notes_for",
    "recursion_limit",
    "run_in",
    "run_state_in",
]

RUNS_KEY: Final = "agent_contract"
"""Key of the contract's entries in ``config["configurable"]``."""


@dataclass(frozen=True, slots=True)
class ActiveCall:
    """The tool call of a contract run whose handler is running (see the module doc)."""

    state: RunState
    """The run (or child scope) that issued the call."""
    call_id: str
    """The call's ``tool_call_id``."""
    namespace: str | None
    """LangGraph's checkpoint namespace of the tool's task (``None`` when unknown): a
    model called with this very namespace is the tool's own, not a child agent's."""


active_call: contextvars.ContextVar[ActiveCall | None] = contextvars.ContextVar(
    "agent_contract_active_call", default=None
)
"""The contract tool call whose handler runs in this context (set by the driver)."""

gated: contextvars.ContextVar[RunState | None] = contextvars.ContextVar(
    "agent_contract_gated", default=None
)
"""The run whose contract gate is calling the model in this context (set by the gate
around the provider call)."""


class ChildOutsideContract(ChildScopeRefused):
    """An agent started inside a contract run's tool call calls its model with no
    contract gate: the run refuses it (it would run outside the run's budget and
    allowlist). ``agent`` names it, ``call_id`` the parent's call. A
    :class:`~agent_contract.runtime.ChildScopeRefused`, like the refusal of a child
    whose contract is not made from the run's."""

    def __init__(self, agent: str, call_id: str | None) -> None:
        where = (
            f"started inside tool call {call_id!r} of a contract run"
            if call_id is not None
            else "a create_react_agent graph (no middleware slot) in a contract run"
        )
        fix = (
            "Give that agent the contract's middleware: create_agent(..., middleware="
            "ContractMiddleware(contract.child(name, tools=[...])).around(...)) "
            "(deepagents: the sub-agent spec's 'middleware')"
            if call_id is not None
            else "Build that agent with create_agent and ContractMiddleware(contract)"
            ".around(...); a supervisor (langgraph-supervisor builds its own with "
            "create_react_agent): a create_agent supervisor whose workers are agents "
            "wrapped as tools, each with ContractMiddleware(contract.child(...))"
        )
        super().__init__(
            f"agent {agent!r}, {where}, calls its model outside the contract: it is "
            f"refused. {fix}; an agent with no middleware slot cannot run under a "
            "contract (see docs/MULTI_AGENT.md)",
            agent=agent,
            call_id=call_id,
        )


def _namespace(config: Mapping[str, Any] | None) -> str | None:
    metadata = (config or {}).get("metadata") or {}
    value = metadata.get("langgraph_checkpoint_ns") if isinstance(metadata, Mapping) else None
    if value is None:
        configurable = (config or {}).get("configurable") or {}
        value = configurable.get("checkpoint_ns") if isinstance(configurable, Mapping) else None
    return str(value) if value is not None else None


def call_scope(state: RunState, call_id: str, config: Mapping[str, Any] | None) -> ActiveCall:
    """The :class:`ActiveCall` of ``state``'s call ``call_id``, run with ``config``."""
    return ActiveCall(state, call_id, _namespace(config))


class ScopeWatch(BaseCallbackHandler):
    """Refuses a model an agent calls inside a contract run's tool call when no
    contract gate passes it (see the module doc), and, anywhere in a contract run, the
    model node of a ``create_react_agent`` graph (no middleware slot: e.g.
    langgraph-supervisor's supervisor); :func:`contract_config` adds it.

    It sees every chat model LangChain starts (its callbacks reach nested graphs with
    the config); a model the tool itself calls (same LangGraph task) is the tool's own
    and goes on. What it cannot see: a model called without LangChain's callbacks (a
    raw provider client inside a tool), which is the tool's business like any API.
    """

    raise_error = True
    run_inline = True
    # Only chat model starts matter: every other event is ignored before dispatch.
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Raise :class:`ChildOutsideContract` for an ungated agent model (see the class
        doc)."""
        if gated.get() is not None:
            return
        meta = metadata or {}
        scope = active_call.get()
        if scope is None:
            # Outside any tool call, only a model node no gate can wrap is refused:
            # create_react_agent's ("agent"; langgraph-supervisor's supervisor is
            # one). create_agent's node is "model"; a model another middleware
            # calls in its own node hook (summarization) is that middleware's.
            if meta.get("langgraph_node") != "agent":
                return
            top = str(meta.get("langgraph_checkpoint_ns") or "").split(":", 1)[0]
            raise ChildOutsideContract(str(meta.get("lc_agent_name") or top or "agent"), None)
        namespace = meta.get("langgraph_checkpoint_ns")
        if namespace is None or str(namespace) == scope.namespace:
            return  # the tool's own model call, not an agent's
        name = meta.get("lc_agent_name")  # create_agent names it; create_react_agent does not
        agent = str(name) if name else f"(unnamed) {meta.get('langgraph_node')!s} at {namespace}"
        error = ChildOutsideContract(agent, scope.call_id)
        scope.state.halt(Stop(reason="middleware_stop", detail=str(error)))
        raise error


WATCH: Final = ScopeWatch()
"""The one :class:`ScopeWatch` every contract config carries."""


def _with_watch(callbacks: Any) -> Any:
    if callbacks is None:
        return [WATCH]
    if isinstance(callbacks, BaseCallbackManager):
        if any(isinstance(h, ScopeWatch) for h in callbacks.handlers):
            return callbacks
        manager = callbacks.copy()
        manager.add_handler(WATCH, inherit=True)
        return manager
    handlers = list(callbacks)
    if not any(isinstance(h, ScopeWatch) for h in handlers):
        handlers.append(WATCH)
    return handlers


def contract_key(contract: Terms) -> str:
    """The key of ``contract``'s entry (unique among live contracts; the entry is also
    checked to belong to this very contract)."""
    return f"contract-{id(contract):x}"


def contract_config(
    state: RunState,
    config: Mapping[str, Any] | None = None,
    *,
    recursion_limit: int | None = None,
) -> dict[str, Any]:
    """The config to invoke a contract agent with: ``config`` (not mutated) plus the
    run's state, and ``recursion_limit`` when given.

    Example::

        state = contract.start()
        graph.invoke({"messages": [...]}, contract_config(state, {"configurable":
            {"thread_id": "t1"}}, recursion_limit=recursion_limit(graph, contract.budget)),
            context=TeamContext(user_id="u-42"))
    """
    merged = dict(config or {})
    configurable = dict(merged.get("configurable") or {})
    runs = dict(configurable.get(RUNS_KEY) or {})
    runs[contract_key(state.view.contract)] = state
    configurable[RUNS_KEY] = runs
    merged["configurable"] = configurable
    merged["callbacks"] = _with_watch(merged.get("callbacks"))
    if recursion_limit is not None:
        merged["recursion_limit"] = recursion_limit
    return merged


def run_state_in(
    config: Mapping[str, Any] | None, contract: Contract, *, inside_call: str | None = None
) -> RunState:
    """The state of ``contract``'s run in ``config``: inside a contract run's tool call
    (:data:`active_call`), the child scope of that call for ``contract`` (see the module
    doc), unless the run in ``config`` for ``contract`` was started apart from it.

    Args:
        config: the hook's LangGraph config.
        contract: the hook's contract.
        inside_call: the id of the tool call a hook runs inside of (the gate's tool
            hook, inside its own call's handler): that call's own run.

    Raises:
        ConfigurationError: the graph was invoked without :func:`contract_config` for
            this contract (the message says when it holds a run of another, e.g. an
            equal Contract built twice, and when ``contract`` is a child contract
            whose root's run is there but its parent agent runs without the contract).
        ChildScopeRefused: a child whose contract is not made from the run's.
    """
    configurable = (config or {}).get("configurable") or {}
    runs = configurable.get(RUNS_KEY) if isinstance(configurable, Mapping) else None
    state = runs.get(contract_key(contract)) if isinstance(runs, Mapping) else None
    if not (isinstance(state, RunState) and state.view.contract is contract):
        state = None
    scope = active_call.get()
    if scope is not None:
        if inside_call is not None and inside_call == scope.call_id:
            return scope.state
        if state is None or state.view.run_id == scope.state.view.run_id:
            metadata = (config or {}).get("metadata") or {}
            agent = metadata.get("lc_agent_name") if isinstance(metadata, Mapping) else None
            return contract.start(
                parent=scope.state, parent_call_id=scope.call_id, agent=agent or None
            )
    if state is not None:
        return state
    others = [s for s in runs.values() if isinstance(s, RunState)] if runs else []
    root = _root(contract)
    if root is not contract and any(s.view.contract is root for s in others):
        raise ConfigurationError(
            f"the contract middleware of child agent {contract.agent!r} found no run "
            "of its parent agent here: its Contract is a child of the run's, but the "
            "agent that starts it runs without the contract (give the parent agent "
            "ContractMiddleware(contract).around(), and register the tool that starts "
            "the child with that contract; see docs/MULTI_AGENT.md)"
        )
    if others:
        raise ConfigurationError(
            "the contract middleware's Contract is not the one its run was started "
            "with (a factory that builds a fresh Contract per call?): build the "
            "Contract once (at module level, or once per application) and give that "
            "same object to ContractMiddleware and to contract.start() / run_graph"
        )
    if root is not contract:
        raise ConfigurationError(
            f"the contract middleware of child agent {contract.agent!r} found no run: "
            "the child's Contract is a child of a Contract whose run is not in this "
            "graph's config (start the top agent with ContractMiddleware(contract) "
            "and run_graph(graph, contract.start(), ...) / run_agent for that root "
            "Contract; see docs/MULTI_AGENT.md)"
        )
    raise ConfigurationError(
        "the contract middleware found no run for its Contract: invoke the graph with "
        "config=agent_contract_langchain.contract_config(contract.start(), config), or "
        "use agent_contract_langchain.run_agent / run_graph"
    )


def _root(contract: Terms) -> Terms:
    """The contract ``contract`` descends from through ``Contract.child`` (itself when
    it was built directly)."""
    while contract.derived_from is not None:
        contract = contract.derived_from
    return contract


@dataclass(eq=False)
class RunNotes:
    """What the binding notes about one run beside the core state (never stored)."""

    vouched: set[str] = field(default_factory=set)
    """Ids of the AIMessages the gate saw come back from the model itself."""
    provider_error: str | None = None
    """Type name of the exception the last provider call raised, if it raised."""
    provider_calls: int = 0
    """Provider calls the gate let through."""
    history: HistoryPrefix = field(default_factory=HistoryPrefix)
    """The history the contract's outer model hook read last (see :class:`HistoryPrefix`)."""
    checked: CheckedHistory = field(default_factory=CheckedHistory)
    """The history the contract's gate checked last (see :class:`CheckedHistory`)."""
    offer_checked: bool = False
    """The outer model hook checked this model call's tool offer against the child's
    contract (``check_child_offer``); the gate then does not check it again and clears
    it. Without the outer hook (a gate alone) the gate checks."""


_NOTES: weakref.WeakKeyDictionary[RunState, RunNotes] = weakref.WeakKeyDictionary()


def notes_for(state: RunState) -> RunNotes:
    """The binding's notes on ``state``'s run (created on first use)."""
    notes = _NOTES.get(state)
    if notes is None:
        notes = _NOTES.setdefault(state, RunNotes())
    return notes


def run_in(config: Mapping[str, Any] | None, contract: Contract) -> tuple[RunState, RunNotes]:
    """:func:`run_state_in` and :func:`notes_for` that state: what a model hook reads.

    Raises:
        ConfigurationError: as :func:`run_state_in`.
    """
    state = run_state_in(config, contract)
    return state, notes_for(state)


def _count(nodes: Any, hook: str) -> int:
    return sum(1 for name in nodes if str(name).endswith("." + hook))


def recursion_limit(
    graph: Any, budget: Budget, *, used_model_steps: int = 0, resuming: bool = False
) -> int:
    """LangGraph's ``recursion_limit`` (supersteps) for a run of ``graph`` under ``budget``.

    ``(M + 1) * (1 + b + a) + M + ba + aa + 1``: ``M`` model steps left
    (``budget.max_model_steps - used_model_steps``), each with its ``b`` before_model and
    ``a`` after_model node hooks and one tools step; one more model-node run for the
    refused step that produces the stop; ``ba`` and ``aa`` before_agent and after_agent
    hooks; and the start. It is the smallest limit a run that uses its whole model budget
    needs (measured on langchain 1.0.0, 1.2.8 and 1.5.2). ``resuming`` adds the node that
    re-runs when an interrupted thread resumes.

    Args:
        graph: a compiled ``create_agent`` graph (its ``nodes`` are counted).
        budget: the contract's budget.
        used_model_steps: steps already taken (a resumed run).
        resuming: the run continues an interrupted thread.
    """
    nodes = list(getattr(graph, "nodes", {}) or {})
    left = max(budget.max_model_steps - used_model_steps, 0)
    per_model = 1 + _count(nodes, "before_model") + _count(nodes, "after_model")
    limit = (left + 1) * per_model + left + _count(nodes, "before_agent")
    limit += _count(nodes, "after_agent") + 1
    if resuming:
        limit += per_model + 1
    return limit
