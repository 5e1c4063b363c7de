"""The repository's distributions, read from its pyproject files: the one list of bindings.

The root ``pyproject.toml`` is the core (``agent-contract``); the folders its
``[tool.uv.workspace].members`` name (``bindings/*``) are the bindings, one folder each.
Each pyproject names its distribution (``[project].name``), the one import package its
wheel ships (``[tool.hatch.build.targets.wheel].packages``) and its entry points (a binding
registers its harnesses under ``agent_contract.harnesses``); a binding's
``[tool.agent-contract]`` table names the framework it drives (``frameworks``: import
packages) and whether it is published (``published``, default true). The tests and
``.ci/check_dist.py`` derive every list of bindings from :func:`distributions`; nothing is
imported or installed to read it. Adding a binding is adding its folder;
``tests/unit/test_workspace.py`` names whatever else a published one still lacks.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CORE",
    "ROOT",
    "Distribution",
    "bindings",
    "core",
    "distributions",
    "published_bindings",
    "read_pyproject",
]

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder (the core's pyproject.toml is there)."""
CORE = "agent-contract"
"""The core's distribution name."""


def read_pyproject(folder: Path) -> dict[str, Any]:
    """The parsed ``folder/pyproject.toml``.

    Raises:
        FileNotFoundError: ``folder`` has no pyproject.toml.
    """
    with (folder / "pyproject.toml").open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    return data


@dataclass(frozen=True)
class Distribution:
    """One distribution of the workspace: the core or a binding."""

    name: str
    """The distribution name, e.g. ``agent-contract-langchain``."""
    folder: Path
    """The folder holding its pyproject.toml (the root for the core)."""
    package: str
    """The import package its wheel ships, e.g. ``agent_contract_langchain``."""
    tree: Path
    """The source folder of :attr:`package` (``folder/src/<package>``)."""
    entry_points: dict[str, dict[str, str]]
    """Entry-point group -> ``{name: "module:attribute"}``; console scripts under
    ``console_scripts``."""
    frameworks: tuple[str, ...] = ()
    """A binding's framework: the import packages it drives (``[tool.agent-contract]
    frameworks``); empty for the core."""
    published: bool = True
    """False for a binding that says ``published = false``: an experiment, which needs
    no extra, dev dependency or API page (and is not installed by ``uv sync``)."""

    @property
    def pyproject(self) -> Path:
        """Its pyproject.toml."""
        return self.folder / "pyproject.toml"

    @property
    def artifact_prefix(self) -> str:
        """How its wheel and sdist file names start (the name with ``_`` for ``-``)."""
        return self.name.replace("-", "_")

    @property
    def is_core(self) -> bool:
        """True for agent-contract itself."""
        return self.name == CORE

    @property
    def label(self) -> str:
        """A short name for test ids: ``core``, or a binding's name without the core's
        (``langchain`` for agent-contract-langchain)."""
        return "core" if self.is_core else self.name.removeprefix(f"{CORE}-")


def _distribution(folder: Path) -> Distribution:
    data = read_pyproject(folder)
    project = data["project"]
    packages = data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    if len(packages) != 1:
        raise ValueError(f"{folder}: a distribution ships one package, not {packages}")
    tree = folder / packages[0]
    groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
    declared = data["tool"].get("agent-contract", {})
    return Distribution(
        name=project["name"],
        folder=folder,
        package=tree.name,
        tree=tree,
        entry_points={group: dict(values) for group, values in groups.items()},
        frameworks=tuple(declared.get("frameworks", ())),
        published=declared.get("published", True) is not False,
    )


def _members(root: Path) -> list[Path]:
    """The member folders ``[tool.uv.workspace].members`` names (globs expanded, each in
    name order, as uv expands them): those holding a pyproject.toml."""
    patterns = read_pyproject(root)["tool"]["uv"]["workspace"]["members"]
    return [
        folder
        for pattern in patterns
        for folder in sorted(root.glob(pattern))
        if (folder / "pyproject.toml").is_file()
    ]


def distributions(root: Path = ROOT) -> tuple[Distribution, ...]:
    """The core, then each workspace member (in name order).

    Raises:
        FileNotFoundError: a member folder has no pyproject.toml.
        KeyError: a pyproject lacks ``[project].name`` or the wheel's ``packages``.
        ValueError: a wheel ships more than one package.
    """
    return (_distribution(root), *(_distribution(folder) for folder in _members(root)))


def core(root: Path = ROOT) -> Distribution:
    """The core distribution (agent-contract)."""
    return distributions(root)[0]


def bindings(root: Path = ROOT) -> tuple[Distribution, ...]:
    """The bindings: every workspace member, in name order."""
    return distributions(root)[1:]


def published_bindings(root: Path = ROOT) -> tuple[Distribution, ...]:
    """The bindings this project publishes (not the experiments): each has an extra in
    the core, is a dev dependency, and has an API page."""
    return tuple(binding for binding in bindings(root) if binding.published)
