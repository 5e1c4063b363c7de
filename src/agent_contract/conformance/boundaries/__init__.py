"""The boundaries of the contract: one module per boundary, each holding its row (a
:class:`~agent_contract.conformance.base.Boundary`), its scenarios and the checks it
makes, in one :class:`~agent_contract.conformance.base.BoundaryDefinition` named
``DEFINITION``; :mod:`~agent_contract.conformance.boundaries.table` lists them in report
order (:data:`~agent_contract.conformance.boundaries.table.DEFINITIONS`). Read by the
scenarios, the pytest suite, ``check`` and every report.

Each :class:`~agent_contract.conformance.base.Boundary` has an ``id`` (the key
scenarios, problems and reports use), the ``label`` reports print, the ``rule`` holding
it means, and framework-neutral ``keep_it`` advice: what in this package keeps it. A
binding adds advice in its framework's terms keyed by the same ids (the LangChain
binding's migration checklist does).

Each boundary has a standard test of its own in
:class:`~agent_contract.conformance.suite.ContractSuite` (``test_<id>``). How many
scenarios check a boundary is derived from the scenarios
(:func:`~agent_contract.conformance.boundaries.table.scenario_count`).
"""

__all__: list[str] = []
"""The package exports nothing itself: the table and its lookups are in
:mod:`~agent_contract.conformance.boundaries.table` (and, for users, in
:mod:`agent_contract.conformance`)."""
