"""Agents written the way LangChain's documentation teaches, put under the contract's
probes with no change to their own code."""
