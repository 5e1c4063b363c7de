"""The smallest inputs of issue 11 ("every value a provider, a tool or a stored history can
produce"), each on every harness it applies to, through public APIs only.

Each test here failed on the main branch before the issue was fixed (the reports say
how); the contract suite's scenarios hold the whole kind on every harness.
"""

from __future__ import annotations

from typing import Any

from agent_contract import Budget, ToolSpec
from agent_contract.harnesses import RunInput
from agent_contract.registry import load_harness
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, Reply, tool_call


def run_on(
    harness: str,
    script: list[Reply],
    tools: list[ToolSpec],
    *,
    budget: Budget | None = None,
    **options: Any,
) -> RunResult:
    """Run ``script`` on the harness called ``harness``."""
    result = load_harness(harness)(
        FakeModel(script),
        tools,
        RunInput(user="go", budget=budget or Budget(deadline_seconds=30.0), **options),
    )
    assert isinstance(result, RunResult)
    return result


def test_input_2_three_and_three_point_zero_are_one_call(harness_name: str) -> None:
    """Alternating ``{"days": 3}`` and ``{"days": 3.0}`` let four identical calls through
    with ``max_identical_calls=2``."""
    ran: list[Any] = []
    spec = ToolSpec(
        name="forecast",
        description="Forecast.",
        parameters={"type": "object", "properties": {"days": {"type": "integer"}}},
        handler=lambda days: ran.append(days) or "sunny",
    )
    script: list[Reply] = [tool_call("forecast", {"days": d}) for d in (3, 3.0, 3, 3.0)]
    result = run_on(
        harness_name,
        [*script, "done"],
        [spec],
        budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
    )
    assert ran == [3, 3.0]
    assert result.stop_reason == "repeated_call"


_PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def test_input_1_a_lone_surrogate_argument_is_refused_before_it_runs(harness_name: str) -> None:
    """``"\\ud800"`` in tool arguments crashed the run with UnicodeEncodeError on every
    harness (and on LangChain was labelled a model error)."""
    ran: list[str] = []
    spec = ToolSpec(
        name="read_file",
        description="Read a file.",
        parameters=_PATH,
        handler=lambda path: ran.append(path) or "content",
    )
    result = run_on(harness_name, [tool_call("read_file", {"path": "\ud800"}), "done"], [spec])
    assert ran == []
    assert result.stop_reason == "answered"
    record = result.tool_calls[0]
    assert (record.status, record.error_kind, record.outcome) == (
        "error",
        "invalid_arguments",
        "not_run",
    )


def test_input_1_an_fsdecoded_result_is_escaped_not_crashed(harness_name: str) -> None:
    """A tool result made by ``os.fsdecode`` of a non-UTF-8 file name crashed the run
    after the tool had already run."""
    import os

    name = os.fsdecode(b"report-\xff.txt")
    spec = ToolSpec(
        name="read_file", description="Read.", parameters=_PATH, handler=lambda path: name
    )
    result = run_on(harness_name, [tool_call("read_file", {"path": "x"}), "done"], [spec])
    assert result.stop_reason == "answered"
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert message.content == "report-\\udcff.txt"
    result.trace.to_jsonl().encode("utf-8")


def _echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda text: f"echo: {text}",
    )


def test_input_3_an_orphan_tool_result_in_the_history_is_never_sent(harness_name: str) -> None:
    """``history=[user turn, tool message for "old_1" whose assistant turn is not
    there]`` sent an orphan tool result to the model, and the run answered."""
    from agent_contract.messages import Message

    model = FakeModel(["this answer must never be produced"])
    history = (
        Message(role="user", content="echo a"),
        Message(
            role="tool", content="echo: a", tool_call_id="old_1", name="echo", status="success"
        ),
    )
    result = load_harness(harness_name)(
        model, [_echo()], RunInput(user="go", budget=Budget(deadline_seconds=30.0), history=history)
    )
    assert isinstance(result, RunResult)
    assert result.stop_reason == "invalid_history"
    assert result.output is None
    assert model.calls == []


def test_input_3_an_unanswered_call_in_the_history_is_never_sent(harness_name: str) -> None:
    """An assistant turn whose calls have no results went through too."""
    from agent_contract.messages import Message, ToolCall

    model = FakeModel(["this answer must never be produced"])
    history = (
        Message(role="user", content="echo a"),
        Message(role="assistant", tool_calls=(ToolCall(id="old_1", name="echo", arguments={}),)),
    )
    result = load_harness(harness_name)(
        model, [_echo()], RunInput(user="go", budget=Budget(deadline_seconds=30.0), history=history)
    )
    assert isinstance(result, RunResult)
    assert result.stop_reason == "invalid_history"
    assert model.calls == []


