"""Where ``agent-contract matrix`` gets this project's two distributions for each
environment (:func:`locate_packages`: the core and the framework's binding), and the
metadata's lower bounds a ``floor`` run installs exactly (:func:`metadata_floors`).

**The two distributions** come, in this order of preference, from ``--wheels DIR`` (the
built wheels), ``--source DIR`` (a source checkout), or wherever the running ones were
installed from: the ``direct_url.json`` an installer records (PEP 610) names the folder
of a source install or the wheel file of a wheel install; an install from an index is
installed again by name and version (``agent-contract==0.1.0``) from the configured
index. So ``matrix`` runs from an installed wheel as well as from a checkout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Final
from urllib.parse import unquote, urlparse

from ...errors import ConfigurationError
from ...registry import DISTRIBUTION
from .target import MatrixTarget, matrix_target

__all__ = [
    "CORE",
    "Packages",
    "installed_direct_url",
    "locate_packages",
    "metadata_floors",
]

CORE: Final = DISTRIBUTION
"""The core's distribution, installed into every environment."""


def metadata_floors(
    requires: Callable[[str], list[str] | None] = metadata.requires,
    target: MatrixTarget | None = None,
) -> dict[str, str]:
    """The lower bound (``>=``) of every unconditional requirement of the binding and the
    core, from their installed metadata: ``{"langchain": "1.2.9", "jsonschema": "4.18",
    ...}`` (this project's own distributions left out). The binding is ``target``'s
    (default: the registered target's).

    Raises:
        ConfigurationError: a requirement without a lower bound (a floor nobody tested).
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    binding = (target or matrix_target()).binding
    floors: dict[str, str] = {}
    for distribution in (binding, CORE):
        for requirement in requires(distribution) or []:
            if ";" in requirement:
                continue  # an extra or a marker: not always installed
            name = re.split(r"[\s<>=!~\[(]", requirement, maxsplit=1)[0]
            if name in (CORE, binding):
                continue
            bound = re.search(r">=\s*([\w.]+)", requirement)
            if bound is None:
                raise ConfigurationError(f"{distribution} requires {requirement!r}: no floor")
            floors[name] = bound.group(1)
    return floors


@dataclass(frozen=True, kw_only=True)
class Packages:
    """This project's two distributions, as ``uv pip install`` arguments."""

    requirements: tuple[str, ...]
    """The core's and the binding's: paths (folders or wheels) or ``name==version``."""
    origin: str
    """Where they come from, for the report."""


def installed_direct_url(distribution: str) -> dict[str, object] | None:
    """The installed distribution's ``direct_url.json`` (PEP 610), or None (installed
    from an index, or not installed)."""
    try:
        text = metadata.distribution(distribution).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _from_direct_url(
    distribution: str, direct_url: dict[str, object] | None, version: str
) -> tuple[str, str]:
    """``(requirement, origin)`` for one installed distribution."""
    url = str(direct_url.get("url", "")) if direct_url else ""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
        if "dir_info" in (direct_url or {}) and (path / "pyproject.toml").is_file():
            return str(path), f"the source folder {path}"
        if "archive_info" in (direct_url or {}) and path.is_file():
            return str(path), f"the file {path}"
    return f"{distribution}=={version}", f"{distribution}=={version} from the package index"


def _wheel(directory: Path, distribution: str, version: str) -> Path:
    stem = distribution.replace("-", "_")
    found = sorted(directory.glob(f"{stem}-*.whl"))
    matching = [p for p in found if p.name.startswith(f"{stem}-{version}-")]
    if len(matching) == 1:
        return matching[0]
    if len(found) == 1:
        return found[0]
    raise ConfigurationError(
        f"--wheels {directory}: expected one {stem}-*.whl (or one for version {version}), "
        f"found {[p.name for p in found]}"
    )


def locate_packages(
    *,
    wheels: Path | None = None,
    source: Path | None = None,
    direct_url: Callable[[str], dict[str, object] | None] = installed_direct_url,
    version: Callable[[str], str] = metadata.version,
    target: MatrixTarget | None = None,
) -> Packages:
    """Where each environment gets the core and the binding (see the module doc).

    Args:
        wheels: a folder holding the core's wheel (``agent_contract-*.whl``) and the
            binding's (``agent_contract_langchain-*.whl``) (``--wheels``).
        source: a source checkout: its root and the binding's folder (``--source``).
        direct_url: reads an installed distribution's ``direct_url.json``.
        version: an installed distribution's version.
        target: the framework whose binding is installed (default: the registered one).

    Raises:
        ConfigurationError: a ``--wheels`` folder without exactly one wheel of each, or a
            ``--source`` folder that is not a checkout.
        DependencyMissingError: no ``target`` given and no binding registers one.
    """
    target = target or matrix_target()
    distributions = (CORE, target.binding)
    if wheels is not None:
        found = tuple(str(_wheel(wheels, d, version(d))) for d in distributions)
        return Packages(requirements=found, origin=f"the wheels in {wheels}")
    if source is not None:
        binding = source.joinpath(*PurePosixPath(target.source_folder).parts)
        if not (source / "pyproject.toml").is_file() or not (binding / "pyproject.toml").is_file():
            raise ConfigurationError(f"--source {source}: not an agent-contract source checkout")
        return Packages(
            requirements=(str(source), str(binding)), origin=f"the source tree {source}"
        )
    pairs = [_from_direct_url(d, direct_url(d), version(d)) for d in distributions]
    return Packages(
        requirements=tuple(p[0] for p in pairs),
        origin="; ".join(f"{d}: {p[1]}" for d, p in zip(distributions, pairs, strict=True)),
    )
