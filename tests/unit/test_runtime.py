"""The contract's rules: response shape, allowlist, arguments, errors, budgets, the ledger.

Most tests drive the rules through the offline loop with a scripted FakeModel and
assert on the tool messages, the call records and the trace; a few call RunState and
``validate_response`` directly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from agent_contract.approval import Approval
from agent_contract.budget import Budget, RunCounters
from agent_contract.errors import (
    ConfigurationError,
    NotFoundError,
    ToolError,
    TransientError,
    UnauthorizedError,
)
from agent_contract.loop import resume, run
from agent_contract.messages import Completion, Message, ToolCall
from agent_contract.runtime import Contract, RunResult, call_key, validate_response
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import MemorySink

SECRET = "s3cr3t-value-7781"


class Recorder:
    """A thread-safe list of what handlers were called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def add(self, name: str, arguments: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append((name, dict(arguments)))


def spec(
    name: str = "echo",
    handler: Callable[..., Any] | None = None,
    *,
    recorder: Recorder | None = None,
    parameters: dict[str, Any] | None = None,
    **kwargs: Any,
) -> ToolSpec:
    def default(**arguments: Any) -> Any:
        if recorder is not None:
            recorder.add(name, arguments)
        return {"echo": arguments.get("text")}

    return ToolSpec(
        name=name,
        description=f"the {name} tool",
        parameters=parameters
        or {"type": "object", "properties": {"text": {"type": "string", "maxLength": 50}}},
        handler=handler or default,
        **kwargs,
    )


def tool_messages(result: RunResult) -> list[Message]:
    return [m for m in result.messages if m.role == "tool"]


def contents(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(m.content) for m in tool_messages(result)]


def event_types(result: RunResult) -> list[str]:
    return [e["type"] for e in result.trace.events]


# -- validate_response ----------------------------------------------------------------------

VIOLATIONS = [
    pytest.param(
        Completion(text="answer", tool_calls=(ToolCall(id="a", name="echo"),)),
        [("text_and_tool_calls", None)],
        id="text-and-tool-calls",
    ),
    pytest.param(Completion(), [("empty_response", None)], id="empty"),
    pytest.param(Completion(text="  \n "), [("empty_response", None)], id="blank-text"),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name=""),)),
        [("empty_tool_name", "a")],
        id="empty-tool-name",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="   "),)),
        [("empty_tool_name", "a")],
        id="blank-tool-name",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id=None, name="echo"),)),
        [("missing_call_id", None)],
        id="missing-id",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="", name="echo"),)),
        [("missing_call_id", None)],
        id="empty-id",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo"), ToolCall(id="a", name="echo"))),
        [("duplicate_call_id", "a")],
        id="duplicate-id-in-response",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=[1, 2]),)),
        [("arguments_not_object", "a")],
        id="arguments-list",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=3),)),
        [("arguments_not_object", "a")],
        id="arguments-number",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=None),)),
        [("arguments_not_object", "a")],
        id="arguments-null",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments="[1, 2]"),)),
        [("arguments_not_object", "a")],
        id="json-string-holding-list",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments='{"text": '),)),
        [("unparseable_arguments", "a")],
        id="unparseable-json-string",
    ),
    pytest.param(
        Completion(
            text="both",
            tool_calls=(ToolCall(id=None, name="", arguments="nope"),),
        ),
        [
            ("text_and_tool_calls", None),
            ("empty_tool_name", None),
            ("missing_call_id", None),
            ("unparseable_arguments", None),
        ],
        id="everything-wrong",
    ),
]


@pytest.mark.parametrize(("completion", "expected"), VIOLATIONS)
def test_validate_response_violations(
    completion: Completion, expected: list[tuple[str, str | None]]
) -> None:
    _, violations = validate_response(completion, commentary="refuse")
    assert [(v.code, v.tool_call_id) for v in violations] == expected
    assert all(v.message for v in violations)


def test_text_beside_tool_calls_is_commentary_by_default() -> None:
    completion = Completion(text="Let me look.", tool_calls=(ToolCall(id="a", name="echo"),))
    calls, violations = validate_response(completion)
    assert (len(calls), violations) == (1, ())
    result = run(
        FakeModel([completion, "done"]), [spec()], "go", system=None
    )  # the calls run; the commentary is never the output
    assert (result.stop_reason, result.output) == ("answered", "done")
    assistant = [m for m in result.messages if m.role == "assistant"]
    assert assistant[0].content == "Let me look."
    event = next(e for e in result.trace.events if e["type"] == "model_response")
    assert (event["shape"], event["commentary"]) == ("tool_calls", "Let me look.")


def test_duplicate_id_across_steps() -> None:
    completion = Completion(tool_calls=(ToolCall(id="a", name="echo"),))
    _, violations = validate_response(completion, seen_ids=["a"])
    assert [(v.code, v.tool_call_id) for v in violations] == [("duplicate_call_id", "a")]


