"""The one list of bindings: the workspace members (``tests/workspace.py``) are the
bindings, and everything else that must know them either derives from that list or is
checked against it here. A new binding that lacks a piece fails one of these tests, which
says what to add."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.workspace import CORE, ROOT, Distribution, bindings, distributions, published_bindings

BINDINGS = bindings()
PUBLISHED = published_bindings()
ROOT_PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
BINDING_GLOB = "bindings/*/src"
"""How the tool configuration (ruff's src, mypy's files, mkdocstrings' paths) names every
binding's source folder."""


def expand(patterns: list[str]) -> set[Path]:
    """The folders ``patterns`` (relative to the root, with globs) name."""
    return {
        path
        for pattern in patterns
        for path in (ROOT.glob(pattern) if pattern != "." else [ROOT])
        if path.is_dir()
    }


def binding_sources() -> set[Path]:
    """Each binding's source folder: the folder its import package sits in."""
    return {binding.tree.parent for binding in BINDINGS}


def test_there_are_bindings_and_the_core_comes_first() -> None:
    names = [d.name for d in distributions()]
    assert names[0] == CORE
    assert len(BINDINGS) >= 1
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.label)
def test_a_binding_registers_harnesses_and_ships_a_typed_package(binding: Distribution) -> None:
    """A workspace member is a binding: its pyproject registers at least one harness
    (``agent_contract.harnesses``), and its wheel's package is there, typed."""
    assert binding.entry_points.get("agent_contract.harnesses"), (
        f'{binding.pyproject}: add [project.entry-points."agent_contract.harnesses"]'
    )
    assert (binding.tree / "__init__.py").is_file()
    assert (binding.tree / "py.typed").is_file()
    assert binding.folder.parent == ROOT / "bindings", "a binding lives in bindings/<name>"
    assert binding.frameworks, (
        f"{binding.pyproject}: name the framework's import packages under "
        "[tool.agent-contract] frameworks (the core is checked never to import them)"
    )
    assert all(name.isidentifier() for name in binding.frameworks)


def test_the_members_are_every_binding_folder() -> None:
    """The folders are the list: every folder of bindings/ with a pyproject is a member
    (the root names ``bindings/*``), none is left out."""
    assert ROOT_PYPROJECT["tool"]["uv"]["workspace"]["members"] == ["bindings/*"]
    folders = {p.parent for p in (ROOT / "bindings").glob("*/pyproject.toml")}
    assert {binding.folder for binding in BINDINGS} == folders


def test_ruff_and_mypy_cover_exactly_the_core_and_the_bindings() -> None:
    """The core, every binding and the repository-only ``devtools/`` (mypy); ruff also
    reads the tests and the repository root (where ``devtools`` and ``examples`` import
    from)."""
    ruff_src = ROOT_PYPROJECT["tool"]["ruff"]["src"]
    mypy_files = ROOT_PYPROJECT["tool"]["mypy"]["files"]
    assert BINDING_GLOB in ruff_src
    assert BINDING_GLOB in mypy_files
    assert expand([BINDING_GLOB]) == binding_sources(), (
        "a folder bindings/*/src that is no workspace member, or a member elsewhere"
    )
    assert expand(mypy_files) == {ROOT / "src", ROOT / "devtools", *binding_sources()}
    assert expand(ruff_src) == {ROOT / "src", ROOT / "tests", ROOT, *binding_sources()}


def test_mkdocstrings_reads_the_core_and_every_binding() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    found = re.search(r"^\s+paths: \[(.*)\]$", config, re.M)
    assert found is not None, "mkdocs.yml: no mkdocstrings paths"
    paths = [p.strip() for p in found.group(1).split(",")]
    assert expand(paths) == {ROOT / "src", *binding_sources()}


def test_the_development_environment_installs_every_binding() -> None:
    """``uv sync`` installs a member only when something depends on it: each published
    binding is a workspace source and a dev dependency of the root project (and nothing
    else is; an experiment is run with ``uv run --package <its name>``)."""
    names = {binding.name for binding in PUBLISHED}
    sources = ROOT_PYPROJECT["tool"]["uv"]["sources"]
    assert {n for n, s in sources.items() if s.get("workspace")} == names
    dev = {
        re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0]
        for r in ROOT_PYPROJECT["dependency-groups"]["dev"]
    }
    assert names <= dev, f"add {sorted(names - dev)} to [dependency-groups].dev"
    # The root project itself may be there too, for its own extras (otel, postgres).
    assert {n for n in dev if n.startswith("agent-contract-")} == names


@pytest.mark.parametrize("binding", PUBLISHED, ids=lambda b: b.label)
def test_a_binding_has_an_api_page_in_the_nav(binding: Distribution) -> None:
    """docs/api/<folder>.md documents the binding's package (test_docs_site.py checks that
    it lists every public module) and mkdocs.yml's nav lists the page."""
    page = ROOT / "docs" / "api" / f"{binding.folder.name}.md"
    assert page.is_file(), f"add {page.relative_to(ROOT)} with '::: {binding.package}'"
    assert f"\n::: {binding.package}\n" in page.read_text(encoding="utf-8")
    assert f"api/{page.name}" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
