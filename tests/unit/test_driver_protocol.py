"""The driver seam: RunState's narrow protocol (ten operations and a read-only view) is its
docstring, the opt-in extension for a driver inside a framework's layers (LayerOps) is
documented and checked apart, drivers use nothing else (the offline loop and PydanticAI
the narrow protocol only, as must any new binding), and every tool result enters the
call-ID ledger by one path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_contract.runtime import LayerOps, RunState, RunView
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
]
BINDING_PACKAGES = sorted(d.tree for d in distributions() if not d.is_core)
"""Every binding's package (a new binding is found in the workspace, not listed)."""
LAYERED_BINDINGS = {"agent_contract_langchain"}
"""The bindings that drive a framework from inside its layers (LangChain's middleware
stack: its gate sees each execution, its outer middleware each answer) and so opt in to
``RunState.layers``. A new binding is not here: it learns the narrow protocol only."""
INSPECTION = {"caller", "context", "counters", "trace"}
"""Public on the view, to inspect a run; not for driving one."""
NARROW = {name for name in RunState.PROTOCOL if name != "view"} | {
    f"view.{name}" for name in RunView.PROTOCOL
}
"""What a driver may use: ``state.<operation>`` and ``state.view.<lookup>``."""
LAYERED = {f"layers.{name}" for name in LayerOps.PROTOCOL}
"""What a driver of a layered binding may use besides: ``state.layers.<operation>``."""


def _is_state(node: ast.expr) -> bool:
    """A RunState: a name ``state`` (the drivers' one name for it) or a ``.run_state``
    attribute."""
    named = isinstance(node, ast.Name) and node.id == "state"
    return named or (isinstance(node, ast.Attribute) and node.attr == "run_state")


def state_uses(source: str) -> list[tuple[int, str]]:
    """``(line, use)`` for every attribute read on a RunState in ``source``: the attribute,
    or ``view.<lookup>`` / ``layers.<operation>`` for one read through the view or the
    extension (``view`` or ``layers`` alone, not read through, is a use of its own)."""
    tree = ast.parse(source)
    receivers = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if _is_state(owner):
            through = node.attr in {"view", "layers"} and id(node) in receivers
            if not through:
                found.append((node.lineno, node.attr))
        elif (
            isinstance(owner, ast.Attribute)
            and owner.attr in {"view", "layers"}
            and _is_state(owner.value)
        ):
            found.append((node.lineno, f"{owner.attr}.{node.attr}"))
    return sorted(found)


def annotated_state_names(source: str) -> set[str]:
    """Names of parameters annotated ``RunState`` (they must be called ``state``)."""
    return {
        node.arg
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.arg)
        and node.annotation is not None
        and ast.unparse(node.annotation) == "RunState"
    }


def package_of(path: Path) -> str:
    """The top package a source file belongs to (``agent_contract``, a binding's)."""
    for package in (CORE, *BINDING_PACKAGES):
        if path.is_relative_to(package):
            return package.name
    raise ValueError(f"{path} is in no package")


def outside(path: Path, allowed: set[str]) -> list[str]:
    """``"file:line: use"`` for every RunState use in ``path`` not in ``allowed``."""
    source = path.read_text(encoding="utf-8")
    assert annotated_state_names(source) <= {"state"}, "name every RunState `state`"
    return [f"{path.name}:{line}: {use}" for line, use in state_uses(source) if use not in allowed]


def test_every_protocol_member_is_in_the_docstring() -> None:
    for cls in (RunState, RunView, LayerOps):
        doc = cls.__doc__ or ""
        missing = sorted(name for name in cls.PROTOCOL if f"``{name}" not in doc)
        assert missing == [], cls.__name__