@pytest.mark.parametrize(
    "completion",
    [
        pytest.param(Completion(text="the answer"), id="final"),
        pytest.param(
            Completion(
                text=" ", tool_calls=(ToolCall(id="a", name="echo", arguments={"text": "x"}),)
            ),
            id="calls-with-blank-text",
        ),
        pytest.param(
            Completion(tool_calls=(ToolCall(id="a", name="echo"), ToolCall(id="b", name="echo"))),
            id="parallel-calls",
        ),
    ],
)
def test_validate_response_legal_shapes(completion: Completion) -> None:
    calls, violations = validate_response(completion)
    assert violations == ()
    assert len(calls) == len(completion.tool_calls)


def test_json_string_holding_an_object_is_accepted_and_parsed() -> None:
    completion = Completion(tool_calls=(ToolCall(id="a", name="echo", arguments='{"text": "hi"}'),))
    calls, violations = validate_response(completion)
    assert violations == ()
    assert calls[0].arguments == {"text": "hi"}


def test_json_string_arguments_run_through_the_loop() -> None:
    recorder = Recorder()
    model = FakeModel([tool_call("echo", '{"text": "hi"}'), "done"])
    result = run(model, [spec(recorder=recorder)], "go")
    assert result.stop_reason == "answered"
    assert recorder.calls == [("echo", {"text": "hi"})]


# -- invalid responses through the loop -----------------------------------------------------

INVALID_RUNS = [
    pytest.param(
        Completion(
            text="I will call",
            tool_calls=(ToolCall(id="a", name="echo"), ToolCall(id="b", name="echo")),
        ),
        ["a", "b"],
        id="text-and-tool-calls",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name=""), ToolCall(id="b", name="echo"))),
        ["a", "b"],
        id="empty-tool-name",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id=None, name="echo"), ToolCall(id="b", name="echo"))),
        ["b"],
        id="missing-id",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo"), ToolCall(id="a", name="echo"))),
        ["a"],
        id="duplicate-id-in-response",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=["text"]),)),
        ["a"],
        id="arguments-list",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=42),)),
        ["a"],
        id="arguments-number",
    ),
    pytest.param(
        Completion(tool_calls=(ToolCall(id="a", name="echo", arguments="{text: hi}"),)),
        ["a"],
        id="unparseable-arguments",
    ),
    pytest.param(Completion(), [], id="empty-response"),
]


@pytest.mark.parametrize(("completion", "bound_ids"), INVALID_RUNS)
def test_invalid_response_binds_errors_and_stops(
    completion: Completion, bound_ids: list[str], request: pytest.FixtureRequest
) -> None:
    recorder = Recorder()
    model = FakeModel([completion, "never reached"])
    contract = Contract([spec(recorder=recorder)], commentary="refuse")
    result = run(model, contract, "go")

    assert result.stop_reason == "invalid_response"
    assert not result.answered
    assert result.output is None
    assert result.stop_detail
    assert recorder.calls == []  # nothing ran
    assert len(model.calls) == 1
    messages = tool_messages(result)
    kept_out = {"missing-id", "duplicate-id-in-response", "empty-tool-name"}
    if request.node.callspec.id in kept_out:
        # A turn no answer makes a valid history of is kept out of the messages: its
        # bound refusals are in the result's records and the trace.
        assert messages == []
        assert result.messages[-1].role == "user"
        recorded = [r.id for r in result.tool_calls if r.error_kind == "invalid_call"]
        assert set(bound_ids) <= set(recorded)
    else:
        assert [m.tool_call_id for m in messages] == bound_ids
    for message in messages:
        assert message.status == "error"
        body = json.loads(message.content)
        assert body["error"] == "invalid_call"
        assert body["outcome"] == "not_run"
        assert body["message"]
    assert all(r.error_kind == "invalid_call" for r in result.tool_calls)
    assert "contract_violation" in event_types(result)
    assert result.trace.events[-1]["reason"] == "invalid_response"


def test_unrelated_call_in_invalid_response_says_why_it_did_not_run() -> None:
    completion = Completion(
        text="both", tool_calls=(ToolCall(id="a", name="echo", arguments={"text": "x"}),)
    )
    result = run(FakeModel([completion]), Contract([spec()], commentary="refuse"), "go")
    message = json.loads(tool_messages(result)[0].content)["message"]
    assert "not run" in message
    assert "text_and_tool_calls" in message


