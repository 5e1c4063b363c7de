"""``agent-contract check`` in CI: JUnit XML, plain progress lines when piped, and a
team's ``module:factory`` found from the working directory."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from agent_contract.app import check_command
from agent_contract.app.check_command import LineProgress, working_directory_importable
from agent_contract.app.cli import main
from agent_contract.conformance import BOUNDARIES, PLANTED_SECRET, SCENARIOS, CheckReport
from agent_contract.conformance.base import Problem
from agent_contract.conformance.junit import (
    JUnitCase,
    JUnitSuite,
    check_suites,
    render_check_junit,
    render_junit,
)
from agent_contract.conformance.report import to_json_data
from agent_contract.conformance.runner import run_scenario
from agent_contract.harnesses import offline_harness


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def cases(xml: str) -> dict[tuple[str, str], ET.Element]:
    root = ET.fromstring(xml)  # noqa: S314 - our own output
    return {(c.get("classname", ""), c.get("name", "")): c for c in root.iter("testcase")}


# -- JUnit XML ------------------------------------------------------------------------------


def test_one_case_per_harness_and_boundary(default_report: CheckReport) -> None:
    xml = render_check_junit(default_report)
    root = ET.fromstring(xml)  # noqa: S314 - our own output
    found = cases(xml)
    harnesses = [h.name for h in default_report.harnesses]
    assert len(found) == len(harnesses) * len(default_report.rows)
    assert {name for _, name in found} == set(default_report.rows)
    assert root.get("failures") == "0"  # the control's broken cells do not fail CI
    suites = [s.get("name") for s in root.iter("testsuite")]
    assert suites == [
        "agent-contract.check.offline",
        "agent-contract.check.langchain",
        "agent-contract.check.pydantic-ai",
        "agent-contract.check.plain-create-agent (control)",
        "agent-contract.check.plain-pydantic-ai (control)",
    ]
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["agent-contract"] == default_report.versions["agent-contract"]


def test_a_holding_cell_passes_with_what_was_observed(default_report: CheckReport) -> None:
    case = cases(render_check_junit(default_report))[("agent-contract.check.offline", "allowlist")]
    assert case.find("failure") is None
    assert case.find("skipped") is None
    out = case.findtext("system-out") or ""
    assert "unknown_tool: stop answered; tool results [delete_everything: unknown_tool]" in out


def test_a_broken_cell_fails_with_every_piece_of_evidence(default_report: CheckReport) -> None:
    """The control harness checked as a contract harness: its broken cells are failures."""
    document = to_json_data(default_report)
    for harness in document["harnesses"]:
        harness["role"] = "checked"
    xml = render_junit(check_suites(document))
    case = cases(xml)[("agent-contract.check.plain-create-agent", "allowlist")]
    failure = case.find("failure")
    assert failure is not None
    cell = default_report.cell("allowlist", "plain-create-agent")
    assert failure.get("message") == f"{cell.evidence[0].scenario}: {cell.evidence[0].observed}"
    assert (failure.text or "").splitlines() == [
        f"{e.scenario}: {e.observed}" for e in cell.evidence
    ]
    assert PLANTED_SECRET not in xml


def test_the_control_harness_is_skipped_with_the_reason(default_report: CheckReport) -> None:
    found = cases(render_check_junit(default_report))
    skipped = found[("agent-contract.check.plain-create-agent", "allowlist")].find("skipped")
    assert skipped is not None
    assert "control harness: broken, as expected" in (skipped.get("message") or "")
    holds = found[("agent-contract.check.offline", "call_id_binding")]
    assert holds.find("skipped") is None
    assert holds.find("failure") is None


def test_not_checked_fails_unless_opted_out() -> None:
    cell = {"boundary": "timeouts", "harness": "h", "status": "not_checked", "evidence": []}
    document = {"harnesses": [{"name": "h", "role": "checked"}], "cells": [cell]}
    xml = render_junit(check_suites(document))
    failure = cases(xml)[("agent-contract.check.h", "timeouts")].find("failure")
    assert failure is not None
    assert "not checked" in (failure.get("message") or "")
    allowed = {**document, "cells": [{**cell, "allowed": True}]}
    xml = render_junit(check_suites(allowed))
    skipped = cases(xml)[("agent-contract.check.h", "timeouts")].find("skipped")
    assert skipped is not None
    assert "opted out" in (skipped.get("message") or "")


def test_errors_and_counts() -> None:
    suite = JUnitSuite(
        name="s",
        cases=(
            JUnitCase(classname="c", name="a"),
            JUnitCase(classname="c", name="b", outcome="error", message="could not install"),
            JUnitCase(classname="c", name="c", outcome="failure", message="m", details="d1\nd2"),
        ),
    )
    root = ET.fromstring(render_junit([suite]))  # noqa: S314 - our own output
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    error = root.find("testsuite/testcase[@name='b']/error")
    assert error is not None
    assert error.text == "could not install"


@pytest.mark.usefixtures("cached_outcomes")
def test_cli_writes_junit_even_when_a_boundary_breaks(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "check.xml"
    code, out, _ = cli("--harness", "plain-create-agent", "--junit", str(target), "--quiet")
    assert code == 5
    assert "result: broken" in out  # stdout keeps the chosen format
    root = ET.fromstring(target.read_text(encoding="utf-8"))  # noqa: S314 - our own output
    assert int(root.get("failures", "0")) >= 10


def test_cli_junit_to_an_unwritable_place_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli("--harness", "offline", "--junit", str(blocker / "check.xml"), "--quiet")
    assert code == 2
    assert "cannot be written" in err


# -- progress lines when piped ----------------------------------------------------------------


@pytest.mark.usefixtures("cached_outcomes")
def test_piped_progress_is_one_plain_line_per_scenario() -> None:
    code, _, err = cli("--harness", "offline")
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == len(SCENARIOS)
    first = SCENARIOS[0]
    label = next(b.label for b in BOUNDARIES if b.id == first.boundary)
    assert lines[0] == f"[1/{len(SCENARIOS)}] offline {label}: {first.name} ... holds"
    assert lines[-1].startswith(f"[{len(SCENARIOS)}/{len(SCENARIOS)}] offline ")
    assert "\r" not in err
    assert "\033" not in err


@pytest.mark.usefixtures("cached_outcomes")
def test_quiet_silences_progress() -> None:
    assert cli("--harness", "offline", "--quiet")[2] == ""


def test_progress_line_for_broken_and_skipped() -> None:
    stream = io.StringIO()
    progress = LineProgress(stream)
    scenario = next(s for s in SCENARIOS if s.name == "unknown_tool")
    outcome = run_scenario(scenario, offline_harness, "offline")
    problem = Problem(boundary="allowlist", message=f"leak {PLANTED_SECRET}\nmore")
    progress(4, 35, "plain", scenario, replace(outcome, problems=(problem,)))
    progress(5, 35, "plain", scenario, "needs middleware")
    progress(6, 35, "plain@openai", scenario, "no form on this wire")
    broken, skipped, unformed = stream.getvalue().splitlines()
    assert broken == (
        "[4/35] plain allowlist: unknown_tool ... broken: allowlist: leak <planted secret> more"
    )
    assert skipped == "[5/35] plain allowlist: unknown_tool ... skipped (needs middleware)"
    assert (
        unformed == "[6/35] plain@openai allowlist: unknown_tool ... skipped (no form on this wire)"
    )


# -- a team's module:factory from the working directory --------------------------------------

TEAM_MODULE = textwrap.dedent(
    """
    from agent_contract.harnesses import offline_harness


    def make_harness():
        return offline_harness
    """
)


@pytest.mark.children_run_plain
def test_console_script_finds_the_teams_module_in_the_working_directory(tmp_path: Path) -> None:
    """The installed ``agent-contract`` script (not ``python -m``), run from the team's
    folder, with no PYTHONPATH."""
    (tmp_path / "team_agent.py").write_text(TEAM_MODULE)
    script = Path(sys.executable).parent / "agent-contract"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(script), "check", "--harness", "team_agent:make_harness", "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "result: every boundary holds on team_agent:make_harness (exit 0)" in proc.stdout


def test_working_directory_goes_first_only_for_module_factory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["/elsewhere"])
    working_directory_importable(["offline", "langchain"])
    assert sys.path == ["/elsewhere"]
    working_directory_importable(["offline", "team:make"])
    working_directory_importable(["team:make"])
    assert sys.path == [str(tmp_path), "/elsewhere"]


@pytest.mark.parametrize("where", ["folder", "through-a-file"])
def test_cli_junit_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = tmp_path if where == "folder" else blocker / "check.xml"

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(check_command, "run_check", never)
    code, out, err = cli("--harness", "offline", "--junit", str(target), "--quiet")
    assert code == 2, err
    assert out == ""
    assert "--junit" in err
    assert blocker.read_text() == "x"
