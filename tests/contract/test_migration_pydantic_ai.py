"""docs/MIGRATION_PYDANTIC_AI.md is generated from measured check results and cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_contract.conformance import BOUNDARIES, SCENARIOS, CheckReport, run_check
from devtools.pydantic_ai_migration import (
    CONTRACT_HARNESSES,
    CONTROL_HARNESS,
    KEEP_IT,
    MIGRATION_COMMAND,
    main,
    render_migration,
)

from .conftest import outcome_of

DOC = Path(__file__).resolve().parents[2] / "docs" / "MIGRATION_PYDANTIC_AI.md"


@pytest.fixture(scope="module")
def report() -> CheckReport:
    """What the generator measures, from the session's cached outcomes."""
    return run_check(list(CONTRACT_HARNESSES), control=[CONTROL_HARNESS], runner=outcome_of)


def test_migration_doc_is_current(report: CheckReport) -> None:
    """If this fails: PydanticAI's defaults, the scenarios or the checklist text changed.
    Read the diff, then regenerate the document with the command in the message."""
    committed = DOC.read_text(encoding="utf-8")
    assert committed == render_migration(report), (
        f"docs/MIGRATION_PYDANTIC_AI.md is stale; regenerate it: {MIGRATION_COMMAND}"
    )


def test_every_boundary_has_a_section_and_a_keep_it(report: CheckReport) -> None:
    text = render_migration(report)
    assert set(KEEP_IT) == {b.id for b in BOUNDARIES}
    assert text.count("- [ ] **Keep it:**") == len(report.rows)


def test_the_stream_column_names_what_it_cannot_express(report: CheckReport) -> None:
    text = render_migration(report)
    assert (
        "| response shape | broken | holds | holds | holds (not expressible: missing_call_id) |"
        in text
    )
    assert "- `pydantic-ai-stream`, `missing_call_id`: PydanticAI's streaming parts manager" in text


def test_needs_every_harness() -> None:
    report = run_check(["offline"], scenarios=SCENARIOS[:1])
    with pytest.raises(KeyError, match=CONTROL_HARNESS):
        render_migration(report)


def test_main_refuses_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["x"]) == 2
    assert "usage: python -m devtools.pydantic_ai_migration" in capsys.readouterr().err
