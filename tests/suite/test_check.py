"""``agent-contract check``: the checklist, its formats, exit codes and progress."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import agent_contract.conformance.check as checklist
from agent_contract.app.check_command import TerminalProgress
from agent_contract.app.check_command import split_harness_names as harness_names
from agent_contract.app.cli import main
from agent_contract.conformance import (
    BOUNDARIES,
    CHECK_FORMAT_VERSION,
    PLANTED_SECRET,
    SCENARIOS,
    CheckReport,
    boundary_label,
    boundary_rows,
    render_json,
    render_markdown,
    render_text,
    run_check,
)
from agent_contract.conformance.report import to_json_data
from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import offline_harness

ROOT = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def cli(*argv: str, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err or io.StringIO()
    code = main(["check", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# -- what check measures ------------------------------------------------------------------


def test_default_check_holds_on_contract_harnesses(default_report: CheckReport) -> None:
    for harness in ("offline", "langchain"):
        broken = [
            c.boundary
            for c in default_report.cells
            if c.harness == harness and c.status != "holds" and not c.undeclared
        ]
        assert broken == [], harness
    assert default_report.exit_code == 0


def test_control_column_breaks_but_does_not_count(default_report: CheckReport) -> None:
    control = {
        c.boundary: c.status for c in default_report.cells if c.harness == "plain-create-agent"
    }
    assert control["allowlist"] == "broken"
    assert control["tool_call_budget"] == "crashed"  # it loops until the script runs dry
    assert default_report.broken == ()
    assert default_report.unchecked == ()
    roles = {h.name: h.role for h in default_report.harnesses}
    assert roles == {
        "offline": "checked",
        "langchain": "checked",
        "pydantic-ai": "checked",
        "plain-create-agent": "control",
        "plain-pydantic-ai": "control",
    }
    plain = {c.boundary: c.status for c in default_report.cells if c.harness == "plain-pydantic-ai"}
    assert plain["allowlist"] == "broken"
    assert plain["call_id_binding"] == "broken"  # an id reused in a later turn is answered twice


def test_rows_follow_boundaries_with_scenarios(default_report: CheckReport) -> None:
    assert default_report.rows == boundary_rows(SCENARIOS)
    assert set(default_report.rows) <= {b.id for b in BOUNDARIES}


def test_approval_row_only_when_its_scenarios_exist() -> None:
    without = tuple(s for s in SCENARIOS if s.boundary != "write_approval")
    assert "write_approval" not in boundary_rows(without)
    assert boundary_label("write_approval") == "approval for writes"


def test_unknown_boundary_gets_a_generic_row() -> None:
    future = replace(SCENARIOS[0], name="quantum_case", boundary="quantum_entanglement")
    rows = boundary_rows((*SCENARIOS, future))
    assert rows[-1] == "quantum_entanglement"
    assert boundary_label("quantum_entanglement") == "quantum entanglement"


def test_broken_cell_carries_scenario_and_observation(default_report: CheckReport) -> None:
    cell = default_report.cell("allowlist", "plain-create-agent")
    first = cell.evidence[0]
    assert first.scenario == "unknown_tool"
    assert "expected [('error', 'unknown_tool')]" in first.observed


def test_holding_cell_lists_its_scenarios(default_report: CheckReport) -> None:
    cell = default_report.cell("allowlist", "langchain")
    assert [e.scenario for e in cell.evidence] == [
        s.name for s in SCENARIOS if s.boundary == "allowlist"
    ]
    assert (
        cell.evidence[0].observed == "stop answered; tool results [delete_everything: unknown_tool]"
    )


def test_planted_secret_never_in_any_output(default_report: CheckReport) -> None:
    for render in (render_text, render_markdown, render_json):
        assert PLANTED_SECRET not in render(default_report)


def test_capabilities_a_harness_lacks_skip_scenarios(monkeypatch: pytest.MonkeyPatch) -> None:
    def limited(model, tools, options):  # type: ignore[no-untyped-def]
        return offline_harness(model, tools, options)

    limited.capabilities = ()  # type: ignore[attr-defined]
    monkeypatch.setattr(checklist, "load_harness", lambda name: limited)
    needing = [s for s in SCENARIOS if s.requires]
    report = run_check(["limited"], scenarios=needing)
    assert report.harnesses[0].skipped == tuple(s.name for s in needing)
    assert {c.status for c in report.cells} == {"not_checked"}
    assert report.exit_code == 5  # not checked, and not opted out of
    assert "cell(s) not checked" in render_text(report)
    assert "skipped" in render_text(report)
    opted = run_check(["limited"], scenarios=needing, allow_unchecked=report.rows)
    assert opted.exit_code == 0
    assert all(c.allowed for c in opted.cells)
    assert "not checked, opted out" in render_text(opted)


def test_repeated_harness_names_are_folded() -> None:
    assert harness_names(["offline,langchain", " offline ", ""]) == ["offline", "langchain"]
    assert harness_names(None) == []


def test_a_harness_both_checked_and_control_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="named twice"):
        run_check(["offline"], control=["offline"])


def test_unknown_harness_is_a_usage_error() -> None:
    code, out, err = cli("--harness", "no-such-harness")
    assert (code, out) == (2, "")
    assert "unknown harness 'no-such-harness'" in err


# -- the command ----------------------------------------------------------------------------


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_default_prints_the_table_and_exits_0() -> None:
    code, out, err = cli("--quiet")
    assert code == 0
    assert err == ""  # --quiet: no progress
    assert re.search(r"^allowlist \(5\)\s+holds\s+holds\s+holds$", out, re.M)
    assert "result: every boundary holds on offline, langchain, pydantic-ai (exit 0)" in out
    # The control columns run only when asked, and the report says they did not.
    assert "(control)" not in out
    assert "is a control column" not in out
    assert (
        "control columns not run: plain-create-agent, plain-pydantic-ai (harnesses without "
        "the contract; add --control to see what breaks there)"
    ) in out


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_control_adds_the_control_columns() -> None:
    code, out, _ = cli("--quiet", "--control")
    assert code == 0  # the control's broken cells do not count
    assert "plain-create-agent is a control column" in out
    assert "does not affect the exit code" in out
    assert "plain-pydantic-ai is a control column" in out
    assert "control columns not run" not in out
    assert re.search(r"^allowlist \(5\)\s+holds\s+holds\s+holds\s+BROKEN\s+BROKEN$", out, re.M)
    assert "result: every boundary holds on offline, langchain, pydantic-ai (exit 0)" in out


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_control_beside_named_harnesses() -> None:
    code, out, _ = cli("--harness", "offline", "--control", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [(h["name"], h["role"]) for h in data["harnesses"]] == [
        ("offline", "checked"),
        ("plain-create-agent", "control"),
        ("plain-pydantic-ai", "control"),
    ]
    assert data["controls_not_run"] == []
    # A control named with --harness is checked, and --control does not add it twice.
    code, out, _ = cli("--harness", "plain-create-agent", "--format", "json")
    assert code == 5
    data = json.loads(out)
    assert [(h["name"], h["role"]) for h in data["harnesses"]] == [
        ("plain-create-agent", "checked")
    ]
    assert data["controls_not_run"] == ["plain-pydantic-ai"]


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_explicit_broken_harness_exits_5() -> None:
    code, out, _ = cli("--harness", "plain-create-agent", "--format", "json")
    assert code == 5
    data = json.loads(out)
    assert data["exit_code"] == 5
    assert {"boundary": "allowlist", "harness": "plain-create-agent"} in data["broken"]


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_markdown() -> None:
    code, out, _ = cli("--format", "markdown", "--control")
    assert code == 0
    assert (
        "| Boundary | offline | langchain | pydantic-ai | plain-create-agent (control) "
        "| plain-pydantic-ai (control) |"
    ) in out
    assert (
        "| allowlist | holds (5 scenarios) | holds (5 scenarios) | holds (5 scenarios) "
        "| **broken**: `unknown_tool`:"
    ) in out
    code, out, _ = cli("--format", "markdown")
    assert code == 0
    assert "| Boundary | offline | langchain | pydantic-ai |\n" in out
    assert "control columns not run: plain-create-agent, plain-pydantic-ai" in out


@pytest.mark.usefixtures("cached_outcomes")
def test_progress_only_on_a_terminal() -> None:
    terminal = Terminal()
    code, _, _ = cli("--harness", "offline", err=terminal)
    assert code == 0
    shown = terminal.getvalue()
    assert f"[1/{len(SCENARIOS)}] offline: {SCENARIOS[0].name}" in shown
    assert shown.endswith("\r\033[K")


def test_progress_line_is_cleared_when_done() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream)
    progress(0, 2, "offline", "a")
    progress(2, 2, "", "")
    assert stream.getvalue() == "\r\033[K[1/2] offline: a\r\033[K"


def test_missing_binding_exits_4(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agent_contract_langchain.resuming", None)
    code, out, err = cli("--harness", "offline,langchain")
    assert (code, out) == (4, "")
    assert "dependency_missing" in err
    assert "agent-contract-langchain" in err


@pytest.mark.children_run_plain
def test_cli_subprocess_json_piped() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_contract.app.cli",
            "check",
            "--harness",
            "offline",
            "--format",
            "json",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert data["version"] == CHECK_FORMAT_VERSION
    assert [h["name"] for h in data["harnesses"]] == ["offline"]


# -- the JSON format is stable and documented ---------------------------------------------


def test_json_shape(default_report: CheckReport) -> None:
    data = json.loads(render_json(default_report))
    assert data == to_json_data(default_report)
    assert list(data) == [
        "format",
        "version",
        "versions",
        "harnesses",
        "boundaries",
        "cells",
        "broken",
        "not_checked",
        "controls_not_run",
        "exit_code",
    ]
    assert (data["format"], data["version"]) == ("agent-contract-check", 1)
    assert len(data["cells"]) == len(data["boundaries"]) * len(data["harnesses"])
    for cell in data["cells"]:
        optional = {"undeclared"} & set(cell)  # a row the harness declares it cannot express
        assert set(cell) - optional == {"boundary", "harness", "status", "evidence", "allowed"}
        assert cell["status"] in {"holds", "broken", "crashed", "not_checked"}
        if optional:
            assert (cell["undeclared"], cell["status"], cell["allowed"]) == (
                True,
                "not_checked",
                True,
            )
        for item in cell["evidence"]:
            assert set(item) == {"scenario", "observed"}
    for harness in data["harnesses"]:
        assert set(harness) == {
            "name",
            "role",
            "scenarios_run",
            "scenarios_skipped",
            "not_expressible",
        }
    for boundary in data["boundaries"]:
        assert set(boundary) == {"key", "label", "rule"}


def test_check_format_doc_matches_the_output(default_report: CheckReport) -> None:
    doc = (ROOT / "docs" / "CHECK_FORMAT.md").read_text(encoding="utf-8")
    example = re.search(r"```json\n(.*?)```", doc, re.S)
    assert example, "docs/CHECK_FORMAT.md has no ```json example"
    documented = json.loads(example.group(1))
    actual = to_json_data(default_report)
    assert list(documented) == list(actual)
    assert documented["version"] == CHECK_FORMAT_VERSION
    for key in ("harnesses", "boundaries", "cells"):
        assert set(documented[key][0]) == set(actual[key][0]), key
    for field in actual:
        assert f"`{field}`" in doc, field


def test_module_factory_harness_is_checked() -> None:
    code, out, _ = cli("--harness", "agent_contract.harnesses:offline_harness", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [h["name"] for h in data["harnesses"]] == ["agent_contract.harnesses:offline_harness"]
    assert {c["status"] for c in data["cells"] if not c.get("undeclared")} == {"holds"}


def test_runner_is_injectable() -> None:
    seen: list[tuple[str, str]] = []

    def runner(scenario, name):  # type: ignore[no-untyped-def]
        seen.append((scenario.name, name))
        return checklist.run_scenario(scenario, offline_harness, name)

    report = run_check(["offline"], scenarios=SCENARIOS[:2], runner=runner)
    assert seen == [(SCENARIOS[0].name, "offline"), (SCENARIOS[1].name, "offline")]
    assert report.exit_code == 0


def test_readme_table_is_what_check_prints(default_report: CheckReport) -> None:
    """The table in README.md ("The main job") and in docs/CHECK.md is ``check
    --control``'s table, cell by cell (a new scenario, boundary or verdict shows up
    there, or this fails)."""
    printed = render_text(default_report).splitlines()
    start = next(i for i, line in enumerate(printed) if line.startswith("boundary (scenarios)"))
    end = next((i for i in range(start, len(printed)) if not printed[i].strip()), len(printed))
    for name in ("README.md", "docs/CHECK.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        shown = re.search(r"```text\n(boundary \(scenarios\).*?)\n```", text, re.S)
        assert shown, f"{name}: no check table in a ```text block"
        assert shown.group(1).splitlines() == printed[start:end]
