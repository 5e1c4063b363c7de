"""What ``agent-contract matrix`` knows about a framework: a :class:`MatrixTarget` a
binding registers under the entry-point group
:data:`~agent_contract.registry.MATRIX_GROUP` (``agent_contract.matrix``).

The matrix itself names no framework: the framework's distribution, its companion
packages, the import smoke test, the companion pins a range of releases needs and the
measured floors all come from the target. Loading a target imports the binding's data
module only, never the framework: the framework is imported in the throwaway
environments the matrix builds, by the target's :attr:`~MatrixTarget.smoke` program.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from ...errors import ConfigurationError, DependencyMissingError
from ...registry import matrix_entry_points, missing_bindings

__all__ = [
    "DATED_MARGIN",
    "CompanionMode",
    "Companions",
    "MatrixTarget",
    "PublishTime",
    "Version",
    "matrix_target",
    "matrix_targets",
    "missing_target",
    "release_version",
]

DATED_MARGIN: Final = timedelta(hours=1)
"""How long after a framework release its companions may have been uploaded and still
count as its own (a coordinated release uploads its packages within minutes, in any
order)."""

CompanionMode = Literal["dated", "newest"]
"""``dated``: companions as of the release's publish time; ``newest``: the newest that
resolve, plus the measured companion pins."""

Version = tuple[int, ...]
"""A release number as integers, e.g. ``(1, 3, 15)``."""


def release_version(text: str) -> Version:
    """``"1.3.15"`` -> ``(1, 3, 15)``: the first three numbers of a release."""
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


PublishTime = Callable[[str, str], datetime]
"""``publish_time(package, version) -> datetime`` (UTC): when the registry received it.

Raises:
    LookupError: the registry does not say.
"""


@dataclass(frozen=True, kw_only=True)
class Companions:
    """How one environment's companions of the framework are chosen.

    ``framework==X`` alone resolves the *newest* companions, which X never shipped with.
    ``dated`` companions are resolved as they were when X was published: uv's
    ``--exclude-newer-package`` limits each of :attr:`dated` to releases uploaded before
    :attr:`cutoff` (X's publish time plus :data:`DATED_MARGIN`)."""

    pins: tuple[str, ...] = ()
    """Requirements added to the install (``langchain-core==1.2.9``, a companion pin)."""
    cutoff: datetime | None = None
    """:attr:`dated` packages resolve to releases uploaded before this time."""
    dated: tuple[str, ...] = ()
    """The packages :attr:`cutoff` applies to."""
    note: str = ""
    """How they were chosen, for the report."""

    def uv_arguments(self) -> tuple[str, ...]:
        """``--exclude-newer-package NAME=TIME`` for each dated package."""
        if self.cutoff is None:
            return ()
        stamp = self.cutoff.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        arguments: list[str] = []
        for name in self.dated:
            arguments += ["--exclude-newer-package", f"{name}={stamp}"]
        return tuple(arguments)


@dataclass(frozen=True, kw_only=True)
class MatrixTarget:
    """A framework the matrix installs release by release, as its binding describes it."""

    name: str
    """The framework's distribution (what ``name==release`` installs), and the option that
    lists its releases (``--name 1.2.9,latest``)."""
    label: str
    """The framework's name in prose (help text and messages)."""
    binding: str
    """The binding's distribution, installed into every environment beside the core."""
    source_folder: str
    """The binding's folder in a source checkout, relative to the repository root (POSIX
    separators)."""
    family: tuple[str, ...]
    """The packages released together with the framework: dated to a release's publish
    time in ``dated`` mode."""
    smoke: str
    """A Python program run in each environment: it imports the resolved stack and prints
    its versions as one JSON object, the framework's first."""
    pin_options: Mapping[str, str]
    """Command-line pins: option name (``core`` for ``--core VERSION``) -> the package it
    pins."""
    measured_floors: Mapping[str, str]
    """The metadata's lower bounds as last measured by a ``floor`` run (checked against
    the metadata by the binding's tests)."""
    companions_for: Callable[[str], tuple[str, ...]]
    """``companions_for(release)``: the companion pins a release needs when the newest
    companions are resolved (none for ``latest`` and ``floor``)."""
    plan_companions: Callable[..., Companions]
    """``plan_companions(release, *, mode, publish_time, **pins)``: how one environment's
    companions are chosen; ``pins`` are the :attr:`pin_options` given (option name ->
    version, absent or None when not given). Raises LookupError when the publish time of
    the release is unknown."""


def matrix_targets() -> tuple[MatrixTarget, ...]:
    """Every registered target, in registry order.

    Raises:
        ConfigurationError: an entry point that does not name a target of its name.
    """
    targets = []
    for ep in matrix_entry_points():
        target = ep.load()
        if not isinstance(target, MatrixTarget) or target.name != ep.name:
            raise ConfigurationError(
                f"matrix entry point {ep.name!r} ({ep.value}) is not a MatrixTarget "
                f"named {ep.name!r}"
            )
        targets.append(target)
    return tuple(targets)


def matrix_target(name: str | None = None) -> MatrixTarget:
    """The registered target ``name``, or the only one when ``name`` is None.

    Raises:
        DependencyMissingError: no binding registers a target (or none of that name).
        ConfigurationError: several are registered and ``name`` is None.
    """
    targets = {target.name: target for target in matrix_targets()}
    if name is not None and name in targets:
        return targets[name]
    if name is None and len(targets) == 1:
        return next(iter(targets.values()))
    if name is None and len(targets) > 1:
        raise ConfigurationError(f"several frameworks have a release matrix: {sorted(targets)}")
    raise missing_target(name)


def missing_target(name: str | None = None) -> DependencyMissingError:
    """The error for a release matrix no installed binding provides (for the framework
    ``name``, or for any): it names the bindings agent-contract declares that are not
    installed."""
    missing = ", ".join(missing_bindings()) or "a binding"
    wanted = f" for {name!r}" if name is not None else ""
    return DependencyMissingError(missing, f"no installed binding has a release matrix{wanted}")
