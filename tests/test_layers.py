"""The import graph as a test: three layers and a binding, each folder's rule checked.

- The runtime (the core modules, ``runtime/``, ``trace/``, ``loop``, ``harnesses``,
  ``testing``) never imports the conformance kit or the application.
- The conformance kit (``conformance/``) never imports the application (``app/``).
- Nothing in ``src/agent_contract`` imports LangChain, LangGraph, PydanticAI or a binding
  (a workspace member: ``tests/workspace.py`` reads them from the pyproject files), and
  names no framework in its code; a binding never imports another.
- No module imports itself through a cycle of module-level imports, and the runtime's
  modules (``agent_contract.runtime.*``) form a DAG counting every import (inside
  functions and under ``TYPE_CHECKING`` too): data at the bottom, the rules in the
  middle, ``RunState`` and ``Contract`` on top.
- Entry points (every ``pyproject.toml``) name modules of their own distribution,
  and a binding's harness and command entry points load no framework at import.

Imports are read with ``ast``: ``import`` and ``from ... import`` anywhere (inside
functions too), ``if TYPE_CHECKING:`` blocks kept apart (they count only for the
runtime's DAG), plus string targets of ``importlib.import_module(...)`` and
``__import__(...)``, plus entry-point values. The checker is proven to fail on synthetic
graphs at the end of this file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pytest

from tests.workspace import bindings, distributions

TREES = {d.package: d.tree for d in distributions()}
ENTRY_POINTS = {d.package: d.entry_points for d in distributions()}
FRAMEWORKS = tuple(sorted({name for d in bindings() for name in d.frameworks}))
"""The frameworks' import packages: what each binding says it drives (its pyproject's
``[tool.agent-contract] frameworks``; tests/unit/test_workspace.py holds every binding
to naming one)."""
BINDINGS = tuple(d.package for d in bindings())
"""The bindings' import packages: the workspace members (tests/workspace.py)."""

FORBIDDEN: dict[str, set[str]] = {
    "runtime": {"conformance", "app", "binding", "framework"},
    "conformance": {"app", "binding", "framework"},
    "app": {"binding", "framework"},
}
"""Layer -> the layers it may never import."""


@dataclass
class Module:
    """One module of the tree and what it imports."""

    name: str
    source: str
    is_package: bool = False
    imports: set[str] = field(default_factory=set)
    """Everything it imports, anywhere in it (dotted names, possibly outside the tree)."""
    eager: set[str] = field(default_factory=set)
    """What it imports at module level, when it is imported."""
    typing_only: set[str] = field(default_factory=set)
    """What it imports under ``if TYPE_CHECKING:`` (for annotations; never loaded)."""


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
    return name.lstrip("_") == "TYPE_CHECKING"


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    base = parts if module.is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _targets(module: Module, node: ast.AST, known: Iterable[str]) -> list[str]:
    names = set(known)
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        target = _absolute(module, node)
        found = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in names]
        return found if len(found) == len(node.names) else [*found, target]
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        if called in {"import_module", "__import__"} and literal:
            return [str(first.value)]
    return []


def read_imports(module: Module, known: Iterable[str]) -> None:
    """Fill ``module.imports`` and ``module.eager`` from its source."""
    known = set(known)

    def visit(node: ast.AST, depth: int, typing: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                visit(child, depth, True)
            for child in node.orelse:
                visit(child, depth, typing)
            return
        for target in _targets(module, node, known):
            if typing:
                module.typing_only.add(target)
                continue
            module.imports.add(target)
            if depth == 0:
                module.eager.add(target)
        inner = depth + isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner, typing)

    visit(ast.parse(module.source), 0, False)


def load_tree() -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for package, tree in TREES.items():
        for path in sorted(tree.rglob("*.py")):
            parts = path.relative_to(tree).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *(parts[:-1] if is_package else parts)))
            modules[name] = Module(name, path.read_text(encoding="utf-8"), is_package)
    for module in modules.values():
        read_imports(module, modules)
    return modules


def layer(name: str) -> str:
    """The layer of a dotted name: one of :data:`FORBIDDEN`'s keys, ``binding``,
    ``framework``, or ``other`` (the standard library and other packages)."""
    top = name.split(".")[0]
    if top in FRAMEWORKS:
        return "framework"
    if top in BINDINGS:
        return "binding"
    if top != "agent_contract":
        return "other"
    for prefix, kind in (
        ("agent_contract.conformance", "conformance"),
        ("agent_contract.app", "app"),
    ):
        if name == prefix or name.startswith(prefix + "."):
            return kind
    return "runtime"


