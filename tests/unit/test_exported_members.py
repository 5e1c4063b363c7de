"""Every package and module keeps an honest ``__all__`` (as httpx's
``tests/test_exported_members.py``): sorted, every name in it exists, and every public
name a module defines is exported (anything else starts with ``_``)."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest

from tests.workspace import distributions

TREES = {d.package: d.tree for d in distributions()}
"""Import package -> its source folder: the core and every binding (tests/workspace.py)."""


def module_name(package: str, path: Path) -> str:
    parts = path.relative_to(TREES[package]).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join((package, *parts))


MODULES = sorted(
    (module_name(package, path), path)
    for package, tree in TREES.items()
    for path in tree.rglob("*.py")
)
IDS = [name for name, _ in MODULES]


def isort_style(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order: SCREAMING_CASE constants, then CamelCase classes, then the rest."""
    if len(name) > 1 and name.isupper():
        return 0, name
    if name[:1].isupper():
        return 1, name
    return 2, name


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "__all__":
            value = node.value
            if isinstance(value, ast.List | ast.Tuple):
                return [ast.literal_eval(element) for element in value.elts]
    return None


def defined_names(tree: ast.Module) -> list[str]:
    """Names a module defines at the top level (functions, classes, assignments)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


@pytest.mark.parametrize(("name", "path"), MODULES, ids=IDS)
def test_all_is_declared_sorted_and_complete(name: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exported = declared_all(tree)
    assert exported is not None, f"{name} has no __all__"
    assert exported == sorted(exported, key=isort_style), f"{name}: __all__ is not sorted"
    assert len(set(exported)) == len(exported)
    public = [n for n in defined_names(tree) if not n.startswith("_")]
    assert [n for n in public if n not in exported] == [], "public but not exported"


@pytest.mark.parametrize(("name", "path"), MODULES, ids=lambda v: str(v))
def test_every_exported_name_exists(name: str, path: Path) -> None:
    module = importlib.import_module(name)
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


@pytest.mark.parametrize(
    "name",
    [n for n, p in MODULES if p.name == "__init__.py"],
)
def test_a_package_exports_every_public_name_it_holds(name: str) -> None:
    package = importlib.import_module(name)
    held = {
        n
        for n, value in vars(package).items()
        if not n.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert held - set(package.__all__) == set()


def test_the_scan_finds_an_unexported_name() -> None:
    tree = ast.parse('__all__ = ["a"]\ndef a(): ...\ndef b(): ...\n_c = 1\n')
    assert declared_all(tree) == ["a"]
    assert [n for n in defined_names(tree) if not n.startswith("_")] == ["a", "b"]
