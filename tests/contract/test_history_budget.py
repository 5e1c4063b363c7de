"""Issue 24 item 5: a history has a size budget (``Budget.max_history_messages``,
``Budget.max_history_chars``), refused before the model is called, with a named stop, on
every harness; a history over the message limit is refused before it is converted.

On main 8087407 nothing refused a history: a 1,000,000-message one ran (36 s CPU and
2.47 GB on LangChain) and the model was called.
"""

from __future__ import annotations

from typing import Any

from agent_contract import Budget, ToolSpec
from agent_contract.exitcodes import EXIT_BUDGET, EXIT_CODES
from agent_contract.harnesses import RunInput
from agent_contract.messages import Message
from agent_contract.registry import load_harness
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call

_BIG = 200_000
"""Messages in the large history: four times the default ``max_history_messages``."""


def _echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda text: f"echo: {text}",
    )


def _history(count: int, text: str = "m") -> list[Message]:
    return [
        Message(role="user" if n % 2 == 0 else "assistant", content=f"{text}{n}")
        for n in range(count)
    ]


def _run(harness: str, model: FakeModel, **options: Any) -> RunResult:
    options.setdefault("budget", Budget(deadline_seconds=60.0))
    result = load_harness(harness)(model, [_echo()], RunInput(user="go", **options))
    assert isinstance(result, RunResult)
    return result


def test_a_large_history_is_refused_by_the_default_budget(harness_name: str) -> None:
    """200,000 messages given as the input: the run stops ``max_history_messages`` (a
    budget stop, exit 3) and the model is never called."""
    model = FakeModel(["this answer must never be produced"])
    result = _run(harness_name, model, history=_history(_BIG))
    assert result.stop_reason == "max_history_messages"
    assert result.stop_detail == (
        f"max_history_messages of 50000 exceeded ({_BIG + 1} messages in the history)"
    )
    assert result.output is None
    assert model.calls == []
    assert result.trace.of_type("model_call") == []
    assert EXIT_CODES[result.stop_reason] == EXIT_BUDGET


def test_a_history_over_its_chars_is_refused(harness_name: str) -> None:
    """Few messages, too many characters: ``max_history_chars``, the model not called."""
    model = FakeModel(["this answer must never be produced"])
    budget = Budget(deadline_seconds=60.0, max_history_chars=1_000)
    result = _run(harness_name, model, budget=budget, history=_history(2, "x" * 600))
    assert result.stop_reason == "max_history_chars"
    assert result.stop_detail is not None
    assert result.stop_detail.startswith("max_history_chars of 1000 exceeded (at least ")
    assert model.calls == []


def test_a_history_within_the_limits_runs(harness_name: str) -> None:
    """At the limits exactly, the run answers (the limits are maxima, not minima)."""
    model = FakeModel(["fine"])
    budget = Budget(deadline_seconds=60.0, max_history_messages=3, max_history_chars=10)
    history = [Message(role="user", content="ab"), Message(role="assistant", content="cd")]
    result = _run(harness_name, model, budget=budget, history=history)
    assert result.stop_reason == "answered"
    assert result.output == "fine"


def test_a_history_that_grows_past_the_limit_stops_the_run(harness_name: str) -> None:
    """The history grows by a turn per step: the step whose history crosses the limit is
    refused before its model call, the ones before it ran."""
    model = FakeModel([tool_call("echo", {"text": "a"}), tool_call("echo", {"text": "b"}), "never"])
    budget = Budget(deadline_seconds=60.0, max_history_messages=4)
    result = _run(harness_name, model, budget=budget)
    # user; +assistant, tool (3 <= 4: step 2 runs); +assistant, tool (5 > 4: refused)
    assert result.stop_reason == "max_history_messages"
    assert result.stop_detail == "max_history_messages of 4 exceeded (5 messages in the history)"
    assert len(model.calls) == 2
    assert [(r.arguments, r.status) for r in result.tool_calls] == [
        ({"text": "a"}, "success"),
        ({"text": "b"}, "success"),
    ]
