"""How a run's state travels through a LangGraph run, and the recursion limit it gets.

The contract's :class:`~agent_contract.runtime.RunState` travels in the run's config,
``config["configurable"]["agent_contract"] = {<contract key>: RunState}``, never in the
graph's ``context=``: the team's ``context_schema`` and every tool that reads
``runtime.context`` (``ToolRuntime``) keep theirs. :func:`contract_config` builds that
config; the middleware finds the state with ``langgraph.config.get_config()`` (model
hooks) or ``request.runtime.config`` (tool hooks). LangGraph copies only ``str``,
``int``, ``float`` and ``bool`` values of ``configurable`` into checkpoint metadata,
so the state is never written to a checkpoint or a trace. Entries are keyed by
contract, so a graph nested in a tool that runs under another contract finds its own.

:func:`recursion_limit` derives LangGraph's step limit from the budget and the stack's
node hooks, so a miswired stack ends with a named stop in milliseconds instead of
9,999 supersteps.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agent_contract.budget import Budget
from agent_contract.errors import ConfigurationError
from agent_contract.runtime import Contract, RunState, Terms

from ._memo import HistoryPrefix

__all__ = [
    "RUNS_KEY",
    "RunNotes",
    "contract_config",
    "contract_key",
    "notes_for",
    "recursion_limit",
    "run_in",
    "run_state_in",
]

RUNS_KEY: Final = "agent_contract"
"""Key of the contract's entries in ``config["configurable"]``."""


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
    if recursion_limit is not None:
        merged["recursion_limit"] = recursion_limit
    return merged


def run_state_in(config: Mapping[str, Any] | None, contract: Contract) -> RunState:
    """The state of ``contract``'s run in ``config``.

    Raises:
        ConfigurationError: the graph was invoked without :func:`contract_config` for
            this contract.
    """
    configurable = (config or {}).get("configurable") or {}
    runs = configurable.get(RUNS_KEY) if isinstance(configurable, Mapping) else None
    state = runs.get(contract_key(contract)) if isinstance(runs, Mapping) else None
    if isinstance(state, RunState) and state.view.contract is contract:
        return state
    raise ConfigurationError(
        "the contract middleware found no run for its Contract: invoke the graph with "
        "config=agent_contract_langchain.contract_config(contract.start(), config), or "
        "use agent_contract_langchain.run_agent / run_graph"
    )


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
