"""What ``agent-contract matrix`` installs for LangChain, registered under the entry-point
group ``agent_contract.matrix`` (see this package's ``pyproject.toml``): the companion
packages of a langchain release (:data:`FAMILY`), the pins a range of releases needs
(:data:`COMPANION_PINS`), the measured floors (:data:`MEASURED_FLOORS`) and the import
smoke test (:data:`SMOKE`). The matrix itself is the core's
(:mod:`agent_contract.app.matrix`).

Importing this module imports no LangChain: the smoke test imports it in each throwaway
environment.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from types import MappingProxyType
from typing import Final

from agent_contract.app.matrix.target import (
    DATED_MARGIN,
    CompanionMode,
    Companions,
    MatrixTarget,
    PublishTime,
    Version,
    release_version,
)

__all__ = [
    "BINDING",
    "COMPANION_PINS",
    "FAMILY",
    "LANGCHAIN_MATRIX",
    "MEASURED_FLOORS",
    "SMOKE",
    "companions_for",
    "plan_companions",
]

BINDING: Final = "agent-contract-langchain"

FAMILY: Final = (
    "langchain-core",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-sdk",
)
"""The packages released together with langchain: dated to a langchain release's
publish time in ``dated`` mode."""

COMPANION_PINS: Final[tuple[tuple[Version, Version, tuple[str, ...], str], ...]] = (
    (
        (1, 0, 0),
        (1, 2, 11),
        ("langgraph-prebuilt<1.0.9",),
        "langchain 1.0.0 to 1.2.10 resolve langgraph 1.0.x, and langgraph-prebuilt 1.0.9 or "
        "newer fails to import with it (cannot import name 'ExecutionInfo')",
    ),
)
"""``(first release, first release no longer affected, pins, why)``: companion pins a
range of LangChain releases needs to install a working stack (measured with uv
0.13.9; see ``docs/MATRIX.md``)."""


MEASURED_FLOORS: Final = MappingProxyType(
    {
        "langchain": "1.0.0",
        "langchain-core": "1.0.0",
        "langgraph": "1.0.0",
        "langgraph-checkpoint-sqlite": "2.0.11",
        "jsonschema": "4.18",
        "rfc8785": "0.1.4",
        "cryptography": "42",
    }
)
"""The metadata's lower bounds (:func:`~agent_contract.app.matrix.packages.metadata_floors`)
as last measured: ``agent-contract matrix --langchain floor`` installed exactly these and
every boundary held (``docs/MATRIX.md``). ``tests/unit/test_distribution.py`` fails when
the metadata's floors differ from it, so a changed floor is measured before it ships."""

SMOKE: Final = (
    "import json, importlib.metadata as m, langchain.agents, langgraph.prebuilt; "
    "print(json.dumps({k: m.version(k) for k in "
    "('langchain', 'langchain-core', 'langgraph', 'langgraph-prebuilt', "
    "'langgraph-checkpoint', 'langgraph-checkpoint-sqlite')}))"
)
"""The import smoke test: the resolved stack imports; prints its versions as JSON."""


def companions_for(release: str) -> tuple[str, ...]:
    """The companion pins :data:`COMPANION_PINS` prescribes for ``release`` when the
    newest companions are resolved (none for ``latest`` and ``floor``)."""
    if release in ("latest", "floor"):
        return ()
    version = release_version(release)
    pins: list[str] = []
    for first, stop, extra, _why in COMPANION_PINS:
        if first <= version < stop:
            pins.extend(extra)
    return tuple(pins)


def plan_companions(
    release: str,
    *,
    mode: CompanionMode,
    publish_time: PublishTime,
    core: str | None = None,
    langgraph: str | None = None,
    newest_pins: Callable[[str], tuple[str, ...]] = companions_for,
) -> Companions:
    """The companions for ``release`` (a release number or ``latest``).

    Args:
        release: as requested.
        mode: ``dated`` or ``newest`` (``latest`` is always the newest).
        publish_time: looks up langchain's publish time (``dated`` only).
        core: pin langchain-core to this version (``--core``).
        langgraph: pin langgraph to this version (``--langgraph``).
        newest_pins: the companion pins a release needs in ``newest`` mode.

    Raises:
        LookupError: the publish time of ``release`` is unknown.
    """
    pins = []
    if core:
        pins.append(f"langchain-core=={core}")
    if langgraph:
        pins.append(f"langgraph=={langgraph}")
    explicit = ", ".join(pins)
    if release == "latest" or mode == "newest":
        extra = newest_pins(release) if mode == "newest" else ()
        note = "newest companions" + (f", pinned: {explicit}" if explicit else "")
        return Companions(pins=(*pins, *extra), note=note)
    published = publish_time("langchain", release)
    cutoff = published + DATED_MARGIN
    pinned = {p.split("==", 1)[0] for p in pins}
    dated = tuple(name for name in FAMILY if name not in pinned)
    note = (
        f"companions as of langchain {release}'s release "
        f"({published.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}, uploads until "
        f"{cutoff.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ})"
    ) + (f", pinned: {explicit}" if explicit else "")
    return Companions(pins=tuple(pins), cutoff=cutoff, dated=dated, note=note)


LANGCHAIN_MATRIX: Final = MatrixTarget(
    name="langchain",
    label="LangChain",
    binding=BINDING,
    source_folder="bindings/langchain",
    family=FAMILY,
    smoke=SMOKE,
    pin_options=MappingProxyType({"core": "langchain-core", "langgraph": "langgraph"}),
    measured_floors=MEASURED_FLOORS,
    companions_for=companions_for,
    plan_companions=plan_companions,
)
"""The LangChain target of ``agent-contract matrix``."""
