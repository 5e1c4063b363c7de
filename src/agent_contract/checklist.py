"""``agent-contract check``: the contract suite as a checklist, and the migration document.

:func:`run_check` runs every scenario of :mod:`agent_contract.scenarios` on each
harness, in-process, and folds the outcomes into a :class:`CheckReport`: one
:class:`Cell` per (boundary, harness), each ``holds``, ``broken`` or ``not_checked``
with its evidence. Three renderers print it (:func:`render_text`,
:func:`render_markdown`, :func:`render_json`; the JSON schema is in
``docs/CHECK_FORMAT.md``), and :func:`render_migration` turns a report that includes
the plain ``create_agent`` control into ``docs/MIGRATION.md``.

Regenerate the migration checklist with::

    uv run python -m agent_contract.checklist migration > docs/MIGRATION.md

No pytest or LangChain import here; LangChain harnesses load on demand.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TextIO

from .errors import ConfigurationError
from .exitcodes import EXIT_CONTRACT_VIOLATION, EXIT_OK, EXIT_USAGE
from .scenarios import (
    BOUNDARIES,
    CONTROL_HARNESS,
    HARNESS_NAMES,
    SCENARIOS,
    Harness,
    Observation,
    Outcome,
    Scenario,
    hide_planted,
    load_harness,
    run_scenario,
)

__all__ = [
    "CHECK_FORMAT_VERSION",
    "CONTRACT_HARNESS",
    "CONTROL_HARNESS",
    "DEFAULT_CHECKED",
    "FORMATS",
    "KEEP_IT",
    "LABELS",
    "MIGRATION_COMMAND",
    "Cell",
    "CheckReport",
    "Evidence",
    "HarnessRun",
    "TerminalProgress",
    "add_check_command",
    "boundary_label",
    "boundary_rows",
    "cmd_check",
    "harness_names",
    "render_json",
    "render_markdown",
    "render_migration",
    "render_text",
    "run_check",
    "to_json_data",
]

CHECK_FORMAT_VERSION: Final = 1
"""Version of the JSON document :func:`render_json` writes (``docs/CHECK_FORMAT.md``)."""

DEFAULT_CHECKED: Final[tuple[str, ...]] = ("offline", "langchain")
"""Harnesses ``check`` checks when none is named."""
"""The negative control: a bare ``create_agent``, expected to break."""
CONTRACT_HARNESS: Final = "langchain"
"""The harness the migration checklist shows as the configuration that keeps each boundary."""

Status = Literal["holds", "broken", "not_checked"]
Role = Literal["checked", "control"]

LABELS: Final[dict[str, str]] = {
    "response_shape": "response shape",
    "allowlist": "allowlist",
    "argument_validation": "argument validation",
    "call_id_binding": "call-ID binding",
    "tool_errors": "fail-closed tool errors",
    "model_step_budget": "model-step budget",
    "tool_call_budget": "tool-call budget",
    "repeated_calls": "repeated calls",
    "timeouts": "timeouts",
    "result_size": "result size",
    "serialization": "serialization",
    "history": "history",
    "trace_redaction": "trace redaction",
    "write_approval": "approval for writes",
}
"""Row labels; a boundary missing here is labelled from its key."""

KEEP_IT: Final[dict[str, str]] = {
    "response_shape": (
        "Put `ContractMiddleware(contract)` first in `create_agent(middleware=[...])`: its "
        "`wrap_model_call` judges every reply (a final text or tool calls, never both or "
        "neither; ids present and unique; arguments a JSON object) and stops the run with "
        "`invalid_response` instead of ending it as an answer."
    ),
    "allowlist": (
        "`Contract(tools, allowlist=[...])`: only registered, allowlisted tools are offered "
        "to the model and run; a call to any other tool gets `unknown_tool` or `not_allowed`. "
        "Hiding tools in `wrap_model_call` alone is not an allowlist."
    ),
    "argument_validation": (
        "Declare each tool as a `ToolSpec(parameters=<JSON Schema>)` in the `Contract` and "
        "give `create_agent` `to_langchain_tools(contract.registry)`: arguments are validated "
        "(Draft 2020-12, closed objects) before the handler runs, and failures are "
        "`invalid_arguments` naming the JSON path."
    ),
    "call_id_binding": (
        "Holds by itself. Keep it: add no `after_model` hook that injects `ToolMessage`s "
        "(they land before ToolNode's); `ContractMiddleware` answers refused calls in place."
    ),
    "tool_errors": (
        "Run tools through `ContractMiddleware` (`wrap_tool_call` hands them to the "
        "contract's executor): exceptions become `tool_error`, or the kind of a raised "
        "`UnauthorizedError` / `NotFoundError` / `TransientError`; exception text stays out "
        "of the transcript unless `Contract(expose_exception_text=True)`."
    ),
    "model_step_budget": (
        "`Budget(max_model_steps=N)` in the `Contract`. Not `recursion_limit` (it counts "
        "graph steps and changed between releases) and not `ModelCallLimitMiddleware` "
        "(`exit_behavior='end'` ends with an ordinary AIMessage that looks like an answer)."
    ),
    "tool_call_budget": (
        "`Budget(max_tool_calls=N)`: a batch that would cross it is refused whole, before any "
        "of it runs. `ToolCallLimitMiddleware` counts differently and resets on every "
        "`invoke`, including every resume."
    ),
    "repeated_calls": (
        "`Budget(max_identical_calls=N)`: the same tool with the same canonical arguments "
        "(key order ignored) beyond N is refused with `repeated_call`."
    ),
    "timeouts": (
        "`ToolSpec(timeout_seconds=...)`: each call runs on the contract's executor, and a "
        "call past its limit reports `timeout` with `outcome: unknown` and "
        "`side_effects_possible: true` while the run goes on."
    ),
    "result_size": (
        "`ToolSpec(max_result_chars=..., on_oversize='truncate' | 'error')`: oversized "
        "results are cut with an explicit marker, or refused as `result_too_large`."
    ),
    "serialization": (
        "The contract's one serializer (applied by `ContractMiddleware` to the raw value "
        "`to_langchain_tools` carries): JSON with non-ASCII kept; a value that is not JSON "
        "is a `tool_error`, never its `str()`."
    ),
    "history": (
        "Holds by itself. Keep it: pass earlier turns as messages, and put any "
        "summarizing or trimming middleware after `ContractMiddleware`."
    ),
    "trace_redaction": (
        "`Contract(..., secrets=[...])` and a `RunState` per run (`run_graph` / `run_agent` "
        "return a `RunResult` with its append-only, redacted trace); secrets in tool results "
        "are redacted before the model sees them."
    ),
    "write_approval": (
        "`ToolSpec(effect='write', preview=..., verify=...)`, a LangGraph checkpointer, and "
        "`resume_agent(...)` with the human's `Approval`s: writes wait for a decision bound "
        "to the exact call and apply once."
    ),
}
"""Per boundary: the configuration of this package that keeps it on ``create_agent``."""


def boundary_label(boundary: str) -> str:
    """The human label of ``boundary`` (its key with spaces when it has no label)."""
    return LABELS.get(boundary, boundary.replace("_", " "))


def boundary_rows(scenarios: Sequence[Scenario] = SCENARIOS) -> tuple[str, ...]:
    """The checklist's rows: the boundaries of :data:`BOUNDARIES` that have at least one
    scenario, in that order, then boundaries known only from scenarios, in order of
    first appearance."""
    used = [s.boundary for s in scenarios]
    rows = [b for b in BOUNDARIES if b in used]
    rows += [b for b in dict.fromkeys(used) if b not in BOUNDARIES]
    return tuple(rows)


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
    outcomes: tuple[Outcome, ...]
    """One per scenario that ran, in scenario order."""
    skipped: tuple[str, ...] = ()
    """Scenarios not run: they need a capability the harness does not declare."""


@dataclass(frozen=True, kw_only=True)
class CheckReport:
    """The result of :func:`run_check`."""

    harnesses: tuple[HarnessRun, ...]
    rows: tuple[str, ...]
    """Boundary keys, in row order."""
    cells: tuple[Cell, ...]
    """Row-major: for each boundary, one cell per harness in harness order."""
    versions: dict[str, str | None] = field(default_factory=dict)
    """``python``, ``agent-contract``, ``langchain``, ``langchain-core``, ``langgraph``;
    None for a package that is not installed."""

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


Runner = Callable[[Scenario, str], Outcome]
Progress = Callable[[int, int, str, str], None]


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("agent-contract", "langchain", "langchain-core", "langgraph"):
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


def _capabilities(harness: Harness) -> frozenset[str] | None:
    declared = getattr(harness, "capabilities", None)
    return None if declared is None else frozenset(declared)


def run_check(
    checked: Sequence[str],
    *,
    control: Sequence[str] = (),
    scenarios: Sequence[Scenario] = SCENARIOS,
    runner: Runner | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Run every scenario on every harness and build the checklist.

    Args:
        checked: harness names (see :func:`~agent_contract.scenarios.load_harness`) whose
            broken boundaries make ``check`` fail.
        control: harness names shown for comparison only (e.g. the plain ``create_agent``).
        scenarios: the scenarios to run (default: all).
        runner: ``runner(scenario, harness_name) -> Outcome``; default loads each harness
            once and calls :func:`~agent_contract.scenarios.run_scenario`. A harness may
            declare ``capabilities`` (an iterable of names); scenarios requiring others
            are skipped. Tests pass a caching runner.
        progress: called as ``progress(done, total, harness, scenario)`` before each run.

    Returns:
        The report; its :attr:`~CheckReport.exit_code` is 0 or 5.

    Raises:
        DependencyMissingError: a LangChain harness without the binding installed
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
        capabilities = _capabilities(loaded[name])
        outcomes: list[Outcome] = []
        skipped: list[str] = []
        for scenario in scenarios:
            if progress is not None:
                progress(done, total, name, scenario.name)
            done += 1
            if capabilities is not None and not set(scenario.requires) <= capabilities:
                skipped.append(scenario.name)
                continue
            if runner is not None:
                outcomes.append(runner(scenario, name))
            else:
                outcomes.append(run_scenario(scenario, loaded[name], name))
        role: Role = "checked" if name in checked else "control"
        runs.append(
            HarnessRun(name=name, role=role, outcomes=tuple(outcomes), skipped=tuple(skipped))
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


# -- renderers ----------------------------------------------------------------------------


def _column(run: HarnessRun) -> str:
    return f"{run.name} (control)" if run.role == "control" else run.name


def _scenario_counts(report: CheckReport) -> dict[str, int]:
    counts: dict[str, int] = {}
    names: set[str] = set()
    for run in report.harnesses:
        for outcome in run.outcomes:
            if outcome.scenario.name not in names:
                names.add(outcome.scenario.name)
                counts[outcome.scenario.boundary] = counts.get(outcome.scenario.boundary, 0) + 1
    return counts


def _intro(report: CheckReport) -> list[str]:
    versions = report.versions
    stack = ", ".join(f"{k} {v}" for k, v in versions.items() if k != "python" and v is not None)
    lines = [
        f"agent-contract check: {report.scenario_count} scenarios on "
        f"{len(report.harnesses)} harness(es) (python {versions.get('python')}; {stack})"
    ]
    for run in report.harnesses:
        if run.role == "control":
            lines.append(
                f"{run.name} is a control column: a bare create_agent without the contract, "
                "expected to break; it does not affect the exit code."
            )
        if run.skipped:
            lines.append(
                f"{run.name}: skipped {len(run.skipped)} scenario(s) needing capabilities it "
                f"does not declare: {', '.join(run.skipped)}"
            )
    return lines


def _result_line(report: CheckReport) -> str:
    checked = [h.name for h in report.harnesses if h.role == "checked"]
    if not report.broken:
        return f"result: every boundary holds on {', '.join(checked)} (exit 0)"
    where = ", ".join(f"{boundary_label(c.boundary)} on {c.harness}" for c in report.broken)
    return f"result: broken: {where} (exit {report.exit_code})"


def render_text(report: CheckReport) -> str:
    """A plain-text table (one row per boundary, one column per harness), then the first
    piece of evidence for each broken cell, then the result line. Ends with a newline."""
    header = ["boundary (scenarios)", *(_column(h) for h in report.harnesses)]
    counts = _scenario_counts(report)
    table = [header]
    for boundary in report.rows:
        row = [f"{boundary_label(boundary)} ({counts.get(boundary, 0)})"]
        for run in report.harnesses:
            status = report.cell(boundary, run.name).status
            row.append({"holds": "holds", "broken": "BROKEN", "not_checked": "not checked"}[status])
        table.append(row)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [*_intro(report), ""]
    for index, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    broken = [c for c in report.cells if c.status == "broken"]
    if broken:
        lines += ["", "evidence (scenario: what was observed; first of each broken cell):"]
        for cell in broken:
            first = cell.evidence[0]
            more = f" (+{len(cell.evidence) - 1} more)" if len(cell.evidence) > 1 else ""
            lines.append(
                f"  {cell.harness} / {boundary_label(cell.boundary)}: "
                f"{first.scenario}: {first.observed}{more}"
            )
    lines += ["", _result_line(report)]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_cell(cell: Cell) -> str:
    if cell.status == "holds":
        return f"holds ({len(cell.evidence)} scenario{'s' if len(cell.evidence) != 1 else ''})"
    if cell.status == "not_checked":
        return "not checked"
    first = cell.evidence[0]
    more = f" (+{len(cell.evidence) - 1} more)" if len(cell.evidence) > 1 else ""
    return f"**broken**: `{first.scenario}`: {_md(first.observed)}{more}"


def render_markdown(report: CheckReport) -> str:
    """A Markdown table with the evidence inside the cells, then the result line."""
    lines = [f"{line}  " for line in _intro(report)] + [""]
    lines.append("| Boundary | " + " | ".join(_column(h) for h in report.harnesses) + " |")
    lines.append("| --- |" + " --- |" * len(report.harnesses))
    for boundary in report.rows:
        cells = [_md_cell(report.cell(boundary, h.name)) for h in report.harnesses]
        lines.append(f"| {boundary_label(boundary)} | " + " | ".join(cells) + " |")
    lines += ["", _result_line(report)]
    return "\n".join(lines) + "\n"


def to_json_data(report: CheckReport) -> dict[str, Any]:
    """The report as the version-1 JSON document of ``docs/CHECK_FORMAT.md``."""
    return {
        "format": "agent-contract-check",
        "version": CHECK_FORMAT_VERSION,
        "versions": dict(report.versions),
        "harnesses": [
            {
                "name": h.name,
                "role": h.role,
                "scenarios_run": [o.scenario.name for o in h.outcomes],
                "scenarios_skipped": list(h.skipped),
            }
            for h in report.harnesses
        ],
        "boundaries": [
            {"key": b, "label": boundary_label(b), "rule": BOUNDARIES.get(b, "")}
            for b in report.rows
        ],
        "cells": [c.to_dict() for c in report.cells],
        "broken": [{"boundary": c.boundary, "harness": c.harness} for c in report.broken],
        "exit_code": report.exit_code,
    }


def render_json(report: CheckReport) -> str:
    """:func:`to_json_data` as one JSON document (indented, non-ASCII kept), newline-ended."""
    return json.dumps(to_json_data(report), ensure_ascii=False, indent=2) + "\n"


# -- the migration checklist --------------------------------------------------------------

MIGRATION_COMMAND: Final = "uv run python -m agent_contract.checklist migration > docs/MIGRATION.md"
"""The command that regenerates ``docs/MIGRATION.md``."""


def render_migration(report: CheckReport) -> str:
    """``docs/MIGRATION.md``: per boundary, what a plain ``create_agent`` does (measured on
    :data:`CONTROL_HARNESS`), the configuration that keeps it (:data:`KEEP_IT`), and
    whether it holds with that configuration (measured on :data:`CONTRACT_HARNESS`).

    Raises:
        KeyError: ``report`` lacks the control or the contract harness.
    """
    control = {c.boundary: c for c in report.cells if c.harness == CONTROL_HARNESS}
    kept = {c.boundary: c for c in report.cells if c.harness == CONTRACT_HARNESS}
    if not control or not kept:
        raise KeyError(f"the report needs harnesses {CONTROL_HARNESS!r} and {CONTRACT_HARNESS!r}")
    versions = report.versions
    stack = ", ".join(
        f"{k} {versions.get(k)}" for k in ("langchain", "langchain-core", "langgraph")
    )
    broken_by_default = [b for b in report.rows if control[b].status == "broken"]
    lines = [
        "# Migrating a tool-calling loop to `create_agent`: the checklist",
        "",
        "<!-- Generated by agent_contract.checklist.render_migration from measured check",
        f"     results; do not edit by hand. Regenerate: {MIGRATION_COMMAND} -->",
        "",
        "For teams moving a hand-rolled loop or `create_react_agent` to LangChain's "
        "`create_agent`. Each section is one boundary of the contract: what a plain "
        "`create_agent` does with it by default, the configuration in this package that keeps "
        "it, and whether it then holds. Both are measured, not claimed: the plain column is "
        f"`agent-contract check --harness {CONTROL_HARNESS}` (stock `StructuredTool`s over the "
        "same handlers, the JSON Schema as a dict `args_schema`, no middleware), the kept "
        f"column is `agent-contract check --harness {CONTRACT_HARNESS}` (`create_agent` with "
        f"`ContractMiddleware`), on {stack} (as locked in `uv.lock`).",
        "",
        "Reading the evidence: each line is a scenario of `agent_contract.scenarios` and "
        "the first expectation it broke. `crashed:<Exception>` means `invoke` raised; "
        "`crashed:ScriptExhaustedError` means the agent asked the scripted model for more "
        "turns than the script holds: it carried on where the contract stops the run.",
        "",
        "## The steps",
        "",
        "- [ ] Declare every tool as a `ToolSpec` (name, description, JSON Schema, handler, "
        "`timeout_seconds`, `max_result_chars`; `effect='write'` with `preview`/`verify` for "
        "writes) and put them in one `Contract(tools, budget=Budget(...), allowlist=[...], "
        "secrets=[...])`.",
        "- [ ] Build the agent with `create_agent(ContractChatModel(model=...) or your chat "
        "model, tools=to_langchain_tools(contract.registry), middleware=[ContractMiddleware("
        "contract), *yours])` (or `agent_contract_langchain.build_agent`).",
        "- [ ] Run it with `run_graph(graph, contract.start(), messages)` (or `run_agent`), "
        "which passes `context=ContractContext(state)` and returns a `RunResult` with the "
        "stop reason and the redacted trace; treat only `answered` as an answer.",
        "- [ ] Run the suite against your own configuration: subclass "
        "`agent_contract_langchain.testing.CreateAgentContractSuite` (see the README), or "
        "`agent-contract check --harness yourmodule:factory`.",
        f"- [ ] The boundaries a plain `create_agent` breaks here ({len(broken_by_default)} of "
        f"{len(report.rows)}) each have a section below; tick each once its suite test passes.",
        "",
        "## Summary (measured)",
        "",
        "| Boundary | Plain `create_agent` | With `ContractMiddleware` |",
        "| --- | --- | --- |",
    ]
    for boundary in report.rows:
        lines.append(
            f"| {boundary_label(boundary)} | {control[boundary].status.replace('_', ' ')} | "
            f"{kept[boundary].status.replace('_', ' ')} |"
        )
    for boundary in report.rows:
        plain, ours = control[boundary], kept[boundary]
        lines += ["", f"## {boundary_label(boundary)[0].upper()}{boundary_label(boundary)[1:]}"]
        rule = BOUNDARIES.get(boundary)
        if rule:
            lines += ["", f"The rule: {rule}."]
        lines += ["", f"- [ ] **Keep it:** {KEEP_IT.get(boundary, 'see the boundary rule.')}"]
        if plain.status == "broken":
            lines.append("- **Plain `create_agent` (measured): broken.**")
            seen: set[str] = set()
            for item in plain.evidence:
                if item.scenario in seen:
                    continue
                seen.add(item.scenario)
                lines.append(f"  - `{item.scenario}`: {item.observed}")
        else:
            lines.append(f"- Plain `create_agent` (measured): {plain.status.replace('_', ' ')}.")
        scenarios = ", ".join(f"`{e.scenario}`" for e in ours.evidence)
        if ours.status == "holds":
            lines.append(f"- With `ContractMiddleware` (measured): holds ({scenarios}).")
        else:
            lines.append(
                f"- With `ContractMiddleware` (measured): {ours.status.replace('_', ' ')}."
            )
    return "\n".join(lines) + "\n"


# -- the `check` command ------------------------------------------------------------------

FORMATS: Final[dict[str, Callable[[CheckReport], str]]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
"""``--format`` choices and their renderers."""


def harness_names(values: Sequence[str] | None) -> list[str]:
    """The harness names given as repeatable, comma-separated ``--harness`` values, in
    order, without duplicates or blanks."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return names


