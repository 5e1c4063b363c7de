"""The application: the ``agent-contract`` command line, the demo agent, its durable
store and its built-in tools.

It uses the runtime, the harness registry and the conformance kit; nothing in the
runtime or the kit imports it. Entry point: :func:`agent_contract.app.cli.main`.
"""

__all__: list[str] = []
