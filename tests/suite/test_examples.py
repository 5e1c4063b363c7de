"""Every example in ``examples/`` runs and prints what its docstring states (issue 13,
item 5): the probes on your own agent (the command and the pytest class), the middleware
in a production-style agent with a durable checkpointer across two processes, and a
keyless LCEL chain with a chat model bound to tools."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CLI = Path(sys.executable).parent / "agent-contract"

pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.children_run_plain,
]


def stated(name: str, index: int = -1) -> str:
    """The ``index``-th literal block (``::`` then indented lines) of an example's
    docstring, dedented, with a final newline."""
    doc = ast.get_docstring(ast.parse((EXAMPLES / name).read_text(encoding="utf-8"))) or ""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in doc.splitlines():
        if current is not None:
            if line.startswith("    ") or not line.strip():
                current.append(line[4:])
                continue
            blocks.append(current)
            current = None
        if line.rstrip().endswith("::"):
            current = []
    if current is not None:
        blocks.append(current)
    text = "\n".join(blocks[index]).strip("\n")
    return text + "\n"


def run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        list(argv),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )


def test_the_lcel_chain_with_tools_prints_what_it_states() -> None:
    done = run(sys.executable, str(EXAMPLES / "lcel_tools_contract.py"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == stated("lcel_tools_contract.py")


def test_the_production_agent_pauses_and_is_approved_in_another_process(tmp_path: Path) -> None:
    script = str(EXAMPLES / "production_agent.py")
    paused = run(sys.executable, script, "run", str(tmp_path))
    assert paused.returncode == 0, paused.stderr
    assert (tmp_path / "checkpoints.sqlite").exists()  # the durable checkpointer
    approved = run(sys.executable, script, "approve", str(tmp_path))
    assert approved.returncode == 0, approved.stderr
    assert paused.stdout + approved.stdout == stated("production_agent.py")
    again = run(sys.executable, script, "approve", str(tmp_path))
    assert again.returncode == 8  # nothing waits any more: the refund is not applied twice
    assert approved.stdout.endswith("refunds applied: 1\n")


@pytest.mark.parametrize(
    ("command", "where", "code"),
    [
        ("run", "a-file", 2),
        ("run", "a-file/sub", 2),
        ("approve", "a-file", 2),
        ("approve", "missing", 8),
    ],
)
def test_the_production_agent_refuses_a_folder_it_cannot_use(
    tmp_path: Path, command: str, where: str, code: int
) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    done = run(
        sys.executable, str(EXAMPLES / "production_agent.py"), command, str(tmp_path / where)
    )
    assert done.returncode == code, done.stderr
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "missing").exists()


def test_check_on_your_own_agent_prints_what_it_states() -> None:
    done = run(str(CLI), "check", "--agent", "my_agent:build_agent", "--quiet", cwd=EXAMPLES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert stated("my_agent.py", 1) in done.stdout
    assert "result: every boundary holds on build_agent (exit 0)" in done.stdout


def test_the_pytest_class_on_your_own_agent_prints_what_it_states() -> None:
    done = run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(EXAMPLES / "test_my_agent.py"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(stated("test_my_agent.py").strip() + " in "), done.stdout
