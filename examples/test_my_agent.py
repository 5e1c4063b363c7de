"""The probes of ``my_agent.py`` as pytest tests (``AgentContractSuite``).

Usage::

    pytest -q examples/test_my_agent.py

Output (last line)::

    3 passed
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_contract_langchain.testing import AgentContractSuite

sys.path.insert(0, str(Path(__file__).resolve().parent))

from my_agent import build_agent


class TestMyAgent(AgentContractSuite):
    agent_factory = build_agent
