"""The ``matrix`` report: one column per LangChain release, one row per boundary, and its
text, Markdown, JSON and JUnit XML forms (see :mod:`agent_contract.app.matrix.run`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from agent_contract.conformance import boundary_label
from agent_contract.conformance.junit import JUnitCase, JUnitSuite, render_junit
from agent_contract.errors import ConfigurationError
from agent_contract.exitcodes import (
    EXIT_CONTRACT_VIOLATION,
    EXIT_DEPENDENCY_MISSING,
    EXIT_FAILURE,
    EXIT_OK,
)

from .target import matrix_target

__all__ = [
    "EVIDENCE_PER_CELL",
    "MATRIX_FORMATS",
    "MATRIX_FORMAT_VERSION",
    "STATUS_TEXT",
    "Column",
    "ColumnStatus",
    "MatrixReport",
    "load_matrix_json",
    "render_matrix_json",
    "render_matrix_junit",
    "render_matrix_markdown",
    "render_matrix_text",
]

MATRIX_FORMAT_VERSION: Final = 1
"""Version of the JSON document :func:`render_matrix_json` writes."""

ColumnStatus = Literal["checked", "could_not_install", "binding_does_not_import", "error"]
"""How one release went."""

STATUS_TEXT: Final[dict[str, str]] = {
    "checked": "checked",
    "could_not_install": "could not install",
    "binding_does_not_import": "binding does not import",
    "error": "check failed",
}
"""Each :data:`ColumnStatus` in the reports' words."""

EVIDENCE_PER_CELL: Final = 5
"""At most this many pieces of evidence per broken cell in the text and Markdown
reports (the JSON document keeps them all)."""


