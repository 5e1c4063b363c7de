"""The finish reason as contract input (offline loop), the provider mapping, the stops'
exit codes, and the per-argument size limit."""

from __future__ import annotations

import pytest

from agent_contract import run
from agent_contract.budget import Budget, argument_chars, check_argument_sizes
from agent_contract.errors import STOP_REASONS, ConfigurationError
from agent_contract.exitcodes import EXIT_CODES, EXIT_MODEL_ERROR, EXIT_REFUSED
from agent_contract.messages import (
    FINISH_REASONS,
    PROVIDER_FINISH_REASONS,
    Completion,
    ToolCall,
    finish_reason_of,
)
from agent_contract.testing import FakeModel
from agent_contract.tools import ToolSpec


@pytest.mark.parametrize(
    ("raw", "meant"),
    [
        # OpenAI finish_reason
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        ("content_filter", "content_filter"),
        # Anthropic stop_reason
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("pause_turn", "paused"),
        ("refusal", "refusal"),
        # PydanticAI's normalized values
        ("tool_call", "tool_calls"),
        # none sent, unknown, case
        (None, "stop"),
        ("", "stop"),
        ("MAX_TOKENS", "length"),
        ("something_new", "other"),
    ],
)
def test_provider_values_map_to_the_contracts_finish_reasons(raw: str | None, meant: str) -> None:
    assert finish_reason_of(raw) == meant


def test_the_table_maps_into_the_closed_set() -> None:
    assert set(PROVIDER_FINISH_REASONS.values()) <= set(FINISH_REASONS)


def test_a_refusal_text_makes_any_completion_a_refusal() -> None:
    assert Completion(text="x", refusal="no").finish == "refusal"
    with pytest.raises(ConfigurationError):
        Completion(refusal=3)  # type: ignore[arg-type]


def test_the_new_stops_have_exit_codes() -> None:
    assert set(EXIT_CODES) == set(STOP_REASONS)
    assert EXIT_CODES["refused"] == EXIT_CODES["content_filtered"] == EXIT_REFUSED == 10
    assert EXIT_CODES["truncated_response"] == EXIT_MODEL_ERROR


def _echo(ran: list[str]) -> ToolSpec:
    def handler(text: str) -> str:
        ran.append(text)
        return text

    return ToolSpec(
        name="echo",
        description="echo",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        handler=handler,
    )


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("length", "truncated_response"),
        ("max_tokens", "truncated_response"),
        ("pause_turn", "truncated_response"),
        ("content_filter", "content_filtered"),
        ("refusal", "refused"),
    ],
)
def test_an_unfinished_reply_with_a_parsed_call_never_runs_it(finish: str, stop: str) -> None:
    ran: list[str] = []
    reply = Completion(
        tool_calls=(ToolCall(id="c1", name="echo", arguments={"text": "10"}),),
        finish_reason=finish,
    )
    result = run(FakeModel([reply, "never"]), [_echo(ran)], "go")
    assert ran == []
    assert (result.stop_reason, result.output) == (stop, None)
    (record,) = result.tool_calls
    assert (record.id, record.error_kind, record.outcome) == ("c1", "invalid_call", "not_run")
    (tool_message,) = [m for m in result.messages if m.role == "tool"]
    assert (tool_message.tool_call_id, tool_message.status) == ("c1", "error")
    (event,) = [e for e in result.trace.events if e["type"] == "model_response"]
    assert (event["shape"], event["finish_reason"]) == ("invalid", finish)


def test_a_refusal_is_reported_redacted_and_capped() -> None:
    secret = "sk-live-0123456789abcdefghij"
    reply = Completion(refusal=f"I can't share {secret}. " + "x" * 2_000)
    result = run(FakeModel([reply]), [_echo([])], "go")
    assert result.stop_reason == "refused"
    assert result.stop_detail.startswith("the model refused: I can't share ")
    assert secret not in result.stop_detail
    assert result.stop_detail.endswith(" [cut]")
    assert len(result.stop_detail) < 1_100


def test_a_finished_reply_is_judged_by_its_content() -> None:
    result = run(FakeModel([Completion(text="fine", finish_reason="end_turn")]), [_echo([])], "q")
    assert (result.stop_reason, result.output) == ("answered", "fine")
    other = run(FakeModel([Completion(text="ok", finish_reason="weird")]), [_echo([])], "q")
    assert other.stop_reason == "answered"


# -- the per-argument size limit ---------------------------------------------------------


def test_argument_size_is_a_strings_length_or_the_json_text() -> None:
    assert argument_chars("abc") == 3
    assert argument_chars({"a": [1, 2]}) == len('{"a":[1,2]}')
    assert argument_chars("é" * 4) == 4


def test_the_limit_message_names_the_limit_and_the_argument() -> None:
    budget = Budget(max_argument_chars=10)
    assert check_argument_sizes(budget, {"a": "x" * 10}) is None
    assert check_argument_sizes(budget, {"a": "ok", "b": "x" * 11}) == (
        "max_argument_chars of 10 exceeded by argument 'b' (11 chars)"
    )
    assert check_argument_sizes(budget, "not a dict") is None
    assert Budget().max_argument_chars == 50_000
    with pytest.raises(ConfigurationError, match="max_argument_chars"):
        Budget(max_argument_chars=0)


def test_an_oversized_argument_is_refused_and_traced_cut() -> None:
    ran: list[str] = []
    huge = "y" * 300_000
    script = [
        Completion(tool_calls=(ToolCall(id="c1", name="echo", arguments={"text": huge}),)),
        "too long",
    ]
    result = run(FakeModel(script), [_echo(ran)], "go")
    assert ran == []
    assert result.stop_reason == "answered"
    (record,) = result.tool_calls
    assert record.error_kind == "invalid_arguments"
    (event,) = [e for e in result.trace.events if e["type"] == "tool_call"]
    assert event["arguments"]["arguments_cut"] is True
    assert event["arguments"]["arguments_chars"] > 300_000
    assert result.trace.size_bytes < 20_000
