"""agent-contract."""