@dataclass(frozen=True, kw_only=True)
class Column:
    """One release's result."""

    release: str
    status: ColumnStatus
    """``checked`` (``check`` ran; see :attr:`check`), ``could_not_install``,
    ``binding_does_not_import`` (``check`` exited 4), or ``error`` (``check`` failed
    otherwise)."""
    companions: tuple[str, ...] = ()
    """The requirements installed beside the framework (companion pins; for ``floor``,
    every lower bound)."""
    note: str = ""
    """How the companions were chosen (e.g. "companions as of langchain 1.2.9's release
    (...)")."""
    versions: dict[str, str] = field(default_factory=dict)
    """The installed stack (``langchain``, ``langchain-core``, ``langgraph``,
    ``langgraph-prebuilt``), the framework first; empty when it could not be installed."""
    evidence: str = ""
    """For anything but ``checked``: the last lines of the failing command's output."""
    check: dict[str, Any] | None = None
    """``check --format json``'s document (``docs/CHECK_FORMAT.md``)."""
    output: str = ""
    """For a checked release that did not hold: the last lines ``check`` wrote to its
    stderr there (warnings, a traceback), empty when it wrote none."""

    @property
    def status_text(self) -> str:
        """:attr:`status` in the reports' words (``check failed`` for ``error``)."""
        return STATUS_TEXT.get(self.status, self.status)

    def broken(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """Every broken (or crashed) cell of a checked release: ``(boundary, harness,
        [(scenario, observed), ...])``, in the document's order; control harnesses
        (expected to break) are left out."""
        checked = _checked(self)
        found = []
        for cell in (self.check or {}).get("cells", ()):
            if cell.get("status") not in ("broken", "crashed"):
                continue
            if checked and cell.get("harness") not in checked:
                continue
            evidence = [
                (str(e.get("scenario", "-")), str(e.get("observed", "")))
                for e in cell.get("evidence", ())
            ]
            found.append((str(cell.get("boundary")), str(cell.get("harness")), evidence))
        return found

    def findings(self) -> list[str]:
        """For ``check --agent``: the document's findings about the agent (a tool its
        allowlist withdraws, a tool that could not be probed, ...)."""
        agent = (self.check or {}).get("agent")
        return [str(f) for f in agent.get("findings", ())] if isinstance(agent, dict) else []

    @property
    def label(self) -> str:
        """``1.3.15``, or ``latest (1.5.2)`` / ``floor (1.2.9)`` once resolved (the
        framework's version: the first of :attr:`versions`)."""
        resolved = next(iter(self.versions.values()), None)
        if self.release in ("latest", "floor") and resolved:
            return f"{self.release} ({resolved})"
        return self.release

    def cell(self, boundary: str) -> str:
        """This column's cell text for ``boundary``."""
        if self.status == "could_not_install":
            return "could not install"
        if self.status == "binding_does_not_import":
            return "binding does not import"
        if self.status == "error" or self.check is None:
            return "check failed"
        cells = [c for c in self.check.get("cells", ()) if c.get("boundary") == boundary]
        if not cells:
            return "no scenario"
        broken = [c["harness"] for c in cells if c.get("status") in ("broken", "crashed")]
        if broken:
            return f"broken ({', '.join(broken)})"
        if all(c.get("status") == "not_checked" for c in cells):
            return "not checked"
        return "holds"


@dataclass(frozen=True, kw_only=True)
class MatrixReport:
    """The result of :func:`~agent_contract.app.matrix.run.run_matrix`."""

    python: str
    harnesses: tuple[str, ...]
    """The harnesses each release checked (``check --harness``), empty with :attr:`agent`."""
    columns: tuple[Column, ...]
    origin: str = ""
    """Where this project's two distributions were installed from."""
    framework: str = field(default_factory=lambda: matrix_target().name)
    """The framework whose releases the columns are (default: the registered target's;
    it names the JUnit suites)."""
    agent: str | None = None
    """The team's agent factory each release checked (``check --agent``), or None for
    :attr:`harnesses`."""

    @property
    def checked(self) -> str:
        """What each release checked, for the reports' first line."""
        if self.agent:
            return f"agent {self.agent}"
        return f"harnesses {', '.join(self.harnesses)}"

    @property
    def rows(self) -> tuple[str, ...]:
        """Boundary keys, in the order the checked columns report them (union)."""
        rows: dict[str, None] = {}
        for column in self.columns:
            for boundary in (column.check or {}).get("boundaries", ()):
                rows[boundary["key"]] = None
        return tuple(rows)

    @property
    def exit_code(self) -> int:
        """5 broken or not importing somewhere installed; else 1 if ``check`` failed in
        an installed environment; else 4 if a release could not be installed; else 0."""
        if any(c.status == "binding_does_not_import" for c in self.columns):
            return EXIT_CONTRACT_VIOLATION
        if any(c.cell(b).startswith("broken") for c in self.columns for b in self.rows):
            return EXIT_CONTRACT_VIOLATION
        if any(c.status == "error" for c in self.columns):
            return EXIT_FAILURE
        if any(c.status == "could_not_install" for c in self.columns):
            return EXIT_DEPENDENCY_MISSING
        return EXIT_OK


def _evidence_lines(column: Column, indent: str = "    ") -> list[str]:
    """What a release that did not hold showed: the failing command's last lines, each
    broken cell's evidence (boundary, harness, scenario: observed), the agent's
    findings, and the last lines ``check`` wrote to stderr."""
    lines = [f"{indent}{line}" for line in column.evidence.splitlines()]
    for boundary, harness, evidence in column.broken():
        lines.append(f"{indent}{boundary_label(boundary)} broken on {harness}:")
        for scenario, observed in evidence[:EVIDENCE_PER_CELL]:
            lines.append(f"{indent}  {scenario}: {observed}")
        if len(evidence) > EVIDENCE_PER_CELL:
            lines.append(f"{indent}  ... and {len(evidence) - EVIDENCE_PER_CELL} more")
    lines += [f"{indent}finding: {finding}" for finding in column.findings()]
    if column.output:
        lines.append(f"{indent}check's last lines on stderr:")
        lines += [f"{indent}  {line}" for line in column.output.splitlines()]
    return lines


def _notes(report: MatrixReport) -> list[str]:
    notes = [f"agent-contract from {report.origin}"] if report.origin else []
    for column in report.columns:
        stack = ", ".join(f"{k} {v}" for k, v in column.versions.items()) or "not installed"
        pins = f"; companion pins: {', '.join(column.companions)}" if column.companions else ""
        notes.append(f"{column.label}: {column.status_text} ({stack}{pins})")
        if column.note:
            notes.append(f"    {column.note}")
        notes += _evidence_lines(column)
    return notes


def _table(report: MatrixReport) -> list[list[str]]:
    rows = [["boundary", *(c.label for c in report.columns)]]
    for boundary in report.rows or ("(no boundary checked)",):
        rows.append([boundary_label(boundary), *(c.cell(boundary) for c in report.columns)])
    return rows


def render_matrix_text(report: MatrixReport) -> str:
    """A plain-text boundary x release table, then one note per release."""
    table = _table(report)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [f"agent-contract matrix: python {report.python}; {report.checked}", ""]
    for index, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", *_notes(report), "", f"exit {report.exit_code}"]
    return "\n".join(lines) + "\n"


def render_matrix_markdown(report: MatrixReport) -> str:
    """A Markdown boundary x release table, then one note per release."""
    table = _table(report)
    lines = [
        f"python {report.python}; {report.checked}",
        "",
        "| " + " | ".join(table[0]) + " |",
        "| --- |" + " --- |" * (len(table[0]) - 1),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
    lines += [""]
    for column in report.columns:
        stack = ", ".join(f"{k} {v}" for k, v in column.versions.items()) or "not installed"
        pins = f"; companion pins: `{', '.join(column.companions)}`" if column.companions else ""
        note = f"; {column.note}" if column.note else ""
        lines.append(f"- **{column.label}**: {column.status_text} ({stack}{pins}{note})")
        evidence = _evidence_lines(column, indent="")
        if evidence:
            lines.append("  ```text")
            lines += [f"  {line}" for line in evidence]
            lines.append("  ```")
    return "\n".join(lines) + "\n"


def render_matrix_json(report: MatrixReport) -> str:
    """The report as JSON: ``{"format": "agent-contract-matrix", "version": 1, "python",
    "harnesses", "agent", "origin", "rows", "columns": [{"release", "label", "status",
    "companions", "note", "versions", "evidence", "output", "cells": {boundary: text},
    "check": <check JSON or null>}], "exit_code"}`` (``agent``: the ``--agent`` factory
    or null; ``output``: :attr:`Column.output`)."""
    data = {
        "format": "agent-contract-matrix",
        "version": MATRIX_FORMAT_VERSION,
        "python": report.python,
        "harnesses": list(report.harnesses),
        "agent": report.agent,
        "origin": report.origin,
        "rows": list(report.rows),
        "columns": [
            {
                "release": c.release,
                "label": c.label,
                "status": c.status,
                "companions": list(c.companions),
                "note": c.note,
                "versions": dict(c.versions),
                "evidence": c.evidence,
                "output": c.output,
                "cells": {b: c.cell(b) for b in report.rows},
                "check": c.check,
            }
            for c in report.columns
        ],
        "exit_code": report.exit_code,
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def load_matrix_json(text: str) -> MatrixReport:
    """The :class:`MatrixReport` back from :func:`render_matrix_json`'s output (to render a
    recorded run again, e.g. as Markdown).

    Raises:
        ConfigurationError: not a version-1 matrix document.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (
        "agent-contract-matrix",
        MATRIX_FORMAT_VERSION,
    ):
        raise ConfigurationError("not an agent-contract-matrix document of version 1")
    columns = tuple(
        Column(
            release=c["release"],
            status=c["status"],
            companions=tuple(c["companions"]),
            note=c.get("note", ""),
            versions=dict(c["versions"]),
            evidence=c["evidence"],
            check=c["check"],
            output=c.get("output", ""),
        )
        for c in data["columns"]
    )
    return MatrixReport(
        python=data["python"],
        harnesses=tuple(data["harnesses"]),
        columns=columns,
        origin=data.get("origin", ""),
        agent=data.get("agent"),
    )


def _boundary_case(column: Column, boundary: str, classname: str) -> JUnitCase:
    """One release x boundary: fails when a checked harness broke it, with each broken
    harness's evidence."""
    cells = [
        c
        for c in (column.check or {}).get("cells", ())
        if c.get("boundary") == boundary and c.get("harness") in _checked(column)
    ]
    evidence = [
        f"{c['harness']}: {e['scenario']}: {e['observed']}"
        for c in cells
        if c.get("status") in ("broken", "crashed")
        for e in c.get("evidence", ())
    ]
    if evidence:
        return JUnitCase(
            classname=classname,
            name=boundary,
            outcome="failure",
            message=evidence[0],
            details="\n".join(evidence),
        )
    if cells and all(c.get("status") == "not_checked" for c in cells):
        return JUnitCase(
            classname=classname, name=boundary, outcome="skipped", message="not checked"
        )
    return JUnitCase(classname=classname, name=boundary, output=column.cell(boundary))


def _checked(column: Column) -> set[str]:
    harnesses = (column.check or {}).get("harnesses", ())
    return {h["name"] for h in harnesses if h.get("role") != "control"}


def render_matrix_junit(report: MatrixReport) -> str:
    """The report as JUnit XML: per release, one suite with an ``install`` case (an error
    carrying the installer's evidence when the environment could not be built, or the
    binding did not import) and, once checked, one case per boundary, failing with the
    evidence of every harness that broke it."""
    suites = []
    for column in report.columns:
        classname = f"agent-contract.matrix.{report.framework}-{column.release}"
        stack = ", ".join(f"{k} {v}" for k, v in column.versions.items())
        install = JUnitCase(classname=classname, name="install", output=stack)
        if column.status != "checked":
            install = JUnitCase(
                classname=classname,
                name="install",
                outcome="error",
                message=column.status_text,
                details=column.evidence or column.status,
            )
        cases = [install]
        if column.status == "checked":
            cases += [_boundary_case(column, b, classname) for b in report.rows]
        properties = dict(column.versions)
        if column.note:
            properties["companions"] = column.note
        suites.append(
            JUnitSuite(
                name=f"{report.framework} {column.label}", cases=tuple(cases), properties=properties
            )
        )
    return render_junit(suites, name="agent-contract matrix")


MATRIX_FORMATS: Final[dict[str, Callable[[MatrixReport], str]]] = {
    "text": render_matrix_text,
    "markdown": render_matrix_markdown,
    "json": render_matrix_json,
}
"""``--format`` choices and their renderers."""
