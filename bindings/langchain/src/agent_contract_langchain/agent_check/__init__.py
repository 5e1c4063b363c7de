"""``agent-contract check --agent module:factory`` on LangChain: the probes of a team's own
``create_agent``, built from the agent the factory returns.

- :mod:`.probes`: :func:`~.probes.agent_probes`, the entry point's builder;
- :mod:`.capture`: calling the factory and taking the agent apart (model, tools, middleware);
- :mod:`.scenarios`: the probe scenarios, from each tool's declared effect and the budget;
- :mod:`.schema`: arguments that fit a tool's schema, and ones that do not.

Importing this package imports no LangChain; its modules do.
"""

__all__: list[str] = []