def test_input_8_default_redaction_covers_secret_keys_and_short_bearer_tokens(
    harness_name: str,
) -> None:
    """Default redaction missed short bearer tokens and values under keys such as
    ``password``, ``api_key``, ``token``, ``authorization``, ``secret``."""
    planted = {
        "password": "pw-planted-1",
        "api_key": "ak-planted-2",
        "token": "tk-planted-3",
        "secret": "se-planted-4",
    }
    spec = ToolSpec(
        name="account",
        description="Account details.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: {**planted, "headers": "Authorization: Bearer q1w"},
    )
    result = run_on(harness_name, [tool_call("account", {}), "done"], [spec])
    (message,) = [m for m in result.messages if m.role == "tool"]
    emitted = message.content + result.trace.to_jsonl()
    for value in [*planted.values(), "q1w"]:
        assert value not in emitted, value
    assert '"password": "[REDACTED]"' in message.content


_RANGE = {
    "type": "object",
    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
    "required": ["start", "end"],
}


def test_input_9_a_cross_field_rule_is_checked_before_the_handler(harness_name: str) -> None:
    """A cross-field rule (``start <= end``) could not be checked before the handler
    ran."""
    ran: list[Any] = []
    spec = ToolSpec(
        name="date_range",
        description="Days.",
        parameters=_RANGE,
        handler=lambda start, end: ran.append((start, end)) or "ok",
        check_arguments=lambda a: "start must not be after end" if a["start"] > a["end"] else None,
    )
    result = run_on(harness_name, [tool_call("date_range", {"start": 9, "end": 2}), "no"], [spec])
    assert ran == []
    record = result.tool_calls[0]
    assert (record.error_kind, record.outcome) == ("invalid_arguments", "not_run")
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert "start must not be after end" in message.content


def test_input_9_a_tool_can_end_the_run_with_its_result(harness_name: str) -> None:
    """A tool could not end the run with its own result (LangChain's return_direct)."""
    spec = ToolSpec(
        name="faq",
        description="FAQ.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: "see the handbook",
        return_direct=True,
    )
    model = FakeModel([tool_call("faq", {}), "this answer must never be produced"])
    result = load_harness(harness_name)(
        model, [spec], RunInput(user="go", budget=Budget(deadline_seconds=30.0))
    )
    assert isinstance(result, RunResult)
    assert (result.stop_reason, result.output) == ("answered", "see the handbook")
    assert len(model.calls) == 1


def test_input_5_an_async_handler_runs_on_every_harness(harness_name: str) -> None:
    """A ToolSpec whose handler is ``async def`` was accepted at setup, then every call
    failed."""
    import asyncio
    import threading

    async def lookup(q: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"q": q, "thread": threading.current_thread().name}

    spec = ToolSpec(
        name="lookup",
        description="Look up.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        handler=lookup,
    )
    result = run_on(harness_name, [tool_call("lookup", {"q": "x"}), "done"], [spec])
    assert result.tool_calls[0].status == "success"
    (message,) = [m for m in result.messages if m.role == "tool"]
    import json

    data = json.loads(message.content)
    assert data["q"] == "x"
    if harness_name in ("langchain-async", "pydantic-ai-async", "pydantic-ai-stream"):
        # awaited natively on the run's own loop: the process's run loop (pools.run_async)
        assert data["thread"] == "agent-contract-runs"
    elif harness_name == "pydantic-ai":
        # awaited natively on run_sync's loop: the calling thread's own
        assert data["thread"] == "MainThread"
    else:
        assert data["thread"] == "agent-contract-async-tools"  # the executor's loop


def test_input_5_an_async_handler_is_cancelled_at_its_timeout(harness_name: str) -> None:
    import asyncio

    landed: list[str] = []

    async def slow(q: str) -> str:
        await asyncio.sleep(5)
        landed.append(q)
        return "late"

    spec = ToolSpec(
        name="slow",
        description="Slow.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        handler=slow,
        timeout_seconds=0.1,
    )
    result = run_on(harness_name, [tool_call("slow", {"q": "x"}), "gave up"], [spec])
    record = result.tool_calls[0]
    assert (record.error_kind, record.outcome, record.side_effects_possible) == (
        "timeout",
        "cancelled",
        True,
    )
    assert landed == []  # the task has ended: its write can never land