def test_duplicate_id_across_steps_stops_without_a_second_answer() -> None:
    recorder = Recorder()
    model = FakeModel(
        [
            tool_call("echo", {"text": "one"}, id="same"),
            tool_call("echo", {"text": "two"}, id="same"),
            "never",
        ]
    )
    result = run(model, [spec(recorder=recorder)], "go")
    assert result.stop_reason == "invalid_response"
    assert "duplicate" in result.stop_detail or "more than once" in result.stop_detail
    assert recorder.calls == [("echo", {"text": "one"})]
    # the id is answered exactly once: the ledger never binds a second message to it
    assert [m.tool_call_id for m in tool_messages(result)] == ["same"]


# -- per-call refusals ----------------------------------------------------------------------


def test_unknown_tool() -> None:
    recorder = Recorder()
    model = FakeModel([tool_call("delete_everything", {}), "ok"])
    result = run(model, [spec(recorder=recorder)], "go")
    assert result.stop_reason == "answered"  # the model read the error and answered
    body = contents(result)[0]
    assert body["error"] == "unknown_tool"
    assert body["message"] == "unknown tool 'delete_everything'; available: echo"
    assert body["outcome"] == "not_run"
    assert recorder.calls == []
    assert result.tool_calls[0].error_kind == "unknown_tool"


def test_not_allowed_registered_but_outside_allowlist() -> None:
    recorder = Recorder()
    model = FakeModel([tool_call("admin", {}), "ok"])
    tools = [spec("echo"), spec("admin", recorder=recorder)]
    result = run(model, tools, "go", allowlist=["echo"])
    body = contents(result)[0]
    assert body["error"] == "not_allowed"
    assert body["message"] == "tool 'admin' is not allowed in this run"
    assert recorder.calls == []
    offered = [t["function"]["name"] for t in model.calls[0]["tools"]]
    assert offered == ["echo"]  # outside the allowlist means not offered either


def test_unknown_tool_message_lists_only_offered_tools() -> None:
    model = FakeModel([tool_call("nope", {}), "ok"])
    result = run(model, [spec("echo"), spec("admin")], "go", allowlist=["echo"])
    assert contents(result)[0]["message"] == "unknown tool 'nope'; available: echo"


def test_allowlist_naming_an_unknown_tool_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"unregistered tools: \['ghost'\]"):
        Contract([spec("echo")], allowlist=["echo", "ghost"])
    with pytest.raises(ConfigurationError):
        run(FakeModel(["x"]), [spec("echo")], "go", allowlist=["ghost"])


def test_invalid_arguments_name_path_and_constraint() -> None:
    recorder = Recorder()
    model = FakeModel([tool_call("echo", {"text": 5, "extra": True}), "ok"])
    result = run(model, [spec(recorder=recorder)], "go")
    body = contents(result)[0]
    assert body["error"] == "invalid_arguments"
    assert body["message"] == (
        "invalid arguments for 'echo': $: Additional properties are not allowed "
        "('extra' was unexpected) (additionalProperties); "
        "$.text: 5 is not of type 'string' (type)"
    )
    assert recorder.calls == []


def write_spec(recorder: Recorder, previews: list[dict[str, Any]]) -> ToolSpec:
    def handler(context: ToolContext, **arguments: Any) -> Any:
        recorder.add("update", arguments)
        return {"written": True}

    def preview(context: ToolContext, **arguments: Any) -> Any:
        previews.append(dict(arguments))
        return {"would_change": arguments}

    def verify(context: ToolContext, **arguments: Any) -> Any:
        return None

    return spec("update", handler=handler, effect="write", preview=preview, verify=verify)


def test_write_tool_spec_needs_preview_and_verify() -> None:
    with pytest.raises(ConfigurationError, match="preview and verify"):
        spec("update", effect="write")


def test_write_tool_never_runs_on_the_models_word() -> None:
    recorder, previews = Recorder(), []
    model = FakeModel([tool_call("update", {"text": "x"}), "never"])
    result = run(model, [write_spec(recorder, previews)], "go")
    assert result.stop_reason == "pending_approval"
    assert not result.answered
    assert result.output is None
    assert recorder.calls == []  # paused for a human: nothing was written
    assert previews == [{"text": "x"}]  # previewed, which changes nothing
    assert [p.tool_call_id for p in result.pending_approvals] == ["call_1_1"]
    assert len(model.calls) == 1


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        pytest.param(
            ToolError("the store is corrupt; retrying will not help"), "tool_error", id="corrupt"
        ),
        pytest.param(TransientError("the store is busy"), "transient", id="busy"),
        pytest.param(ValueError("a bug in verify"), "tool_error", id="unclassified"),
    ],
)
def test_a_write_whose_check_fails_is_not_written_and_its_outcome_is_unknown(
    failure: Exception, kind: str
) -> None:
    """``verify`` fails before an approved write: nothing is written, the outcome is
    unknown (an earlier attempt may have applied it), the kind is the failure's own
    (``transient`` only for a temporary one), and nobody is told to retry a call that
    is already answered."""
    recorder = Recorder()

    def verify(context: ToolContext, **arguments: Any) -> Any:
        raise failure

    update = spec(
        "update",
        handler=lambda context, **arguments: recorder.add("update", arguments),
        effect="write",
        preview=lambda context, **arguments: {"would_change": arguments},
        verify=verify,
    )
    contract = Contract([update])
    model = FakeModel([tool_call("update", {"text": "x"}), "done"])
    paused = run(model, contract, "go")
    assert paused.snapshot is not None
    approvals = [Approval.for_pending(p, "approve") for p in paused.pending_approvals]
    result = resume(model, contract, paused.snapshot, approvals)
    assert recorder.calls == []
    (record,) = result.tool_calls
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        kind,
        "unknown",
        True,
    )
    (message,) = contents(result)
    assert "could not check whether this write already happened" in message["message"]
    assert "outcome is unknown" in message["message"]
    assert "retry later" not in message["message"]


