"""What a scenario expects, and judging a run against it.

A :class:`Scenario` is a script of model replies, the tools (built fresh per run around
a :class:`~agent_contract.conformance.fixtures.Probe` that records what the handlers
saw), a budget, and the expected observable outcome; its main boundary is an id of
:data:`~agent_contract.conformance.boundaries.BOUNDARIES`. :func:`observe` gives the
harness-neutral view of what a run showed and :func:`evaluate` every expectation it
broke, tagged by boundary. The checks a scenario adds (``check_*``) live here too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..budget import Budget
from ..faults import CrashPlan
from ..harnesses import Observation, RunInput
from ..messages import Message
from ..runtime import AnswerFormat, Commentary, RunResult
from ..testing import FakeModel, Reply
from ..tools import ToolSpec
from .checks import (
    check_cancelled,
    check_contents,
    check_hidden_text,
    check_history,
    check_model_calls,
    check_not_emitted,
    check_offered,
    check_ran,
    check_timeout,
    check_truncated,
    check_writes,
)
from .fixtures import PLANTED_SECRET, Probe, ScriptedDecider
from .problems import Check, Problem
from .reference import differences

__all__ = [
    "CHECKED_IN_EVERY_RUN",
    "EXTRAS",
    "Check",
    "Problem",
    "Scenario",
    "check_cancelled",
    "check_contents",
    "check_hidden_text",
    "check_history",
    "check_model_calls",
    "check_not_emitted",
    "check_offered",
    "check_ran",
    "check_timeout",
    "check_truncated",
    "check_writes",
    "differences",
    "evaluate",
    "observe",
    "tool_message_view",
]


def _error_fields(content: str) -> tuple[str | None, bool]:
    try:
        data = json.loads(content)
    except ValueError:
        return None, False
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"], bool(data.get("side_effects_possible", False))
    return None, False


def tool_message_view(message: Message) -> dict[str, Any]:
    """The Observation view of one tool message."""
    kind, side_effects = (
        _error_fields(message.content) if message.status == "error" else (None, False)
    )
    return {
        "id": message.tool_call_id,
        "name": message.name,
        "status": message.status,
        "error_kind": kind,
        "side_effects_possible": side_effects,
        "content": message.content,
    }


def observe(result: RunResult | Observation) -> Observation:
    """The Observation of a RunResult (an Observation is returned as it is)."""
    if isinstance(result, Observation):
        return result
    tool_messages = tuple(tool_message_view(m) for m in result.messages if m.role == "tool")
    emitted = "\n".join(
        [
            result.trace.to_jsonl(),
            *(m["content"] for m in tool_messages),
            result.output or "",
            json.dumps(result.to_dict(), ensure_ascii=False),
        ]
    )
    issued = tuple(c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls)
    return Observation(
        harness=result.harness,
        stop_reason=result.stop_reason,
        output=result.output,
        trajectory=tuple(result.trajectory()),
        tool_messages=tool_messages,
        trace_types=tuple(e["type"] for e in result.trace.events),
        emitted=emitted,
        issued_ids=issued,
    )


EXTRAS: Final[dict[str, str]] = {
    "middleware": "framework middleware placed inside the contract, by name: "
    "``noop_after_model`` (a user middleware whose after_model hook does nothing), "
    "``tool_call_limit`` (a stock limit above the budget), ``model_call_limit_end`` (a "
    "stock limit of one model call that ends the run), ``tool_retry`` (a stock retry "
    "layer, two retries)",
    "command_tools": "tools whose result the harness returns inside a framework command "
    "with a state update (``{'notes': [...]}``)",
    "pausing_tools": "tools that pause the run on a framework interrupt before they run",
    "earlier_turns": "user turns the harness runs first on the same checkpointed thread "
    "(the scenario's run is the next turn)",
}
"""The kinds of :attr:`Scenario.extras` and what a harness does with each."""


_SUITE_CALLER: Final = "tester"
"""The identity every scenario's run acts for."""


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scripted situation and its expected outcome on every harness."""

    name: str
    """Stable id, used in test ids and reports."""
    boundary: str
    """The main boundary it exercises (an id of
    :data:`~agent_contract.conformance.boundaries.BOUNDARIES`)."""
    description: str
    script: tuple[Reply, ...]
    """The FakeModel script."""
    tools: Callable[[Probe], list[ToolSpec]]
    """Builds fresh tools around a probe."""
    stop_reason: str
    """Expected stop reason."""
    trajectory: tuple[str, ...] = ()
    """Expected tool names, in issue order."""
    results: tuple[tuple[str, str | None], ...] = ()
    """Expected ``(status, error_kind)`` per tool message, in issue order."""
    output_contains: tuple[str, ...] = ()
    """Substrings of the answer."""
    must_not_run: tuple[str, ...] = ()
    """Tools whose handlers must never run."""
    user: str = "please help"
    budget: Budget = field(default_factory=lambda: Budget(deadline_seconds=30.0))
    allowlist: tuple[str, ...] | None = None
    history: tuple[Message, ...] = ()
    extra: tuple[Check, ...] = ()
    """Scenario-specific checks."""
    requires: tuple[str, ...] = ()
    """Capabilities a harness must have (e.g. ``"write_tools"``, ``"timeouts"``); others
    skip it. A :class:`~agent_contract.suite.ContractSuite` declares each capability as a
    boolean ``has_<capability>`` or ``supports_<capability>`` class attribute."""

    decisions: tuple[str | tuple[str, dict[str, Any]], ...] = ()
    """The scripted human's decisions on approvals (see :class:`ScriptedDecider`)."""
    commentary: Commentary = "keep"
    """Text beside tool calls: commentary (``keep``) or a violation (``refuse``)."""
    answer_format: AnswerFormat | None = None
    """The structured answer the run asks for, if any."""
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Harness-specific pieces, by kind (see :data:`EXTRAS`): a harness that knows a
    kind applies it, one that has no such thing (the offline loop has no middleware)
    runs the scenario without it; a scenario whose outcome depends on one lists the
    capability in :attr:`requires`."""

    model_calls: int | None = None
    """The exact number of model calls the run makes (None: not checked beyond the
    trajectory); a harness that calls the model once more than the contract allows
    breaks :attr:`boundary`."""
    secrets: tuple[str, ...] = ()
    """More values to redact, handed to the run beside the planted secret."""
    crash_at: str | None = None
    """A crash point (:data:`~agent_contract.faults.CRASH_POINTS`): the harness crashes
    there once while resuming and resumes in a fresh instance (capability
    ``crash_restart``; see :attr:`~agent_contract.harnesses.RunInput.crash`)."""

    def options(self, probe: Probe | None = None) -> RunInput:
        """The harness input for this scenario, with the planted secret (a decider needs
        the run's probe; a crash plan is noted on it)."""
        decider = ScriptedDecider(self.decisions, probe) if self.decisions and probe else None
        crash = CrashPlan(self.crash_at) if self.crash_at else None
        if probe is not None:
            probe.crash = crash
        return RunInput(
            user=self.user,
            budget=self.budget,
            allowlist=self.allowlist,
            history=self.history,
            secrets=(PLANTED_SECRET, *self.secrets),
            caller=_SUITE_CALLER,
            crash=crash,
            decider=decider,
            commentary=self.commentary,
            answer_format=self.answer_format,
            extras=dict(self.extras),
        )


CHECKED_IN_EVERY_RUN: Final = frozenset({"call_id_binding"})
"""Boundaries :func:`evaluate` checks in every scenario's run, whatever its own boundary
(one tool message per issued id, in issue order): a harness whose runs show no problem
holds them even where no scenario is their own (e.g. ``check --agent`` on an agent that
offers no tools)."""


def evaluate(scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """Every way ``obs`` breaks the scenario's expectations, tagged by boundary."""
    problems: list[Problem] = []

    def fail(boundary: str, message: str) -> None:
        problems.append(Problem(boundary=boundary, message=message))

    if obs.stop_reason.startswith("crashed:"):
        # The run raised: one verdict, under the scenario's boundary. A leak in the
        # exception's text is still a leak.
        what = obs.emitted.splitlines()[0] if obs.emitted else ""
        problems.append(
            Problem(
                boundary=scenario.boundary,
                message=f"the run raised {obs.stop_reason.partition(':')[2]}: {what}"[:500],
                verdict="crashed",
            )
        )
        if _leaked(scenario, obs.emitted):
            fail("trace_redaction", "the planted secret appears in the exception's text")
        return problems
    if obs.stop_reason != scenario.stop_reason:
        fail(
            scenario.boundary, f"stop_reason {obs.stop_reason!r}, expected {scenario.stop_reason!r}"
        )
    if scenario.stop_reason != "answered" and obs.output is not None:
        fail(scenario.boundary, f"a {scenario.stop_reason} stop produced an answer {obs.output!r}")
    if obs.trajectory != scenario.trajectory:
        fail(
            scenario.boundary,
            f"trajectory {list(obs.trajectory)}, expected {list(scenario.trajectory)}",
        )
    seen = tuple((m["status"], m["error_kind"]) for m in obs.tool_messages)
    if seen != scenario.results:
        fail(scenario.boundary, f"tool messages {list(seen)}, expected {list(scenario.results)}")
    for text in scenario.output_contains:
        if text not in (obs.output or ""):
            fail(scenario.boundary, f"answer lacks {text!r}: {obs.output!r}")
    for name in scenario.must_not_run:
        if probe.ran(name):
            fail(scenario.boundary, f"tool {name!r} ran {probe.ran(name)} time(s); it must not run")
    # Call-ID binding: one message per issued id, in issue order.
    issued = [i for i in obs.issued_ids if i]
    answered = [m["id"] for m in obs.tool_messages]
    unique_issued = list(dict.fromkeys(issued))
    paused_or_invalid = scenario.stop_reason in (
        "invalid_response",
        "invalid_history",
        "pending_approval",
        "interrupted",
    )
    if answered != unique_issued and not paused_or_invalid:
        fail("call_id_binding", f"tool messages answer {answered}, calls issued {unique_issued}")
    if len(answered) != len(set(answered)) and scenario.stop_reason != "invalid_history":
        fail("call_id_binding", f"an id is answered more than once: {answered}")
    # A broken history's unanswered call is the history's problem, not the binding's.
    history_ids = {c.id for m in scenario.history for c in m.tool_calls}
    for message, ids in _unbound_turns(model):
        fail("history" if set(ids) & history_ids else "call_id_binding", message)
    if scenario.model_calls is not None and len(model.calls) != scenario.model_calls:
        fail(
            scenario.boundary,
            f"the model was called {len(model.calls)} times, expected {scenario.model_calls}",
        )
    # Trace and redaction.
    if not obs.trace_types or obs.trace_types[0] != "run_started" or obs.trace_types[-1] != "stop":
        fail("trace_redaction", f"no complete trace (events: {list(obs.trace_types)[:3]}...)")
    elif (
        obs.trace_types.count("model_call") != len(model.calls)
        and "earlier_turns" not in scenario.extras  # earlier runs called the model too
    ):
        fail(
            "trace_redaction",
            f"the trace records {obs.trace_types.count('model_call')} model calls, the model "
            f"was called {len(model.calls)} times",
        )
    if _leaked(scenario, obs.emitted):
        fail("trace_redaction", "a planted secret appears in what the run emitted")
    if scenario.crash_at is not None:
        plan = probe.crash
        fired, restarts = (plan.fired, plan.restarts) if plan else (0, 0)
        if (fired, restarts) != (1, 1):
            fail(
                "write_approval",
                f"asked to crash at {scenario.crash_at!r} and restart: crashed {fired} "
                f"time(s), restarted {restarts} time(s), expected once each",
            )
    for check in scenario.extra:
        problems.extend(check(obs, model, probe))
    return problems


def _unbound_turns(model: FakeModel) -> list[tuple[str, list[str | None]]]:
    """What the model was actually sent, checked for the binding: in each call's input,
    the tool messages after an assistant turn with tool calls answer exactly those calls,
    in issue order. The first difference per model call, with the calls' ids."""
    problems: list[tuple[str, list[str | None]]] = []
    for number, call in enumerate(model.calls, start=1):
        messages = list(call["messages"])
        for index, message in enumerate(messages):
            if message.role != "assistant" or not message.tool_calls:
                continue
            answers = []
            for later in messages[index + 1 :]:
                if later.role != "tool":
                    break
                answers.append(later.tool_call_id)
            issued = [c.id for c in message.tool_calls]
            if answers != issued:
                problems.append(
                    (
                        f"model call {number} got tool messages {answers} after calls "
                        f"{issued} (every call answered once, in issue order)",
                        list(issued),
                    )
                )
                break
    return problems


def _leaked(scenario: Scenario, emitted: str) -> bool:
    return any(secret in emitted for secret in (PLANTED_SECRET, *scenario.secrets))
