"""Rendering a :class:`~agent_contract.conformance.check.CheckReport`: a plain-text table,
Markdown, and the versioned JSON document of ``docs/CHECK_FORMAT.md``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from .boundaries.table import BOUNDARIES, boundary_label
from .check import NO_FORM, Cell, CheckReport, HarnessRun

__all__ = [
    "CHECK_FORMAT_VERSION",
    "FORMATS",
    "render_json",
    "render_markdown",
    "render_text",
    "to_json_data",
]

CHECK_FORMAT_VERSION: Final = 1
"""Version of the JSON document :func:`render_json` writes (``docs/CHECK_FORMAT.md``)."""


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
            what = run.description or "a harness without the contract"
            lines.append(
                f"{run.name} is a control column: {what}, expected to break; it does not "
                "affect the exit code."
            )
        if run.requirements:
            lines.append(
                f"{run.name}: skipped {len(run.requirements)} scenario(s) needing capabilities "
                f"it does not declare: {', '.join(n for n, _ in run.requirements)}"
            )
        for name, reason in run.declared:
            lines.append(f"{run.name}: declares {name} not expressible: {reason}")
        if run.unavailable is not None:
            lines.append(f"{run.name}: not run: {run.unavailable}")
        if run.no_form:
            lines.append(
                f"{run.name}: {len(run.no_form)} scenario(s) have no form on its wire (not "
                f"checked there): {', '.join(n for n, _ in run.no_form)}"
            )
    if report.controls_not_run:
        lines.append(
            f"control columns not run: {', '.join(report.controls_not_run)} (harnesses without "
            "the contract; add --control to see what breaks there)"
        )
    return lines


def _result_line(report: CheckReport) -> str:
    checked = [h.name for h in report.harnesses if h.role == "checked"]
    allowed = [c for c in report.not_checked if c.allowed and not (c.no_form or c.undeclared)]
    opted = (
        f"; {len(allowed)} cell(s) not checked, opted out: "
        + ", ".join(f"{boundary_label(c.boundary)} on {c.harness}" for c in allowed)
        if allowed
        else ""
    )
    unformed = [c for c in report.not_checked if c.no_form]
    if unformed:
        opted += f"; {len(unformed)} cell(s) not checked, a scenario has no form on the wire"
    if not report.broken and not report.unchecked:
        return f"result: every boundary holds on {', '.join(checked)}{opted} (exit 0)"
    parts = []
    if report.broken:
        parts.append(
            "broken: "
            + ", ".join(
                f"{boundary_label(c.boundary)} on {c.harness}"
                + (" (crashed)" if c.status == "crashed" else "")
                for c in report.broken
            )
        )
    if report.unchecked:
        parts.append(
            f"{len(report.unchecked)} cell(s) not checked: "
            + ", ".join(f"{boundary_label(c.boundary)} on {c.harness}" for c in report.unchecked)
            + " (opt out with --allow-unchecked BOUNDARY)"
        )
    return f"result: {'; '.join(parts)}{opted} (exit {report.exit_code})"


_STATUS_TEXT: Final = {
    "holds": "holds",
    "broken": "BROKEN",
    "crashed": "CRASHED",
    "not_checked": "not checked",
}


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
            cell = report.cell(boundary, run.name)
            text = _STATUS_TEXT[status]
            if cell.no_form and status == "holds":
                text += f" ({_unformed(cell)} no form)"
            elif cell.no_form:
                text += " (no form)"
            elif cell.undeclared:
                text += " (not declared)"
            elif cell.allowed:
                text += " (allowed)"
            row.append(text)
        table.append(row)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [*_intro(report), ""]
    for index, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    broken = [
        c
        for c in report.cells
        if c.status in ("broken", "crashed") or (c.status == "not_checked" and c.evidence)
    ]
    if broken:
        lines += [
            "",
            "evidence (scenario: what was observed; first of each broken or unchecked cell):",
        ]
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


def _unformed(cell: Cell) -> int:
    """How many of a wire column cell's scenarios had no form on its wire."""
    return sum(1 for e in cell.evidence if e.observed.startswith(NO_FORM))


def _md_cell(cell: Cell) -> str:
    if cell.status == "holds":
        ran = len(cell.evidence) - _unformed(cell)
        text = f"holds ({ran} scenario{'s' if ran != 1 else ''}"
        return text + (f", {_unformed(cell)} no form)" if cell.no_form else ")")
    if cell.status == "not_checked":
        label = (
            "not checked (no form)"
            if cell.no_form
            else "not checked (not declared)"
            if cell.undeclared
            else "not checked (allowed)"
            if cell.allowed
            else "**not checked**"
        )
        if not cell.evidence:
            return label
        return f"{label}: `{cell.evidence[0].scenario}`: {_md(cell.evidence[0].observed)}"
    first = cell.evidence[0]
    more = f" (+{len(cell.evidence) - 1} more)" if len(cell.evidence) > 1 else ""
    return f"**{cell.status}**: `{first.scenario}`: {_md(first.observed)}{more}"


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


_RULES: Final = {b.id: b.rule for b in BOUNDARIES}


def _wire_data(run: HarnessRun) -> dict[str, Any]:
    """A wire column's ``wire`` object (``docs/CHECK_FORMAT.md``)."""
    return {
        **dict(run.wire or {}),
        "no_form": {n: r for n, r in run.no_form},
        "unavailable": run.unavailable,
    }


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
                "not_expressible": {n: r for n, r in h.declared},
                **({"wire": _wire_data(h)} if h.wire is not None else {}),
            }
            for h in report.harnesses
        ],
        "boundaries": [
            {"key": b, "label": boundary_label(b), "rule": _RULES.get(b, "")} for b in report.rows
        ],
        "cells": [c.to_dict() for c in report.cells],
        "broken": [{"boundary": c.boundary, "harness": c.harness} for c in report.broken],
        "not_checked": [
            {"boundary": c.boundary, "harness": c.harness, "allowed": c.allowed}
            for c in report.not_checked
        ],
        "controls_not_run": list(report.controls_not_run),
        "exit_code": report.exit_code,
    }


def render_json(report: CheckReport) -> str:
    """:func:`to_json_data` as one JSON document (indented, non-ASCII kept), newline-ended."""
    return json.dumps(to_json_data(report), ensure_ascii=False, indent=2) + "\n"


FORMATS: Final[dict[str, Callable[[CheckReport], str]]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
"""``--format`` choices and their renderers."""
