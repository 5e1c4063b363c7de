"""The contract suite as a base class for your own agent's tests (pytest).

Subclass :class:`ContractSuite` in a test module, name the subclass ``Test...`` and
supply the harness hook; pytest then runs every scenario of
:mod:`agent_contract.conformance.scenarios` on your harness, one standard test per
boundary::

    from agent_contract.conformance.suite import ContractSuite
    from agent_contract.harnesses import Harness, offline_harness

    class TestMyLoop(ContractSuite):
        def harness(self) -> Harness:
            return offline_harness

For LangChain's ``create_agent`` use
``agent_contract_langchain.testing.CreateAgentContractSuite``, whose hook receives the
chat model, tools and middleware and returns your compiled agent.

The rules, in the manner of ``langchain-tests``:

- **Capability flags** (class attributes such as ``has_write_tools`` and
  ``supports_timeouts``) say what your agent can do. A scenario whose
  ``Scenario.requires`` names a capability your suite turned off is skipped, with the
  flag named in the skip reason. Flags are matched to capabilities by name
  (``has_<capability>`` or ``supports_<capability>``), never scenarios by name.
- **Opting out** of a standard test is only possible by overriding it with
  ``@pytest.mark.xfail(reason="...", strict=True)``. :meth:`ContractSuite.test_no_silent_opt_outs`
  fails for any other override, and for a standard test that was removed.
- Each standard test's docstring ends with what to check when it fails.

This module imports pytest; ``import agent_contract`` and ``import
agent_contract.conformance`` do not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

import pytest

from ..harnesses import Harness, capabilities_of, offline_harness
from .base import Scenario
from .boundaries.table import BOUNDARIES, boundary, boundary_label
from .fixtures import hide_planted
from .reference import with_differences
from .runner import ScenarioOutcome, run_scenario
from .scenarios import SCENARIOS

if TYPE_CHECKING:
    from .agent import AgentCheck

__all__ = [
    "NAMED_BOUNDARIES",
    "STANDARD_TESTS",
    "AgentContractSuite",
    "ContractSuite",
    "capability_flag",
    "is_declared_opt_out",
    "scenarios_for_test",
]

NAMED_BOUNDARIES: Final[tuple[str, ...]] = tuple(b.id for b in BOUNDARIES)
"""Boundaries with a standard test of their own (``test_<boundary>``)."""

STANDARD_TESTS: Final[dict[str, str | None]] = {
    **{f"test_{boundary}": boundary for boundary in NAMED_BOUNDARIES},
    "test_other_boundaries": None,
}
"""Standard test name -> the boundary whose scenarios it runs. ``None`` marks the
catch-all that runs scenarios of any boundary without a test of its own (so a
boundary added in a later release is never left unchecked)."""


def scenarios_for_test(
    test_name: str, scenarios: tuple[Scenario, ...] = SCENARIOS
) -> tuple[Scenario, ...]:
    """The scenarios a standard test runs, in definition order.

    Args:
        test_name: a key of :data:`STANDARD_TESTS`.
        scenarios: the pool (default: every scenario).

    Raises:
        KeyError: ``test_name`` is not a standard test.
    """
    boundary = STANDARD_TESTS[test_name]
    if boundary is not None:
        return tuple(s for s in scenarios if s.boundary == boundary)
    named = {b for b in STANDARD_TESTS.values() if b is not None}
    return tuple(s for s in scenarios if s.boundary not in named)


def capability_flag(suite: type[Any], capability: str) -> tuple[str, bool] | None:
    """The flag that declares ``capability`` on ``suite``: ``(attribute name, value)``.

    Looks for ``has_<capability>`` then ``supports_<capability>``; returns None when
    neither is defined.
    """
    for prefix in ("has_", "supports_"):
        name = f"{prefix}{capability}"
        if hasattr(suite, name):
            return name, bool(getattr(suite, name))
    return None


def is_declared_opt_out(function: Any) -> bool:
    """True when ``function`` carries ``pytest.mark.xfail`` with a non-empty ``reason``
    and ``strict=True`` (the only accepted way to opt out of a standard test)."""
    for mark in getattr(function, "pytestmark", ()):
        if getattr(mark, "name", None) != "xfail":
            continue
        reason = mark.kwargs.get("reason")
        if isinstance(reason, str) and reason.strip() and mark.kwargs.get("strict") is True:
            return True
    return False


_REFERENCE: dict[str, ScenarioOutcome] = {}


def _reference(scenario: Scenario) -> ScenarioOutcome | None:
    """The offline loop's outcome of ``scenario`` (once per process); None if it cannot."""
    if not set(scenario.requires) <= capabilities_of(offline_harness):
        return None
    if scenario.name not in _REFERENCE:
        _REFERENCE[scenario.name] = run_scenario(scenario, offline_harness, "offline")
    return _REFERENCE[scenario.name]


