"""The types every boundary file is written in: a :class:`Boundary` (its row), a
:class:`Scenario` (a script and its expected outcome), a :class:`Problem` (a failed
expectation), a :data:`Check` (an expectation a scenario adds), a :data:`RunCheck` (one
a boundary makes in every run) and the :class:`BoundaryDefinition` that holds one
boundary's row, scenarios and checks (one per module of
:mod:`agent_contract.conformance.boundaries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..budget import Budget
from ..delegation import SubAgentPlan
from ..faults import CrashPlan
from ..harnesses import Observation, RunInput
from ..messages import Completion, Message
from ..runtime import AnswerFormat, Commentary
from ..tampering import TamperPlan, scenario_store
from ..testing import FakeModel, Reply
from ..tools import ToolSpec
from .fixtures import PLANTED_SECRET, Probe, ScriptedDecider, basic_tools

__all__ = [
    "EXTRAS",
    "SUITE_CALLER",
    "Boundary",
    "BoundaryDefinition",
    "Check",
    "Problem",
    "RunCheck",
    "Scenario",
    "SubAgent",
    "call_then_answer",
    "reply_never_runs",
]


@dataclass(frozen=True, kw_only=True)
class Boundary:
    """One boundary of the contract."""

    id: str
    """Stable key (``response_shape``, ...), used by scenarios, problems and reports."""
    label: str
    """What reports print for it (``response shape``, ...)."""
    rule: str
    """What holding it means, in one sentence without a final period."""
    keep_it: str
    """What in this package keeps it, in framework-neutral terms."""


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One failed expectation."""

    boundary: str
    """Key of :data:`~agent_contract.conformance.boundaries.table.BOUNDARIES`."""
    message: str
    """What was expected and what was observed."""
    verdict: Literal["broken", "crashed"] = "broken"
    """``crashed``: the run raised instead of ending (its own verdict, filed under the
    scenario's boundary only, never as a redaction failure too)."""


Check = Callable[[Observation, FakeModel, Probe], list[Problem]]
"""``check(observation, model, probe) -> problems``: an expectation a scenario adds."""


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
    "stream": "how a column whose client streams sends the scenario's replies: "
    "``pieces:<n>`` (pieces of n characters), ``interleaved`` (the tool calls' pieces by "
    "turns; see :mod:`agent_contract.conformance.wire_check`)",
}
"""The kinds of :attr:`Scenario.extras` and what a harness does with each."""


SUITE_CALLER: Final = "tester"
"""The identity every scenario's run acts for."""


@dataclass(frozen=True, kw_only=True)
class SubAgent:
    """The child agent a scenario's top agent delegates to (capability ``sub_agents``;
    see :mod:`agent_contract.delegation`)."""

    script: tuple[Reply, ...]
    """The child's FakeModel script, one for every delegation (it continues where it
    stopped)."""
    tools: Callable[[Probe], list[ToolSpec]]
    """Builds the child's tools around the run's probe."""
    allowlist: tuple[str, ...] | None = None
    """The names of those it may run (None: all of them)."""
    agent: str = "helper"
    """The child agent's name."""

    def plan(self, probe: Probe) -> SubAgentPlan:
        """The run's sub-agent hook, its child model noted on ``probe``
        (``probe.child_model``)."""
        model = FakeModel(self.script)
        probe.child_model = model
        return SubAgentPlan(
            agent=self.agent, model=model, tools=tuple(self.tools(probe)), allowlist=self.allowlist
        )


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scripted situation and its expected outcome on every harness."""

    name: str
    """Stable id, used in test ids and reports."""
    boundary: str
    """The main boundary it exercises (an id of
    :data:`~agent_contract.conformance.boundaries.table.BOUNDARIES`)."""
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
    skip it. A :class:`~agent_contract.conformance.suite.ContractSuite` declares each capability as a
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
    named_secrets: Mapping[str, str] = field(default_factory=dict)
    """The run's named secrets, ``name -> value`` (``RunInput.secrets`` as a mapping,
    beside the planted secret and :attr:`secrets` under names of their own; empty:
    ``RunInput.secrets`` is the tuple of values)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """Application values handed to the run (``RunInput.context``; empty: none)."""
    crash_at: str | None = None
    """A crash point (:data:`~agent_contract.faults.CRASH_POINTS`): the harness crashes
    there once while resuming and resumes in a fresh instance (capability
    ``crash_restart``; see :attr:`~agent_contract.harnesses.RunInput.crash`)."""
    tamper: str | None = None
    """A tampering (:data:`~agent_contract.tampering.TAMPERINGS`): the paused run's stored
    row is tampered with and the store reopened before the first decisions are carried
    in (capability ``durable_store``; see
    :attr:`~agent_contract.harnesses.RunInput.tamper`), in a scratch store of the one
    ``$AGENT_CONTRACT_STORE`` names (``check --store``;
    :func:`~agent_contract.tampering.scenario_store`)."""

    sub_agent: SubAgent | None = None
    """The child agent the run's delegating tool runs (capability ``sub_agents``; see
    :attr:`~agent_contract.harnesses.RunInput.sub_agent`)."""

    def options(self, probe: Probe | None = None) -> RunInput:
        """The harness input for this scenario, with the planted secret (a decider needs
        the run's probe; a crash or tamper plan is noted on it)."""
        decider = ScriptedDecider(self.decisions, probe) if self.decisions and probe else None
        crash = CrashPlan(self.crash_at) if self.crash_at else None
        tamper = TamperPlan(self.tamper, store=scenario_store()) if self.tamper else None
        if probe is not None:
            probe.crash = crash
            probe.tamper = tamper
        return RunInput(
            user=self.user,
            budget=self.budget,
            allowlist=self.allowlist,
            history=self.history,
            secrets=self._run_secrets(),
            caller=SUITE_CALLER,
            context=dict(self.context) or None,
            crash=crash,
            tamper=tamper,
            sub_agent=self.sub_agent.plan(probe) if self.sub_agent and probe else None,
            decider=decider,
            commentary=self.commentary,
            answer_format=self.answer_format,
            extras=dict(self.extras),
        )

    def _run_secrets(self) -> tuple[str, ...] | dict[str, str]:
        """The ``RunInput.secrets`` of this scenario's run: the planted secret and
        :attr:`secrets`, as a tuple, or (with :attr:`named_secrets`) named ``redact_N``
        beside the named ones."""
        values = (PLANTED_SECRET, *self.secrets)
        if not self.named_secrets:
            return values
        return {**{f"redact_{i}": v for i, v in enumerate(values)}, **self.named_secrets}