def test_a_write_whose_check_times_out_is_a_timeout_with_an_unknown_outcome() -> None:
    recorder = Recorder()
    release = threading.Event()

    def verify(context: ToolContext, **arguments: Any) -> Any:
        release.wait(10)

    update = spec(
        "update",
        handler=lambda context, **arguments: recorder.add("update", arguments),
        effect="write",
        preview=lambda context, **arguments: {"would_change": arguments},
        verify=verify,
        timeout_seconds=0.05,
    )
    contract = Contract([update])
    model = FakeModel([tool_call("update", {"text": "x"}), "done"])
    paused = run(model, contract, "go")
    assert paused.snapshot is not None
    approvals = [Approval.for_pending(p, "approve") for p in paused.pending_approvals]
    try:
        result = resume(model, contract, paused.snapshot, approvals)
    finally:
        release.set()
    assert recorder.calls == []
    (record,) = result.tool_calls
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )


def test_mixed_batch_runs_valid_calls_and_refuses_the_rest() -> None:
    recorder = Recorder()
    model = FakeModel(
        [
            tool_calls(
                ("echo", {"text": "fine"}),
                ("ghost", {}),
                ("echo", {"text": 1}),
            ),
            "ok",
        ]
    )
    result = run(model, [spec(recorder=recorder)], "go")
    assert result.stop_reason == "answered"
    assert recorder.calls == [("echo", {"text": "fine"})]
    assert [m.status for m in tool_messages(result)] == ["success", "error", "error"]
    assert [r.error_kind for r in result.tool_calls] == [None, "unknown_tool", "invalid_arguments"]


# -- tool failures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "kind", "message"),
    [
        pytest.param(
            UnauthorizedError("order 7 belongs to another customer"),
            "unauthorized",
            "order 7 belongs to another customer",
            id="unauthorized",
        ),
        pytest.param(NotFoundError("no order 7"), "not_found", "no order 7", id="not_found"),
        pytest.param(
            TransientError("db busy, retry"), "transient", "db busy, retry", id="transient"
        ),
        pytest.param(ToolError("plain failure"), "tool_error", "plain failure", id="tool-error"),
        pytest.param(
            RuntimeError(f"connection string postgres://admin:{SECRET}@db"),
            "tool_error",
            "tool 'echo' failed (RuntimeError)",
            id="generic-exception-text-hidden",
        ),
    ],
)
def test_tool_exceptions_are_classified(exc: Exception, kind: str, message: str) -> None:
    def handler(**_: Any) -> Any:
        raise exc

    model = FakeModel([tool_call("echo", {"text": "x"}), "ok"])
    result = run(model, [spec(handler=handler)], "go")
    body = contents(result)[0]
    assert (body["error"], body["message"]) == (kind, message)
    assert body["outcome"] == "failed"
    assert body["side_effects_possible"] is False
    assert "Traceback" not in tool_messages(result)[0].content
    assert SECRET not in result.trace.to_jsonl()
    assert result.tool_calls[0].error_kind == kind


def test_write_tool_waits_for_approval_at_planning() -> None:
    recorder, previews = Recorder(), []
    state = Contract([write_spec(recorder, previews)]).start(run_id="r")
    state.check_before_model_call([])
    decision = state.accept_response(tool_call("update", {"text": "x"}, id="c1"))
    plan = state.plan_tool_calls(decision.calls)
    assert plan.calls[0].refusal is None
    assert plan.runnable == ()  # waiting for a decision is not runnable
    assert [p.tool_call_id for p in plan.pending] == ["c1"]
    assert recorder.calls == []


