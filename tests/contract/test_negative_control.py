"""The suite must be able to fail: on a plain ``create_agent`` (stock tools, no contract
middleware) it reports, by name, the boundaries that break.

These tests assert the breakage. If LangChain changes a default so that a boundary
starts to hold (or breaks differently), the map below must be updated on purpose,
together with the negative control's table in docs/SUITE.md.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_contract.conformance import SCENARIOS, Scenario, ScenarioOutcome

from .conftest import expresses

Outcomes = Callable[[Scenario, str], ScenarioOutcome]

T = "trace_redaction"  # a bare create_agent keeps no contract trace at all

EXPECTED_BROKEN: dict[str, set[str]] = {
    "direct_answer": {T},
    "single_tool_call": {T},
    "parallel_calls_issue_order": {T},
    "unknown_tool": {"allowlist", T},
    "outside_allowlist": {"allowlist", T},
    "invalid_arguments_missing_field": {"argument_validation"},
    "invalid_arguments_wrong_type": {"argument_validation", T},
    "invalid_arguments_extra_property": {"argument_validation"},
    "invalid_arguments_failed_constraint": {"argument_validation", T},
    "malformed_json_arguments": {"response_shape", T},
    "arguments_not_object": {"response_shape", T},
    "missing_call_id": {"response_shape", T},
    "duplicate_call_ids": {"response_shape"},
    "empty_response": {"response_shape", T},
    "text_and_tool_calls": {"response_shape"},
    "tool_raises": {"tool_errors", T},
    "classified_unauthorized": {"tool_errors"},
    "classified_not_found": {"tool_errors"},
    "classified_transient": {"tool_errors"},
    "tool_timeout": {"timeouts", T},
    "oversized_result": {"result_size", T},
    "non_string_results": {"serialization", T},
    "non_ascii": {T},
    "lone_surrogate_arguments": {"argument_validation", T},
    "lone_surrogate_result": {"serialization", T},
    "step_budget": {"model_step_budget"},
    "tool_call_budget_parallel_batch": {"tool_call_budget"},
    "repeated_identical_calls": {"repeated_calls"},
    "repeated_calls_number_forms": {"repeated_calls", T},
    "history_replayed": {T},
    "history_with_tool_calls": {T},
    "history_orphan_tool_result": {"history", T},
    "history_unanswered_call": {"history", T},
    "history_duplicate_ids": {"history", T},
    "history_id_reused_by_the_model": {"response_shape"},
    "tool_schemas_offered": {T},
    "secret_in_result": {T},
    "secret_keys_redacted": {T},
    "cross_field_check": {"argument_validation", T},
    "async_tool": {"serialization"},
    "async_tool_timeout": {"timeouts"},
    "async_tool_ignores_cancellation": {"timeouts"},
    "async_tool_slow_cleanup": {"timeouts"},
    "return_direct_ends_the_run": {"response_shape", T},
    "return_direct_failure_goes_on": {"response_shape"},
    # Write tools: a stock tool writes at once, with no preview, approval or key.
    "write_waits_for_approval": {"write_approval"},
    "write_approved": {"write_approval", T},
    "write_rejected": {"write_approval", T},
    "write_edited": {"write_approval", T},
    "approval_replay_refused": {"write_approval", T},
    "write_budget_across_resumes": {"tool_call_budget"},
    # The agent stack (issue 10). A bare create_agent runs tools beside commentary, but
    # has no structured answer (no response_format), loops past the budget beside a
    # middleware, and keeps no trace.
    "commentary_with_tool_calls": {T},
    "structured_answer": {"response_shape"},
    "structured_answer_retried": {"response_shape"},
    "structured_answer_missing_field": {"response_shape"},
    "structured_answer_undeclared_field": {"response_shape"},
    "structured_answer_wrong_type": {"response_shape"},
    "structured_answer_with_tool_calls": {"response_shape"},
    "after_model_middleware_keeps_the_stop": {"repeated_calls", T},
    "stock_limit_beside_the_budget": {"model_step_budget"},
    # Not run on the control (it declares no middleware, commands, pauses or threads).
    "stock_limit_ends_the_run": set(),
    "retry_layer_timeout": set(),
    "command_tool_result": set(),
    "pausing_tool": set(),
    "second_turn_on_a_thread": set(),
    # Issue 14: scenarios that pin the contract exactly.
    "look_alike_tool_names": {"allowlist", T},
    "allowlist_prefix": {"allowlist", T},
    "validation_error_names_path_and_constraint": {"argument_validation", T},
    "validation_error_names_missing_field": {"argument_validation"},
    "secrets_in_every_spelling": {T},
    "refused_call_arguments_redacted": {T},
    "history_tool_turns_replayed": {T},
    "call_id_reused_in_a_later_turn": {"call_id_binding", "response_shape", T},
    "run_deadline": {"deadline", T},
    "write_acknowledgement_lost": {"write_approval"},
    "write_crash_after_write": set(),
    "write_crash_after_approval": set(),
    # Issue 23: a bare create_agent ignores the finish reason (a cut, filtered or refused
    # reply is its answer, a cut call runs) and has no argument size limit; an empty
    # argument string reaches the stock tool as no arguments (the handler raises).
    "empty_string_arguments": {"response_shape"},
    "tool_call_cut_by_length": {"call_id_binding", "finish_reasons", T},
    "parsed_tool_call_cut_by_max_tokens": {"finish_reasons", T},
    "text_cut_by_length": {"finish_reasons", T},
    "content_filtered_reply": {"finish_reasons", T},
    "provider_refusal": {"finish_reasons", T},
    "finished_tool_call_runs": {T},
    "refusal_stop_reason_with_calls": {"finish_reasons", T},
    "argument_at_size_limit": {T},
    "argument_over_size_limit": {"argument_size", T},
    "nested_argument_over_size_limit": {"argument_size", T},
    "argument_over_size_limit_in_parts": {"argument_size", T},
    # Issue 25: a bare wiring hands a context-aware tool a bare context (no caller, no
    # call id, no values: the values tool raises), and has no approval step (the write
    # runs with no idempotency key).
    "tool_sees_the_caller": {"tool_context", T},
    "approval_names_the_caller": {"tool_context", "write_approval", T},
    "undeclared_tool_gets_no_context": {T},
    "run_values_reach_the_tool_only": {"tool_context"},
    "declared_secret_reaches_the_tool": {"tool_context", T},
    "undeclared_tool_gets_no_secret": {"tool_context", T},
    "approval_sees_secret_handles": {"tool_context", T},
    # no durable store of the contract: the paused run is never stored, tampered with and
    # reopened (not counted on a control, which does not declare durable_store)
    "checkpoint_forged_refused": {"checkpoint_integrity", T},
    "checkpoint_edited_refused": {"checkpoint_integrity", T},
    "checkpoint_rolled_back_refused": {"checkpoint_integrity", T},
    "checkpoint_grafted_refused": {"checkpoint_integrity", T},
    # not expressed: a control declares no sub_agents (no delegating tool, no child agent)
    "child_spends_the_run_budget": set(),
    "child_call_not_granted_never_runs": set(),
    "two_delegations_fresh_scopes": set(),
    # not expressed: a control declares no streamed_replies (in process, no stream of
    # pieces reaches it: the row's scenarios run on check --wire's streamed columns)
    "streamed_call_cut_mid_json": set(),
    "streamed_malformed_json": set(),
    "streamed_arguments_in_small_pieces": set(),
    "streamed_calls_interleaved": set(),
}


def broken(outcome: ScenarioOutcome) -> set[str]:
    return {p.boundary for p in outcome.problems}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_plain_create_agent_breaks_as_measured(scenario: Scenario, outcomes: Outcomes) -> None:
    """The control breaks exactly the measured boundaries for this scenario.

    When it fails: LangChain's defaults changed, or a scenario stopped detecting a
    breakage. Re-measure with `agent-contract check --harness plain-create-agent`.
    """
    assert broken(outcomes(scenario, "plain-create-agent")) == EXPECTED_BROKEN[scenario.name]


def test_map_covers_every_scenario() -> None:
    assert set(EXPECTED_BROKEN) == {s.name for s in SCENARIOS}


def test_control_breaks_every_enforced_boundary(outcomes: Outcomes) -> None:
    """Every boundary the contract enforces is broken somewhere on the control (call-ID
    binding only where the model reuses an id from an earlier turn: both calls get a
    message with that id)."""
    seen: set[str] = set()
    for scenario in SCENARIOS:
        if expresses(scenario, "plain-create-agent"):
            seen |= broken(outcomes(scenario, "plain-create-agent"))
    assert seen == {
        "allowlist",
        "argument_size",
        "argument_validation",
        "call_id_binding",
        "deadline",
        "finish_reasons",
        "history",
        "model_step_budget",
        "repeated_calls",
        "response_shape",
        "result_size",
        "serialization",
        "timeouts",
        "tool_call_budget",
        "tool_context",
        "tool_errors",
        "trace_redaction",
        "write_approval",
    }


def test_secret_leaks_on_the_control(outcomes: Outcomes) -> None:
    """Beyond the missing trace, the control hands a tool's secret to the model."""
    outcome = outcomes(
        next(s for s in SCENARIOS if s.name == "secret_in_result"), "plain-create-agent"
    )
    assert any("secret" in p.message for p in outcome.problems)
