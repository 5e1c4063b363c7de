"""The API reference (docs/api/*.md, built by mkdocs + mkdocstrings in CI with
--strict) covers every public module of every distribution."""

from __future__ import annotations

import re
from pathlib import Path

from tests.workspace import distributions

ROOT = Path(__file__).resolve().parents[2]
TREES = {d.package: d.tree for d in distributions() if d.published}
"""Import package -> its source folder: the core and every published binding
(tests/workspace.py)."""


def public_modules() -> set[str]:
    """Every module and package, minus private ones."""
    found: set[str] = set()
    for package, tree in TREES.items():
        for path in tree.rglob("*.py"):
            parts = [package, *path.relative_to(tree).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            if any(part.startswith("_") for part in parts):
                continue
            found.add(".".join(parts))
    return found


def documented_modules() -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "api").glob("*.md"))
    return set(re.findall(r"^::: ([\w.]+)$", text, re.M))


def test_every_public_module_has_a_reference_entry() -> None:
    """A new module needs a line ``::: its.dotted.name`` on a page of docs/api/ (the
    strict docs build then checks its docstrings and cross-references)."""
    missing = public_modules() - documented_modules()
    assert missing == set(), f"add '::: <module>' to a page in docs/api/ for: {sorted(missing)}"


def test_every_reference_entry_names_a_module() -> None:
    assert documented_modules() - public_modules() == set()


def test_every_api_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs" / "api").glob("*.md"):
        assert f"api/{page.name}" in config