class TerminalProgress:
    """Progress on one overwritten line of ``stream`` (``check`` uses stderr when it is a
    terminal); cleared when the run finishes."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, done: int, total: int, harness: str, scenario: str) -> None:
        """Show ``[done/total] harness: scenario``, or clear the line once done == total."""
        if done >= total:
            self.stream.write("\r\033[K")
        else:
            self.stream.write(f"\r\033[K[{done + 1}/{total}] {harness}: {scenario}")
        self.stream.flush()


def add_check_command(sub: Any) -> None:
    """Register ``check`` on the ``agent-contract`` subparsers ``sub``."""
    check_p = sub.add_parser(
        "check",
        help="run the contract suite and print a boundary x harness checklist",
        description="Run every contract scenario in-process on each harness and print one "
        "row per boundary, one column per harness: holds or broken, with evidence. With no "
        f"--harness: {', '.join(DEFAULT_CHECKED)}, plus {CONTROL_HARNESS} as a control column "
        "(expected to break; it does not affect the exit code).",
        epilog="exit codes: 0 every boundary holds on the harnesses checked; 4 the LangChain "
        "binding is missing; 5 a boundary is broken on a harness you asked about; 2 usage",
    )
    check_p.add_argument(
        "--harness",
        action="append",
        metavar="NAME|module:factory",
        help="a harness to check (repeatable or comma-separated): "
        f"{', '.join(HARNESS_NAMES)}, or module:factory",
    )
    check_p.add_argument("--format", choices=sorted(FORMATS), default="text")
    check_p.set_defaults(handler=cmd_check)


def cmd_check(args: Any, out: TextIO, err: TextIO) -> int:
    """The ``check`` command: run, print in ``args.format``, return the exit code.

    Raises:
        DependencyMissingError: a LangChain harness without the binding (exit 4).
        ConfigurationError: an unknown harness (exit 2).
    """
    named = harness_names(args.harness)
    checked, control = (named, []) if named else (list(DEFAULT_CHECKED), [CONTROL_HARNESS])
    progress = TerminalProgress(err) if err.isatty() else None
    report = run_check(checked, control=control, progress=progress)
    out.write(FORMATS[args.format](report))
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agent_contract.checklist migration``: print ``docs/MIGRATION.md``.

    Returns 0; 2 for any other argument. Raises DependencyMissingError without the
    LangChain binding.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["migration"]:
        sys.stderr.write("usage: python -m agent_contract.checklist migration\n")
        return EXIT_USAGE
    report = run_check([CONTRACT_HARNESS], control=[CONTROL_HARNESS])
    sys.stdout.write(render_migration(report))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
