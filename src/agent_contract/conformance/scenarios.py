"""The contract suite's scenarios, defined once (each in its boundary's module of
:mod:`agent_contract.conformance.boundaries`) and run on every harness, in one order.

Each is a :class:`~agent_contract.conformance.base.Scenario`: a script of model
replies, tools, a budget and the expected outcome. Every scenario plants
:data:`~agent_contract.conformance.fixtures.PLANTED_SECRET` (in arguments, tool results
or exception text) and checks that it appears nowhere a run emits: trace, tool
messages, output, the JSON summary.

No pytest import: ``agent-contract check`` and the pytest suite both use this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..errors import ConfigurationError
from .base import Scenario
from .boundaries.table import DEFINITIONS

__all__ = ["RUN_ORDER", "SCENARIOS", "scenario"]

RUN_ORDER: Final[tuple[str, ...]] = (
    "direct_answer",
    "single_tool_call",
    "parallel_calls_issue_order",
    "unknown_tool",
    "outside_allowlist",
    "invalid_arguments_missing_field",
    "invalid_arguments_wrong_type",
    "invalid_arguments_extra_property",
    "invalid_arguments_failed_constraint",
    "malformed_json_arguments",
    "arguments_not_object",
    "missing_call_id",
    "duplicate_call_ids",
    "empty_response",
    "tool_raises",
    "classified_unauthorized",
    "classified_not_found",
    "classified_transient",
    "tool_timeout",
    "oversized_result",
    "non_string_results",
    "non_ascii",
    "step_budget",
    "tool_call_budget_parallel_batch",
    "repeated_identical_calls",
    "history_replayed",
    "tool_schemas_offered",
    "secret_in_result",
    "async_tool",
    "async_tool_timeout",
    "async_tool_ignores_cancellation",
    "async_tool_slow_cleanup",
    "cross_field_check",
    "return_direct_ends_the_run",
    "return_direct_failure_goes_on",
    "secret_keys_redacted",
    "repeated_calls_number_forms",
    "lone_surrogate_arguments",
    "lone_surrogate_result",
    "history_with_tool_calls",
    "history_orphan_tool_result",
    "history_unanswered_call",
    "history_duplicate_ids",
    "history_id_reused_by_the_model",
    "write_waits_for_approval",
    "write_approved",
    "write_rejected",
    "write_edited",
    "approval_replay_refused",
    "write_budget_across_resumes",
    "commentary_with_tool_calls",
    "text_and_tool_calls",
    "structured_answer",
    "structured_answer_retried",
    "structured_answer_with_tool_calls",
    "after_model_middleware_keeps_the_stop",
    "stock_limit_beside_the_budget",
    "stock_limit_ends_the_run",
    "retry_layer_timeout",
    "command_tool_result",
    "pausing_tool",
    "second_turn_on_a_thread",
    "look_alike_tool_names",
    "allowlist_prefix",
    "validation_error_names_path_and_constraint",
    "validation_error_names_missing_field",
    "secrets_in_every_spelling",
    "refused_call_arguments_redacted",
    "history_tool_turns_replayed",
    "call_id_reused_in_a_later_turn",
    "run_deadline",
    "write_acknowledgement_lost",
    "write_crash_after_write",
    "write_crash_after_approval",
)
"""The order ``check`` runs the scenarios in, and reports and the pytest suite list
them: the order they were written in, across boundaries. A scenario not named here runs
after these, in report order of its boundary."""


def _in_run_order(pool: Sequence[Scenario]) -> tuple[Scenario, ...]:
    """``pool`` in :data:`RUN_ORDER`, the scenarios it does not name after, in their
    order in ``pool``.

    Raises:
        ConfigurationError: two scenarios share a name, or :data:`RUN_ORDER` names a
            scenario that is not in ``pool``.
    """
    by_name = {s.name: s for s in pool}
    if len(by_name) != len(pool):
        shared = sorted({s.name for s in pool if sum(t.name == s.name for t in pool) > 1})
        raise ConfigurationError(f"scenarios share a name: {shared}")
    missing = [name for name in RUN_ORDER if name not in by_name]
    if missing:
        raise ConfigurationError(f"RUN_ORDER names scenarios that do not exist: {missing}")
    listed = [by_name.pop(name) for name in RUN_ORDER]
    return (*listed, *by_name.values())


SCENARIOS: Final[tuple[Scenario, ...]] = _in_run_order(
    [s for definition in DEFINITIONS for s in definition.scenarios]
)
"""Every scenario, in :data:`RUN_ORDER`."""


def scenario(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        KeyError: no such scenario.
    """
    for item in SCENARIOS:
        if item.name == name:
            return item
    raise KeyError(name)