def test_the_narrow_protocol_is_ten_operations_and_a_view() -> None:
    """The seam a new binding learns: the operations, and one read-only view; the
    extension's operations are none of them."""
    operations = RunState.PROTOCOL - {"view"}
    assert len(operations) == 10
    assert "view" in RunState.PROTOCOL
    assert operations.isdisjoint(LayerOps.PROTOCOL)
    assert operations.isdisjoint(RunView.PROTOCOL)
    assert RunView.PROTOCOL.isdisjoint(LayerOps.PROTOCOL)


def test_the_public_surface_is_the_protocol_and_the_inspection_attributes() -> None:
    public = {n for n in dir(RunState) if not n.startswith("_")}
    assert public - RunState.PROTOCOL - {"PROTOCOL", "layers"} == set()
    assert {n for n in RunState.PROTOCOL if not hasattr(RunState, n)} == set()
    view = {n for n in dir(RunView) if not n.startswith("_")}
    assert view - RunView.PROTOCOL - INSPECTION - {"PROTOCOL"} == set()
    assert {n for n in RunView.PROTOCOL | INSPECTION if not hasattr(RunView, n)} == set()
    layers = {n for n in dir(LayerOps) if not n.startswith("_")}
    assert layers - LayerOps.PROTOCOL - {"PROTOCOL"} == set()
    assert {n for n in LayerOps.PROTOCOL if not hasattr(LayerOps, n)} == set()


def test_the_view_is_read_only() -> None:
    """Every lookup of the view is a property without a setter or a method: nothing on
    it assigns to a run."""
    for name in RunView.PROTOCOL | INSPECTION:
        member = getattr(RunView, name)
        assert not isinstance(member, property) or member.fset is None, name


@pytest.mark.parametrize("path", DRIVERS, ids=lambda p: p.name)
def test_drivers_use_only_the_protocol(path: Path) -> None:
    layered = package_of(path) in LAYERED_BINDINGS
    assert outside(path, NARROW | LAYERED if layered else NARROW) == []


def test_the_offline_loop_and_pydantic_ai_use_only_the_narrow_protocol() -> None:
    paths = [CORE / "loop.py", *sorted(PYDANTIC_AI.rglob("*.py"))]
    uses = [use for path in paths for _, use in state_uses(path.read_text(encoding="utf-8"))]
    assert any(use.startswith("view.") for use in uses)  # the scan reads them
    assert [o for path in paths for o in outside(path, NARROW)] == []


def test_a_new_binding_learns_the_narrow_protocol_only() -> None:
    """Every module of the core (outside the runtime) and of every binding not in
    :data:`LAYERED_BINDINGS` (a new one is not) uses the narrow protocol only; the
    layered one uses the extension besides, and nothing else."""
    assert {p.name for p in BINDING_PACKAGES} >= {"agent_contract_pydantic_ai", *LAYERED_BINDINGS}
    found = []
    for package in (CORE, *BINDING_PACKAGES):
        allowed = NARROW | LAYERED if package.name in LAYERED_BINDINGS else NARROW
        for path in sorted(package.rglob("*.py")):
            if not path.is_relative_to(CORE / "runtime"):
                found += outside(path, allowed)
    assert found == []


def test_the_scan_sees_a_call_outside_the_protocol() -> None:
    source = (
        "def f(state):\n"
        "    state._ledger.record(x)\n"
        "    state.finish()\n"
        "    state.view.result_for(i)\n"
        "    state.view.trace.events\n"
        "    state.layers.record_attempt(i)\n"
        "    view = state.view\n"
        "    state.result_for(i)\n"
    )
    uses = [use for _, use in state_uses(source)]
    assert uses == [
        "_ledger",
        "finish",
        "view.result_for",
        "view.trace",
        "layers.record_attempt",
        "view",
        "result_for",
    ]
    assert [use for use in uses if use not in NARROW] == [
        "_ledger",
        "view.trace",
        "layers.record_attempt",
        "view",
        "result_for",
    ]
    assert [use for use in uses if use not in NARROW | LAYERED] == [
        "_ledger",
        "view.trace",
        "view",
        "result_for",
    ]
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
