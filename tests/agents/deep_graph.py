"""A deepagents agent as a LangGraph deployment ships it: a module-level compiled graph,
the one ``langgraph.json`` names (``"graphs": {"agent": "./deep_graph.py:agent"}``), on a
provider's chat model (no agent-contract import).

``agent-contract check --agent tests.agents.deep_graph:agent`` probes it: the module is
executed again per probe, and every ``create_agent`` call it makes gets the check's
scripted model in place of ``ChatAnthropic`` (constructed with a placeholder key; never
called).
"""

from __future__ import annotations

from deepagents import create_deep_agent
from langchain_anthropic import ChatAnthropic

from .deep import lookup_order

model = ChatAnthropic(model_name="claude-sonnet-4-5", api_key="unused", timeout=None, stop=None)  # type: ignore[arg-type]

agent = create_deep_agent(model=model, tools=[lookup_order], system_prompt="Back office.")
