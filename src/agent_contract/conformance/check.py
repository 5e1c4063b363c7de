"""``agent-contract check``'s measurement: the contract suite as a checklist.

:func:`run_check` runs every scenario on each harness, in-process, and folds the
outcomes into a :class:`CheckReport`: one :class:`Cell` per (boundary, harness), each
``holds``, ``broken`` or ``not_checked`` with its evidence. The renderers are in
:mod:`agent_contract.conformance.report`.

No pytest import; a harness's framework loads on demand (:mod:`agent_contract.registry`).
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from ..canonical import field_dict
from ..errors import ConfigurationError, DependencyMissingError
from ..exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_OK
from ..harnesses import COUNTED_CAPABILITIES, Harness, HarnessPlugin, Observation, capabilities_of
from ..registry import DISTRIBUTION, harness_names, harness_plugin, load_harness
from ..trace import TraceSink
from .base import Problem, Scenario
from .boundaries.table import BOUNDARIES, CHECKED_IN_EVERY_RUN, boundary_rows
from .fixtures import hide_planted
from .reference import with_differences
from .runner import ScenarioOutcome, run_scenario
from .scenarios import SCENARIOS

__all__ = [
    "NO_FORM",
    "REFERENCE",
    "Cell",
    "CheckReport",
    "Evidence",
    "Finished",
    "HarnessRun",
    "Progress",
    "Role",
    "Runner",
    "Status",
    "run_check",
]

Status = Literal["holds", "broken", "crashed", "not_checked"]
"""A cell's verdict: ``crashed`` when every failed expectation of the cell is a run that
raised instead of ending (its own verdict, never counted as another boundary's)."""

REFERENCE: Final = "offline"
"""The harness every other one is compared with (trajectory, stop, answer, bound tool
messages, trace event types), scenario by scenario."""
Role = Literal["checked", "control"]
"""``checked``: a broken cell decides the exit code; ``control``: shown for comparison."""


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One observation behind a cell."""

    scenario: str
    """The scenario's name."""
    observed: str
    """For a broken cell, the failed expectation; for a holding cell, what the run showed
    (stop reason and tool results). The planted secret is replaced by ``<planted secret>``."""

    def to_dict(self) -> dict[str, str]:
        """``{"scenario", "observed"}``."""
        return field_dict(self)


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One boundary on one harness."""

    boundary: str
    harness: str
    status: Status
    """``holds``: every scenario of the boundary the harness can express ran (one needing
    a framework's piece it does not declare, one it declares not expressible and one
    with no form on a wire column's wire are skipped) and no expectation of the boundary
    failed in any scenario; ``broken``: at least one did (``crashed``: each of them was
    a run that raised); ``not_checked``: a scenario of the boundary did not run because
    the harness does not declare a capability of the contract it needs
    (:data:`~agent_contract.harnesses.COUNTED_CAPABILITIES`), or none of its scenarios
    ran."""
    evidence: tuple[Evidence, ...]
    """Broken or crashed: every failed expectation of the boundary, in scenario order.
    Holds: one entry per scenario of the boundary (with :attr:`no_form`, those that
    could not be sent on the wire follow, each ``not run: no form on this wire: ...``).
    Not checked: one entry per scenario that did not run, saying why."""
    allowed: bool = False
    """For a ``not_checked`` cell: the team opted out of it explicitly
    (``--allow-unchecked``), or (with :attr:`no_form`) every scenario it lacks has no
    form on the column's wire; so it does not fail the run."""
    undeclared: bool = False
    """For a ``not_checked`` (allowed) cell: every scenario of the boundary needs a
    capability the harness does not declare and ``check`` does not count (a framework's
    piece, such as ``sub_agents``), so the row does not apply there and does not fail
    the run (its evidence names the capability per scenario)."""
    no_form: bool = False
    """On a wire column (``check --wire``), some scenarios of the boundary have no form
    on the column's wire (its evidence says which and why) and nothing else is missing:
    ``holds`` when every other scenario ran and held, ``not_checked`` (allowed) when
    none had a form."""

    def to_dict(self) -> dict[str, Any]:
        """The cell as in ``docs/CHECK_FORMAT.md``."""
        return {
            "boundary": self.boundary,
            "harness": self.harness,
            "status": self.status,
            "evidence": [e.to_dict() for e in self.evidence],
            "allowed": self.allowed,
            **({"no_form": True} if self.no_form else {}),
            **({"undeclared": True} if self.undeclared else {}),
        }


@dataclass(frozen=True, kw_only=True)
class HarnessRun:
    """What ran on one harness."""

    name: str
    role: Role
    """``checked`` (a broken cell makes ``check`` exit nonzero) or ``control``."""
    outcomes: tuple[ScenarioOutcome, ...]
    """One per scenario that ran, in scenario order."""
    skipped: tuple[str, ...] = ()
    """Scenarios not run: they need a capability the harness does not declare, or the
    harness declares them not expressible (see :attr:`declared`)."""
    declared: tuple[tuple[str, str], ...] = ()
    """``(scenario, reason)`` for each scenario the harness declares it cannot express
    (its ``not_expressible`` attribute) and that broke there, as declared: an explicit,
    visible opt-out (one that holds is reported as a stale declaration instead)."""
    requirements: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """``(scenario, missing capabilities)`` for each scenario skipped for a capability."""
    description: str = ""
    """The registered harness's one-line description ("" for ``module:factory``)."""
    no_form: tuple[tuple[str, str], ...] = ()
    """``(scenario, reason)`` for each scenario not run because a scripted reply has no
    form on the wire column's wire (the harness's ``no_form(scenario)``)."""
    unavailable: str | None = None
    """Why nothing ran on this harness (a wire column whose client is not installed,
    naming the install; the harness's ``unavailable``), or None."""
    wire: Mapping[str, Any] | None = None
    """For a wire column: ``{"harness", "wire", "client", "streamed",
    "distribution"}`` (the harness's ``wire_info``); None otherwise."""


@dataclass(frozen=True, kw_only=True)
class CheckReport:
    """The result of :func:`run_check`."""

    harnesses: tuple[HarnessRun, ...]
    rows: tuple[str, ...]
    """Boundary keys, in row order."""
    cells: tuple[Cell, ...]
    """Row-major: for each boundary, one cell per harness in harness order."""
    versions: dict[str, str | None] = field(default_factory=dict)
    """``python``, ``agent-contract`` and the distributions registered harnesses name
    (for the LangChain binding: ``langchain``, ``langchain-core``, ``langgraph``); None
    for a package that is not installed."""
    controls_not_run: tuple[str, ...] = ()
    """Registered control harnesses not run (``check`` runs them with ``--control``)."""

    def cell(self, boundary: str, harness: str) -> Cell:
        """The cell of ``boundary`` on ``harness``.

        Raises:
            KeyError: no such cell.
        """
        for cell in self.cells:
            if cell.boundary == boundary and cell.harness == harness:
                return cell
        raise KeyError((boundary, harness))

    @property
    def broken(self) -> tuple[Cell, ...]:
        """Broken or crashed cells on ``checked`` harnesses (these decide the exit code)."""
        checked = {h.name for h in self.harnesses if h.role == "checked"}
        return tuple(
            c for c in self.cells if c.status in ("broken", "crashed") and c.harness in checked
        )

    @property
    def not_checked(self) -> tuple[Cell, ...]:
        """Not-checked cells on ``checked`` harnesses (allowed ones included)."""
        checked = {h.name for h in self.harnesses if h.role == "checked"}
        return tuple(c for c in self.cells if c.status == "not_checked" and c.harness in checked)

    @property
    def unchecked(self) -> tuple[Cell, ...]:
        """Not-checked cells on ``checked`` harnesses the team did not opt out of: like a
        broken cell, each fails the run (the pytest suite's strict-xfail rule)."""
        return tuple(c for c in self.not_checked if not c.allowed)

    @property
    def exit_code(self) -> int:
        """0 when every boundary holds on every checked harness (a not-checked cell only
        with an explicit opt-out), else 5."""
        return EXIT_CONTRACT_VIOLATION if self.broken or self.unchecked else EXIT_OK

    @property
    def scenario_count(self) -> int:
        """How many distinct scenarios ran or were skipped."""
        names = {o.scenario.name for h in self.harnesses for o in h.outcomes}
        names |= {n for h in self.harnesses for n in h.skipped}
        return len(names)


NO_FORM: Final = "not run: no form on this wire: "
"""How the evidence of a scenario with no form on a wire column's wire begins."""

Runner = Callable[[Scenario, str], ScenarioOutcome]
"""``runner(scenario, harness_name) -> ScenarioOutcome``: how :func:`run_check` runs one
scenario (tests pass a caching one)."""
Progress = Callable[[int, int, str, str], None]
"""``progress(done, total, harness, scenario)``, called before each run."""
Finished = Callable[[int, int, str, Scenario, "ScenarioOutcome | str"], None]
"""``finished(done, total, harness, scenario, outcome)``, called after each scenario
(``done`` counts it); for a scenario that did not run, ``outcome`` is why, as text:
``needs <capabilities>`` (the harness does not declare them), ``no form on this wire``,
``declared not expressible: <reason>`` (it ran and broke, as declared), or
``unavailable: <why>``."""


def _registered(name: str) -> HarnessPlugin | None:
    """The plugin of a registered harness name (``None`` for ``module:factory``)."""
    return harness_plugin(name) if name in harness_names() else None


def _versions() -> dict[str, str | None]:
    """Python, agent-contract, and every distribution a registered harness names (None
    for one that is not installed), in that order."""
    names = [DISTRIBUTION]
    for name in harness_names():
        try:
            names += harness_plugin(name).versions
        except (DependencyMissingError, ConfigurationError):
            continue
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in dict.fromkeys(names):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _observed(obs: Observation) -> str:
    parts = [f"stop {obs.stop_reason}"]
    if obs.tool_messages:
        results = ", ".join(
            f"{m['name']}: {m['error_kind'] or m['status']}" for m in obs.tool_messages
        )
        parts.append(f"tool results [{results}]")
    return hide_planted("; ".join(parts))


def _cell(
    boundary: str, run: HarnessRun, allow_unchecked: Collection[str], boundary_of: Mapping[str, str]
) -> Cell:
    failed = [
        (p, Evidence(scenario=o.scenario.name, observed=hide_planted(p.message)))
        for o in run.outcomes
        for p in o.problems
        if p.boundary == boundary
    ]
    if failed:
        crashed = all(p.verdict == "crashed" for p, _ in failed)
        return Cell(
            boundary=boundary,
            harness=run.name,
            status="crashed" if crashed else "broken",
            evidence=tuple(e for _, e in failed),
        )
    own = [o for o in run.outcomes if o.scenario.boundary == boundary]
    if not own and boundary in CHECKED_IN_EVERY_RUN:  # e.g. an agent offering no tools
        own = list(run.outcomes)
    missing = [
        Evidence(scenario=name, observed=f"not run: needs {', '.join(needs)}")
        for name, needs in run.requirements
        if boundary_of.get(name) == boundary and set(needs) & set(COUNTED_CAPABILITIES)
    ]
    if run.unavailable is not None:
        return Cell(
            boundary=boundary,
            harness=run.name,
            status="not_checked",
            evidence=(Evidence(scenario="-", observed=f"not run: {run.unavailable}"),),
            allowed=boundary in allow_unchecked,
        )
    unformed = [
        Evidence(scenario=name, observed=f"{NO_FORM}{reason}")
        for name, reason in run.no_form
        if boundary_of.get(name) == boundary
    ]
    undeclared = [
        Evidence(scenario=name, observed=f"not run: needs {', '.join(needs)} (not declared)")
        for name, needs in run.requirements
        if boundary_of.get(name) == boundary and not set(needs) & set(COUNTED_CAPABILITIES)
    ]
    if not own or missing:
        no_form = bool(unformed) and not missing
        not_applicable = not own and not missing and not unformed and bool(undeclared)
        return Cell(
            boundary=boundary,
            harness=run.name,
            status="not_checked",
            evidence=tuple(missing + unformed)
            or tuple(undeclared)
            or (Evidence(scenario="-", observed="no scenario ran here"),),
            allowed=boundary in allow_unchecked or no_form or not_applicable,
            no_form=no_form,
            undeclared=not_applicable,
        )
    # Every scenario that ran held; on a wire column, those with no form on its wire are
    # listed after them (the row holds there, marked).
    held = tuple(Evidence(scenario=o.scenario.name, observed=_observed(o.observation)) for o in own)
    return Cell(
        boundary=boundary,
        harness=run.name,
        status="holds",
        evidence=held + tuple(unformed),
        no_form=bool(unformed),
    )


def _compared(outcome: ScenarioOutcome, reference: ScenarioOutcome | None) -> ScenarioOutcome:
    """``outcome`` with its differences from the reference's outcome added as problems."""
    if reference is None or reference.harness == outcome.harness:
        return outcome
    return with_differences(outcome, reference)


def run_check(
    checked: Sequence[str],
    *,
    control: Sequence[str] = (),
    scenarios: Sequence[Scenario] = SCENARIOS,
    runner: Runner | None = None,
    progress: Progress | None = None,
    finished: Finished | None = None,
    allow_unchecked: Collection[str] = (),
    reference: str | None = REFERENCE,
    harnesses: Mapping[str, Harness] | None = None,
    trace_sink: TraceSink | None = None,
) -> CheckReport:
    """Run every scenario on every harness and build the checklist.

    Args:
        checked: harness names (see :func:`~agent_contract.registry.load_harness`) whose
            broken or not-checked boundaries make ``check`` fail.
        control: harness names shown for comparison only (a control harness).
        scenarios: the scenarios to run (default: all).
        runner: ``runner(scenario, harness_name) -> ScenarioOutcome``; default loads each
            harness once and calls :func:`~agent_contract.conformance.run_scenario`. A harness may
            declare ``capabilities`` (an iterable of names; default
            :data:`~agent_contract.harnesses.CORE_CAPABILITIES`); scenarios requiring others
            are skipped, and a boundary whose scenario was skipped for a capability of
            the contract (:data:`~agent_contract.harnesses.COUNTED_CAPABILITIES`) is
            ``not_checked``. A harness may declare ``not_expressible`` (scenario name ->
            reason): those scenarios are skipped and listed with the reason. Tests pass
            a caching runner.
        progress: called as ``progress(done, total, harness, scenario)`` before each run.
        finished: called as ``finished(done, total, harness, scenario, outcome)`` after
            each scenario (for one that did not run, outcome is why, as text: see
            :data:`Finished`).
        allow_unchecked: boundary ids whose not-checked cells the team accepts (shown as
            such; without it a not-checked cell fails the run).
        reference: the harness each checked harness's observations are compared with,
            scenario by scenario (:func:`~agent_contract.conformance.reference.differences`):
            a difference is a problem with evidence. Run for the comparison even when
            not named; scenarios it cannot express are not compared. None: no comparison.
        harnesses: harness objects by name, used instead of loading those names from
            the registry (a team's own harness built in process).
        trace_sink: receives every trace event of every run the default runner makes
            (``check --otel``; see :func:`~agent_contract.conformance.run_scenario`);
            a ``runner`` given is left to its own sink.

    Returns:
        The report; its :attr:`~CheckReport.exit_code` is 0 or 5.

    Raises:
        DependencyMissingError: a harness whose binding or framework is not installed
            (raised before any scenario runs).
        ConfigurationError: an unknown harness name, a name given twice, or an
            unknown boundary in ``allow_unchecked``.
    """
    names = [*checked, *control]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"a harness is named twice: {names}")
    known = {b.id for b in BOUNDARIES} | {s.boundary for s in scenarios}
    unknown = sorted(set(allow_unchecked) - known)
    if unknown:
        raise ConfigurationError(f"--allow-unchecked names unknown boundaries: {unknown}")
    given = dict(harnesses or {})
    loaded = {name: given[name] if name in given else load_harness(name) for name in names}
    total = len(names) * len(scenarios)
    done = 0
    runs: list[HarnessRun] = []
    references: dict[str, ScenarioOutcome | None] = {}

    def run_one(scenario: Scenario, name: str) -> ScenarioOutcome:
        harness = loaded[name] if name in loaded else load_harness(name)
        if runner:
            return runner(scenario, name)
        return run_scenario(scenario, harness, name, trace_sink=trace_sink)

    def reference_of(scenario: Scenario) -> ScenarioOutcome | None:
        if reference is None:
            return None
        if scenario.name not in references:
            harness = loaded.get(reference) or load_harness(reference)
            capable = set(scenario.requires) <= capabilities_of(harness)
            declared = getattr(harness, "not_expressible", None) or {}
            if capable and scenario.name not in declared:
                references[scenario.name] = run_one(scenario, reference)
            else:
                references[scenario.name] = None
        return references[scenario.name]

    for name in names:
        unavailable: str | None = getattr(loaded[name], "unavailable", None)
        no_form_of = getattr(loaded[name], "no_form", None)
        capabilities = capabilities_of(loaded[name]) if unavailable is None else frozenset()
        declared_map = (
            getattr(loaded[name], "not_expressible", None) or {} if unavailable is None else {}
        )
        outcomes: list[ScenarioOutcome] = []
        skipped: list[str] = []
        declared: list[tuple[str, str]] = []
        requirements: list[tuple[str, tuple[str, ...]]] = []
        unformed: list[tuple[str, str]] = []
        for scenario in scenarios:
            if progress is not None:
                progress(done, total, name, scenario.name)
            done += 1
            outcome: ScenarioOutcome | None = None
            why_not = ""
            needs = tuple(c for c in scenario.requires if c not in capabilities)
            no_form = no_form_of(scenario) if no_form_of is not None and not needs else None
            if unavailable is not None:
                skipped.append(scenario.name)
                why_not = f"unavailable: {unavailable}"
            elif needs:
                skipped.append(scenario.name)
                requirements.append((scenario.name, needs))
                why_not = f"needs {', '.join(needs)}"
            elif no_form is not None:
                skipped.append(scenario.name)
                unformed.append((scenario.name, no_form))
                why_not = "no form on this wire"
            elif scenario.name in declared_map:
                # Declared not expressible: it runs and must break (a strict xfail); a
                # declaration that stopped being true is a problem of its own.
                reason = str(declared_map[scenario.name])
                ran = run_one(scenario, name)
                if ran.problems:
                    skipped.append(scenario.name)
                    declared.append((scenario.name, reason))
                    why_not = f"declared not expressible: {reason}"
                else:
                    stale = Problem(
                        boundary=scenario.boundary,
                        message=f"declared not expressible ({reason}) but it holds: "
                        "remove the declaration",
                    )
                    outcome = replace(ran, problems=(stale,))
            else:
                outcome = run_one(scenario, name)
                if name == reference:
                    references.setdefault(scenario.name, outcome)
                elif name in checked:
                    outcome = _compared(outcome, reference_of(scenario))
            if outcome is not None:
                outcomes.append(outcome)
            if finished is not None:
                finished(done, total, name, scenario, outcome if outcome is not None else why_not)
        role: Role = "checked" if name in checked else "control"
        plugin = _registered(name)
        runs.append(
            HarnessRun(
                name=name,
                role=role,
                outcomes=tuple(outcomes),
                skipped=tuple(skipped),
                description=plugin.description
                if plugin
                else str(getattr(loaded[name], "description", "")),
                declared=tuple(declared),
                requirements=tuple(requirements),
                no_form=tuple(unformed),
                unavailable=unavailable,
                wire=getattr(loaded[name], "wire_info", None),
            )
        )
    if progress is not None:
        progress(total, total, "", "")
    rows = boundary_rows(scenarios)
    extra = [
        p.boundary
        for run in runs
        for o in run.outcomes
        for p in o.problems
        if p.boundary not in rows
    ]
    rows = (*rows, *dict.fromkeys(extra))
    boundary_of = {s.name: s.boundary for s in scenarios}
    cells = tuple(_cell(b, run, allow_unchecked, boundary_of) for b in rows for run in runs)
    return CheckReport(harnesses=tuple(runs), rows=rows, cells=cells, versions=_versions())
