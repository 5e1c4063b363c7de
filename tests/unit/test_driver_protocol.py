"""The driver seam: RunState's protocol is its docstring, drivers use nothing else, and
every tool result enters the call-ID ledger by one path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_contract.runtime import RunState
from tests.workspace import distributions

TREES = {d.package: d.tree for d in distributions()}
"""Import package -> its source folder (tests/workspace.py)."""
CORE = TREES["agent_contract"]
BINDING = TREES["agent_contract_langchain"]
PYDANTIC_AI = TREES["agent_contract_pydantic_ai"]
DRIVERS = [
    CORE / "loop.py",
    CORE / "app" / "demo.py",
    BINDING / "middleware.py",
    BINDING / "gate.py",
    BINDING / "approvals.py",
    BINDING / "driving.py",
    BINDING / "harness.py",
    BINDING / "resuming.py",
    PYDANTIC_AI / "capability.py",
    PYDANTIC_AI / "tools.py",
    PYDANTIC_AI / "harness.py",
    BINDING / "reconcile.py",
]
INSPECTION = {"caller", "context", "counters", "trace", "PROTOCOL"}
"""Public, to inspect a run; not for driving one."""


def state_uses(source: str) -> list[tuple[int, str]]:
    """``(line, attribute)`` for every attribute read on a RunState in ``source``: a name
    ``state`` (the drivers' one name for it) or a ``.run_state`` attribute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        named = isinstance(owner, ast.Name) and owner.id == "state"
        if named or (isinstance(owner, ast.Attribute) and owner.attr == "run_state"):
            found.append((node.lineno, node.attr))
    return found


def annotated_state_names(source: str) -> set[str]:
    """Names of parameters annotated ``RunState`` (they must be called ``state``)."""
    return {
        node.arg
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.arg)
        and node.annotation is not None
        and ast.unparse(node.annotation) == "RunState"
    }


def test_every_protocol_member_is_in_the_docstring() -> None:
    doc = RunState.__doc__ or ""
    missing = sorted(name for name in RunState.PROTOCOL if f"``{name}" not in doc)
    assert missing == []


def test_the_public_surface_is_the_protocol_and_the_inspection_attributes() -> None:
    public = {n for n in dir(RunState) if not n.startswith("_")}
    public |= {"run_id", "contract", "caller", "context", "counters", "trace"}  # set in __init__
    assert public - RunState.PROTOCOL - INSPECTION == set()
    assert {n for n in RunState.PROTOCOL if not hasattr(RunState, n)} <= {"run_id", "contract"}


@pytest.mark.parametrize("path", DRIVERS, ids=lambda p: p.name)
def test_drivers_use_only_the_protocol(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert annotated_state_names(source) <= {"state"}, "name every RunState `state`"
    outside = [f"{path.name}:{line}: {attr}" for line, attr in state_uses(source)]
    outside = [o for o in outside if o.rsplit(": ", 1)[1] not in RunState.PROTOCOL]
    assert outside == []


def test_the_scan_sees_a_call_outside_the_protocol() -> None:
    uses = state_uses("def f(state):\n    state._ledger.record(x)\n    state.finish()\n")
    assert [attr for _, attr in uses if attr not in RunState.PROTOCOL] == ["_ledger"]
    assert annotated_state_names("def f(run: RunState) -> None: ...") == {"run"}


def ledger_writes(tree: ast.AST) -> list[tuple[str, int]]:
    """``(function, line)`` of every store into an ``answered`` mapping."""
    writes = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and ast.unparse(target.value).endswith(
                    "answered"
                ):
                    writes.append((function.name, node.lineno))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = ast.unparse(node.func.value)
                if owner.endswith("answered") and node.func.attr in {"update", "setdefault"}:
                    writes.append((function.name, node.lineno))
    return writes


def test_every_result_enters_the_ledger_by_one_path() -> None:
    writes = []
    for path in sorted((CORE / "runtime").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        writes += [(path.name, name) for name, _ in ledger_writes(tree)]
    assert writes == [("ledger.py", "record")]


def test_the_ledger_scan_sees_a_second_path() -> None:
    tree = ast.parse("def sneak(self, r):\n    self._ledger.answered[r.id] = r\n")
    assert ledger_writes(tree) == [("sneak", 2)]
