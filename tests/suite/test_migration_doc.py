"""docs/MIGRATION.md is generated from measured check results and cannot drift: its
control columns are ``create_agent`` with ``@tool`` tools, plain and with the stock
middleware a team adds (issue 13, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

import agent_contract.conformance.check
from agent_contract.conformance import BOUNDARIES, SCENARIOS, CheckReport, run_check
from agent_contract.conformance.check import Cell
from devtools.langchain_controls import (
    STOCK_CONTROL,
    TOOL_CONTROL,
    args_model,
    decorated_tool,
)
from devtools.langchain_migration import (
    CONTRACT_HARNESS,
    CONTROL_HARNESS,
    KEEP_IT,
    MIGRATION_COMMAND,
    STOCK_GIVES,
    main,
    migration_report,
    render_migration,
)

from .conftest import cached_run_scenario

DOC = Path(__file__).resolve().parents[2] / "docs" / "MIGRATION.md"


@pytest.fixture(scope="session")
def measured() -> CheckReport:
    """The document's four columns, measured once per session (shared outcomes)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agent_contract.conformance.check, "run_scenario", cached_run_scenario)
        return migration_report()


def test_migration_doc_is_current(measured: CheckReport) -> None:
    """If this fails: LangChain's defaults, the scenarios or the checklist text changed.
    Read the diff, then regenerate the document with the command in the message."""
    expected = render_migration(measured)
    committed = DOC.read_text(encoding="utf-8")
    assert committed == expected, f"docs/MIGRATION.md is stale; regenerate it: {MIGRATION_COMMAND}"


def test_every_boundary_has_a_section_a_stock_line_and_one_change(measured: CheckReport) -> None:
    text = render_migration(measured)
    for boundary in measured.rows:
        assert boundary in KEEP_IT, boundary
        assert boundary in STOCK_GIVES, boundary
    assert set(KEEP_IT) == {b.id for b in BOUNDARIES}  # advice only for known boundaries
    assert set(STOCK_GIVES) == {b.id for b in BOUNDARIES}
    assert text.count("- [ ] **The one change:**") == len(measured.rows)
    assert text.count("- **What stock LangChain gives:**") == len(measured.rows)


def first(cell: Cell) -> dict[str, str]:
    """The first failed expectation of each scenario of a cell."""
    found: dict[str, str] = {}
    for item in cell.evidence:
        found.setdefault(item.scenario, item.observed)
    return found


def test_the_columns_are_measured_on_tool_agents(measured: CheckReport) -> None:
    text = render_migration(measured)
    names = [h.name for h in measured.harnesses]
    assert names == [CONTRACT_HARNESS, CONTROL_HARNESS, TOOL_CONTROL, STOCK_CONTROL]
    # @tool: pydantic drops an extra field and the tool runs; a wrong type comes back.
    tool = measured.cell("argument_validation", TOOL_CONTROL)
    seen = first(tool)
    assert seen["invalid_arguments_extra_property"].startswith("tool messages [('success', None)]")
    assert "('error', 'unclassified')" in seen["invalid_arguments_wrong_type"]
    # Stock middleware: the model-call limit ends with an answer-looking message.
    steps = measured.cell("model_step_budget", STOCK_CONTROL)
    assert any("Model call limits exceeded" in e.observed for e in steps.evidence)
    # Without middleware a raising tool crashes invoke; with the retry layer it does not.
    raising = first(measured.cell("tool_errors", TOOL_CONTROL))
    assert raising["tool_raises"].startswith("the run raised RuntimeError")
    retried = first(measured.cell("tool_errors", STOCK_CONTROL))
    assert not retried["tool_raises"].startswith("the run raised")
    line = f"  - `{steps.evidence[0].scenario}`: {steps.evidence[0].observed}"
    assert line in text
    for boundary in measured.rows:
        cell = measured.cell(boundary, CONTRACT_HARNESS)
        assert cell.status == "holds" or cell.undeclared, boundary


def test_decorated_tools_are_what_tool_gives() -> None:
    from agent_contract.conformance.boundaries.serialization import typed_tool
    from agent_contract.conformance.fixtures import Probe

    spec = typed_tool(Probe())
    model = args_model(spec)
    assert set(model.model_fields) == set(spec.parameters["properties"])
    tool = decorated_tool(spec)
    assert tool.name == spec.name
    with pytest.raises(ValidationError):
        model.model_validate({"kind": "not one of them"})
    assert model.model_validate({"kind": "int", "extra": 1}).model_dump() == {"kind": "int"}
    assert tool.invoke({"kind": "int"}) == 42


def test_needs_every_column() -> None:
    report = run_check(["offline"], scenarios=SCENARIOS[:1])
    with pytest.raises(KeyError, match="the report needs harnesses"):
        render_migration(report)


def test_the_command_in_the_docs_regenerates_it() -> None:
    """docs/CHECK.md (where the README's list of generated documents moved) names it."""
    page = (DOC.parent / "CHECK.md").read_text(encoding="utf-8")
    assert MIGRATION_COMMAND in page
    assert MIGRATION_COMMAND == "uv run python -m devtools.langchain_migration > docs/MIGRATION.md"


def test_main_refuses_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migration"]) == 2
    assert "usage: python -m devtools.langchain_migration" in capsys.readouterr().err