def call_then_answer(
    *,
    name: str,
    boundary: str,
    description: str,
    call: Completion,
    answer: str,
    result: tuple[str, str | None],
    stop_reason: str = "answered",
    **fields: Any,
) -> Scenario:
    """The most common scenario: the model makes one tool call (``call``, a
    :func:`~agent_contract.testing.tool_call`), its tool message is expected with
    ``result`` (``(status, error_kind)``), then the model answers ``answer`` and the run
    stops with ``stop_reason``. The trajectory is the call's tool; ``fields`` are the
    other fields of :class:`Scenario` (``tools`` at least).

    Raises:
        TypeError: ``fields`` names a field this builder sets (``script``,
            ``trajectory``, ``results``) or one :class:`Scenario` does not have.
    """
    return Scenario(
        name=name,
        boundary=boundary,
        description=description,
        script=(call, answer),
        stop_reason=stop_reason,
        trajectory=tuple(c.name for c in call.tool_calls),
        results=(result,),
        **fields,
    )


def reply_never_runs(
    *,
    name: str,
    boundary: str,
    description: str,
    reply: Completion,
    stop_reason: str,
    **fields: Any,
) -> Scenario:
    """A scenario whose only reply must never run (a reply the model did not finish, or
    whose streamed calls arrived broken): the run stops with ``stop_reason`` after one
    model call, no tool of :func:`~agent_contract.conformance.fixtures.basic_tools` runs,
    each call of ``reply`` is answered ``invalid_call``; the second scripted answer is
    never asked for. ``fields`` are the other fields of :class:`Scenario`.

    Raises:
        TypeError: ``fields`` names a field this builder sets or one :class:`Scenario`
            does not have.
    """
    return Scenario(
        name=name,
        boundary=boundary,
        description=description,
        script=(reply, "this answer must never be produced"),
        tools=basic_tools,
        stop_reason=stop_reason,
        trajectory=tuple(c.name for c in reply.tool_calls),
        results=tuple(("error", "invalid_call") for _ in reply.tool_calls),
        must_not_run=("echo", "forecast"),
        model_calls=1,
        **fields,
    )


RunCheck = Callable[[Scenario, Observation, FakeModel, Probe], list[Problem]]
"""``check(scenario, observation, model, probe) -> problems``: an expectation a boundary
makes in every scenario's run, whatever the scenario's own boundary (the call-ID
binding's one message per issued id, the trace's completeness)."""


@dataclass(frozen=True, kw_only=True)
class BoundaryDefinition:
    """One boundary as its module of :mod:`agent_contract.conformance.boundaries`
    defines it: its row, its scenarios and the checks it makes in every run."""

    boundary: Boundary
    """Its row: id, label, rule and advice."""
    scenarios: tuple[Scenario, ...]
    """Its scenarios (each with ``boundary`` set to :attr:`Boundary.id`), in the order
    :data:`~agent_contract.conformance.scenarios.SCENARIOS` runs them."""
    every_run: tuple[RunCheck, ...] = ()
    """Checks :func:`~agent_contract.conformance.evaluate.evaluate` makes in every
    scenario's run, after the scenario's own expectations."""
    held_by_every_run: bool = False
    """True when :attr:`every_run` alone can show the boundary holds: ``check`` then
    counts every scenario's run as its evidence, so a harness whose runs show no problem
    holds it even where no scenario is its own (e.g. ``check --agent`` on an agent that
    offers no tools)."""