def _describe(outcome: ScenarioOutcome) -> str:
    lines = [
        f"scenario {outcome.scenario.name!r} ({outcome.scenario.description}) "
        f"broke on harness {outcome.harness!r}:"
    ]
    lines += [f"  [{p.boundary}] {p.message}" for p in outcome.problems]
    for broken in dict.fromkeys(p.boundary for p in outcome.problems):
        try:
            advice = boundary(broken).keep_it
        except KeyError:
            continue
        lines.append(f"  to keep {boundary_label(broken)}: {advice}")
    if outcome.observation.stop_reason.startswith("crashed:"):
        raised = hide_planted(outcome.observation.emitted)
        lines.append(f"  the run raised: {raised[:500]}")
    return "\n".join(lines)


class ContractSuite:
    """Base class of a user's contract test class. Not collected itself (its name does
    not start with ``Test``); subclass it as ``class TestSomething(ContractSuite)``.

    Hooks:
        :meth:`harness`: required; returns the harness to check.

    Capability flags (class attributes; turn one off only when your agent truly lacks
    the capability: the scenarios that need it are then skipped, visibly):
        has_write_tools: the agent has tools that change the world (write approval
            scenarios run on it).
        supports_timeouts: the harness enforces per-tool wall-clock limits.
        supports_middleware, supports_graph_commands, supports_pauses,
            supports_threads: framework pieces the harness can express (off by default;
            a framework's suite class turns on what its harness applies).
    """

    harness_name: ClassVar[str] = "user"
    """The name reports use for this harness."""
    has_write_tools: ClassVar[bool] = True
    """Capability ``write_tools``: run the write-approval scenarios."""
    supports_timeouts: ClassVar[bool] = True
    """Capability ``timeouts``: run the per-tool timeout scenarios."""
    supports_middleware: ClassVar[bool] = False
    """Capability ``middleware``: the harness places a scenario's framework middleware
    (``Scenario.extras["middleware"]``) inside the contract."""
    supports_graph_commands: ClassVar[bool] = False
    """Capability ``graph_commands``: tools may return a framework command."""
    supports_pauses: ClassVar[bool] = False
    """Capability ``pauses``: a tool may pause the run on a framework interrupt."""
    supports_threads: ClassVar[bool] = False
    """Capability ``threads``: runs continue a checkpointed thread."""
    supports_crash_restart: ClassVar[bool] = False
    """Capability ``crash_restart``: the harness honours ``RunInput.crash`` (see
    :func:`agent_contract.harnesses.settle_approvals`); off: crash scenarios skip."""
    supports_durable_store: ClassVar[bool] = False
    """Capability ``durable_store``: the harness honours ``RunInput.tamper`` (a paused
    run's stored row tampered with, the store reopened; see
    :func:`agent_contract.harnesses.settle_approvals`); off: checkpoint-integrity
    scenarios skip."""
    supports_sub_agents: ClassVar[bool] = False
    """Capability ``sub_agents``: the harness honours ``RunInput.sub_agent`` (its
    delegating tool runs the plan's child agent under the run's child contract; see
    :mod:`agent_contract.delegation`); off: the sub-agent scenarios skip."""
    supports_streamed_replies: ClassVar[bool] = False
    """Capability ``streamed_replies``: the model's replies reach the harness as a stream
    of pieces split as the scenario's ``stream`` extras say (``check --wire``'s columns;
    see :mod:`agent_contract.conformance.wire_check`); off: the streamed-arguments
    scenarios skip."""

    # -- hooks ------------------------------------------------------------------------

    def harness(self) -> Harness:
        """The harness under test: ``(model, tools, options) -> RunResult | Observation``.

        Raises:
            NotImplementedError: always, in the base class; override it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define harness(self) -> Harness")

    # -- machinery --------------------------------------------------------------------

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize each standard test with its scenarios (pytest calls this)."""
        name = metafunc.function.__name__
        if name not in STANDARD_TESTS or "scenario" not in metafunc.fixturenames:
            return
        chosen = scenarios_for_test(name)
        if chosen:
            metafunc.parametrize("scenario", chosen, ids=[s.name for s in chosen])
            return
        what = STANDARD_TESTS[name] or "any boundary without a standard test of its own"
        skip = pytest.mark.skip(reason=f"this agent-contract release has no scenario for {what}")
        metafunc.parametrize("scenario", [pytest.param(None, id="none", marks=skip)])

    def run_contract_scenario(self, scenario: Scenario) -> ScenarioOutcome:
        """Run one scenario on :meth:`harness` (skipped when a capability is off); its
        differences from the offline reference's run are problems too, as in ``check``."""
        for capability in scenario.requires:
            flag = capability_flag(type(self), capability)
            if flag is None:
                pytest.fail(
                    f"scenario {scenario.name!r} requires capability {capability!r}, which "
                    f"{type(self).__name__} does not declare (expected has_{capability} or "
                    f"supports_{capability}); upgrade agent-contract or declare the flag",
                    pytrace=False,
                )
            if not flag[1]:
                pytest.skip(f"{flag[0]} = False: scenario {scenario.name!r} needs {capability!r}")
        outcome = run_scenario(scenario, self.harness(), self.harness_name)
        reference = _reference(scenario)
        return with_differences(outcome, reference) if reference else outcome

    def check_scenario(self, scenario: Scenario) -> None:
        """Run ``scenario`` and fail with every broken expectation, tagged by boundary."""
        outcome = self.run_contract_scenario(scenario)
        if not outcome.holds:
            pytest.fail(_describe(outcome), pytrace=False)

    # -- standard tests, one per boundary ----------------------------------------------

    def test_response_shape(self, scenario: Scenario) -> None:
        """A reply is a final answer or tool calls: malformed JSON arguments, list
        arguments, a missing or duplicate call id, text plus calls, and an empty reply
        stop the run with ``invalid_response``; nothing runs.

        If this fails: the agent treats a malformed reply as an answer (``create_agent``
        ends whenever the last message has no valid tool calls). Is ContractMiddleware
        installed, and is it the first (outermost) middleware?
        """
        self.check_scenario(scenario)

    def test_finish_reasons(self, scenario: Scenario) -> None:
        """Only a finished reply counts: a reply cut by the output limit (``length``,
        ``max_tokens``), filtered or refused is never the answer and runs none of its
        calls (``truncated_response``, ``content_filtered``, ``refused``).

        If this fails: the harness dropped the provider's finish reason or refusal before
        the contract judged the reply (a model adapter that builds a ``Completion``
        without ``finish_reason``/``refusal``, or a framework message whose
        ``response_metadata`` lost it).
        """
        self.check_scenario(scenario)

    def test_allowlist(self, scenario: Scenario) -> None:
        """Unknown tools get ``unknown_tool``; registered tools outside the run's
        allowlist get ``not_allowed`` and never run; the model is offered exactly the
        allowlisted tools.

        If this fails: filtering tools in ``wrap_model_call`` alone is not an allowlist
        (a hidden tool still runs); pass ``allowlist=`` to the Contract and check that no
        other middleware re-adds tools to the request.
        """
        self.check_scenario(scenario)

    def test_argument_validation(self, scenario: Scenario) -> None:
        """Arguments with a missing field, a wrong type, an extra property or a failed
        constraint are refused with ``invalid_arguments`` before the handler runs.

        If this fails: a JSON-Schema dict ``args_schema`` is never validated by
        LangChain; the tool must be a ToolSpec registered in the Contract so the
        middleware validates it.
        """
        self.check_scenario(scenario)

    def test_argument_size(self, scenario: Scenario) -> None:
        """An argument exactly at ``Budget.max_argument_chars`` runs, whole, once; one
        over it (a large string nested in an object or list counts too) is refused with
        ``invalid_arguments`` naming the limit and the argument, never runs, and the trace
        keeps a cut, marked copy, never the oversized value.

        If this fails: the Contract the run is given has the limit raised or left out of
        its ``Budget`` (a config that builds the Contract apart from the run's budget), or
        a layer before the contract cuts or drops arguments.
        """
        self.check_scenario(scenario)

    def test_call_id_binding(self, scenario: Scenario) -> None:
        """Every call gets exactly one tool message carrying its id, in the order the
        model issued the calls, even when the first call is the slowest.

        If this fails: some middleware answers or reorders tool messages; check
        ``after_model`` hooks that inject ToolMessages (they land before ToolNode's).
        """
        self.check_scenario(scenario)

    def test_tool_errors(self, scenario: Scenario) -> None:
        """A raising tool yields a classified error message (``tool_error``, or the
        tool's own ``unauthorized``/``not_found``/``transient``); its exception text
        and any secret in it never reach the model.

        If this fails: an exception escaped the run (``create_agent`` re-raises tool
        exceptions) or the error text was passed through; tools must run through the
        contract's executor.
        """
        self.check_scenario(scenario)

    def test_model_step_budget(self, scenario: Scenario) -> None:
        """A model that keeps calling tools stops at ``max_model_steps`` with no answer.

        If this fails: the recursion limit is not a step budget; the Contract's
        ``Budget(max_model_steps=...)`` must reach the middleware.
        """
        self.check_scenario(scenario)

    def test_tool_call_budget(self, scenario: Scenario) -> None:
        """A batch that would cross ``max_tool_calls`` is refused whole before any of it
        runs; every refused call still gets its bound message.

        If this fails: a per-call limit lets the first calls of a batch run; the
        contract plans the whole batch in ``wrap_model_call``.
        """
        self.check_scenario(scenario)

    def test_repeated_calls(self, scenario: Scenario) -> None:
        """The same call (same canonical arguments, key order ignored) beyond
        ``max_identical_calls`` is refused and stops the run with ``repeated_call``.

        If this fails: check ``Budget(max_identical_calls=...)`` and that arguments
        are compared canonically.
        """
        self.check_scenario(scenario)

    def test_deadline(self, scenario: Scenario) -> None:
        """The run's ``deadline_seconds`` cuts a slow tool short (``timeout``, outcome
        unknown) and stops the run with ``deadline`` before the model is called again.

        If this fails: the deadline was switched off or not handed to the Contract
        (``Budget(deadline_seconds=...)``), or the harness called the model after it.
        """
        self.check_scenario(scenario)

    def test_timeouts(self, scenario: Scenario) -> None:
        """A tool past its ``timeout_seconds`` yields ``timeout`` with outcome unknown
        and ``side_effects_possible: true``; the run goes on.

        If this fails: the tool ran without the contract's executor (no per-tool
        wall-clock limit), or the harness waited for it. A harness that cannot enforce
        timeouts sets ``supports_timeouts = False``.
        """
        self.check_scenario(scenario)

    def test_result_size(self, scenario: Scenario) -> None:
        """A result longer than ``max_result_chars`` is cut with an explicit marker.

        If this fails: the tool's ToolSpec limit was not applied (the tool was not run
        through the contract's executor).
        """
        self.check_scenario(scenario)

    def test_serialization(self, scenario: Scenario) -> None:
        """Numbers, dicts and lists reach the model as JSON with non-ASCII kept; a value
        that is not JSON (a set) is a ``tool_error``, never its ``str()``.

        If this fails: another serializer (``str()``, ``ensure_ascii=True``) handled the
        result before the contract's.
        """
        self.check_scenario(scenario)

    def test_history(self, scenario: Scenario) -> None:
        """Earlier turns reach the model first, in order, before the new user message.

        If this fails: a middleware (summarization, trimming) rewrote the history, or
        the system prompt was counted as a turn.
        """
        self.check_scenario(scenario)

    def test_trace_redaction(self, scenario: Scenario) -> None:
        """A secret a tool returns is redacted before the model, the trace or the output
        sees it; every run leaves a complete trace.

        If this fails: the secret reached the model through a path that skipped the
        contract's redaction; give the secret to the Contract (``secrets=``).
        """
        self.check_scenario(scenario)

    def test_write_approval(self, scenario: Scenario) -> None:
        """Write tools never run without an approver's decision.

        If this fails: the write tool ran without approval; check the approval
        configuration of the Contract. An agent without write tools sets
        ``has_write_tools = False``.
        """
        self.check_scenario(scenario)

    def test_tool_context(self, scenario: Scenario) -> None:
        """A context-aware tool gets the run's caller, values and its own call's
        ``tool_call_id``; a write's approval acts for the caller; a tool that declared no
        context gets none; a secret among the values never reaches the trace or the
        model.

        If this fails: the harness starts runs without the caller or the values (pass
        ``caller=`` and ``context=`` to ``Contract.start``, or use ``RunInput.start``), or
        hands a tool a context of its own making.
        """
        self.check_scenario(scenario)

    def test_checkpoint_integrity(self, scenario: Scenario) -> None:
        """A paused run's store reopened after its row was forged, edited, rolled back or
        grafted from another run refuses it (``CheckpointError``) before anything runs,
        and the approval is not used up.

        If this fails: the harness's store read a row it did not seal or a row that is
        not the run's newest (a store or serializer that skips its check on load, or a
        resume from a copy kept outside the store). A harness with no durable store sets
        ``supports_durable_store = False``.
        """
        self.check_scenario(scenario)

    def test_sub_agents(self, scenario: Scenario) -> None:
        """A child agent the run delegates to spends the run's budget (a child that
        spends it ends the whole run, the parent's model not called again), keeps its own
        allowlist (a call outside it never runs, even where the parent may call that
        tool), and runs in a fresh scope per delegation (its call ids bound per scope).

        If this fails: the harness runs the child outside the run's contract (a
        ``Contract`` of its own, a fresh run, or the parent's contract): build the
        child's with ``contract.child(name, tools=..., allowlist=...)`` and start it
        as a child scope of the delegating call (docs/MULTI_AGENT.md). A harness without
        the sub-agent hook (``RunInput.sub_agent``) leaves ``supports_sub_agents = False``.
        """
        self.check_scenario(scenario)

    def test_streamed_arguments(self, scenario: Scenario) -> None:
        """A tool call streamed in pieces runs only whole, with exactly the text its
        pieces join to: cut mid-JSON by the output limit it never runs, pieces joining to
        malformed JSON stop the run ``invalid_response``, one-character pieces and two
        interleaved calls run once each with their exact arguments.

        If this fails: the client or an adapter repairs or closes argument text, joins
        pieces without the call's index, or runs a call from a cut reply. A harness whose
        model replies are not streamed in pieces leaves ``supports_streamed_replies =
        False``.
        """
        self.check_scenario(scenario)

    def test_other_boundaries(self, scenario: Scenario) -> None:
        """Scenarios of boundaries that have no standard test of their own yet.

        If this fails: read the boundary in the failure message and its rule in
        ``agent_contract.conformance.BOUNDARIES``.
        """
        self.check_scenario(scenario)

    # -- meta-tests -------------------------------------------------------------------

    def test_no_silent_opt_outs(self) -> None:
        """A standard test may only be overridden with
        ``@pytest.mark.xfail(reason=..., strict=True)``, and none may be removed.

        If this fails: mark your override with a strict xfail and a reason (it then
        reports XFAIL, and fails loudly once your agent starts to pass), or delete the
        override.
        """
        cls = type(self)
        removed = sorted(n for n in STANDARD_TESTS if not callable(getattr(cls, n, None)))
        silent = sorted(
            name
            for name in STANDARD_TESTS
            if name not in removed
            and getattr(cls, name) is not getattr(ContractSuite, name)
            and not is_declared_opt_out(getattr(cls, name))
        )
        problems = []
        if removed:
            problems.append(f"standard tests removed: {', '.join(removed)}")
        if silent:
            problems.append(
                f"standard tests overridden without @pytest.mark.xfail(reason=..., "
                f"strict=True): {', '.join(silent)}"
            )
        if problems:
            pytest.fail(f"{cls.__name__}: " + "; ".join(problems), pytrace=False)

    def test_capability_flags_are_declared(self) -> None:
        """Every capability a scenario requires has a boolean flag on this suite.

        If this fails: a flag was set to a non-boolean, or this agent-contract release
        has a scenario needing a capability the suite does not know (report it).
        """
        problems = list(_flag_problems(type(self)))
        if problems:
            pytest.fail("; ".join(problems), pytrace=False)