def _ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def forbidden_imports(modules: Mapping[str, Module]) -> list[str]:
    """``"module -> target (layer -> layer)"`` for every import a layer may not make."""
    found = []
    for module in modules.values():
        own = layer(module.name)
        for target in sorted(module.imports - _ancestors(module.name)):
            theirs = layer(target)
            if theirs in FORBIDDEN.get(own, set()):
                found.append(f"{module.name} -> {target} ({own} -> {theirs})")
    return sorted(found)


def cycles(modules: Mapping[str, Module], *, every_import: bool = False) -> list[list[str]]:
    """Import cycles among ``modules``: module-level imports (an import inside a
    function loads on demand, the way a binding defers its framework, and closes no
    cycle; a package importing through its parent is no edge either: the parent is
    always loaded first). With ``every_import``, imports inside functions and under
    ``TYPE_CHECKING`` are edges too: a module that names another's type in an annotation,
    or loads it on demand, still depends on it."""
    graph = {
        name: sorted(
            t
            for t in (m.imports | m.typing_only if every_import else m.eager) - _ancestors(name)
            if t in modules and t != name
        )
        for name, m in modules.items()
    }
    found, state, stack = [], {}, []

    def walk(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = "done"

    for node in graph:
        if node not in state:
            walk(node)
    return found


def framework_names_in_code(module: Module) -> list[str]:
    """String constants of ``module`` that name a framework, docstrings left out."""
    tree = ast.parse(module.source)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            docstrings |= {
                id(stmt.value)
                for stmt in body
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            }
    return [
        f"{module.name}:{node.lineno}: {node.value[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(
            word in node.value.lower()
            for word in ("langchain", "langgraph", "pydantic-ai", "pydantic_ai", "pydanticai")
        )
    ]


def entry_points(package: str) -> dict[str, dict[str, str]]:
    """The entry points ``package``'s pyproject.toml declares, by group."""
    return ENTRY_POINTS[package]


