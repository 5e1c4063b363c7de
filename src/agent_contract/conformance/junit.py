"""JUnit XML for CI: ``agent-contract check --junit FILE`` (and the binding's ``matrix``).

A CI system reads JUnit XML to show which test failed and why. Here a *test case* is one
boundary on one harness (a cell of ``check``'s table): it passes when the boundary
holds, fails when it is broken (the failure carries every piece of evidence: the scenario
and what was observed) or not checked without an opt-out (``--allow-unchecked``), and is
skipped when it is not checked and allowed, saying why. A control harness
(one expected to break, e.g. a plain ``create_agent``) gets its own test suite whose
broken cells are skipped with the reason, so they never turn a CI run red, matching
``check``'s exit code.

The cases are built from ``check``'s versioned JSON document
(:func:`~agent_contract.conformance.report.to_json_data`, ``docs/CHECK_FORMAT.md``), so the
matrix, which receives that document from each environment, builds the same cases.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .check import CheckReport
from .report import to_json_data

__all__ = [
    "CaseOutcome",
    "JUnitCase",
    "JUnitSuite",
    "check_suites",
    "render_check_junit",
    "render_junit",
]

CaseOutcome = Literal["passed", "failure", "error", "skipped"]
"""A test case's verdict: ``failure`` a broken boundary; ``error`` the check could not
run (e.g. an environment that could not be installed); ``skipped`` not checked."""


@dataclass(frozen=True, kw_only=True)
class JUnitCase:
    """One ``<testcase>``."""

    classname: str
    """Groups cases in CI views, e.g. ``agent-contract.check.offline``."""
    name: str
    """The boundary's key (``allowlist``), stable across releases."""
    outcome: CaseOutcome = "passed"
    message: str = ""
    """One line: the first evidence, or why it was skipped or errored."""
    details: str = ""
    """The body of ``<failure>`` / ``<error>``: every piece of evidence, one per line."""
    output: str = ""
    """``<system-out>``: for a passing case, what the runs showed."""


@dataclass(frozen=True, kw_only=True)
class JUnitSuite:
    """One ``<testsuite>``: its cases and ``<properties>`` (e.g. package versions)."""

    name: str
    cases: tuple[JUnitCase, ...]
    properties: Mapping[str, str] = field(default_factory=dict)


def _evidence_lines(cell: Mapping[str, Any]) -> list[str]:
    return [f"{e['scenario']}: {e['observed']}" for e in cell.get("evidence", ())]


def _case(cell: Mapping[str, Any], *, classname: str, control: bool) -> JUnitCase:
    lines = _evidence_lines(cell)
    evidence = "\n".join(lines)
    outcome, message = _verdict(cell, lines, control=control)
    shown = outcome != "failure" and cell.get("status") != "not_checked"
    return JUnitCase(
        classname=classname,
        name=str(cell.get("boundary")),
        outcome=outcome,
        message=message,
        details=evidence if outcome == "failure" else "",
        output=evidence if shown else "",
    )


def _verdict(
    cell: Mapping[str, Any], lines: Sequence[str], *, control: bool
) -> tuple[CaseOutcome, str]:
    """A cell's outcome and one-line message: a broken or not-checked cell fails the
    run, except on a control harness or where ``--allow-unchecked`` opted out (skipped,
    saying why)."""
    status = cell.get("status")
    first = lines[0] if lines else ""
    if status in ("broken", "crashed") and not control:
        return "failure", first or "broken"
    if status in ("broken", "crashed"):
        return "skipped", (
            "control harness: broken, as expected (does not affect the exit code): " + first
        )
    unchecked = first or "no scenario of this boundary ran on this harness"
    if status == "not_checked" and not control and not cell.get("allowed"):
        return "failure", "not checked, and not opted out of (--allow-unchecked): " + unchecked
    if status == "not_checked":
        opted_out = " (opted out with --allow-unchecked)" if cell.get("allowed") else ""
        return "skipped", f"not checked{opted_out}: {unchecked}"
    return "passed", ""


def check_suites(
    document: Mapping[str, Any], *, prefix: str = "agent-contract.check"
) -> list[JUnitSuite]:
    """One suite per harness of a ``check`` JSON document (version 1), one case per
    boundary, in row order.

    Args:
        document: :func:`~agent_contract.conformance.report.to_json_data`'s document.
        prefix: the start of each case's ``classname`` (the harness name follows).
    """
    versions = {str(k): str(v) for k, v in document.get("versions", {}).items() if v is not None}
    suites = []
    for harness in document.get("harnesses", ()):
        name = str(harness["name"])
        control = harness.get("role") == "control"
        cells = [c for c in document.get("cells", ()) if c.get("harness") == name]
        classname = f"{prefix}.{name}"
        suites.append(
            JUnitSuite(
                name=f"{prefix}.{name}" + (" (control)" if control else ""),
                cases=tuple(_case(c, classname=classname, control=control) for c in cells),
                properties=versions,
            )
        )
    return suites


def render_junit(suites: Sequence[JUnitSuite], *, name: str = "agent-contract") -> str:
    """``<testsuites>`` XML (UTF-8 declaration, newline-ended) with the counts CI
    systems read (``tests``, ``failures``, ``errors``, ``skipped``) on every suite."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        counts = {
            "tests": len(suite.cases),
            "failures": sum(c.outcome == "failure" for c in suite.cases),
            "errors": sum(c.outcome == "error" for c in suite.cases),
            "skipped": sum(c.outcome == "skipped" for c in suite.cases),
        }
        for key, count in counts.items():
            totals[key] += count
        attributes = {"name": suite.name, **{k: str(v) for k, v in counts.items()}}
        element = ET.SubElement(root, "testsuite", attributes)
        if suite.properties:
            properties = ET.SubElement(element, "properties")
            for prop, text in suite.properties.items():
                ET.SubElement(properties, "property", name=prop, value=text)
        for case in suite.cases:
            testcase = ET.SubElement(element, "testcase", classname=case.classname, name=case.name)
            if case.outcome in ("failure", "error"):
                detail = ET.SubElement(
                    testcase, case.outcome, message=case.message, type=case.outcome
                )
                detail.text = case.details or case.message
            elif case.outcome == "skipped":
                ET.SubElement(testcase, "skipped", message=case.message)
            if case.output:
                ET.SubElement(testcase, "system-out").text = case.output
    for key, total in totals.items():
        root.set(key, str(total))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def render_check_junit(report: CheckReport) -> str:
    """``check``'s report as JUnit XML: one case per harness x boundary cell."""
    return render_junit(check_suites(to_json_data(report)), name="agent-contract check")
