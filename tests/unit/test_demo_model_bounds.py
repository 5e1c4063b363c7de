"""The demo model reads a bounded prefix with linear-time patterns, and the run's deadline
is checked after every model step (issue 12 item 7). Outcomes only: the timing of a 1 MB
prompt is in ``benchmarks/bench_demo_model.py``."""

# Chinese prompts on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_contract import testing as testing_module
from agent_contract.budget import Budget
from agent_contract.loop import run
from agent_contract.messages import Completion, Message
from agent_contract.runtime import Contract, Stop
from agent_contract.testing import MAX_REQUEST_CHARS, DemoModel, FakeModel
from agent_contract.tools import ToolSpec
from agent_contract_langchain.harness import run_agent

MB = 1_000_000
OFFERED = [
    {"type": "function", "function": {"name": name}}
    for name in ("calculator", "policy_lookup", "lookup_order")
]


def reply(text: str) -> Completion:
    return DemoModel().complete([Message(role="user", content=text)], tools=OFFERED)


ADVERSARIAL = {
    "space-run": "calculate 1" + " " * MB + "+1",
    "space-run-then-word": "look up order" + " " * MB + "A-1001 x",
    "colon-spaces": "计算" + " ：" * (MB // 2),
    "no-keyword": "x" * MB,
    "newlines": "refund order\n" + "\n" * MB + "A-1001",
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_request_over_the_bound_is_refused_plainly(text: str) -> None:
    completion = reply(text)
    assert completion.tool_calls == ()
    assert f"{len(text)} " in completion.text
    assert str(MAX_REQUEST_CHARS) in completion.text


class Spy:
    """A compiled pattern that records the length of every text it is given."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self.pattern, self.seen = pattern, seen

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.pattern, name)

        def spied(text: str, *args: Any) -> Any:
            self.seen.append(len(text))
            return method(text, *args)

        return spied


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_the_patterns_never_see_more_than_the_bound(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    for name in ("_CALCULATE", "_POLICY", "_LOOKUP_ORDER", "_REFUND_ORDER", "_CJK"):
        monkeypatch.setattr(testing_module, name, Spy(getattr(testing_module, name), seen))
    reply(text)
    tool_result = Message(
        role="tool", content="{}", name="calculator", tool_call_id="c", status="success"
    )
    DemoModel().complete([Message(role="user", content=text), tool_result])
    assert max(seen, default=0) <= MAX_REQUEST_CHARS


WS = st.text(alphabet=" \t\n", min_size=1, max_size=300)
EXPRESSIONS = st.from_regex(r"[0-9][0-9 +*()-]{0,40}[0-9)]", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(lead=WS, gap=WS, trail=WS, expression=EXPRESSIONS)
def test_whitespace_runs_do_not_change_what_is_asked(
    lead: str, gap: str, trail: str, expression: str
) -> None:
    """Linear patterns (possessive, anchored) read requests as ``str.split`` would."""
    text = f"{lead}calculate{gap}{expression}{trail}"
    completion = reply(text)
    if len(text) > MAX_REQUEST_CHARS:
        assert completion.tool_calls == ()
        return
    (call,) = completion.tool_calls
    assert (call.name, call.arguments) == ("calculator", {"expression": expression.strip()})


@settings(max_examples=100, deadline=None)
@given(lead=WS, gap=WS, order=st.from_regex(r"[A-Z]-[0-9]{4}", fullmatch=True), extra=WS)
def test_an_order_request_is_read_by_its_words(lead: str, gap: str, order: str, extra: str) -> None:
    (call,) = reply(f"{lead}look up order{gap}{order}{extra}").tool_calls
    assert call.arguments == {"order_id": order}
    assert reply(f"look up order{gap}{order}{extra}and more").tool_calls == ()


# -- the deadline after every model step -------------------------------------------------


class FakeClock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda text="": text,
    )


def test_an_answer_after_the_deadline_is_a_deadline_stop() -> None:
    contract = Contract([echo()], budget=Budget(deadline_seconds=60))
    state = contract.start(run_id="r")
    assert state.check_before_model_call([]) is None
    state.view.counters.elapsed_before = 407.0  # the model step took 407 s
    verdict = state.accept_response(Completion(text="late answer"))
    assert verdict.shape == "final"
    result = state.finish(Stop(reason="answered"), messages=[], output="late answer")
    assert result.stop_reason == "deadline"
    assert result.output is None
    assert result.stop_detail.startswith("deadline of 60 s reached (407.")


@pytest.mark.parametrize("harness", ["offline", "langchain"])
def test_a_slow_model_step_ends_the_run_with_deadline(harness: str) -> None:
    clock = FakeClock()

    def slow_answer(messages: list[Message]) -> str:
        clock.now += 400.0  # the step takes 400 s on the injected clock
        return "an answer that came too late"

    contract = Contract([echo()], budget=Budget(deadline_seconds=60), clock=clock)
    model = FakeModel([slow_answer])
    if harness == "offline":
        result = run(model, contract, "go")
    else:
        result = run_agent(model, contract, "go")
    assert result.stop_reason == "deadline"
    assert result.output is None
    assert result.usage.elapsed_seconds == pytest.approx(400.0)
    assert [e["type"] for e in result.trace.events][-2:] == ["model_response", "stop"]


@pytest.mark.parametrize("harness", ["offline", "langchain"])
def test_an_answer_inside_the_deadline_stands(harness: str) -> None:
    clock = FakeClock()

    def quick(messages: list[Message]) -> str:
        clock.now += 59.0
        return "in time"

    contract = Contract([echo()], budget=Budget(deadline_seconds=60), clock=clock)
    runner = run if harness == "offline" else run_agent
    result = runner(FakeModel([quick]), contract, "go")
    assert (result.stop_reason, result.output) == ("answered", "in time")
