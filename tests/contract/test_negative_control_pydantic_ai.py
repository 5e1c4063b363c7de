"""The suite must be able to fail on PydanticAI too: on a plain ``Agent`` (stock tools from
``Tool.from_schema``, default settings, no contract capability) it reports, by name, the
boundaries that break.

These tests assert the breakage. If PydanticAI changes a default so that a boundary
starts to hold (or breaks differently), the map below must be updated on purpose,
together with docs/MIGRATION_PYDANTIC_AI.md.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_contract.conformance import SCENARIOS, Scenario, ScenarioOutcome

from .conftest import expresses

Outcomes = Callable[[Scenario, str], ScenarioOutcome]

CONTROL = "plain-pydantic-ai"
T = "trace_redaction"  # a plain Agent keeps no contract trace at all

# The comment after each entry is the stop the control showed. A crash is the run raising
# out of run_sync: a tool's own exception (PydanticAI re-raises it), a TypeError for
# arguments the handler cannot take, UnexpectedModelBehavior for duplicate ids or spent
# retries, ScriptExhaustedError where the agent asked the scripted model again where the
# contract stops the run. missing_call_id: the agent runs the call and binds its result to
# an empty id, which the model adapter cannot hand the model (ConfigurationError).
EXPECTED_BROKEN: dict[str, set[str]] = {
    "direct_answer": {T},  # answered
    "single_tool_call": {T},  # answered
    "parallel_calls_issue_order": {T},  # answered
    "unknown_tool": {"allowlist", T},  # answered
    "outside_allowlist": {"allowlist", T},  # answered
    "invalid_arguments_missing_field": {"argument_validation"},  # crashed:TypeError
    "invalid_arguments_wrong_type": {"argument_validation", T},  # answered
    "invalid_arguments_extra_property": {"argument_validation"},  # crashed:TypeError
    "invalid_arguments_failed_constraint": {"argument_validation", T},  # answered
    "malformed_json_arguments": {"response_shape"},  # crashed:ScriptExhaustedError
    "arguments_not_object": {"response_shape"},  # crashed:TypeError
    "missing_call_id": {"response_shape"},  # crashed:ConfigurationError
    "duplicate_call_ids": {"response_shape"},  # crashed:UnexpectedModelBehavior
    "empty_response": {"response_shape"},  # crashed:ScriptExhaustedError
    "tool_raises": {"tool_errors", T},  # crashed:RuntimeError
    "classified_unauthorized": {"tool_errors"},  # crashed:UnauthorizedError
    "classified_not_found": {"tool_errors"},  # crashed:NotFoundError
    "classified_transient": {"tool_errors"},  # crashed:TransientError
    "tool_timeout": {"timeouts", T},  # answered
    "oversized_result": {"result_size", T},  # answered
    "non_string_results": {"serialization", T},  # answered
    "non_ascii": {T},  # answered
    "step_budget": {"model_step_budget"},  # crashed:ScriptExhaustedError
    "tool_call_budget_parallel_batch": {"tool_call_budget"},  # crashed:ScriptExhaustedError
    "repeated_identical_calls": {"repeated_calls"},  # crashed:ScriptExhaustedError
    "history_replayed": {T},  # answered
    "tool_schemas_offered": {T},  # answered
    "secret_in_result": {T},  # answered
    "cross_field_check": {"argument_validation", T},  # answered
    "return_direct_ends_the_run": {"response_shape", T},  # answered
    "return_direct_failure_goes_on": {"response_shape"},  # crashed:NotFoundError
    "secret_keys_redacted": {T},  # answered
    "repeated_calls_number_forms": {"repeated_calls", T},  # answered
    "lone_surrogate_arguments": {"argument_validation", T},  # answered
    "lone_surrogate_result": {"serialization", T},  # answered
    "history_with_tool_calls": {T},  # answered
    "history_orphan_tool_result": {"history", T},  # answered
    "history_unanswered_call": {"history", T},  # answered
    "history_duplicate_ids": {"history", T},  # answered
    "history_id_reused_by_the_model": {"response_shape"},  # crashed:ScriptExhaustedError
    "write_waits_for_approval": {"write_approval"},  # crashed:ScriptExhaustedError
    "write_approved": {"write_approval", T},  # answered
    "write_rejected": {"write_approval", T},  # answered
    "write_edited": {"write_approval", T},  # answered
    "approval_replay_refused": {"write_approval", T},  # answered
    "write_budget_across_resumes": {"tool_call_budget"},  # crashed:ScriptExhaustedError
    # An async handler: PydanticAI awaits it (its dict serialized compactly, not the
    # contract's JSON) and waits as long as it takes (no timeout by default).
    "async_tool": {"serialization", T},  # answered
    "async_tool_timeout": {"timeouts", T},  # answered
    "async_tool_ignores_cancellation": {"timeouts", T},
    "async_tool_slow_cleanup": {"timeouts", T},
    "commentary_with_tool_calls": {T},  # answered
    "text_and_tool_calls": {"response_shape"},  # crashed:ScriptExhaustedError
    "structured_answer": {"response_shape"},  # crashed:ScriptExhaustedError
    "structured_answer_retried": {"response_shape"},  # crashed:UnexpectedModelBehavior
    "structured_answer_missing_field": {"response_shape"},  # crashed:UnexpectedModelBehavior
    "structured_answer_undeclared_field": {"response_shape"},  # crashed:UnexpectedModelBehavior
    "structured_answer_wrong_type": {"response_shape"},  # crashed:UnexpectedModelBehavior
    "structured_answer_with_tool_calls": {"response_shape"},  # crashed:ScriptExhaustedError
    "after_model_middleware_keeps_the_stop": {"repeated_calls", T},  # answered
    "stock_limit_beside_the_budget": {"model_step_budget"},  # crashed:ScriptExhaustedError
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
    # Issue 23: the finish reason ignored, no argument size limit.
    "empty_string_arguments": {"response_shape"},  # crashed:TypeError
    "tool_call_cut_by_length": {"finish_reasons", T},  # answered
    "parsed_tool_call_cut_by_max_tokens": {"finish_reasons", T},  # answered
    "text_cut_by_length": {"finish_reasons", T},  # answered
    "content_filtered_reply": {"finish_reasons", T},  # answered
    "provider_refusal": {"finish_reasons", T},  # crashed:ContentFilterError
    "finished_tool_call_runs": {T},
    "refusal_stop_reason_with_calls": {"finish_reasons", T},  # answered
    "argument_at_size_limit": {T},
    "argument_over_size_limit": {"argument_size", T},  # answered
    "nested_argument_over_size_limit": {"argument_size", T},  # answered
    "argument_over_size_limit_in_parts": {"argument_size", T},  # answered
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
    # not expressed: the control declares no durable_store (no durable store of the contract)
    "checkpoint_forged_refused": set(),
    "checkpoint_edited_refused": set(),
    "checkpoint_rolled_back_refused": set(),
    "checkpoint_grafted_refused": set(),
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
def test_plain_pydantic_ai_breaks_as_measured(scenario: Scenario, outcomes: Outcomes) -> None:
    """The control breaks exactly the measured boundaries for this scenario.

    When it fails: PydanticAI's defaults changed, or a scenario stopped detecting a
    breakage. Re-measure with `agent-contract check --harness plain-pydantic-ai`.
    """
    if not expresses(scenario, CONTROL):
        assert EXPECTED_BROKEN[scenario.name] == set()
        return
    assert broken(outcomes(scenario, CONTROL)) == EXPECTED_BROKEN[scenario.name]


def test_map_covers_every_scenario() -> None:
    assert set(EXPECTED_BROKEN) == {s.name for s in SCENARIOS}


def test_control_breaks_every_enforced_boundary(outcomes: Outcomes) -> None:
    """Every boundary the contract enforces is broken somewhere on the control (call-ID
    binding only where the model reuses an id from an earlier turn: both calls get a
    message with that id)."""
    seen: set[str] = set()
    for scenario in SCENARIOS:
        if expresses(scenario, CONTROL):
            seen |= broken(outcomes(scenario, CONTROL))
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
    outcome = outcomes(next(s for s in SCENARIOS if s.name == "secret_in_result"), CONTROL)
    assert any("secret" in p.message for p in outcome.problems)