def test_expose_exception_text_opt_in_is_still_redacted() -> None:
    def handler(**_: Any) -> Any:
        raise RuntimeError(f"bad key {SECRET}")

    contract = Contract([spec(handler=handler)], secrets=[SECRET], expose_exception_text=True)
    result = run(FakeModel([tool_call("echo", {}), "ok"]), contract, "go")
    message = contents(result)[0]["message"]
    assert message == "tool 'echo' failed (RuntimeError): bad key [REDACTED]"


def test_timeout_reports_unknown_outcome_and_possible_side_effects() -> None:
    release = threading.Event()
    landed = threading.Event()

    def slow(**_: Any) -> str:
        release.wait(timeout=10.0)  # held until the run has returned
        landed.set()
        return "late"

    model = FakeModel([tool_call("slow", {}), "ok"])
    result = run(model, [spec("slow", handler=slow, timeout_seconds=0.2)], "go")
    assert not landed.is_set(), "the run waited for the tool instead of timing out"
    release.set()

    body = contents(result)[0]
    assert body["error"] == "timeout"
    assert body["outcome"] == "unknown"
    assert body["side_effects_possible"] is True
    assert "outcome is unknown" in body["message"]
    record = result.tool_calls[0]
    assert (record.outcome, record.side_effects_possible) == ("unknown", True)
    assert landed.wait(timeout=2.0)  # the handler did finish, after the run gave up on it


def test_oversized_result_is_truncated_with_a_marker() -> None:
    model = FakeModel([tool_call("big", {}), "ok"])
    big = spec("big", handler=lambda **_: "x" * 5000, max_result_chars=100)
    result = run(model, [big], "go")
    message = tool_messages(result)[0]
    assert message.status == "success"
    assert len(message.content) <= 100
    assert message.content.endswith("of 5000 chars shown]")
    event = result.trace.of_type("tool_result")[0]
    assert event["truncated"] is True
    assert event["chars"] == len(message.content)


def test_oversized_result_refused_when_asked() -> None:
    model = FakeModel([tool_call("big", {}), "ok"])
    big = spec("big", handler=lambda **_: "x" * 5000, max_result_chars=100, on_oversize="error")
    result = run(model, [big], "go")
    assert contents(result)[0]["error"] == "result_too_large"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({1, 2}, id="set"),
        pytest.param((1, 2), id="tuple"),
        pytest.param(b"raw", id="bytes"),
        pytest.param(float("nan"), id="nan"),
        pytest.param({"when": object()}, id="object"),
    ],
)
def test_non_serializable_result_is_a_tool_error(value: Any) -> None:
    model = FakeModel([tool_call("odd", {}), "ok"])
    result = run(model, [spec("odd", handler=lambda **_: value)], "go")
    assert contents(result)[0]["error"] == "tool_error"
    assert result.tool_calls[0].error_kind == "tool_error"


# -- budgets --------------------------------------------------------------------------------


def test_batch_crossing_tool_budget_is_refused_whole_before_any_runs() -> None:
    recorder = Recorder()
    batch = tool_calls(*[("echo", {"text": str(i)}) for i in range(4)])
    model = FakeModel([batch, "never"])
    result = run(model, [spec(recorder=recorder)], "go", budget=Budget(max_tool_calls=3))

    assert result.stop_reason == "max_tool_calls"
    assert result.output is None
    assert recorder.calls == []  # not even the first three ran
    assert result.stop_detail == (
        "max_tool_calls of 3 exceeded (4 requested: 0 earlier + 4 in this batch)"
    )
    messages = tool_messages(result)
    assert [m.tool_call_id for m in messages] == ["call_1_1", "call_1_2", "call_1_3", "call_1_4"]
    for body in contents(result):
        assert body["error"] == "budget_exceeded"
        assert body["outcome"] == "not_run"
    assert len(model.calls) == 1


def test_tool_budget_counts_earlier_batches() -> None:
    recorder = Recorder()
    model = FakeModel(
        [
            tool_calls(("echo", {"text": "a"}), ("echo", {"text": "b"})),
            tool_calls(("echo", {"text": "c"}), ("echo", {"text": "d"})),
            "never",
        ]
    )
    result = run(model, [spec(recorder=recorder)], "go", budget=Budget(max_tool_calls=3))
    assert result.stop_reason == "max_tool_calls"
    # The calls of a batch run concurrently: which one starts first is not the contract's.
    assert sorted(args["text"] for _, args in recorder.calls) == ["a", "b"]
    assert "2 earlier + 2 in this batch" in result.stop_detail


def test_repeated_identical_call_stops_the_run_key_order_ignored() -> None:
    recorder = Recorder()
    params = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    }
    model = FakeModel(
        [
            tool_call("pair", {"a": 1, "b": 2}),
            tool_call("pair", {"b": 2, "a": 1}),  # the same call, keys reordered
            tool_call("pair", {"a": 1, "b": 2}),
            "never",
        ]
    )
    tools = [spec("pair", recorder=recorder, parameters=params)]
    result = run(model, tools, "go", budget=Budget(max_identical_calls=2))
    assert result.stop_reason == "repeated_call"
    assert result.output is None
    assert len(recorder.calls) == 2
    assert result.stop_detail == "max_identical_calls of 2 exceeded by 1 call(s): call_3_1"
    last = contents(result)[-1]
    assert last["error"] == "repeated_call"
    assert [r.status for r in result.tool_calls] == ["success", "success", "error"]


