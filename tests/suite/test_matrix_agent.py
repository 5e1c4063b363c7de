"""``agent-contract matrix --agent``: a team's own agent checked on each release
(``check --agent`` in every environment), the evidence of every broken cell in the
reports, and where uv is found (``--uv``, ``$UV``, ``PATH``, the README's
``.tools/bin/uv``). No network: a fake runner, or a fake uv script that builds an
"environment" over this interpreter and installs nothing."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

import agent_contract.app.matrix.command as command
from agent_contract.app.cli import main
from agent_contract.app.matrix.command import find_uv
from agent_contract.app.matrix.packages import Packages
from agent_contract.app.matrix.report import (
    MatrixReport,
    load_matrix_json,
    render_matrix_json,
    render_matrix_markdown,
    render_matrix_text,
)
from agent_contract.app.matrix.run import CommandResult, run_matrix
from agent_contract.errors import DependencyMissingError

PACKAGES = Packages(requirements=("/w/core.whl", "/w/binding.whl"), origin="the wheels in /w")
STACK = {"langchain": "1.3.18", "langchain-core": "1.5.4", "langgraph": "1.2.0"}
AGENT = "shop.agent:build_agent"


def agent_document(*, broken: bool) -> dict[str, object]:
    """A ``check --agent --format json`` document: two boundaries on the team's agent,
    the allowlist broken (or not), one finding."""
    evidence = [
        {"scenario": f"unknown_tool_{i}", "observed": f"tool no_such_tool ran ({i})"}
        for i in range(7)
    ]
    return {
        "format": "agent-contract-check",
        "version": 1,
        "harnesses": [{"name": "build_agent", "role": "checked"}],
        "boundaries": [{"key": "allowlist"}, {"key": "argument_validation"}],
        "cells": [
            {
                "boundary": "allowlist",
                "harness": "build_agent",
                "status": "broken" if broken else "holds",
                "evidence": evidence if broken else [{"scenario": "x", "observed": "ok"}],
            },
            {
                "boundary": "argument_validation",
                "harness": "build_agent",
                "status": "holds",
                "evidence": [{"scenario": "wrong_type[lookup]", "observed": "stop answered"}],
            },
        ],
        "exit_code": 5 if broken else 0,
        "agent": {"factory": AGENT, "findings": ["tool 'ls' is withdrawn by the allowlist"]},
    }


class Runner:
    """Answers by role (venv, install, smoke, check); records every argv."""

    def __init__(self, check: CommandResult) -> None:
        self.check = check
        self.seen: list[tuple[str, ...]] = []

    @staticmethod
    def role(argv: Sequence[str]) -> str:
        for role in ("venv", "install"):
            if role in argv:
                return role
        return "smoke" if "-c" in argv else "check"

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        self.seen.append(tuple(argv))
        role = self.role(argv)
        if role == "check":
            return self.check
        if role == "smoke":
            return CommandResult(returncode=0, stdout=json.dumps(STACK), stderr="")
        return CommandResult(returncode=0, stdout="", stderr="")


def published(package: str, version: str) -> datetime:
    return datetime(2026, 5, 12, 14, 45, 48, tzinfo=UTC)


def run(runner: Runner, releases: Sequence[str] = ("latest",)) -> MatrixReport:
    return run_matrix(
        list(releases),
        packages=PACKAGES,
        python="3.11",
        runner=runner,
        agent=AGENT,
        publish_time=published,
    )


def checked(document: dict[str, object], stderr: str = "") -> CommandResult:
    code = int(document["exit_code"])  # type: ignore[call-overload]
    return CommandResult(returncode=code, stdout=json.dumps(document), stderr=stderr)


# -- --agent --------------------------------------------------------------------------------


def test_each_environment_runs_check_agent_on_the_teams_factory() -> None:
    runner = Runner(checked(agent_document(broken=False)))
    report = run_matrix(
        ["latest"], packages=PACKAGES, python="3.11", runner=runner, agent=AGENT, extra=["/t/shop"]
    )
    [check] = [a for a in runner.seen if runner.role(a) == "check"]
    assert check[-6:] == ("check", "--agent", AGENT, "--format", "json", "--quiet")
    assert "--harness" not in check
    [install] = [a for a in runner.seen if runner.role(a) == "install"]
    assert "/t/shop" in install  # the team's own requirements beside the release
    assert report.exit_code == 0
    assert [report.columns[0].cell(b) for b in report.rows] == ["holds", "holds"]
    text = render_matrix_text(report)
    assert text.splitlines()[0] == f"agent-contract matrix: python 3.11; agent {AGENT}"


def test_a_broken_cell_carries_its_evidence_in_the_text_report() -> None:
    stderr = "\n".join(f"warning {i}" for i in range(10)) + "\nUserWarning: the last line"
    report = run(Runner(checked(agent_document(broken=True), stderr=stderr)), ["1.3.18"])
    assert report.exit_code == 5
    text = render_matrix_text(report)
    lines = text.splitlines()
    assert "    allowlist broken on build_agent:" in lines
    assert "      unknown_tool_0: tool no_such_tool ran (0)" in lines
    assert "      unknown_tool_4: tool no_such_tool ran (4)" in lines
    assert "      unknown_tool_5: tool no_such_tool ran (5)" not in lines
    assert "      ... and 2 more" in lines
    assert "    finding: tool 'ls' is withdrawn by the allowlist" in lines
    assert "      UserWarning: the last line" in lines  # the tail of check's stderr
    assert "      warning 0" not in lines
    assert "argument validation broken" not in text  # a holding cell adds nothing
    markdown = render_matrix_markdown(report)
    assert "  allowlist broken on build_agent:" in markdown
    again = load_matrix_json(render_matrix_json(report))
    assert again.agent == AGENT
    assert render_matrix_text(again) == text


def test_a_factory_that_does_not_load_on_a_release_is_check_failed_not_could_not_install() -> None:
    refused = CommandResult(
        returncode=2,
        stdout="",
        stderr="error: ConfigurationError: the agent factory 'shop.agent:build_agent' "
        "raised ImportError: cannot import name 'ToolErrorMiddleware'",
    )
    report = run(Runner(refused), ["1.3.0"])
    [column] = report.columns
    assert (column.status, column.versions) == ("error", STACK)
    assert column.cell("allowlist") == "check failed"
    assert report.exit_code == 1
    text = render_matrix_text(report)
    assert "1.3.0: check failed (langchain 1.3.18" in text
    assert "ToolErrorMiddleware" in text


def test_agent_and_harness_are_exclusive() -> None:
    err = io.StringIO()
    argv = ["matrix", "--langchain", "latest", "--agent", AGENT, "--harness", "offline"]
    assert main(argv, out=io.StringIO(), err=err) == 2
    assert "not allowed with argument" in err.getvalue()


# -- finding uv -----------------------------------------------------------------------------


def fake_uv(path: Path, body: str = "exit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def no_module(name: str) -> bool:
    return False


def test_uv_is_found_in_the_readmes_order(tmp_path: Path) -> None:
    from_env = fake_uv(tmp_path / "env" / "uv")
    on_path = str(tmp_path / "path" / "uv")
    tools = fake_uv(tmp_path / "repo" / ".tools" / "bin" / "uv")
    roots = [tmp_path / "elsewhere", tmp_path / "repo"]

    def which(name: str) -> str | None:
        return on_path

    def nowhere(name: str) -> None:
        return None

    common = {"roots": roots, "has_module": no_module}
    assert find_uv("/my/uv", environ={"UV": str(from_env)}, which=which, **common) == ["/my/uv"]
    assert find_uv(environ={"UV": str(from_env)}, which=which, **common) == [str(from_env)]
    # $UV naming nothing runnable is passed over.
    assert find_uv(environ={"UV": str(tmp_path / "gone")}, which=which, **common) == [on_path]
    assert find_uv(environ={}, which=which, **common) == [on_path]
    assert find_uv(environ={}, which=nowhere, **common) == [str(tools)]
    module = find_uv(environ={}, which=nowhere, roots=[], has_module=lambda name: name == "uv")
    assert module == [sys.executable, "-m", "uv"]
    with pytest.raises(DependencyMissingError, match="--uv") as raised:
        find_uv(environ={}, which=nowhere, roots=[tmp_path / "elsewhere"], has_module=no_module)
    assert str(tmp_path / "elsewhere" / ".tools" / "bin" / "uv") in str(raised.value)


def test_no_uv_anywhere_is_exit_4_naming_uv_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "_checkout_root", lambda: None)
    monkeypatch.setattr(command, "_has_module", no_module)
    err = io.StringIO()
    assert main(["matrix", "--langchain", "latest"], out=io.StringIO(), err=err) == 4
    assert "pass --uv PATH_TO_UV" in err.getvalue()
    assert "No module named uv" not in err.getvalue()


# -- end to end, with a fake uv ---------------------------------------------------------------

FAKE_UV = """\
# venv DIR ...: an "environment" whose python is this test's interpreter.
# pip install ...: installs nothing, records its arguments.
echo "$@" >> "{log}"
if [ "$1" = venv ]; then
  mkdir -p "$3/bin"
  printf '#!/bin/sh\\nexec {python} "$@"\\n' > "$3/bin/python"
  chmod +x "$3/bin/python"