def eager_closure(start: str, modules: Mapping[str, Module]) -> set[str]:
    """Everything importing ``start`` imports (module-level imports, followed)."""
    seen: set[str] = set()
    todo = [start, *_ancestors(start)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in modules:
            todo += [t for t in modules[name].eager if t not in seen]
            todo += [a for a in _ancestors(name) if a not in seen]
    return seen


MODULES = load_tree()


# -- the rules on this tree ------------------------------------------------------------------


def test_each_layer_imports_only_what_it_may() -> None:
    """If this fails: the runtime reached into the kit or the app, the kit into the app,
    or the core into a framework or the binding. Move the code to the layer that owns
    it, or pass what it needs in (a Harness, a TraceSink, an entry point)."""
    assert forbidden_imports(MODULES) == []


def test_a_binding_never_imports_another() -> None:
    """Each binding stands on the core alone: one can be installed without the other."""
    crossing = [
        f"{name} -> {target}"
        for name, module in MODULES.items()
        for target in sorted(module.imports)
        if name.split(".")[0] in BINDINGS
        and target.split(".")[0] in BINDINGS
        and target.split(".")[0] != name.split(".")[0]
    ]
    assert crossing == []


def test_the_layers_are_where_the_docs_say() -> None:
    layers = {name: layer(name) for name in MODULES}
    assert layers["agent_contract.runtime.state"] == "runtime"
    assert layers["agent_contract.trace.sinks"] == "runtime"
    assert layers["agent_contract.harnesses"] == "runtime"
    assert layers["agent_contract.conformance.suite"] == "conformance"
    assert layers["agent_contract.app.cli"] == "app"
    assert layers["agent_contract_langchain.middleware"] == "binding"
    assert layers["agent_contract_pydantic_ai.capability"] == "binding"


def test_no_import_cycles() -> None:
    assert cycles(MODULES) == []


def runtime_modules(modules: Mapping[str, Module]) -> dict[str, Module]:
    """The modules of ``agent_contract.runtime`` (the package itself left out: it is the
    manifest that imports them all)."""
    return {n: m for n, m in modules.items() if n.startswith("agent_contract.runtime.")}


def test_the_runtime_is_a_dag_counting_every_import() -> None:
    """If this fails: a runtime module imports, inside a function or under
    ``TYPE_CHECKING``, one that depends on it (a phase typing against the seam, the data
    naming a rule). Move the definition to the module its idea lives in: the data of a
    run (``run``, ``records``, ``ledger``, ``terms``, ``history``) at the bottom, the
    rules taking a ``Run`` in the middle, ``RunState`` (``state``, with ``view`` and
    ``layers``) and ``Contract`` on top."""
    assert cycles(runtime_modules(MODULES), every_import=True) == []


def test_the_core_names_no_framework_in_its_code() -> None:
    """``grep -ri langchain src/agent_contract`` finds docs only: docstrings and comments."""
    core = [m for n, m in MODULES.items() if layer(n) != "binding"]
    assert [hit for m in core for hit in framework_names_in_code(m)] == []


@pytest.mark.parametrize("package", sorted(ENTRY_POINTS))
def test_entry_points_name_modules_of_their_own_distribution(package: str) -> None:
    for group, values in entry_points(package).items():
        for name, value in values.items():
            target = value.split(":")[0].strip()
            assert target in MODULES, f"{group} {name}: {target} is not a module of the tree"
            assert target.split(".")[0] == package, f"{group} {name} points outside {package}"


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_bindings_entry_points_load_no_framework(binding: str) -> None:
    """The CLI reads every registered harness and command to list them: importing an
    entry point's module must not import the framework (that happens when it runs)."""
    heavy = {}
    for group in ("agent_contract.harnesses", "agent_contract.commands"):
        for value in entry_points(binding).get(group, {}).values():
            target = value.split(":")[0].strip()
            loaded = eager_closure(target, MODULES)
            frameworks = sorted(t for t in loaded if layer(t) == "framework")
            if frameworks:
                heavy[target] = frameworks
    assert heavy == {}


# -- the checker can fail ----------------------------------------------------------------------


def synthetic(sources: dict[str, str]) -> dict[str, Module]:
    modules = {
        name: Module(name, source, is_package=name.count(".") == 0 or name.endswith("pkg"))
        for name, source in sources.items()
    }
    for module in modules.values():
        read_imports(module, modules)
    return modules


def test_a_forbidden_import_is_found() -> None:
    modules = synthetic(
        {
            "agent_contract.loop": "from .conformance import scenarios\n",
            "agent_contract.conformance": "",
            "agent_contract.conformance.scenarios": "from ..app.demo import run_demo\n",
            "agent_contract.app": "",
            "agent_contract.app.demo": "",
            "agent_contract.runtime": "",
            "agent_contract.runtime.state": (
                "import importlib\n"
                "def load():\n"
                "    return importlib.import_module('agent_contract_langchain.harness')\n"
            ),
            "agent_contract.trace": "",
            "agent_contract.trace.sinks": "def f():\n    import langgraph.types\n",
        }
    )
    assert forbidden_imports(modules) == [
        "agent_contract.conformance.scenarios -> agent_contract.app.demo (conformance -> app)",
        "agent_contract.loop -> agent_contract.conformance.scenarios (runtime -> conformance)",
        "agent_contract.runtime.state -> agent_contract_langchain.harness (runtime -> binding)",
        "agent_contract.trace.sinks -> langgraph.types (runtime -> framework)",
    ]


def test_type_checking_imports_are_not_dependencies() -> None:
    modules = synthetic(
        {
            "agent_contract.loop": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .app import cli\n"
            ),
            "agent_contract.app": "",
            "agent_contract.app.cli": "",
        }
    )
    assert forbidden_imports(modules) == []


def test_a_cycle_is_found() -> None:
    modules = synthetic(
        {
            "agent_contract.a": "from . import b\n",
            "agent_contract.b": "from .c import x\n",
            "agent_contract.c": "import agent_contract.a\n",
        }
    )
    assert cycles(modules) == [
        ["agent_contract.a", "agent_contract.b", "agent_contract.c", "agent_contract.a"]
    ]
    deferred = synthetic(
        {
            "agent_contract.a": "from . import b\n",
            "agent_contract.b": "def f():\n    import agent_contract.a\n",
        }
    )
    assert cycles(deferred) == []  # an import inside a function loads on demand


def test_a_runtime_ring_through_lazy_and_type_checking_imports_is_found() -> None:
    modules = synthetic(
        {
            "agent_contract.runtime.a": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
            ),
            "agent_contract.runtime.b": "def f():\n    from .c import C\n",
            "agent_contract.runtime.c": "from .a import A\n",
            "agent_contract.loop": "def f():\n    from .runtime.c import C\n",
        }
    )
    assert cycles(modules) == []  # module-level imports alone close no ring
    assert cycles(runtime_modules(modules), every_import=True) == [
        [
            "agent_contract.runtime.a",
            "agent_contract.runtime.b",
            "agent_contract.runtime.c",
            "agent_contract.runtime.a",
        ]
    ]


def test_a_framework_name_in_code_is_found() -> None:
    module = Module("agent_contract.x", '"""Mentions LangChain."""\nNAME = "langchain-async"\n')
    assert framework_names_in_code(module) == ["agent_contract.x:2: 'langchain-async'"]