def test_repeats_within_one_batch() -> None:
    recorder = Recorder()
    model = FakeModel([tool_calls(("echo", {"text": "x"}), ("echo", {"text": "x"})), "never"])
    result = run(model, [spec(recorder=recorder)], "go", budget=Budget(max_identical_calls=1))
    assert result.stop_reason == "repeated_call"
    assert recorder.calls == []
    kinds = [body["error"] for body in contents(result)]
    assert kinds == ["budget_exceeded", "repeated_call"]
    assert "the batch was refused" in contents(result)[0]["message"]


def test_call_key_ignores_key_order_and_hides_values() -> None:
    assert call_key("t", {"a": 1, "b": [1, {"y": 2, "x": 1}]}) == call_key(
        "t", {"b": [1, {"x": 1, "y": 2}], "a": 1}
    )
    assert call_key("t", {"a": 1}) != call_key("t", {"a": 2})
    assert call_key("t", {"a": 1}) != call_key("u", {"a": 1})
    assert SECRET not in call_key("t", {"password": SECRET})


def test_step_budget_stops_with_no_output() -> None:
    model = FakeModel([tool_call("echo", {"text": str(i)}) for i in range(5)])
    result = run(model, [spec()], "go", budget=Budget(max_model_steps=2))
    assert result.stop_reason == "max_model_steps"
    assert result.output is None
    assert not result.answered
    assert len(model.calls) == 2
    assert result.stop_detail == "max_model_steps of 2 reached (2 steps taken, one more needed)"
    assert result.usage.model_steps == 2


def test_deadline_refuses_the_next_batch() -> None:
    recorder = Recorder()

    def slow_model(messages: list[Message]) -> Completion:
        time.sleep(0.12)
        return tool_call("echo", {"text": "late"})

    model = FakeModel([slow_model, "never"])
    result = run(model, [spec(recorder=recorder)], "go", budget=Budget(deadline_seconds=0.1))
    assert result.stop_reason == "deadline"
    assert result.output is None
    assert recorder.calls == []
    assert contents(result)[0]["error"] == "budget_exceeded"
    assert result.stop_detail.startswith("deadline of 0.1 s reached (")


def test_deadline_caps_a_tool_timeout() -> None:
    release = threading.Event()

    def hang(**_: Any) -> str:
        release.wait(timeout=10.0)  # held until the run has returned
        return "late"

    model = FakeModel([tool_call("hang", {}), "never"])
    result = run(
        model,
        [spec("hang", handler=hang, timeout_seconds=10)],
        "go",
        budget=Budget(deadline_seconds=0.25),
    )
    release.set()
    # The tool's own 10 s timeout was cut to what the 0.25 s deadline left: it timed out
    # while still held (a run waiting 10 s would have seen it return "late").
    assert contents(result)[0]["error"] == "timeout"
    assert result.stop_reason == "deadline"
    assert len(model.calls) == 1


def test_deadline_before_the_first_model_call() -> None:
    contract = Contract([spec()], budget=Budget(deadline_seconds=5))
    state = contract.start(run_id="r")
    state.view.counters.elapsed_before = 5.0
    stop = state.check_before_model_call([])
    assert stop is not None
    assert stop.reason == "deadline"


def test_trace_size_budget_stops_before_the_model_is_called() -> None:
    model = FakeModel(["never"])
    result = run(model, [spec()], "go", budget=Budget(max_trace_bytes=64))
    assert result.stop_reason == "max_trace_bytes"
    assert result.output is None
    assert model.calls == []
    assert result.stop_detail.startswith("max_trace_bytes of 64 reached (")


def test_trace_size_budget_refuses_a_tool_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    # Event offsets come from the run's clock: freeze it so sizes repeat exactly.
    monkeypatch.setattr(RunCounters, "elapsed", lambda self: 0.0)

    def trace_bytes_before_batch(limit: int) -> int:
        probe = Contract([spec()], budget=Budget(max_trace_bytes=limit)).start(
            run_id="fixed-run-id"
        )
        probe.check_before_model_call([])
        probe.accept_response(tool_call("echo", {"text": "x"}, id="call_1_1"))
        return probe.view.trace.size_bytes

    # The limit is part of the trace (run_started.budget), so find the fixed point.
    limit = 10**6
    for _ in range(5):
        limit = trace_bytes_before_batch(limit)
    assert trace_bytes_before_batch(limit) == limit
    model = FakeModel([tool_call("echo", {"text": "x"}), "never"])
    result = run(
        model,
        [spec(recorder=recorder)],
        "go",
        run_id="fixed-run-id",
        budget=Budget(max_trace_bytes=limit),
    )
    assert result.stop_reason == "max_trace_bytes"
    assert recorder.calls == []
    assert contents(result)[0]["error"] == "budget_exceeded"


