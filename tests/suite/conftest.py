"""Fixtures for the user-facing suite's tests.

``pytester`` is enabled for the whole run in the root ``pyproject.toml`` (``-p pytester``):
pytest refuses ``pytest_plugins`` in a conftest below the root directory.

The imports below are there for speed only: pytester's in-process runs restore
``sys.modules`` after each run, so a module first imported inside a throwaway project
(LangChain, the suite) would be imported again for every one.
"""

import langchain.agents  # noqa: F401 - see the module doc
import langchain_core.tools  # noqa: F401 - see the module doc

import agent_contract.suite  # noqa: F401 - see the module doc
import agent_contract_langchain.testing  # noqa: F401 - see the module doc
