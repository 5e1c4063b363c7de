"""The registry: harnesses and CLI subcommands found by name in entry points.

Harnesses register under the entry-point group :data:`HARNESS_GROUP`
(``agent_contract.harnesses``): each entry point names a
:class:`~agent_contract.harnesses.HarnessPlugin`. The core registers ``offline`` in its
own ``pyproject.toml``; a binding registers its harnesses in its own, its CLI
subcommands under :data:`COMMAND_GROUP` (``agent_contract.commands``), and what the
release matrix installs for its framework under :data:`MATRIX_GROUP`
(``agent_contract.matrix``). The core names
no framework: which distribution to install for a name nobody registered is read from
agent-contract's own extras (:func:`missing_bindings`).

Entry points are read from the installed metadata: after changing a ``pyproject.toml``,
``uv sync`` (or ``pip install -e``) rewrites them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import re
from typing import Any, Final, cast

from .errors import ConfigurationError, DependencyMissingError
from .harnesses import DurableRunner, Harness, HarnessPlugin

__all__ = [
    "COMMAND_GROUP",
    "DISTRIBUTION",
    "HARNESS_GROUP",
    "MATRIX_GROUP",
    "command_entry_points",
    "durable_runner",
    "harness_names",
    "harness_plugin",
    "harness_plugins",
    "import_attribute",
    "load_harness",
    "matrix_entry_points",
    "missing_bindings",
]

HARNESS_GROUP: Final = "agent_contract.harnesses"
"""Entry-point group of harnesses: ``name = "module:ATTRIBUTE"`` naming a HarnessPlugin."""
COMMAND_GROUP: Final = "agent_contract.commands"
"""Entry-point group of CLI subcommands: ``name = "module:function"``, where
``function(subparsers)`` adds the subcommand ``name`` to ``agent-contract``."""
MATRIX_GROUP: Final = "agent_contract.matrix"
"""Entry-point group of release-matrix targets: ``name = "module:ATTRIBUTE"`` naming an
:class:`~agent_contract.app.matrix.target.MatrixTarget` for the framework ``name``."""
DISTRIBUTION: Final = "agent-contract"
"""The core's distribution: its entry points come first, its extras name the bindings."""


@functools.cache
def _entries(group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    """The entry points of ``group``: the core's first, then by distribution name, each
    distribution's in the order it declares them."""
    found = list(importlib.metadata.entry_points(group=group))
    order = {id(ep): index for index, ep in enumerate(found)}

    def key(ep: importlib.metadata.EntryPoint) -> tuple[bool, str, int]:
        dist = ep.dist.name if ep.dist is not None else ""
        return dist != DISTRIBUTION, dist, order[id(ep)]

    return tuple(sorted(found, key=key))


def _distribution_of(ep: importlib.metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else ep.module.split(".")[0]


def _dependency_missing(
    exc: ImportError, ep: importlib.metadata.EntryPoint
) -> DependencyMissingError:
    """The error for an import that failed while loading ``ep``: it names the entry
    point's distribution, or the requirement of it the missing module belongs to."""
    missing = exc.name or ep.module
    top = missing.split(".")[0].replace("_", "-").lower()
    package = _distribution_of(ep)
    if ep.dist is not None and top != package.lower():
        for requirement in ep.dist.requires or ():
            name = re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0]
            if name.lower().replace("_", "-") == top:
                package = name
                break
    return DependencyMissingError(package, f"cannot import {missing}")


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def missing_bindings() -> tuple[str, ...]:
    """Distributions agent-contract names in its extras (its bindings) that are not
    installed, in the order the metadata lists them."""
    try:
        requires = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return ()
    names = [
        re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0]
        for r in requires
        if re.search(r"""extra\s*==\s*["']""", r)
    ]
    # Only agent-contract-* distributions are bindings; the other extras (otel, postgres)
    # are optional features of the core.
    bindings = (n for n in names if n.startswith(f"{DISTRIBUTION}-"))
    return tuple(dict.fromkeys(n for n in bindings if not _installed(n)))


def _not_registered(kind: str, name: str, known: str) -> Exception:
    """A name nobody registered: ``dependency_missing`` when a binding agent-contract
    declares is not installed (it may provide it), else a configuration error."""
    missing = missing_bindings()
    if missing:
        return DependencyMissingError(
            ", ".join(missing),
            f"no {kind} {name!r} is registered; a binding that is not installed may provide it",
        )
    return ConfigurationError(f"unknown {kind} {name!r}; use {known}")


def harness_names() -> tuple[str, ...]:
    """The registered harness names, in registry order (nothing is imported)."""
    return tuple(ep.name for ep in _entries(HARNESS_GROUP))


def _find(name: str) -> tuple[importlib.metadata.EntryPoint, HarnessPlugin]:
    for ep in _entries(HARNESS_GROUP):
        if ep.name != name:
            continue
        try:
            found = ep.load()
        except ImportError as exc:
            raise _dependency_missing(exc, ep) from exc
        if not isinstance(found, HarnessPlugin) or found.name != name:
            raise ConfigurationError(
                f"entry point {name!r} of {HARNESS_GROUP} ({ep.value}) is not a "
                f"HarnessPlugin named {name!r}"
            )
        return ep, found
    known = f"one of {', '.join(harness_names())} or module:factory"
    raise _not_registered("harness", name, known)


