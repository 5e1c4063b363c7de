"""Calling a team's agent factory for ``check --agent``, whatever builds the agent: the
call bounded by a watchdog (:func:`bounded_call`), the framework's agent constructor
rebound wherever the team's code can reach it while the factory runs (:func:`rebound`),
and a value of the team's context type for the probes (:func:`probe_context`).

A binding names its framework's constructor and what it records of each call; nothing
here imports a framework.
"""

from __future__ import annotations

import _thread
import contextlib
import dataclasses
import signal
import sys
import threading
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from ..errors import ConfigurationError

__all__ = ["FACTORY_TIMEOUT_SECONDS", "bounded_call", "probe_context", "rebound"]

FACTORY_TIMEOUT_SECONDS: Final = 120.0
"""How long ``check --agent`` waits for the team's factory to return (seconds): a
factory that hangs (a network call, a lock) ends ``check --agent`` with a named error
instead of no output."""


def _interrupt_main_thread() -> None:
    """SIGINT to the main thread (it wakes a blocking call, which a simulated one does
    not); where threads cannot be signalled, the simulated one."""
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
    else:  # pragma: no cover - Windows
        _thread.interrupt_main()


def _is_sigint(exc: BaseException) -> bool:
    """Whether ``exc`` is what SIGINT raises: ``KeyboardInterrupt``, or an exception a
    SIGINT handler raised that names the signal (``signum``, as the CLI's does)."""
    return isinstance(exc, KeyboardInterrupt) or getattr(exc, "signum", None) == signal.SIGINT


def bounded_call(factory: Callable[[Any], Any], model: Any, timeout: float) -> Any:
    """``factory(model)`` in this thread, bounded by ``timeout`` seconds when this is
    the main thread: a watchdog then interrupts it as Ctrl-C would (the factory runs where
    it always did, so its SQLite connections, signal handlers and event loop belong to
    the thread that uses the agent). Outside the main thread it is not bounded, nor is a
    factory that ignores or handles SIGINT itself (it is sent once); a caller that must
    never hang wraps the whole process in a timeout of its own.

    Raises:
        ConfigurationError: it did not return in time.
    """
    if threading.current_thread() is not threading.main_thread():
        return factory(model)
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                _interrupt_main_thread()

    watchdog = threading.Timer(timeout, fire)
    watchdog.daemon = True
    watchdog.start()
    try:
        value = factory(model)
        with lock:
            state["done"] = True
    except BaseException as exc:
        with lock:
            state["done"] = True
        if not (state["fired"] and _is_sigint(exc)):  # e.g. a later SIGTERM stays itself
            raise
        raise ConfigurationError(
            f"the agent factory did not return within {timeout:g} s (it may be waiting on "
            "a network call or a lock); check --agent builds the agent once per probe"
        ) from None
    finally:
        watchdog.cancel()
    return value


@contextlib.contextmanager
def rebound(
    targets: tuple[Any, ...],
    replacement: Any,
    *,
    homes: Sequence[tuple[Any, str]],
    factory: Any,
) -> Iterator[None]:
    """While open, ``replacement`` stands wherever one of ``targets`` (a function and
    its aliases) is bound: each of ``homes`` (``(object, attribute)``: the modules that
    define and export it), every loaded module's global bound to one of ``targets`` (a
    team's ``from framework import constructor``, in whatever module of theirs builds the
    agent), ``factory``'s globals and the cells of its closure. On leaving, each place
    holds what it held before, in reverse order."""
    places: list[tuple[Any, str]] = list(homes)
    skip = {id(vars(home)) for home, _ in homes if isinstance(home, types.ModuleType)}
    found = [(n, k) for n, k in _bindings_of(targets) if id(n) not in skip]
    globals_ = getattr(factory, "__globals__", None)
    if isinstance(globals_, dict) and id(globals_) not in skip:
        found += [(globals_, k) for k, v in list(globals_.items()) if any(v is t for t in targets)]
    placed = {(id(home), key) for home, key in places}
    for namespace, key in found:
        if (id(namespace), key) not in placed and any(namespace.get(key) is t for t in targets):
            placed.add((id(namespace), key))
            places.append((namespace, key))
    for index, cell in enumerate(getattr(factory, "__closure__", None) or ()):
        with contextlib.suppress(ValueError):  # an empty cell
            if any(cell.cell_contents is t for t in targets):
                places.append((cell, str(index)))
    saved = [(home, key, _get(home, key)) for home, key in places]
    try:
        for home, key in places:
            _set(home, key, replacement)
        yield
    finally:
        for home, key, value in reversed(saved):
            _set(home, key, value)


_BINDINGS: dict[str, Any] = {}
"""The cache of :func:`_bindings_of`: ``{"key": ..., "found": [...]}``."""


def _bindings_of(targets: tuple[Any, ...]) -> list[tuple[dict[str, Any], str]]:
    """``(module namespace, name)`` for every loaded module's global bound to one of
    ``targets``. Scanning every module takes tens of milliseconds (thousands of modules
    once a large framework is imported) and the check captures the factory once per
    probe, so the scan is kept until a module is loaded or unloaded (the caller checks
    each binding still holds before using it)."""
    modules = sys.modules
    last = next(reversed(modules), None)
    key = (len(modules), last, id(modules.get(last)) if last is not None else 0, *map(id, targets))
    if _BINDINGS.get("key") != key:
        found: list[tuple[dict[str, Any], str]] = []
        for module in list(modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if any(value is t for t in targets):
                    found.append((namespace, name))
        _BINDINGS.update(key=key, found=found)
    return list(_BINDINGS["found"])


def _get(home: Any, key: str) -> Any:
    if isinstance(home, types.CellType):
        return home.cell_contents
    return home[key] if isinstance(home, dict) else getattr(home, key)


def _set(home: Any, key: str, value: Any) -> None:
    if isinstance(home, types.CellType):
        home.cell_contents = value
    elif isinstance(home, dict):
        home[key] = value
    else:
        setattr(home, key, value)


_PLACEHOLDERS: Final[dict[Any, Any]] = {str: "probe", int: 0, float: 0.0, bool: False}


def probe_context(schema: Any) -> Any:
    """A value of the team's context type (a dataclass, a pydantic model, a TypedDict)
    for the probes: defaults where it has them, else a placeholder per field type
    (``"probe"``, 0, False, None). None when there is no schema or it cannot be built."""
    if schema is None:
        return None
    with contextlib.suppress(Exception):
        return schema()
    fields: dict[str, Any] = {}
    hints: dict[str, Any] = {}
    with contextlib.suppress(Exception):
        hints = typing.get_type_hints(schema)
    if dataclasses.is_dataclass(schema):
        names = [f.name for f in dataclasses.fields(schema) if f.init]
    elif hasattr(schema, "model_fields"):
        names = list(schema.model_fields)
    else:
        names = list(hints)
    for name in names:
        fields[name] = _PLACEHOLDERS.get(hints.get(name), None)
    with contextlib.suppress(Exception):
        return schema(**fields)
    return dict(fields)
