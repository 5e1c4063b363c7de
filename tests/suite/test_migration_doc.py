"""docs/MIGRATION.md is generated from measured check results and cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_contract.conformance import BOUNDARIES, SCENARIOS, CheckReport, run_check
from agent_contract_langchain.migration import (
    CONTRACT_HARNESS,
    CONTROL_HARNESS,
    KEEP_IT,
    MIGRATION_COMMAND,
    main,
    render_migration,
)

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
    assert set(KEEP_IT) == {b.id for b in BOUNDARIES}  # advice only for known boundaries
    assert text.count("- [ ] **Keep it:**") == len(default_report.rows)


def test_measured_lines_follow_the_control(default_report: CheckReport) -> None:
    text = render_migration(default_report)
    allowlist = default_report.cell("allowlist", CONTROL_HARNESS)
    assert allowlist.status == "broken"
    assert f"  - `{allowlist.evidence[0].scenario}`: {allowlist.evidence[0].observed}" in text
    # Every boundary breaks on a plain create_agent now (call-ID binding: an id reused in
    # a later turn is answered twice); each holds with the contract.
    assert "- Plain `create_agent` (measured): holds." not in text
    assert text.count("- With `ContractMiddleware` (measured): holds (") == len(default_report.rows)


def test_needs_both_harnesses() -> None:
    report = run_check(["offline"], scenarios=SCENARIOS[:1])
    with pytest.raises(KeyError, match=CONTRACT_HARNESS):
        render_migration(report)


def test_the_command_in_the_readme_regenerates_it() -> None:
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert MIGRATION_COMMAND in readme
    assert (
        MIGRATION_COMMAND
        == "uv run python -m agent_contract_langchain.migration > docs/MIGRATION.md"
    )


def test_main_refuses_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migration"]) == 2
    assert "usage: python -m agent_contract_langchain.migration" in capsys.readouterr().err