def _flag_problems(cls: type[Any]) -> Iterator[str]:
    for capability in sorted({c for s in SCENARIOS for c in s.requires}):
        flag = capability_flag(cls, capability)
        if flag is None:
            yield f"no flag for capability {capability!r} (has_{capability}/supports_{capability})"
        elif not isinstance(getattr(cls, flag[0]), bool):
            yield f"{flag[0]} must be True or False, not {getattr(cls, flag[0])!r}"


class AgentContractSuite:
    """Contract probes of your own agent, as pytest tests (``check --agent``'s pytest
    twin). The probes come from the agent-probe builder a binding registers for
    :attr:`framework` (:func:`agent_contract.conformance.agent.agent_builder`); a binding
    subclasses this with its framework and modes
    (``agent_contract_langchain.testing.AgentContractSuite``).

    Three tests: :meth:`test_agent_keeps_the_contract` (every column that runs your agent
    under a contract, yours or one the probes add, holds every probed boundary),
    :meth:`test_agent_as_built_keeps_the_contract` (your agent as you build it has a
    contract and keeps it) and :meth:`test_every_effect_is_declared`. Each covers every
    agent the factory builds (a deepagents agent and its sub-agents, a supervisor's
    workers), and a tool that cannot run in :attr:`mode` (an async-only tool under
    ``invoke``) fails the first: not checked is never a pass. Each fails with the
    report. Opt out of one only with ``@pytest.mark.xfail(reason=..., strict=True)``.
    """

    framework: ClassVar[str | None] = None
    """The name of the binding's agent-probe builder (entry-point group
    ``agent_contract.agents``); None: the first registered."""
    agent_factory: ClassVar[Any] = None
    """``"module:factory"`` or the factory itself: ``factory(chat_model) -> graph``."""
    effects: ClassVar[Mapping[str, str]] = {}
    """Effects of your tools (``"read"``/``"write"``) when your stack has no
    contract yet (with one, its tool specs declare them)."""
    mode: ClassVar[str] = "invoke"
    """How the agent is driven (one of the binding's modes)."""

    _checks: ClassVar[dict[type, AgentCheck]] = {}

    def agent_check(self) -> AgentCheck:
        """The probes' result for this class (run once per class).

        Raises:
            NotImplementedError: :attr:`agent_factory` is not set.
            DependencyMissingError, ConfigurationError: no builder for
                :attr:`framework` is registered (see ``agent_builder``).
        """
        cls = type(self)
        if cls.agent_factory is None:
            raise NotImplementedError(f"{cls.__name__} must set agent_factory")
        if cls not in AgentContractSuite._checks:
            from .agent import agent_builder, run_agent_check

            _, agent_probes = agent_builder(cls.framework)
            probes = agent_probes(cls.agent_factory, mode=cls.mode, effects=dict(cls.effects))
            AgentContractSuite._checks[cls] = run_agent_check(probes)
        return AgentContractSuite._checks[cls]

    def test_agent_keeps_the_contract(self) -> None:
        """Under a contract (yours, or one added by the probes), every probe holds.
        When it fails: the report's per-tool table names the tool and the probe."""
        from .agent import render_agent_text

        check = self.agent_check()
        broken = [
            b
            for agent in check.every_agent()
            for name in agent.probes.under_contract
            for b in agent.broken_on(name)
        ]
        unchecked = [t for agent in check.every_agent() for t in agent.probes.unchecked]
        if broken or unchecked:
            pytest.fail(render_agent_text(check), pytrace=False)

    def test_agent_as_built_keeps_the_contract(self) -> None:
        """Your agent as you build it runs under a contract (a ContractMiddleware) and
        keeps it. When it fails: add ``ContractMiddleware(contract).around(*yours)``
        (docs/MIGRATION.md)."""
        from .agent import render_agent_text

        check = self.agent_check()
        as_built = [
            n
            for agent in check.every_agent()
            for n in agent.probes.harnesses
            if n not in agent.probes.under_contract
        ]
        if as_built:
            pytest.fail(
                "your agent has no ContractMiddleware; as built:\n" + render_agent_text(check),
                pytrace=False,
            )

    def test_every_effect_is_declared(self) -> None:
        """Every tool's effect is declared (``from_langchain_tool(tool, effect=...)``)."""
        undeclared = [t for a in self.agent_check().every_agent() for t in a.probes.undeclared]
        if undeclared:
            pytest.fail(
                "effect undeclared (treated as write): " + ", ".join(undeclared), pytrace=False
            )
