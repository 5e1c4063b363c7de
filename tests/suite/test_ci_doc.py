"""docs/CI.md's GitHub Actions workflow: the commands that need no network run here (the
team's pytest suite with --junitxml, and `check --junit` on the team's module, in a
throwaway folder holding the README's example plus the doc's factory); the others are
parsed (`matrix`'s options) or checked for the advice (installs pin agent-contract)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_contract.app.cli import build_parser
from agent_contract.conformance import BOUNDARIES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "CI.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXPRESSION = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")
VALUES = {
    "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    "langchain": importlib.metadata.version("langchain"),
}
SCRIPT = Path(sys.executable).parent / "agent-contract"


def block(text: str, language: str, after: str = "") -> str:
    section = text.split(after, 1)[1] if after else text
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found, f"no {language} block after {after!r}"
    return found.group(1)


def workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(block(DOC, "yaml", "## GitHub Actions"))
    return data


def commands() -> list[tuple[str, str, list[str]]]:
    """``(job, step name, argv)`` for every ``run:`` line, matrix expressions replaced."""
    found = []
    for job_name, job in workflow()["jobs"].items():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                if line.strip():
                    text = EXPRESSION.sub(lambda m: VALUES[m.group(1)], line)
                    found.append((job_name, step.get("name", ""), shlex.split(text)))
    return found


def kind(argv: list[str]) -> str:
    if argv[:4] == ["python", "-m", "pip", "install"]:
        return "install"
    if argv[:3] == ["python", "-m", "pytest"]:
        return "pytest"
    if argv[:2] == ["agent-contract", "check"]:
        return "check"
    if argv[:2] == ["agent-contract", "matrix"]:
        return "matrix"
    return "unknown"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's folder: the README's suite example plus the doc's factory."""
    folder = tmp_path_factory.mktemp("team")
    example = block(README, "python", "## Check your own agent")
    factory = block(DOC, "python", "## One definition of your agent")
    (folder / "test_my_agent.py").write_text(example + "\n\n" + factory, encoding="utf-8")
    return folder


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def junit_counts(path: Path) -> dict[str, int]:
    root = ET.fromstring(path.read_text(encoding="utf-8"))  # noqa: S314 - our own output
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    return {
        key: sum(int(s.get(key, "0")) for s in suites) for key in ("tests", "failures", "errors")
    }


def test_every_command_is_known() -> None:
    found = commands()
    assert {kind(argv) for _, _, argv in found} == {"install", "pytest", "check", "matrix"}
    assert set(workflow()["jobs"]) == {"suite", "releases"}


def test_installs_pin_agent_contract() -> None:
    for _, _, argv in commands():
        if kind(argv) == "install":
            assert "agent-contract==0.1.0" in argv
            assert "agent-contract-langchain==0.1.0" in argv
            assert importlib.metadata.version("agent-contract") == "0.1.0"


@pytest.mark.children_run_plain
def test_the_pytest_step_passes_and_writes_junit(project: Path) -> None:
    [argv] = [a for _, _, a in commands() if kind(a) == "pytest"]
    proc = run([sys.executable, *argv[1:]], project)
    assert proc.returncode == 0, proc.stdout[-2000:]
    report = project / argv[-1].split("=", 1)[1]
    counts = junit_counts(report)
    assert counts["tests"] > 30
    assert (counts["failures"], counts["errors"]) == (0, 0)


@pytest.mark.children_run_plain
def test_the_check_step_finds_the_module_and_writes_junit(project: Path) -> None:
    [argv] = [a for _, _, a in commands() if kind(a) == "check"]
    proc = run([str(SCRIPT), *argv[1:]], project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "result: every boundary holds on test_my_agent:make_harness (exit 0)" in proc.stdout
    assert proc.stderr.startswith("[1/")  # piped: plain progress lines
    report = project / argv[argv.index("--junit") + 1]
    counts = junit_counts(report)
    assert counts == {"tests": len(BOUNDARIES), "failures": 0, "errors": 0}


def test_the_matrix_step_parses() -> None:
    """Not run here (it installs from the package index); its options must exist."""
    [argv] = [a for _, _, a in commands() if kind(a) == "matrix"]
    args = build_parser().parse_args(argv[1:])
    assert args.langchain == "floor,1.3.0,latest"
    assert args.extra == ["pytest"]
    assert args.harness == ["test_my_agent:make_harness"]
    assert args.junit == Path("reports/matrix.xml")


def test_the_options_table_names_real_options() -> None:
    table = DOC.split("## `matrix` options for teams", 1)[1]
    named = set(re.findall(r"`(--[a-z-]+)", table))
    parser = build_parser()
    matrix_parser = parser._subparsers._group_actions[0].choices["matrix"]  # type: ignore[union-attr]
    known = {o for action in matrix_parser._actions for o in action.option_strings}
    assert named <= known
    assert known - named <= {"-h", "--help", "--python", "--uv"}
