"""``agent-contract matrix``: planning, parsing and reporting, with a fake command runner
(no network, no environments are built here; the real run is in docs/MATRIX.md)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

import agent_contract.app.matrix.run as matrix
from agent_contract.app.cli import main
from agent_contract.app.matrix.packages import Packages
from agent_contract.app.matrix.report import (
    MatrixReport,
    load_matrix_json,
    render_matrix_json,
    render_matrix_markdown,
    render_matrix_text,
)
from agent_contract.app.matrix.run import (
    CommandResult,
    default_matrix_harnesses,
    parse_releases,
    plan_environment,
    run_matrix,
    source_root,
)
from agent_contract.conformance import CheckReport
from agent_contract.conformance.report import to_json_data
from agent_contract.errors import ConfigurationError
from agent_contract_langchain.matrix_target import companions_for, plan_companions

SOURCE = Path("/src/agent-contract")
PACKAGES = Packages(
    requirements=(str(SOURCE), str(SOURCE / "bindings" / "langchain")),
    origin=f"the source tree {SOURCE}",
)
PUBLISHED = datetime(2026, 2, 6, 12, 39, 39, tzinfo=UTC)


def published(package: str, version: str) -> datetime:
    """A fake registry: every release was published at PUBLISHED."""
    assert package == "langchain"
    return PUBLISHED


def matrix_run(releases: list[str], runner: object, **kwargs: object) -> MatrixReport:
    """run_matrix over the fake registry and this fake source tree."""
    return run_matrix(
        releases,
        packages=PACKAGES,
        python="3.11",
        runner=runner,  # type: ignore[arg-type]
        publish_time=published,
        **kwargs,  # type: ignore[arg-type]
    )


HARNESSES = ("offline", "langchain")
STACK = {"langchain": "1.5.2", "langchain-core": "1.8.3", "langgraph": "1.2.24"}


class FakeRunner:
    """Answers each command by its role; records every argv."""

    def __init__(self, document: dict[str, object], **overrides: CommandResult) -> None:
        self.document = document
        self.overrides = overrides
        self.seen: list[tuple[str, ...]] = []

    def role(self, argv: Sequence[str]) -> str:
        if "compile" in argv:
            return "compile"
        if "venv" in argv:
            return "venv"
        if "install" in argv:
            return "install"
        if "-c" in argv:
            return "smoke"
        return "check"

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        self.seen.append(tuple(argv))
        role = self.role(argv)
        if role in self.overrides:
            return self.overrides[role]
        if role == "smoke":
            return CommandResult(returncode=0, stdout=json.dumps(STACK), stderr="")
        if role == "check":
            code = int(self.document["exit_code"])  # type: ignore[call-overload]
            return CommandResult(returncode=code, stdout=json.dumps(self.document), stderr="")
        return CommandResult(returncode=0, stdout="", stderr="")


@pytest.fixture
def check_doc(default_report: CheckReport) -> dict[str, object]:
    """A real check document (offline, langchain, control) as an environment prints it
    (a LangChain environment has no other binding: their columns are left out)."""
    data = to_json_data(default_report)
    kept = {"offline", "langchain", "plain-create-agent"}
    data["harnesses"] = [h for h in data["harnesses"] if h["name"] in kept]
    data["cells"] = [c for c in data["cells"] if c["harness"] in kept]
    data["broken"] = [c for c in data["broken"] if c["harness"] in kept]
    return data


def test_parse_releases() -> None:
    assert parse_releases(" 1.0.0,1.3.15, latest,1.0.0") == ["1.0.0", "1.3.15", "latest"]
    for bad in ("", ",", "1", "one.two", "1.0.0;rm -rf /"):
        with pytest.raises(ConfigurationError):
            parse_releases(bad)


def test_companion_pins_follow_the_measured_ranges() -> None:
    assert companions_for("1.0.0") == ("langgraph-prebuilt<1.0.9",)
    assert companions_for("1.2.10") == ("langgraph-prebuilt<1.0.9",)
    assert companions_for("1.2.11") == ()
    assert companions_for("1.3.15") == ()
    assert companions_for("latest") == ()


def test_plan_builds_outside_the_project_env(tmp_path: Path) -> None:
    companions = plan_companions(
        "1.0.0", mode="newest", publish_time=published, newest_pins=companions_for
    )
    plan = plan_environment(
        "1.0.0",
        workdir=tmp_path,
        packages=PACKAGES,
        python="3.11",
        harnesses=HARNESSES,
        companions=companions,
    )
    venv, install, smoke, check = plan.commands
    assert venv == ("uv", "venv", "--quiet", str(tmp_path / "langchain-1.0.0"), "--python", "3.11")
    assert install[:6] == ("uv", "pip", "install", "--quiet", "--python", str(plan.python))
    assert install[6:] == (
        str(SOURCE),
        str(SOURCE / "bindings" / "langchain"),
        "langchain==1.0.0",
        "langgraph-prebuilt<1.0.9",
    )
    assert smoke[:2] == (str(plan.python), "-c")
    assert check == (
        str(plan.python),
        "-m",
        "agent_contract.app.cli",
        "check",
        "--harness",
        "offline,langchain",
        "--format",
        "json",
        "--quiet",
    )
    assert all(".venv" not in part for command in plan.commands for part in command)


def test_latest_is_unpinned(tmp_path: Path) -> None:
    plan = plan_environment(
        "latest", workdir=tmp_path, packages=PACKAGES, python="3.12", harnesses=HARNESSES
    )
    assert plan.requirements == ("langchain",)


def test_checked_release(check_doc: dict[str, object]) -> None:
    runner = FakeRunner(check_doc)
    report = matrix_run(["latest"], runner)
    [column] = report.columns
    assert (column.status, column.label) == ("checked", "latest (1.5.2)")
    assert [runner.role(a) for a in runner.seen] == ["venv", "install", "smoke", "check"]
    # The control column of the document is broken; it is reported as such per harness.
    assert column.cell("allowlist") == "broken (plain-create-agent)"
    assert column.cell("call_id_binding") == "broken (plain-create-agent)"  # an id reused later
    assert column.cell("no_such_boundary") == "no scenario"
    assert report.exit_code == 5


def test_all_holding_exits_0(check_doc: dict[str, object]) -> None:
    holding = dict(check_doc)
    holding["cells"] = [c for c in check_doc["cells"] if c["harness"] != "plain-create-agent"]  # type: ignore[attr-defined]
    report = matrix_run(["1.3.15"], FakeRunner(holding))
    assert report.exit_code == 0
    declared = {c["boundary"] for c in holding["cells"] if not c.get("undeclared")}  # type: ignore[attr-defined]
    assert {report.columns[0].cell(b) for b in report.rows if b in declared} == {"holds"}


def test_install_failure_is_could_not_install(check_doc: dict[str, object]) -> None:
    error = "\n".join(f"line {i}" for i in range(20)) + "\n  your requirements are unsatisfiable."
    runner = FakeRunner(check_doc, install=CommandResult(returncode=1, stdout="", stderr=error))
    report = matrix_run(["0.3.27"], runner)
    [column] = report.columns
    assert column.status == "could_not_install"
    assert column.evidence.endswith("your requirements are unsatisfiable.")
    assert "line 0" not in column.evidence  # the last lines only
    assert [runner.role(a) for a in runner.seen] == ["venv", "install"]
    assert report.exit_code == 4


def test_stack_that_does_not_import_is_could_not_install(check_doc: dict[str, object]) -> None:
    broken = CommandResult(
        returncode=1,
        stdout="",
        stderr="Traceback ...\nImportError: cannot import name 'ExecutionInfo' from 'langgraph.runtime'",
    )
    runner = FakeRunner(check_doc, smoke=broken)
    report = matrix_run(["1.2.8"], runner)
    assert report.columns[0].status == "could_not_install"
    assert "ExecutionInfo" in report.columns[0].evidence
    assert report.exit_code == 4


def test_binding_that_does_not_import(check_doc: dict[str, object]) -> None:
    missing = CommandResult(
        returncode=4,
        stdout="",
        stderr="dependency_missing: install 'agent-contract-langchain' (cannot import name "
        "'ExtendedModelResponse' from 'langchain.agents.middleware.types')",
    )
    runner = FakeRunner(check_doc, check=missing)
    report = matrix_run(["1.0.0", "latest"], runner)
    first, latest = report.columns
    assert first.status == "binding_does_not_import"
    assert "ExtendedModelResponse" in first.evidence
    assert first.versions == STACK
    assert first.cell("allowlist") == "binding does not import"
    assert latest.status == "binding_does_not_import"
    assert report.exit_code == 5


def test_check_that_crashes_is_an_error(check_doc: dict[str, object]) -> None:
    crash = CommandResult(returncode=1, stdout="", stderr="Traceback\nKeyError: 'x'")
    report = matrix_run(["1.3.15"], FakeRunner(check_doc, check=crash))
    assert report.columns[0].status == "error"
    assert report.columns[0].evidence == "check exited 1: Traceback\nKeyError: 'x'"
    assert report.columns[0].cell("allowlist") == "check failed"
    assert report.exit_code == 1  # no verdict, but not "could not install" either


def three_columns(check_doc: dict[str, object]) -> MatrixReport:
    fail = CommandResult(returncode=1, stdout="", stderr="no solution")
    return MatrixReport(
        python="3.11",
        harnesses=HARNESSES,
        columns=(
            matrix_run(["0.3.27"], FakeRunner(check_doc, install=fail)).columns[0],
            matrix_run(["latest"], FakeRunner(check_doc)).columns[0],
        ),
    )


def test_renderers(check_doc: dict[str, object]) -> None:
    report = three_columns(check_doc)
    text = render_matrix_text(report)
    assert "boundary" in text.splitlines()[2]
    assert "latest (1.5.2)" in text
    assert "could not install" in text
    assert "    no solution" in text
    markdown = render_matrix_markdown(report)
    assert "| boundary | 0.3.27 | latest (1.5.2) |" in markdown
    assert "| allowlist | could not install | broken (plain-create-agent) |" in markdown


def test_json_round_trip(check_doc: dict[str, object]) -> None:
    report = three_columns(check_doc)
    text = render_matrix_json(report)
    data = json.loads(text)
    assert (data["format"], data["version"], data["exit_code"]) == ("agent-contract-matrix", 1, 5)
    assert [c["status"] for c in data["columns"]] == ["could_not_install", "checked"]
    assert render_matrix_json(load_matrix_json(text)) == text
    with pytest.raises(ConfigurationError):
        load_matrix_json('{"format": "agent-contract-check", "version": 1}')


def fake_checkout(root: Path) -> Path:
    for folder in (root, root / "bindings" / "langchain"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pyproject.toml").write_text("[project]\n")
    return root


def test_command_uses_the_runner_and_prints(
    monkeypatch: pytest.MonkeyPatch, check_doc: dict[str, object], tmp_path: Path
) -> None:
    runner = FakeRunner(check_doc)
    monkeypatch.setattr(matrix, "subprocess_runner", lambda: runner)
    monkeypatch.setattr(matrix, "uv_publish_time", lambda uv, run: published)
    source = fake_checkout(tmp_path / "checkout")
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "matrix",
            "--langchain",
            "1.3.15,latest",
            "--harness",
            "offline",
            "--source",
            str(source),
            "--uv",
            "uvx",
        ],
        out=out,
        err=err,
    )
    assert code == 5
    lines = err.getvalue().splitlines()  # piped: plain progress lines
    assert lines[0].startswith(
        "[1/2] langchain 1.3.15: companions as of langchain 1.3.15's release"
    )
    assert "[2/2] langchain latest: newest companions" in lines
    assert lines[-1].startswith(
        "[2/2] langchain latest: broken: response_shape, finish_reasons, allowlist"
    )
    assert "| 1.3.15 |" not in out.getvalue()
    assert out.getvalue().startswith("agent-contract matrix: python ")
    assert f"agent-contract from the source tree {source}" in out.getvalue()
    venvs = [a for a in runner.seen if runner.role(a) == "venv"]
    assert [a[0] for a in venvs] == ["uvx", "uvx"]
    installs = [a for a in runner.seen if runner.role(a) == "install"]
    assert all(str(source) in a for a in installs)
    checks = [a for a in runner.seen if runner.role(a) == "check"]
    assert all(a[a.index("--harness") + 1] == "offline" for a in checks)


def test_command_quiet(
    monkeypatch: pytest.MonkeyPatch, check_doc: dict[str, object], tmp_path: Path
) -> None:
    monkeypatch.setattr(matrix, "subprocess_runner", lambda: FakeRunner(check_doc))
    source = fake_checkout(tmp_path / "checkout")
    err = io.StringIO()
    argv = ["matrix", "--langchain", "latest", "--source", str(source), "--quiet"]
    assert main(argv, out=io.StringIO(), err=err) == 5
    assert err.getvalue() == ""


def test_bad_release_is_a_usage_error() -> None:
    err = io.StringIO()
    assert main(["matrix", "--langchain", "one"], out=io.StringIO(), err=err) == 2
    assert "not a LangChain release: 'one'" in err.getvalue()


def test_source_root_is_this_checkout() -> None:
    root = source_root()
    assert (root / "bindings" / "langchain" / "pyproject.toml").is_file()


def test_default_harnesses_are_the_registered_contract_harnesses() -> None:
    assert default_matrix_harnesses() == (
        "offline",
        "langchain",
        "langchain-async",
        "langchain-stream",
    )
