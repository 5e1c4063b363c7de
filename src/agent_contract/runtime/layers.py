"""The opt-in extension of the driver protocol: :class:`LayerOps`, what ``RunState.layers``
gives a driver that runs inside a framework whose other layers may run a call again,
rewrite its arguments or answer it themselves (the rules are in
:mod:`agent_contract.runtime.attempts`). A driver that owns its loop never needs it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..results import ToolResult
from . import attempts
from .ledger import PlannedCall, refusal
from .run import Run

__all__ = ["LayerOps"]


class LayerOps:
    """The layered protocol: what a driver inside a framework's layers reports, beside
    the narrow protocol (:class:`~agent_contract.runtime.RunState`), when the framework
    may run an admitted call again, rewrite it, or answer it in the tool's place (the
    LangChain binding: its gate reports each execution, its outer middleware each
    answer). Get it with ``RunState.layers``; every rule is in
    :mod:`agent_contract.runtime.attempts`. In the order a call meets them:

    1. **rewritten**: ``rewrite_arguments(tool_call_id, arguments, by=...)`` re-plans an
       admitted call whose arguments another layer replaced before it ran (validated
       against the schema; a write's are never rewritten this way).
    2. **each execution**: ``record_attempt(tool_call_id, arguments=None, by=...) ->
       ToolResult | None`` before the framework executes the call (a retry is an
       attempt charged to the budget; a write never runs twice; rewritten arguments are
       validated); ``attempt_failed(tool_call_id, error)`` when one raises.
    3. **answered**: ``answered_unrun(tool_call_id)`` when an answer came back (no
       attempt reached the tool: another layer answered in its place, a ``not_run``
       refusal); ``refuse_unrun(tool_call_id, message)`` for a call another layer
       answered without running it; ``record_state_update(tool_call_id, keys)`` for a
       result that came with a framework state update.
    """

    PROTOCOL: ClassVar[frozenset[str]] = frozenset(
        {
            "rewrite_arguments",
            "record_attempt",
            "attempt_failed",
            "answered_unrun",
            "refuse_unrun",
            "record_state_update",
        }
    )
    """Every operation of the extension (the class docstring explains each)."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def record_attempt(
        self,
        tool_call_id: str,
        arguments: dict[str, Any] | None = None,
        *,
        by: str = "another layer",
    ) -> ToolResult | None:
        """Report that the framework is about to execute ``tool_call_id`` (once per
        execution: a retry layer's second try is a second attempt), with the
        model-visible ``arguments`` it will run with, if known. See
        :mod:`agent_contract.runtime.attempts` for the rules.

        Returns:
            ``None``: run it. A ToolResult: do not run it; answer the attempt with this
            refusal (the call's one result is recorded when ``RunState.execute`` finishes).
        """
        with self._run.lock:
            return attempts.record_attempt(self._run, tool_call_id, arguments, by)

    def attempt_failed(self, tool_call_id: str, error: BaseException) -> None:
        """Report that an attempt of ``tool_call_id`` raised ``error`` (a timeout makes
        the call's outcome unknown, with side effects possible)."""
        with self._run.lock:
            attempts.attempt_failed(self._run, tool_call_id, error)

    def answered_unrun(self, tool_call_id: str) -> bool:
        """Report that the framework handed back an answer to ``tool_call_id``; returns
        ``True`` (and the call's result becomes a ``not_run`` refusal) when no attempt
        of it reached the tool: another layer answered in the tool's place."""
        with self._run.lock:
            return attempts.answered_unrun(self._run, tool_call_id)

    def rewrite_arguments(
        self, tool_call_id: str, arguments: dict[str, Any], *, by: str
    ) -> PlannedCall | None:
        """Re-plan an admitted call whose arguments another layer replaced before it ran
        (e.g. a human reviewer's edit): validated against the schema, traced, and
        recorded as the call's arguments. Unchanged arguments change nothing.

        Returns:
            The call as it now stands (a refused one when the new arguments fail the
            schema; its refusal is not recorded yet), or ``None`` when it is not in the
            open batch.
        """
        with self._run.lock:
            planned = self._run.ledger.planned(tool_call_id)
            if planned is None or planned.refusal is not None:
                return planned
            return attempts.rewrite(self._run, planned, arguments, by)

    def record_state_update(self, tool_call_id: str, keys: Sequence[str]) -> None:
        """Trace that a call's successful result came with a framework state update
        (``state_update``: the key names only, never the values)."""
        with self._run.lock:
            self._run.trace.record("state_update", id=tool_call_id, keys=list(keys))

    def refuse_unrun(self, tool_call_id: str, message: str) -> ToolResult | None:
        """Record that an admitted call was answered by another layer without running
        (outcome ``not_run``, kind ``not_allowed``, with ``message``).

        Returns:
            The recorded result, or ``None`` when the call is not in the open batch or
            already has its result.
        """
        with self._run.lock:
            planned = self._run.ledger.planned(tool_call_id)
            if planned is None or tool_call_id in self._run.ledger.answered:
                return None
            return self._run.ledger.record(
                refusal(planned.call, "not_allowed", message, self._run.contract.redaction)
            )
