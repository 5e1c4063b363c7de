"""docs/MIGRATION.md is generated from measured check results and cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_contract.checklist import (
    CONTRACT_HARNESS,
    CONTROL_HARNESS,
    KEEP_IT,
    MIGRATION_COMMAND,
    CheckReport,
    render_migration,
    run_check,
)
from agent_contract.scenarios import SCENARIOS

DOC = Path(__file__).resolve().parents[2] / "docs" / "MIGRATION.md"


def test_migration_doc_is_current(default_report: CheckReport) -> None:
    """If this fails: LangChain's defaults, the scenarios or the checklist text changed.
    Read the diff, then regenerate the document with the command in the message."""
    expected = render_migration(default_report)
    committed = DOC.read_text(encoding="utf-8")
    assert committed == expected, f"docs/MIGRATION.md is stale; regenerate it: {MIGRATION_COMMAND}"


def test_every_boundary_has_a_section_and_a_keep_it(default_report: CheckReport) -> None:
    text = render_migration(default_report)
    for boundary in default_report.rows:
        assert boundary in KEEP_IT, boundary
    assert text.count("- [ ] **Keep it:**") == len(default_report.rows)


def test_measured_lines_follow_the_control(default_report: CheckReport) -> None:
    text = render_migration(default_report)
    allowlist = default_report.cell("allowlist", CONTROL_HARNESS)
    assert allowlist.status == "broken"
    assert f"  - `{allowlist.evidence[0].scenario}`: {allowlist.evidence[0].observed}" in text
    assert "- Plain `create_agent` (measured): holds." in text  # call-ID binding, history


def test_needs_both_harnesses() -> None:
    report = run_check(["offline"], scenarios=SCENARIOS[:1])
    with pytest.raises(KeyError, match=CONTRACT_HARNESS):
        render_migration(report)