def harness_plugin(name: str) -> HarnessPlugin:
    """The plugin registered as ``name`` (its framework is not imported yet).

    Raises:
        DependencyMissingError: no such harness while a binding is missing (see
            :func:`missing_bindings`), or its plugin module cannot be imported.
        ConfigurationError: no such harness, or the entry point does not name a
            HarnessPlugin called ``name``.
    """
    return _find(name)[1]


def harness_plugins() -> tuple[HarnessPlugin, ...]:
    """Every registered plugin, in registry order.

    Raises:
        DependencyMissingError, ConfigurationError: as :func:`harness_plugin`.
    """
    return tuple(harness_plugin(name) for name in harness_names())


def durable_runner(name: str) -> DurableRunner:
    """The durable runner of the harness registered as ``name``.

    Raises:
        DependencyMissingError: as :func:`harness_plugin`, or its framework is missing.
        ConfigurationError: no such harness, or it has no durable runner.
    """
    ep, plugin = _find(name)
    if plugin.durable is None:
        raise ConfigurationError(f"harness {name!r} cannot run durably (it has no runner)")
    try:
        return plugin.durable()
    except ImportError as exc:
        raise _dependency_missing(exc, ep) from exc


def command_entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The registered CLI subcommands (:data:`COMMAND_GROUP`), in registry order."""
    return _entries(COMMAND_GROUP)


def matrix_entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The registered release-matrix targets (:data:`MATRIX_GROUP`), in registry order."""
    return _entries(MATRIX_GROUP)


def load_harness(name: str) -> Harness:
    """A harness by name: a registered one (:func:`harness_names`), or
    ``"module:attribute"`` naming a harness (a callable taking ``(model, tools,
    options)``) or a zero-argument factory returning one, in an importable module.

    Raises:
        DependencyMissingError: the harness's framework (or binding) is not installed.
        ConfigurationError: an unknown name, or an attribute that is not a harness.
    """
    module_name, colon, attribute = name.partition(":")
    if not colon:
        ep, plugin = _find(name)
        try:
            return plugin.load()
        except ImportError as exc:
            raise _dependency_missing(exc, ep) from exc
    if not module_name or not attribute:
        raise ConfigurationError(
            f"unknown harness {name!r}; use one of {', '.join(harness_names())} or module:factory"
        )
    target = import_attribute(module_name, attribute, f"harness {name!r}")
    if not callable(target):
        raise ConfigurationError(f"harness {name!r} is not callable")
    if _takes_no_arguments(target):
        try:
            target = target()
        except SystemExit as exc:  # a factory must return or raise, never end the process
            raise ConfigurationError(
                f"harness factory {name!r} called sys.exit({exc.code!r}); a factory must "
                "return a harness or raise"
            ) from None
        except Exception as exc:  # re-raised as a wiring error
            raise ConfigurationError(
                f"harness factory {name!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(target):
            raise ConfigurationError(
                f"harness factory {name!r} returned {type(target).__name__}, not a harness"
            )
    if not _takes_no_arguments(target) and _accepts_three(target):
        return cast(Harness, target)
    raise ConfigurationError(
        f"{name!r} is neither a harness (model, tools, options) nor a zero-argument factory "
        "returning one"
    )


def import_attribute(module_name: str, attribute: str, what: str) -> Any:
    """``attribute`` of the module ``module_name`` (imported): a team's ``module:factory``.

    Every way the import can fail is a wiring error naming ``what`` (and, for a syntax
    error, the file and line), never a traceback: a missing module or attribute, a
    ``SyntaxError``, an exception raised while the module runs, or a ``sys.exit`` in it.

    Raises:
        ConfigurationError: as above (exit 2).
    """
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as exc:
        where = f"{exc.filename}, line {exc.lineno}" if exc.filename else f"line {exc.lineno}"
        raise ConfigurationError(
            f"cannot load {what}: {type(exc).__name__} in {where}: {exc.msg}"
        ) from exc
    except ImportError as exc:
        raise ConfigurationError(f"cannot load {what}: {exc}") from exc
    except SystemExit as exc:
        raise ConfigurationError(
            f"cannot load {what}: importing {module_name!r} called sys.exit({exc.code!r})"
        ) from None
    except Exception as exc:  # the team's module failed while it ran: a wiring error
        raise ConfigurationError(
            f"cannot load {what}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    try:
        return getattr(module, attribute)
    except AttributeError as exc:
        raise ConfigurationError(f"cannot load {what}: {exc}") from exc


def _takes_no_arguments(fn: Any) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def _accepts_three(fn: Any) -> bool:
    try:
        inspect.signature(fn).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature available (some builtins): let the run tell
        return True
    return True
