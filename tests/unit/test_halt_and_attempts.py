"""The core rules every driver shares (issue 10): a halted run refuses more work, a
framework's control flow passes through the executor, and attempts (retries, rewritten
arguments, answers given elsewhere) are judged once, in the runtime."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_contract.budget import Budget
from agent_contract.executor import ToolExecutor, arun_with_timeout
from agent_contract.messages import ToolCall
from agent_contract.runtime import Contract, RunState, Stop
from agent_contract.tools import ToolSpec

ONE_ARG = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def spec(name: str = "echo", handler: Any = None, **options: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=name,
        parameters=ONE_ARG,
        handler=handler or (lambda a: f"{name} {a}"),
        **options,
    )


def planned_run(*specs: ToolSpec, **limits: Any) -> tuple[RunState, Any]:
    contract = Contract(list(specs) or [spec()], budget=Budget(**limits))
    state = contract.start()
    assert state.check_before_model_call([]) is None
    plan = state.plan_tool_calls(
        [ToolCall(id="c1", name=specs[0].name if specs else "echo", arguments={"a": 1})]
    )
    return state, plan.calls[0]


def test_a_halted_run_refuses_model_and_tool_calls() -> None:
    state, planned = planned_run()
    state.halt(Stop(reason="repeated_call", detail="x"))
    assert state.check_before_model_call([]) == Stop(reason="repeated_call", detail="x")
    result = state.execute(planned)
    assert (result.error_kind, result.outcome) == ("not_allowed", "not_run")
    assert "the run has stopped (repeated_call)" in result.content
    assert state.view.usage().model_steps == 1
    types = [e["type"] for e in state.view.trace.events]
    assert types.count("refused_after_stop") == 2


def test_the_first_stop_wins() -> None:
    state, _ = planned_run()
    state.halt(Stop(reason="max_tool_calls"))
    state.halt(Stop(reason="answered"), "too late")
    result = state.finish(messages=[])
    assert (result.stop_reason, result.output) == ("max_tool_calls", None)


def test_a_pause_keeps_its_batch_open_for_the_resume() -> None:
    state, _ = planned_run()
    paused = state.finish(Stop(reason="interrupted", detail="waiting"), messages=[])
    assert paused.stop_reason == "interrupted"
    assert paused.tool_calls == ()
    assert paused.snapshot is not None
    assert [p["call"]["id"] for p in paused.snapshot["batch"]] == ["c1"]


class Bubble(Exception):
    """A framework's control flow (a graph interrupt, in a binding)."""


def test_control_flow_passes_through_the_executor_and_records_nothing() -> None:
    state, planned = planned_run()

    def invoke(context: Any) -> Any:
        raise Bubble

    with pytest.raises(Bubble):
        state.execute(planned, invoke, passthrough=(Bubble,))
    assert state.view.result_for("c1") is None

    async def ainvoke(context: Any) -> Any:
        raise Bubble

    with pytest.raises(Bubble):
        asyncio.run(state.aexecute(planned, ainvoke, passthrough=(Bubble,)))
    assert state.view.result_for("c1") is None


def test_a_tools_own_timeout_error_is_not_the_executors() -> None:
    def raises() -> Any:
        raise TimeoutError("the upstream gave up")

    invocation = ToolExecutor(max_workers=1).run(raises, timeout=5.0)
    assert (invocation.timed_out, type(invocation.error)) == (False, TimeoutError)

    async def araises() -> Any:
        raise TimeoutError("the upstream gave up")

    ainvocation = asyncio.run(arun_with_timeout(araises, 5.0))
    assert (ainvocation.timed_out, type(ainvocation.error)) == (False, TimeoutError)

    state, planned = planned_run(spec("slow", lambda a: (_ for _ in ()).throw(TimeoutError())))
    result = state.execute(planned)
    assert (result.error_kind, result.outcome, result.side_effects_possible) == (
        "timeout",
        "unknown",
        True,
    )
    assert "raised a timeout of its own" in result.content


def test_a_retry_is_charged_and_refused_past_the_budget() -> None:
    state, _ = planned_run(max_tool_calls=2)
    assert state.layers.record_attempt("c1") is None
    assert state.layers.record_attempt("c1") is None
    assert state.view.usage().tool_calls == 2
    refused = state.layers.record_attempt("c1")
    assert refused is not None
    assert refused.error_kind == "budget_exceeded"