# -- the call-ID ledger ---------------------------------------------------------------------


def test_each_call_gets_exactly_one_tool_message_in_issue_order() -> None:
    model = FakeModel(
        [
            tool_calls(("echo", {"text": "1"}), ("ghost", {}), ("echo", {"text": 3})),
            tool_calls(("echo", {"text": "4"}), ("echo", {"text": "5"})),
            "done",
        ]
    )
    result = run(model, [spec()], "go")
    assert result.stop_reason == "answered"
    issued = [c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls]
    answered = [m.tool_call_id for m in tool_messages(result)]
    assert issued == answered == ["call_1_1", "call_1_2", "call_1_3", "call_2_1", "call_2_2"]
    assert len(set(issued)) == len(issued)
    assert [r.id for r in result.tool_calls] == issued
    assert [e["id"] for e in result.trace.of_type("tool_result")] == issued
    # every tool message directly follows the assistant turn that issued its call
    roles = [m.role for m in result.messages]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_ledger_refuses_unknown_and_double_answers() -> None:
    state = Contract([spec()]).start(run_id="r")
    state.check_before_model_call([])
    decision = state.accept_response(tool_call("echo", {"text": "x"}, id="c1"))
    plan = state.plan_tool_calls(decision.calls)
    result = state.execute(plan.calls[0])
    assert result.tool_call_id == "c1"
    assert state.view.result_for("c1") is result
    with pytest.raises(ConfigurationError, match="already answered"):
        state.record_result(result)
    with pytest.raises(ConfigurationError, match="never issued"):
        state.record_result(
            type(result)(tool_call_id="ghost", name="echo", status="success", content="x")
        )


def test_refused_plan_cannot_be_submitted() -> None:
    state = Contract([spec()]).start(run_id="r")
    state.check_before_model_call([])
    decision = state.accept_response(tool_call("nope", {}, id="c1"))
    plan = state.plan_tool_calls(decision.calls)
    assert plan.runnable == ()
    refusal = plan.calls[0].refusal
    assert refusal is not None
    assert state.execute(plan.calls[0]) is refusal  # refused calls return their refusal
    with pytest.raises(ConfigurationError):
        state.submit(plan.calls[0])


def test_parallel_results_keep_issue_order_when_first_is_slowest() -> None:
    second_done = threading.Event()
    finished: list[str] = []

    def first(**_: Any) -> str:
        assert second_done.wait(timeout=2.0), "second call never ran: calls were not parallel"
        finished.append("first")
        return "first result"

    def second(**_: Any) -> str:
        finished.append("second")
        second_done.set()
        return "second result"

    model = FakeModel([tool_calls(("first", {}), ("second", {})), "done"])
    result = run(model, [spec("first", handler=first), spec("second", handler=second)], "go")
    assert finished == ["second", "first"]  # completion order
    messages = tool_messages(result)
    assert [m.content for m in messages] == ["first result", "second result"]  # issue order
    assert [m.tool_call_id for m in messages] == ["call_1_1", "call_1_2"]
    assert [e["name"] for e in result.trace.of_type("tool_result")] == ["first", "second"]
    assert [e["name"] for e in result.trace.of_type("tool_call")] == ["first", "second"]


def test_handler_gets_its_own_copy_of_arguments() -> None:
    params = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "integer"}},
            "meta": {"type": "object", "additionalProperties": True},
        },
    }

    def mutate(items: list[int], meta: dict[str, Any]) -> str:
        items.append(99)
        meta["tampered"] = True
        return "ok"

    original = {"items": [1, 2], "meta": {"k": "v"}}
    model = FakeModel([tool_call("mut", original), "done"])
    result = run(model, [spec("mut", handler=mutate, parameters=params)], "go")
    assert result.stop_reason == "answered"
    expected = {"items": [1, 2], "meta": {"k": "v"}}
    assert original == expected
    assert result.trace.of_type("tool_call")[0]["arguments"] == expected
    assistant = next(m for m in result.messages if m.tool_calls)
    assert assistant.tool_calls[0].arguments == expected
    assert model.calls[1]["messages"][1].tool_calls[0].arguments == expected
    assert result.tool_calls[0].arguments == expected


