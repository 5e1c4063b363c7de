"""``agent-contract check --agent module:factory`` on LangChain: the probes of a team's own
``create_agent``, built from the agent the factory returns.

- :mod:`.probes`: :func:`~.probes.agent_probes`, the entry point's builder;
- :mod:`.capture`: calling the factory and taking the agent apart (model, tools, middleware).

The probe scenarios (from each tool's schema, declared effect and the budget) are the
core's, :mod:`agent_contract.conformance.agent_scenarios`, which any binding's
``check --agent`` can use.

Importing this package imports no LangChain; its modules do.
"""

__all__: list[str] = []
