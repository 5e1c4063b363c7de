"""The no-key LCEL demo: the chain, the example script, and its dependency-missing exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableSequence

from examples.lcel_no_key import build_chain, normalize_whitespace, run_lcel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "lcel_no_key.py"


def run_example(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=ROOT,
        timeout=900,  # a hang guard, far above the expected time
        check=False,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "  hello   agent  ", {"text": "hello agent", "chars": 11, "words": 2}, id="doc"
        ),
        pytest.param("", {"text": "", "chars": 0, "words": 0}, id="empty"),
        pytest.param(" \t\n ", {"text": "", "chars": 0, "words": 0}, id="blank"),
        pytest.param("one", {"text": "one", "chars": 3, "words": 1}, id="one-word"),
        pytest.param(
            "  grüße\t東京 \n 🚀 ",
            {"text": "grüße 東京 🚀", "chars": 10, "words": 3},
            id="non-ascii",
        ),
    ],
)
def test_run_lcel_values(text: str, expected: dict[str, object]) -> None:
    assert run_lcel(text) == expected


def test_build_chain_is_a_sequence_into_a_parallel_map() -> None:
    chain = build_chain()
    assert isinstance(chain, RunnableSequence)
    assert chain.invoke("a  b") == {"text": "a b", "chars": 3, "words": 2}


def test_normalize_whitespace() -> None:
    assert normalize_whitespace("  a \t b\n\nc ") == "a b c"


def test_run_lcel_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="str"):
        run_lcel(42)  # type: ignore[arg-type]


def test_example_prints_json_and_exits_zero() -> None:
    result = run_example("  hello   agent  ")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"text": "hello agent", "chars": 11, "words": 2}
    assert result.stdout.count("\n") == 1


def test_example_without_text_is_a_usage_error() -> None:
    result = run_example()
    assert result.returncode == 2
    assert result.stdout == ""
    assert "usage" in result.stderr


def test_example_reports_missing_langchain_core(tmp_path: Path) -> None:
    blocker = tmp_path / "langchain_core"
    blocker.mkdir()
    (blocker / "__init__.py").write_text(
        "raise ImportError(\"No module named 'langchain_core' (blocked by the test)\")\n",
        encoding="utf-8",
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    result = run_example("  hello   agent  ", env=env)
    assert result.returncode == 4
    assert result.stdout == ""
    assert result.stderr.startswith("dependency_missing: langchain-core is not installed (")
    assert "blocked by the test" in result.stderr