def test_tool_context_carries_caller_and_values() -> None:
    seen: list[ToolContext] = []

    def handler(context: ToolContext, text: str) -> str:
        seen.append(context)
        return f"{context.caller}:{text}"

    model = FakeModel([tool_call("whoami", {"text": "hi"}), "done"])
    result = run(
        model,
        [spec("whoami", handler=handler, needs_context=True)],
        "go",
        caller="alice",
        context={"db": "memory"},
        run_id="run-ctx",
    )
    assert tool_messages(result)[0].content == "alice:hi"
    assert len(seen) == 1
    context = seen[0]
    assert (context.run_id, context.tool_call_id, context.caller) == (
        "run-ctx",
        "call_1_1",
        "alice",
    )
    assert dict(context.values) == {"db": "memory"}


def test_tool_context_caller_defaults_to_anonymous() -> None:
    seen: list[str | None] = []

    def handler(context: ToolContext) -> str:
        seen.append(context.caller)
        return "ok"

    run(
        FakeModel([tool_call("t", {}), "done"]),
        [spec("t", handler=handler, needs_context=True)],
        "go",
    )
    assert seen == [None]


# -- the trace and the result ---------------------------------------------------------------


def test_trace_event_sequence_of_a_tool_run() -> None:
    model = FakeModel([tool_call("echo", {"text": "hi"}), "done"])
    result = run(model, [spec()], "go", run_id="run-seq")
    assert event_types(result) == [
        "run_started",
        "model_call",
        "model_response",
        "tool_call",
        "tool_result",
        "model_call",
        "model_response",
        "stop",
    ]
    started = result.trace.events[0]
    assert started["run_id"] == "run-seq"
    assert started["tools_offered"] == ["echo"]
    assert started["budget"] == Budget().to_dict()
    assert [e["seq"] for e in result.trace.events] == list(range(8))
    stop = result.trace.records[-1]
    assert (stop.seq, stop.type, dict(stop.fields)) == (
        7,
        "stop",
        {"reason": "answered", "detail": ""},
    )
    offsets = [e.offset_seconds for e in result.trace.records]
    assert offsets == sorted(offsets)  # the run's own clock: never backwards


def test_run_result_to_dict_leaves_messages_out() -> None:
    model = FakeModel([tool_call("echo", {"text": "hi"}), "done"])
    result = run(model, [spec()], "go")
    data = result.to_dict()
    assert {
        "run_id",
        "harness",
        "stop_reason",
        "stop_detail",
        "output",
        "tool_calls",
        "usage",
    } <= set(data)
    assert "messages" not in data
    assert data["tool_calls"] == [{"id": "call_1_1", "name": "echo", "status": "success"}]
    assert result.trajectory() == ["echo"]
    json.dumps(data)


def test_contract_cannot_be_combined_with_run_options() -> None:
    contract = Contract([spec()])
    with pytest.raises(ConfigurationError, match="pass budget"):
        run(FakeModel(["x"]), contract, "go", budget=Budget())
    with pytest.raises(ConfigurationError, match="pass budget"):
        run(FakeModel(["x"]), contract, "go", secrets=["abcd"])


def test_contract_is_reusable_across_runs() -> None:
    contract = Contract([spec()], budget=Budget(max_tool_calls=1))
    for _ in range(3):
        model = FakeModel([tool_call("echo", {"text": "x"}), "done"])
        result = run(model, contract, "go")
        assert result.stop_reason == "answered"  # usage is per run, not per contract


def test_a_contracts_trace_sink_sees_every_event_once_across_a_resume() -> None:
    recorder, previews = Recorder(), []
    sink = MemorySink()
    contract = Contract([write_spec(recorder, previews)], trace_sink=sink)
    model = FakeModel([tool_call("update", {"text": "x"}), "done"])
    paused = run(model, contract, "go")
    assert paused.stop_reason == "pending_approval"
    assert paused.snapshot is not None
    approvals = [Approval.for_pending(p, "approve") for p in paused.pending_approvals]
    result = resume(model, contract, paused.snapshot, approvals)
    assert result.stop_reason == "answered"
    sent = sink.of_run(result.run_id)
    assert sent == result.trace.records  # each event once, in seq order, as the run kept it
    assert [e.seq for e in sent] == list(range(len(sent)))


def test_arguments_nested_too_deeply_are_named_so_not_called_invalid_json() -> None:
    """Valid JSON nested 10,000 deep cannot be parsed here: the refusal says so rather
    than calling it "not valid JSON" (issue 24, item 10)."""
    deep = '{"text": ' + "[" * 10_000 + "]" * 10_000 + "}"
    model = FakeModel([tool_call("echo", deep, id="deep"), "never reached"])
    result = run(model, Contract([spec()]), "go")
    assert result.stop_reason == "invalid_response"
    assert "nested too deeply" in (result.stop_detail or "")
    assert "not valid JSON" not in (result.stop_detail or "")
