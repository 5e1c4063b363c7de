"""Budget limits, usage snapshots, and the checks that run before the work they guard."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_contract.budget import (
    Budget,
    RunCounters,
    admit_tool_calls,
    check_before_model_call,
    check_before_tool_calls,
    check_deadline,
    check_history_size,
    check_trace_size,
)
from agent_contract.errors import STOP_REASONS, ConfigurationError


def frozen_usage(monkeypatch: pytest.MonkeyPatch, elapsed: float, **kwargs: Any) -> RunCounters:
    usage = RunCounters(**kwargs)
    monkeypatch.setattr(usage, "elapsed", lambda: elapsed)
    return usage


def test_defaults() -> None:
    assert Budget().to_dict() == {
        "max_model_steps": 8,
        "max_tool_calls": 8,
        "max_identical_calls": 2,
        "deadline_seconds": 60.0,
        "max_trace_bytes": 1_000_000,
        "max_argument_chars": 50_000,
        "max_history_messages": 50_000,
        "max_history_chars": 10_000_000,
    }


@pytest.mark.parametrize(
    "field",
    [
        "max_model_steps",
        "max_tool_calls",
        "max_identical_calls",
        "max_trace_bytes",
        "max_argument_chars",
        "max_history_messages",
        "max_history_chars",
    ],
)
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(0, id="zero"),
        pytest.param(-1, id="negative"),
        pytest.param(1.5, id="float"),
        pytest.param(True, id="bool"),
        pytest.param("3", id="str"),
        pytest.param(None, id="none"),
    ],
)
def test_int_limits_must_be_positive_ints(field: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=f"Budget.{field} must be an int >= 1"):
        Budget(**{field: value})


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(0, id="zero"),
        pytest.param(-0.5, id="negative"),
        pytest.param(True, id="bool"),
        pytest.param("10", id="str"),
    ],
)
def test_deadline_validation(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="deadline_seconds"):
        Budget(deadline_seconds=value)


@pytest.mark.parametrize("value", [None, 0.01, 5], ids=["none", "small-float", "int"])
def test_deadline_accepts_positive_or_none(value: float | None) -> None:
    assert Budget(deadline_seconds=value).deadline_seconds == value


def test_budget_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Budget().max_model_steps = 3  # type: ignore[misc]


# -- model steps --------------------------------------------------------------------------


def test_step_budget_message_pins_limit_and_steps() -> None:
    usage = RunCounters(model_steps=2)
    breach = check_before_model_call(Budget(max_model_steps=2), usage, trace_bytes=0)
    assert breach is not None
    assert breach.reason == "max_model_steps"
    assert breach.message == "max_model_steps of 2 reached (2 steps taken, one more needed)"


def test_step_budget_allows_the_last_step() -> None:
    usage = RunCounters(model_steps=1)
    assert check_before_model_call(Budget(max_model_steps=2), usage, trace_bytes=0) is None


def test_deadline_message(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = frozen_usage(monkeypatch, 0.75)
    breach = check_deadline(Budget(deadline_seconds=0.5), usage)
    assert breach is not None
    assert breach.reason == "deadline"
    assert breach.message == "deadline of 0.5 s reached (0.750 s elapsed)"


def test_deadline_is_reached_at_equality_and_not_before(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_deadline(Budget(deadline_seconds=2), frozen_usage(monkeypatch, 2.0)) is not None
    assert check_deadline(Budget(deadline_seconds=2), frozen_usage(monkeypatch, 1.999)) is None


def test_no_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = frozen_usage(monkeypatch, 10**9)
    assert check_deadline(Budget(deadline_seconds=None), usage) is None


def test_real_clock_deadline_counts_earlier_segments() -> None:
    usage = RunCounters(elapsed_before=5.0)
    assert usage.elapsed() >= 5.0
    breach = check_deadline(Budget(deadline_seconds=5), usage)
    assert breach is not None
    assert breach.message.startswith("deadline of 5 s reached (5.")


def test_trace_size_message() -> None:
    breach = check_trace_size(Budget(max_trace_bytes=100), 150)
    assert breach is not None
    assert breach.reason == "max_trace_bytes"
    assert breach.message == "max_trace_bytes of 100 reached (150 bytes)"
    assert check_trace_size(Budget(max_trace_bytes=100), 99) is None
    assert check_trace_size(Budget(max_trace_bytes=100), 100) is not None


def test_model_call_checks_deadline_then_trace_then_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = Budget(max_model_steps=1, deadline_seconds=1, max_trace_bytes=10)
    everything = frozen_usage(monkeypatch, 2.0, model_steps=1)
    breach = check_before_model_call(budget, everything, trace_bytes=50)
    assert breach is not None
    assert breach.reason == "deadline"
    in_time = frozen_usage(monkeypatch, 0.0, model_steps=1)
    breach = check_before_model_call(budget, in_time, trace_bytes=50)
    assert breach is not None
    assert breach.reason == "max_trace_bytes"


# -- tool batches --------------------------------------------------------------------------


def test_tool_call_budget_message_pins_batch_and_earlier() -> None:
    breach = check_before_tool_calls(
        Budget(max_tool_calls=3),
        RunCounters(),
        0,
        [(f"c{i}", f"t:{i}") for i in range(4)],
    )
    assert breach is not None
    assert breach.reason == "max_tool_calls"
    assert breach.message == (
        "max_tool_calls of 3 exceeded (4 requested: 0 earlier + 4 in this batch)"
    )
    assert breach.call_ids == ()


def test_tool_call_budget_counts_earlier_calls() -> None:
    usage = RunCounters(tool_calls=2)
    breach = check_before_tool_calls(Budget(max_tool_calls=3), usage, 0, [("a", "k1"), ("b", "k2")])
    assert breach is not None
    assert breach.message == (
        "max_tool_calls of 3 exceeded (4 requested: 2 earlier + 2 in this batch)"
    )
    assert check_before_tool_calls(Budget(max_tool_calls=3), usage, 0, [("a", "k1")]) is None


def test_repeats_counted_across_batches() -> None:
    usage = RunCounters(call_counts={"t:k": 2}, tool_calls=2)
    breach = check_before_tool_calls(Budget(max_identical_calls=2), usage, 0, [("c3", "t:k")])
    assert breach is not None
    assert breach.reason == "repeated_call"
    assert breach.message == "max_identical_calls of 2 exceeded by 1 call(s): c3"
    assert breach.call_ids == ("c3",)


def test_repeats_counted_within_a_batch() -> None:
    calls = [("a", "t:k"), ("b", "t:other"), ("c", "t:k"), ("d", "t:k")]
    breach = check_before_tool_calls(Budget(max_identical_calls=1), RunCounters(), 0, calls)
    assert breach is not None
    assert breach.reason == "repeated_call"
    assert breach.call_ids == ("c", "d")
    assert breach.message == "max_identical_calls of 1 exceeded by 2 call(s): c, d"


def test_tool_budget_checked_before_repeats() -> None:
    calls = [("a", "t:k"), ("b", "t:k"), ("c", "t:k")]
    breach = check_before_tool_calls(
        Budget(max_tool_calls=2, max_identical_calls=1), RunCounters(), 0, calls
    )
    assert breach is not None
    assert breach.reason == "max_tool_calls"


def test_tool_batch_checks_trace_and_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = Budget(max_trace_bytes=10, deadline_seconds=1)
    breach = check_before_tool_calls(budget, frozen_usage(monkeypatch, 0.0), 10, [("a", "k")])
    assert breach is not None
    assert breach.reason == "max_trace_bytes"
    breach = check_before_tool_calls(budget, frozen_usage(monkeypatch, 1.0), 0, [("a", "k")])
    assert breach is not None
    assert breach.reason == "deadline"


def test_check_does_not_charge_usage() -> None:
    usage = RunCounters()
    assert check_before_tool_calls(Budget(), usage, 0, [("a", "k"), ("b", "k")]) is None
    assert (usage.tool_calls, usage.call_counts) == (0, {})


def test_admit_charges_counts() -> None:
    usage = RunCounters()
    admit_tool_calls(usage, ["t:a", "t:b", "t:a"])
    assert usage.tool_calls == 3
    assert usage.call_counts == {"t:a": 2, "t:b": 1}


def test_every_breach_reason_is_a_stop_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = Budget(
        max_model_steps=1,
        max_tool_calls=1,
        max_identical_calls=1,
        deadline_seconds=1,
        max_trace_bytes=1,
    )
    breaches = [
        check_deadline(budget, frozen_usage(monkeypatch, 5.0)),
        check_trace_size(budget, 5),
        check_before_model_call(Budget(max_model_steps=1), RunCounters(model_steps=1), 0),
        check_before_tool_calls(
            Budget(max_tool_calls=1), RunCounters(), 0, [("a", "x"), ("b", "y")]
        ),
        check_before_tool_calls(
            Budget(max_identical_calls=1), RunCounters(), 0, [("a", "x"), ("b", "x")]
        ),
        check_history_size(Budget(max_history_messages=1), 2, 0),
        check_history_size(Budget(max_history_chars=1), 1, 2),
    ]
    for breach in breaches:
        assert breach is not None
        assert breach.reason in STOP_REASONS


def test_history_size_limits_are_maxima_and_name_what_was_found() -> None:
    budget = Budget(max_history_messages=3, max_history_chars=10)
    assert check_history_size(budget, 3, 10) is None
    over = check_history_size(budget, 4, 99)  # the message count is judged first
    assert over is not None
    assert (over.reason, over.message) == (
        "max_history_messages",
        "max_history_messages of 3 exceeded (4 messages in the history)",
    )
    over = check_history_size(budget, 3, 11)
    assert over is not None
    assert (over.reason, over.message) == (
        "max_history_chars",
        "max_history_chars of 10 exceeded (at least 11 chars in the history)",
    )


# -- usage snapshots -----------------------------------------------------------------------


def test_usage_snapshot_round_trip() -> None:
    usage = RunCounters(
        model_steps=3, tool_calls=4, call_counts={"t:a": 2, "t:b": 2}, elapsed_before=1.5
    )
    snapshot = json.loads(json.dumps(usage.to_dict()))
    restored = RunCounters.from_dict(snapshot)
    assert restored.model_steps == 3
    assert restored.tool_calls == 4
    assert restored.call_counts == {"t:a": 2, "t:b": 2}
    assert restored.elapsed_before == snapshot["elapsed_before"]
    assert snapshot["elapsed_before"] >= 1.5
    assert restored.elapsed() >= restored.elapsed_before


def test_usage_snapshot_copies_counts() -> None:
    usage = RunCounters(call_counts={"k": 1})
    snapshot = usage.to_dict()
    snapshot["call_counts"]["k"] = 99
    assert usage.call_counts == {"k": 1}


def test_usage_is_a_frozen_report_of_the_counters() -> None:
    usage = RunCounters(model_steps=2, tool_calls=1).usage()
    assert (usage.model_steps, usage.tool_calls) == (2, 1)
    assert usage.elapsed_seconds >= 0
    assert list(usage.to_dict()) == ["model_steps", "tool_calls", "elapsed_seconds"]
    with pytest.raises(AttributeError):
        usage.model_steps = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({}, id="empty"),
        pytest.param(
            {"model_steps": "x", "tool_calls": 0, "call_counts": {}, "elapsed_before": 0},
            id="steps-not-a-number",
        ),
        pytest.param(
            {"model_steps": 0, "tool_calls": 0, "call_counts": [1], "elapsed_before": 0},
            id="counts-not-a-dict",
        ),
        pytest.param(
            {"model_steps": 0, "tool_calls": 0, "call_counts": {}, "elapsed_before": None},
            id="elapsed-none",
        ),
    ],
)
def test_malformed_snapshot(data: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="malformed run counters snapshot"):
        RunCounters.from_dict(data)
