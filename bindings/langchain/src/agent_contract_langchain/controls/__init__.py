"""The binding's control harnesses: ``create_agent`` without the contract, expected to
break, so the suite shows it can fail (:mod:`.plain_create_agent`: ``plain-create-agent``).

Importing this package imports no LangChain (the registry reads the control's name
here); the control's module imports it.
"""

__all__ = ["PLAIN_CREATE_AGENT_NAME"]

PLAIN_CREATE_AGENT_NAME = "plain-create-agent"
"""The registered name of the bare ``create_agent`` control (its reports are labelled
with it)."""
