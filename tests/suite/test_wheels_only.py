"""The built wheels alone (issue 13, item 6): ``uv build`` the distributions, install
only those wheels (and their dependencies, at the versions ``uv.lock`` pins, from the
registry or uv's cache) into a fresh virtual environment outside the repository, and
run there what a team runs: ``agent-contract check``, ``check --agent`` on an agent of
their own, and the README's suite example with pytest.

(``agent-contract matrix --langchain latest`` from these wheels builds one more
environment per release from the registry; it is measured by hand, not here: see
docs/CI.md.)
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_contract.app.matrix.command import find_uv
from tests.workspace import distributions

ROOT = Path(__file__).resolve().parents[2]
UV = find_uv(roots=[ROOT])
"""uv as the README's set-up installs it (``.tools/bin/uv``), ``$UV`` (what ``uv run``
sets) or on ``PATH`` (:func:`find_uv`, which the matrix command uses): found wherever the
README's set-up ran, never a skip; none at all fails the collection naming the set-up."""

pytestmark = [pytest.mark.children_run_plain]


def run(*argv: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # Outside the project: no VIRTUAL_ENV of ours, no inherited uv project settings.
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV" and not k.startswith("UV_")}
    env["PYTHONWARNINGS"] = "ignore"
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def readme_suite_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Check your own agent", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding only the built wheels (and pytest)."""
    work = tmp_path_factory.mktemp("wheels")
    built = run(
        *UV, "build", "--all-packages", "--wheel", "--quiet", "--out-dir", work / "dist", cwd=ROOT
    )
    assert built.returncode == 0, built.stderr
    wheels = sorted((work / "dist").glob("*.whl"))
    assert [re.sub(r"-\d.*", "", w.name) for w in wheels] == sorted(
        d.artifact_prefix for d in distributions()
    )
    exported = run(
        *UV,
        "export",
        "--frozen",
        "--no-hashes",
        "--no-emit-workspace",
        "--no-dev",
        "--all-packages",
        "--format",
        "requirements-txt",
        cwd=ROOT,
    )
    assert exported.returncode == 0, exported.stderr
    (work / "constraints.txt").write_text(exported.stdout, encoding="utf-8")
    made = run(*UV, "venv", "--quiet", work / "venv", "--python", sys.executable, cwd=work)
    assert made.returncode == 0, made.stderr
    python = work / "venv" / "bin" / "python"
    pytest_pin = f"pytest=={importlib.metadata.version('pytest')}"
    installed = run(
        *UV,
        "pip",
        "install",
        "--quiet",
        "--python",
        python,
        "-c",
        work / "constraints.txt",
        *wheels,
        pytest_pin,
        cwd=work,
    )
    assert installed.returncode == 0, installed.stderr
    return work / "venv"


def test_only_the_wheels_are_installed(venv: Path) -> None:
    python = venv / "bin" / "python"
    done = run(
        python,
        "-c",
        "import agent_contract, agent_contract_langchain; print(agent_contract.__file__, agent_contract_langchain.__file__)",
        cwd=venv,
    )
    assert done.returncode == 0, done.stderr
    assert all(str(venv) in p for p in done.stdout.split())  # not the repository's source


def test_check_runs_from_the_wheels(venv: Path) -> None:
    done = run(venv / "bin" / "agent-contract", "check", "--quiet", cwd=venv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result: every boundary holds on offline, langchain" in done.stdout


def test_check_agent_runs_from_the_wheels(venv: Path, tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "my_agent.py", tmp_path / "my_agent.py")
    done = run(
        venv / "bin" / "agent-contract",
        "check",
        "--agent",
        "my_agent:build_agent",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "per tool on build_agent" in done.stdout


def test_the_readme_suite_example_runs_from_the_wheels(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "test_my_agent.py").write_text(readme_suite_example(), encoding="utf-8")
    done = run(
        venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b\d+ passed", done.stdout), done.stdout