fi
exit 0
"""

TINY_AGENT = '''\
from langchain.agents import create_agent
from langchain.tools import tool

from agent_contract import Contract
from agent_contract_langchain import ContractMiddleware, from_langchain_tool


@tool
def order_status(order_id: str) -> str:
    """The status of an order."""
    return f"{order_id}: shipped"


def build_agent(model):
    contract = Contract([from_langchain_tool(order_status, effect="read")])
    return create_agent(model, tools=[order_status], middleware=ContractMiddleware(contract).around())
'''


def test_matrix_agent_runs_check_agent_in_the_environment_uv_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``matrix --agent`` with uv found on ``PATH`` (a fake: its environments run this
    interpreter): the team's agent is checked in the environment, from the working
    directory, and the report is a verdict (it was ``error``, exit 4, when each
    environment ran ``check --harness`` on an agent factory)."""
    log = tmp_path / "uv.log"
    fake_uv(tmp_path / "bin" / "uv", FAKE_UV.format(log=log, python=sys.executable))
    team = tmp_path / "team"
    team.mkdir()
    (team / "tiny_agent.py").write_text(TINY_AGENT)
    (team / "pkg").mkdir()
    monkeypatch.delenv("UV", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(team)
    source = tmp_path / "checkout"
    for folder in (source, source / "bindings" / "langchain"):
        folder.mkdir(parents=True)
        (folder / "pyproject.toml").write_text("[project]\n")
    out, err = io.StringIO(), io.StringIO()
    argv = ["matrix", "--langchain", "latest", "--agent", "tiny_agent:build_agent"]
    argv += ["--with", "./pkg", "--source", str(source), "--quiet"]
    code = main(argv, out=out, err=err)
    text = out.getvalue()
    assert code == 0, text + err.getvalue()
    assert text.startswith("agent-contract matrix: python ")
    assert "; agent tiny_agent:build_agent" in text.splitlines()[0]
    assert "allowlist  " in text
    assert "check failed" not in text
    calls = log.read_text().splitlines()
    assert calls[0].startswith("venv --quiet ")
    assert calls[1].startswith("pip install --quiet --python ")
    assert str(source) in calls[1]
    assert str(team / "pkg") in calls[1]