def test_a_write_is_never_attempted_twice() -> None:
    write = spec(
        "pay",
        lambda context, a: "paid",
        effect="write",
        preview=lambda context, a: {"pay": a},
        verify=lambda context, a: None,
    )
    state, planned = planned_run(write)
    assert planned.approval is not None
    assert state.layers.record_attempt("c1") is None
    refused = state.layers.record_attempt("c1")
    assert refused is not None
    assert "never run again" in refused.content


def test_rewritten_arguments_are_validated_and_recorded() -> None:
    state, _ = planned_run()
    updated = state.layers.rewrite_arguments("c1", {"a": 7}, by="a reviewer")
    assert updated is not None
    assert updated.arguments == {"a": 7}
    assert state.layers.rewrite_arguments("c1", {"a": 7}, by="a reviewer") is updated
    refused = state.layers.rewrite_arguments("c1", {"a": "seven"}, by="a reviewer")
    assert refused is not None
    assert refused.refusal is not None
    assert refused.refusal.error_kind == "invalid_arguments"
    events = [e for e in state.view.trace.events if e["type"] == "arguments_rewritten"]
    assert [(e["arguments"], e["valid"]) for e in events] == [
        ({"a": 7}, True),
        ({"a": "seven"}, False),
    ]


def test_an_answer_given_elsewhere_is_not_a_tool_result() -> None:
    state, planned = planned_run()

    def invoke(context: Any) -> Any:
        state.layers.answered_unrun("c1")  # no attempt reached the tool
        return "made up"

    result = state.execute(planned, invoke)
    assert (result.error_kind, result.outcome) == ("not_allowed", "not_run")


def test_a_call_answered_by_another_layer_is_recorded_unrun() -> None:
    state, _ = planned_run()
    result = state.layers.refuse_unrun("c1", "answered by another middleware without running")
    assert result is not None
    assert (result.error_kind, result.outcome) == ("not_allowed", "not_run")
    assert state.layers.refuse_unrun("c1", "again") is None


def test_aexecute_without_an_invoke_runs_the_tools_own_handler() -> None:
    """A sync handler runs on the contract's pool, an ``async def`` one on the caller's
    loop; both with the call's timeout and the result recorded once."""
    import threading

    def sync_handler(a: int) -> str:
        return f"{threading.current_thread().name} {a}"

    async def async_handler(a: int) -> str:
        return f"awaited {a}"

    state, planned = planned_run(spec("echo", sync_handler))
    result = asyncio.run(state.aexecute(planned))
    assert (result.status, result.outcome) == ("success", "succeeded")
    assert result.content.startswith("agent-contract-tool")
    assert state.view.result_for("c1") is result

    state, planned = planned_run(spec("echo", async_handler))
    assert asyncio.run(state.aexecute(planned)).content == "awaited 1"


def test_aexecute_of_a_sync_tool_times_out_honestly() -> None:
    import threading

    release = threading.Event()

    def stuck(a: int) -> str:
        release.wait(60.0)
        return "late"

    state, planned = planned_run(spec("echo", stuck, timeout_seconds=0.1))
    try:
        result = asyncio.run(state.aexecute(planned))
    finally:
        release.set()
    assert (result.error_kind, result.outcome) == ("timeout", "unknown")
    assert result.side_effects_possible


def test_aexecute_waits_in_a_thread_for_an_executor_whose_handle_cannot_be_awaited() -> None:
    """An executor of the team's own whose handles have only ``result(timeout)``: the
    sync tool still runs on it, and its result is recorded."""
    ran: list[int] = []

    class PlainHandle:
        def __init__(self, invocation: Any) -> None:
            self._invocation = invocation

        def result(self, timeout: float) -> Any:
            return self._invocation

    class OwnExecutor(ToolExecutor):
        def submit(self, fn: Any, *, awaits: bool = False) -> Any:
            return PlainHandle(ToolExecutor.submit(self, fn).result(5.0))

    def handler(a: int) -> str:
        ran.append(a)
        return f"ran {a}"

    contract = Contract([spec("echo", handler)], executor=OwnExecutor(max_workers=1))
    state = contract.start()
    assert state.check_before_model_call([]) is None
    planned = state.plan_tool_calls([ToolCall(id="c1", name="echo", arguments={"a": 2})]).calls[0]
    result = asyncio.run(state.aexecute(planned))
    assert result.content == "ran 2"
    assert ran == [2]
    assert state.view.result_for("c1") is result
