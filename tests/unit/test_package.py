"""Package hygiene: no LangChain in the core, a sorted public API, typed, no assert/eval/exec."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import agent_contract
from tests.workspace import bindings, core

ROOT = Path(__file__).resolve().parents[2]
CORE = core().tree
RUNTIME_TREES = [
    pytest.param(CORE, id="core"),
    *(pytest.param(b.tree, id=f"{b.label}-binding") for b in bindings()),
]
"""The shipped source trees: the core and every binding (tests/workspace.py)."""

FRAMEWORK_PREFIXES = ("langchain", "langgraph", "langsmith")

CHILD = """
import json, pkgutil, sys, importlib
import agent_contract
after_root = sorted(m for m in sys.modules if m.split(".")[0].startswith({prefixes!r}))
names = [info.name for info in pkgutil.walk_packages(agent_contract.__path__, "agent_contract.")]
for name in names:
    importlib.import_module(name)
after_all = sorted(m for m in sys.modules if m.split(".")[0].startswith({prefixes!r}))
print(json.dumps({{"root": after_root, "all": after_all, "modules": names}}))
"""


def python_files(tree: Path) -> list[Path]:
    files = sorted(tree.rglob("*.py"))
    assert files, f"no Python files under {tree}"
    return files


def test_core_imports_no_framework() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(prefixes=FRAMEWORK_PREFIXES)],
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, far above the expected time
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["root"] == []  # `import agent_contract`
    assert report["all"] == []  # every submodule of the core
    assert "agent_contract.app.cli" in report["modules"]
    assert "agent_contract.app.builtin_tools.calculator" in report["modules"]


def test_version_matches_the_distribution() -> None:
    assert agent_contract.__version__ == importlib.metadata.version("agent-contract")


def test_py_typed_is_shipped() -> None:
    assert (CORE / "py.typed").is_file()
    assert (Path(agent_contract.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("tree", RUNTIME_TREES)
def test_no_bare_assert_in_runtime_code(tree: Path) -> None:
    """Runtime checks must survive ``python -O``, which strips ``assert`` statements."""
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in python_files(tree)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if isinstance(node, ast.Assert)
    ]
    assert offenders == []


FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}


def _forbidden(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
        return func.id
    if isinstance(func, ast.Attribute) and func.attr in FORBIDDEN_CALLS:
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in {"builtins", "__builtins__"}:
            return f"{owner.id}.{func.attr}"
    return None


@pytest.mark.parametrize("tree", RUNTIME_TREES)
def test_no_eval_or_exec_in_runtime_code(tree: Path) -> None:
    offenders = []
    for path in python_files(tree):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            name = _forbidden(node)
            if name is not None:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}()")
        for needle in ("eval(", "exec("):
            if needle in source:
                offenders.append(f"{path.relative_to(ROOT)}: text {needle!r}")
    assert offenders == []


def test_the_forbidden_call_detector_works() -> None:
    tree = ast.parse("eval('1')\nbuiltins.exec('x')\nobj.eval()\n")
    found = [name for node in ast.walk(tree) if (name := _forbidden(node))]
    assert sorted(found) == ["builtins.exec", "eval"]


def test_assertions_are_live_in_test_modules() -> None:
    """Under ``python -O`` pytest still rewrites the asserts of test modules."""
    value = 1
    with pytest.raises(AssertionError):
        assert value == 2


def test_errors_module_vocabularies() -> None:
    errors = importlib.import_module("agent_contract.errors")
    assert "answered" in errors.STOP_REASONS
    assert len(set(errors.ERROR_KINDS)) == len(errors.ERROR_KINDS)
    for kind in (
        "unknown_tool",
        "not_allowed",
        "invalid_arguments",
        "unauthorized",
        "not_found",
        "transient",
        "timeout",
        "tool_error",
        "result_too_large",
    ):
        assert kind in errors.ERROR_KINDS
    for reason in (
        "answered",
        "max_model_steps",
        "max_tool_calls",
        "repeated_call",
        "deadline",
        "invalid_response",
        "model_error",
    ):
        assert reason in errors.STOP_REASONS
