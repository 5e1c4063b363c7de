"""What ``agent-contract matrix`` installs into each environment besides LangChain: this
project's two distributions (:func:`locate_packages`), the companions of each LangChain
release (:func:`plan_companions`) and the metadata's lower bounds
(:func:`metadata_floors`).

**The two distributions** come, in this order of preference, from ``--wheels DIR`` (the
built wheels), ``--source DIR`` (a source checkout), or wherever the running ones were
installed from: the ``direct_url.json`` an installer records (PEP 610) names the folder
of a source install or the wheel file of a wheel install; an install from an index is
installed again by name and version (``agent-contract==0.1.0``) from the configured
index. So ``matrix`` runs from an installed wheel as well as from a checkout.

**Companions**: ``langchain==X`` alone resolves the *newest* langchain-core and
langgraph, which X never shipped with. By default (``dated``) the companions are
resolved as they were when X was published: uv's ``--exclude-newer-package`` limits each
of :data:`FAMILY` to releases uploaded before X's publish time plus
:data:`DATED_MARGIN`. The publish time comes from the registry through uv
(:func:`uv_publish_time`; injectable, so tests run offline). ``--core`` and
``--langgraph`` pin those two explicitly; ``newest`` resolves the newest with the
:data:`COMPANION_PINS` a release needs.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal
from urllib.parse import unquote, urlparse

from agent_contract.errors import ConfigurationError

from .matrix_runner import CommandRunner

__all__ = [
    "BINDING",
    "COMPANION_PINS",
    "CORE",
    "DATED_MARGIN",
    "FAMILY",
    "MEASURED_FLOORS",
    "CompanionMode",
    "Companions",
    "Packages",
    "PublishTime",
    "Version",
    "companions_for",
    "installed_direct_url",
    "locate_packages",
    "metadata_floors",
    "parse_publish_time",
    "plan_companions",
    "uv_publish_time",
]

CORE: Final = "agent-contract"
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

DATED_MARGIN: Final = timedelta(hours=1)
"""How long after a langchain release its companions may have been uploaded and still
count as its own (a coordinated release uploads its packages within minutes, in any
order)."""

CompanionMode = Literal["dated", "newest"]
"""``dated``: companions as of the release's publish time; ``newest``: the newest that
resolve, plus the measured companion pins."""

Version = tuple[int, ...]
"""A release number as integers, e.g. ``(1, 3, 15)``."""

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


MEASURED_FLOORS: Final[Mapping[str, str]] = MappingProxyType(
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
"""The metadata's lower bounds (:func:`metadata_floors`) as last measured: ``agent-contract
matrix --langchain floor`` installed exactly these and every boundary held
(``docs/MATRIX.md``). ``tests/unit/test_distribution.py`` fails when the metadata's
floors differ from it, so a changed floor is measured before it ships."""


def _version(text: str) -> Version:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def companions_for(release: str) -> tuple[str, ...]:
    """The companion pins :data:`COMPANION_PINS` prescribes for ``release`` when the
    newest companions are resolved (none for ``latest`` and ``floor``)."""
    if release in ("latest", "floor"):
        return ()
    version = _version(release)
    pins: list[str] = []
    for first, stop, extra, _why in COMPANION_PINS:
        if first <= version < stop:
            pins.extend(extra)
    return tuple(pins)


PublishTime = Callable[[str, str], datetime]
"""``publish_time(package, version) -> datetime`` (UTC): when the registry received it.

Raises:
    LookupError: the registry does not say.
"""


@dataclass(frozen=True, kw_only=True)
class Companions:
    """How one environment's companions of langchain are chosen."""

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


_PUBLISHED = re.compile(r"published at (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)")


def parse_publish_time(text: str) -> datetime:
    """The first ``published at <RFC 3339 time>`` in uv's resolver output.

    Raises:
        LookupError: none found.
    """
    found = _PUBLISHED.search(text)
    if not found:
        raise LookupError("uv did not report a publish time")
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))


def uv_publish_time(uv: Sequence[str], runner: CommandRunner) -> PublishTime:
    """A :data:`PublishTime` that asks the configured registry through uv: resolving
    ``package==version`` with every upload excluded fails, and uv's hint says when that
    version was published (uv 0.13: "The requested version, v1.2.9, was published at
    2026-02-06T12:39:39.833Z")."""

    def lookup(package: str, version: str) -> datetime:
        with tempfile.TemporaryDirectory(prefix="agent-contract-published-") as tmp:
            requirements = Path(tmp) / "requirements.in"
            requirements.write_text(f"{package}=={version}\n", encoding="utf-8")
            result = runner(
                [
                    *uv,
                    "pip",
                    "compile",
                    str(requirements),
                    "--no-header",
                    "--exclude-newer",
                    "1970-01-02T00:00:00Z",
                ]
            )
        try:
            return parse_publish_time(result.stderr + result.stdout)
        except LookupError:
            tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-2:]
            raise LookupError(
                f"the registry did not say when {package} {version} was published "
                f"({' '.join(tail)}); pass --core/--langgraph or --companions newest"
            ) from None

    return lookup


def metadata_floors(
    requires: Callable[[str], list[str] | None] = metadata.requires,
) -> dict[str, str]:
    """The lower bound (``>=``) of every unconditional requirement of the binding and the
    core, from their installed metadata: ``{"langchain": "1.2.9", "jsonschema": "4.18",
    ...}`` (this project's own distributions left out).

    Raises:
        ConfigurationError: a requirement without a lower bound (a floor nobody tested).
    """
    floors: dict[str, str] = {}
    for distribution in (BINDING, CORE):
        for requirement in requires(distribution) or []:
            if ";" in requirement:
                continue  # an extra or a marker: not always installed
            name = re.split(r"[\s<>=!~\[(]", requirement, maxsplit=1)[0]
            if name in (CORE, BINDING):
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
) -> Packages:
    """Where each environment gets the core and the binding (see the module doc).

    Args:
        wheels: a folder holding ``agent_contract-*.whl`` and
            ``agent_contract_langchain-*.whl`` (``--wheels``).
        source: a source checkout: its root and ``bindings/langchain`` (``--source``).
        direct_url: reads an installed distribution's ``direct_url.json``.
        version: an installed distribution's version.

    Raises:
        ConfigurationError: a ``--wheels`` folder without exactly one wheel of each, or a
            ``--source`` folder that is not a checkout.
    """
    if wheels is not None:
        found = tuple(str(_wheel(wheels, d, version(d))) for d in (CORE, BINDING))
        return Packages(requirements=found, origin=f"the wheels in {wheels}")
    if source is not None:
        binding = source / "bindings" / "langchain"
        if not (source / "pyproject.toml").is_file() or not (binding / "pyproject.toml").is_file():
            raise ConfigurationError(f"--source {source}: not an agent-contract source checkout")
        return Packages(
            requirements=(str(source), str(binding)), origin=f"the source tree {source}"
        )
    pairs = [_from_direct_url(d, direct_url(d), version(d)) for d in (CORE, BINDING)]
    return Packages(
        requirements=tuple(p[0] for p in pairs),
        origin="; ".join(f"{d}: {p[1]}" for d, p in zip((CORE, BINDING), pairs, strict=True)),
    )