def test_input_6_each_calls_artifact_is_on_the_run_result(harness_name: str) -> None:
    """A tool's application-only artifact was not reachable from RunResult on any
    harness (offline not at all)."""
    from agent_contract.results import ToolOutput

    spec = ToolSpec(
        name="export",
        description="Export.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: ToolOutput(value="3 rows", artifact={"rows": ["a-private-row"] * 3}),
    )
    model = FakeModel([tool_call("export", {}, id="call_x"), "exported"])
    result = load_harness(harness_name)(
        model, [spec], RunInput(user="go", budget=Budget(deadline_seconds=30.0))
    )
    assert isinstance(result, RunResult)
    assert result.artifacts == {"call_x": {"rows": ["a-private-row"] * 3}}
    seen = "".join(m.content for call in model.calls for m in call["messages"])
    assert "a-private-row" not in seen + result.trace.to_jsonl()


def test_input_6_a_checkpoint_never_stores_the_artifact(tmp_path: Any) -> None:
    """On LangChain the uncut value (5 MB in the test) was stored whole in graph state
    and added 8-45 MB to the checkpoint file, although the model saw the capped result."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from agent_contract.results import ToolOutput
    from agent_contract_langchain import run_agent

    five_mb = 5 * 1024 * 1024
    spec = ToolSpec(
        name="export",
        description="Export.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: ToolOutput(value="summary", artifact="x" * five_mb),
    )
    path = tmp_path / "checkpoints.sqlite3"
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        result = run_agent(
            FakeModel([tool_call("export", {}, id="call_x"), "done"]),
            [spec],
            "go",
            budget=Budget(deadline_seconds=30.0),
            checkpointer=SqliteSaver(conn),
        )
        conn.commit()
    finally:
        conn.close()
    stored = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert stored < 1024 * 1024  # measured: 15.8 MB before, 0.03 MB after
    assert len(result.artifacts["call_x"]) == five_mb


def test_input_7_unparseable_argument_text_is_kept_redacted_and_capped(
    harness_name: str,
) -> None:
    """The raw text of unparseable tool-call arguments was not kept in the trace."""
    from agent_contract.conformance import PLANTED_SECRET
    from agent_contract.trace import RAW_ARGUMENTS_CHARS

    raw = '{"text": "my key is ' + PLANTED_SECRET + '", "pad": "' + "p" * 3000
    result = run_on(
        harness_name,
        [tool_call("echo", raw, id="call_bad")],
        [_echo()],
        secrets=(PLANTED_SECRET,),
    )
    assert result.stop_reason == "invalid_response"
    (event,) = [e for e in result.trace.of_type("contract_violation") if "raw_arguments" in e]
    assert event["code"] == "unparseable_arguments"
    assert event["raw_arguments"].startswith('{"text": "my key is [REDACTED]", "pad": "ppp')
    assert len(event["raw_arguments"]) == RAW_ARGUMENTS_CHARS
    assert (event["raw_arguments_chars"], event["raw_arguments_cut"]) == (len(raw), True)
    assert PLANTED_SECRET not in result.trace.to_jsonl()


def _edited_transfer(harness_name: str) -> tuple[RunResult, FakeModel]:
    from agent_contract.conformance.fixtures import Probe, ScriptedDecider, transfer_tool

    probe = Probe()
    model = FakeModel([tool_call("transfer", {"to": "bob", "amount": 500}), "sent"])
    result = load_harness(harness_name)(
        model,
        [transfer_tool(probe)],
        RunInput(
            user="send bob 500",
            budget=Budget(deadline_seconds=30.0),
            decider=ScriptedDecider([("edit", {"to": "bob", "amount": 50})], probe),
        ),
    )
    assert isinstance(result, RunResult)
    assert result.stop_reason == "answered"
    return result, model


def test_input_7_approval_events_carry_a_utc_time_and_an_offset(harness_name: str) -> None:
    """Approval events carried no time (held already on the main branch this was fixed
    on: every event goes through the one Trace.append; kept as a guard)."""
    result, _ = _edited_transfer(harness_name)
    for kind in ("approval_requested", "approval_decided", "write_settled"):
        (event,) = result.trace.of_type(kind)
        assert event["time"].endswith("Z")
        assert isinstance(event["offset_seconds"], float)


def test_input_7_the_trace_and_the_model_get_the_arguments_that_ran(harness_name: str) -> None:
    """After an edited approval the model was never told which arguments actually ran."""
    import json

    result, model = _edited_transfer(harness_name)
    (settled,) = result.trace.of_type("write_settled")
    assert (settled["arguments"], settled["edited"]) == ({"to": "bob", "amount": 50}, True)
    # The model's next turn states the arguments that ran.
    (content,) = [m.content for m in model.calls[-1]["messages"] if m.role == "tool"]
    assert json.loads(content) == {
        "note": "a human edited this call's arguments before it ran",
        "arguments": {"to": "bob", "amount": 50},
        "result": {"sent": 50, "to": "bob"},
    }
