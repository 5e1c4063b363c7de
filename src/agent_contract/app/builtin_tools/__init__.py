"""Built-in read-only tools: a safe arithmetic calculator and an offline policy lookup.

- :func:`calculator_tool` / :func:`evaluate`: bounded arithmetic, no code execution.
- :func:`policy_lookup_tool` / :func:`lookup_policy` / :data:`POLICIES`: a fixed,
  immutable policy table keyed by topic.
"""

from .calculator import calculator_tool, evaluate
from .policies import POLICIES, lookup_policy, policy_lookup_tool

__all__ = [
    "POLICIES",
    "calculator_tool",
    "evaluate",
    "lookup_policy",
    "policy_lookup_tool",
]
