"""The exit codes of every ``agent-contract`` command, in one place.

``check`` and ``matrix`` read each other's codes (``matrix`` runs ``check`` in a child
process), so they import these names rather than repeating the numbers.

0 answered / all held; 1 a self-test or internal failure; 2 a usage or wiring error;
3 a budget stop (the derived graph step limit included); 4 a missing optional
dependency (``dependency_missing``) or a release that could not be installed; 5 a
contract violation (``invalid_response``, ``invalid_history``) or a broken boundary; 6
the model failed (it raised, or its reply was cut by its output limit:
``truncated_response``); 7 paused (for approval, or on a framework interrupt); 8 a decision was
refused or cannot be carried out under the current contract (``policy_changed``), or a
stored run cannot be read; 9 another layer of the agent (a framework middleware) ended
the run; 10 the provider declined to answer: the model refused (``refused``) or a
content filter withheld the reply (``content_filtered``), an outcome of the request, not
a failure of the agent. A command interrupted by a signal exits the shell's way: 130 (SIGINT, Ctrl-C)
or 143 (SIGTERM), after storing the run (stop ``interrupted``) so that it can be
resumed.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EXIT_APPROVAL_REFUSED",
    "EXIT_BUDGET",
    "EXIT_CODES",
    "EXIT_CONTRACT_VIOLATION",
    "EXIT_DEPENDENCY_MISSING",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_MIDDLEWARE_STOP",
    "EXIT_MODEL_ERROR",
    "EXIT_OK",
    "EXIT_PENDING_APPROVAL",
    "EXIT_REFUSED",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
]

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_BUDGET: Final = 3
EXIT_DEPENDENCY_MISSING: Final = 4
EXIT_CONTRACT_VIOLATION: Final = 5
EXIT_MODEL_ERROR: Final = 6
EXIT_PENDING_APPROVAL: Final = 7
EXIT_APPROVAL_REFUSED: Final = 8
EXIT_MIDDLEWARE_STOP: Final = 9
EXIT_REFUSED: Final = 10
"""The provider declined: ``refused`` (the model's refusal) or ``content_filtered``."""
EXIT_INTERRUPTED: Final = 130
"""SIGINT (Ctrl-C): 128 + 2, as a shell reports it."""
EXIT_TERMINATED: Final = 143
"""SIGTERM: 128 + 15."""

EXIT_CODES: Final[dict[str, int]] = {
    "answered": EXIT_OK,
    "max_model_steps": EXIT_BUDGET,
    "max_tool_calls": EXIT_BUDGET,
    "repeated_call": EXIT_BUDGET,
    "deadline": EXIT_BUDGET,
    "max_trace_bytes": EXIT_BUDGET,
    "max_history_messages": EXIT_BUDGET,
    "max_history_chars": EXIT_BUDGET,
    "invalid_response": EXIT_CONTRACT_VIOLATION,
    "invalid_history": EXIT_CONTRACT_VIOLATION,
    "model_error": EXIT_MODEL_ERROR,
    "pending_approval": EXIT_PENDING_APPROVAL,
    "policy_changed": EXIT_APPROVAL_REFUSED,
    "interrupted": EXIT_PENDING_APPROVAL,
    "middleware_stop": EXIT_MIDDLEWARE_STOP,
    "max_graph_steps": EXIT_BUDGET,
    "truncated_response": EXIT_MODEL_ERROR,
    "content_filtered": EXIT_REFUSED,
    "refused": EXIT_REFUSED,
}
"""Exit code for each stop reason of ``run`` and ``approve``."""
