"""A griffe extension for the API reference: the docstrings' Sphinx-style roles
(``:class:`~agent_contract.runtime.RunState```, ``:func:`run```, ``:mod:`...```) become
mkdocstrings cross-references, so ``mkdocs build --strict`` fails on a reference to a
name that does not exist. A role naming something outside this project (``subprocess.run``)
is rendered as code, and so is a private name (which the reference leaves out). Loaded by ``mkdocs.yml`` (``extensions: [docs/griffe_roles.py]``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?:mod|class|func|meth|attr|data|exc|obj|const):`(~?)([\w.]+(?:\n\s*[\w.]+)*)(\(\))?`"
)
"""``:role:`~target``` with an optional ``()`` after the target (which may be broken
across lines)."""
OWN = ("agent_contract", "agent_contract_langchain")


def _private(path: str) -> bool:
    """A private name (``_settle``) is not in the reference: it is shown as code."""
    return any(part.startswith("_") and not part.endswith("__") for part in path.split("."))


def _full_path(obj: griffe.Object, target: str) -> str | None:
    """``target`` as a full dotted path, resolved from ``obj``'s scope (None when it does
    not name one of this project's objects)."""
    if target.split(".", 1)[0] in OWN:
        return None if _private(target) else target
    head, _, rest = target.partition(".")
    scope: Any = obj
    while scope is not None:
        try:
            resolved: str = scope.resolve(head)
        except (griffe.NameResolutionError, AttributeError):
            scope = scope.parent
            continue
        path = f"{resolved}.{rest}" if rest else resolved
        return path if path.split(".", 1)[0] in OWN and not _private(path) else None
    return None


class SphinxRoles(griffe.Extension):
    """Rewrite each docstring's roles once the object tree is complete."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """The top-level package (``on_object`` covers the objects below it)."""
        self.on_object(obj=pkg)

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Replace the roles in ``obj``'s docstring."""
        docstring = obj.docstring
        if docstring is None or ":" not in docstring.value:
            return

        def replace(match: re.Match[str]) -> str:
            short, call = match.group(1), match.group(3) or ""
            target = re.sub(r"\s+", "", match.group(2))
            shown = (target.rsplit(".", 1)[-1] if short else target) + call
            path = _full_path(obj, target)
            if path is None:
                return f"`{shown}`"
            return f"[`{shown}`][{path}]"

        docstring.value = ROLE.sub(replace, docstring.value)
