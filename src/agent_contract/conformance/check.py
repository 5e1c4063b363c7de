"""``agent-contract check``'s measurement: the contract suite as a checklist.

:func:`run_check` runs every scenario on each harness, in-process, and folds the
outcomes into a :class:`CheckReport`: one :class:`Cell` per (boundary, harness), each
``holds``, ``broken`` or ``not_checked`` with its evidence. The renderers are in
:mod:`agent_contract.conformance.report`.

No pytest import; a harness's framework loads on demand (see
:mod:`agent_contract.registry`).
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigurationError, DependencyMissingError
from ..exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_OK
from ..harnesses import HarnessPlugin, Observation, capabilities_of
from ..registry import DISTRIBUTION, harness_names, harness_plugin, load_harness
from .boundaries import boundary_rows
from .evaluate import Scenario
from .fixtures import hide_planted
from .runner import ScenarioOutcome, run_scenario
from .scenarios import SCENARIOS

__all__ = [
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

Status = Literal["holds", "broken", "not_checked"]
"""A cell's verdict."""
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
        return {"scenario": self.scenario, "observed": self.observed}


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One boundary on one harness."""

    boundary: str
    harness: str
    status: Status
    """``holds``: every scenario of the boundary ran and no expectation of the boundary
    failed in any scenario; ``broken``: at least one did; ``not_checked``: none of its
    scenarios ran (the harness lacks a capability they require)."""
    evidence: tuple[Evidence, ...]
    """Broken: every failed expectation of the boundary, in scenario order. Holds: one
    entry per scenario of the boundary. Not checked: empty."""

    def to_dict(self) -> dict[str, Any]:
        """The cell as in ``docs/CHECK_FORMAT.md``."""
        return {
            "boundary": self.boundary,
            "harness": self.harness,
            "status": self.status,
            "evidence": [e.to_dict() for e in self.evidence],
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
    """Scenarios not run: they need a capability the harness does not declare."""
    description: str = ""
    """The registered harness's one-line description ("" for ``module:factory``)."""


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
        """Broken cells on ``checked`` harnesses (these decide the exit code)."""
        checked = {h.name for h in self.harnesses if h.role == "checked"}
        return tuple(c for c in self.cells if c.status == "broken" and c.harness in checked)

    @property
    def exit_code(self) -> int:
        """0 when every boundary holds (or is not checked) on every checked harness, else 5."""
        return EXIT_CONTRACT_VIOLATION if self.broken else EXIT_OK

    @property
    def scenario_count(self) -> int:
        """How many distinct scenarios ran or were skipped."""
        names = {o.scenario.name for h in self.harnesses for o in h.outcomes}
        names |= {n for h in self.harnesses for n in h.skipped}
        return len(names)


Runner = Callable[[Scenario, str], ScenarioOutcome]
"""``runner(scenario, harness_name) -> ScenarioOutcome``: how :func:`run_check` runs one
scenario (tests pass a caching one)."""
Progress = Callable[[int, int, str, str], None]
"""``progress(done, total, harness, scenario)``, called before each run."""
Finished = Callable[[int, int, str, Scenario, "ScenarioOutcome | None"], None]
"""``finished(done, total, harness, scenario, outcome)``, called after each scenario
(``done`` counts it); ``outcome`` is None for a scenario skipped for a capability the
harness does not declare."""


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


def _cell(boundary: str, run: HarnessRun) -> Cell:
    problems = [
        Evidence(scenario=o.scenario.name, observed=hide_planted(p.message))
        for o in run.outcomes
        for p in o.problems
        if p.boundary == boundary
    ]
    if problems:
        return Cell(boundary=boundary, harness=run.name, status="broken", evidence=tuple(problems))
    own = [o for o in run.outcomes if o.scenario.boundary == boundary]
    if not own:
        return Cell(boundary=boundary, harness=run.name, status="not_checked", evidence=())
    evidence = tuple(
        Evidence(scenario=o.scenario.name, observed=_observed(o.observation)) for o in own
    )
    return Cell(boundary=boundary, harness=run.name, status="holds", evidence=evidence)


def run_check(
    checked: Sequence[str],
    *,
    control: Sequence[str] = (),
    scenarios: Sequence[Scenario] = SCENARIOS,
    runner: Runner | None = None,
    progress: Progress | None = None,
    finished: Finished | None = None,
) -> CheckReport:
    """Run every scenario on every harness and build the checklist.

    Args:
        checked: harness names (see :func:`~agent_contract.registry.load_harness`) whose
            broken boundaries make ``check`` fail.
        control: harness names shown for comparison only (a control harness).
        scenarios: the scenarios to run (default: all).
        runner: ``runner(scenario, harness_name) -> ScenarioOutcome``; default loads each
            harness once and calls :func:`~agent_contract.conformance.run_scenario`. A harness may
            declare ``capabilities`` (an iterable of names; default
            :data:`~agent_contract.harnesses.CORE_CAPABILITIES`); scenarios requiring others
            are skipped. Tests pass a caching runner.
        progress: called as ``progress(done, total, harness, scenario)`` before each run.
        finished: called as ``finished(done, total, harness, scenario, outcome)`` after
            each scenario (outcome None when it was skipped).

    Returns:
        The report; its :attr:`~CheckReport.exit_code` is 0 or 5.

    Raises:
        DependencyMissingError: a harness whose binding or framework is not installed
            (raised before any scenario runs).
        ConfigurationError: an unknown harness name, or a name given twice.
    """
    names = [*checked, *control]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"a harness is named twice: {names}")
    loaded = {name: load_harness(name) for name in names}
    total = len(names) * len(scenarios)
    done = 0
    runs: list[HarnessRun] = []
    for name in names:
        capabilities = capabilities_of(loaded[name])
        outcomes: list[ScenarioOutcome] = []
        skipped: list[str] = []
        for scenario in scenarios:
            if progress is not None:
                progress(done, total, name, scenario.name)
            done += 1
            outcome: ScenarioOutcome | None = None
            if not set(scenario.requires) <= capabilities:
                skipped.append(scenario.name)
            elif runner is not None:
                outcome = runner(scenario, name)
            else:
                outcome = run_scenario(scenario, loaded[name], name)
            if outcome is not None:
                outcomes.append(outcome)
            if finished is not None:
                finished(done, total, name, scenario, outcome)
        role: Role = "checked" if name in checked else "control"
        plugin = _registered(name)
        runs.append(
            HarnessRun(
                name=name,
                role=role,
                outcomes=tuple(outcomes),
                skipped=tuple(skipped),
                description=plugin.description if plugin else "",
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
    cells = tuple(_cell(b, run) for b in rows for run in runs)
    return CheckReport(harnesses=tuple(runs), rows=rows, cells=cells, versions=_versions())
