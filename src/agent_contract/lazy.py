"""Names a package loads on first use: a binding's ``__init__`` hands on its public names
without importing their modules (and so its framework) until one is used, so that the
core's registry can read the binding's harnesses cheaply."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Args:
        package: the package's ``__name__``.
        homes: public name -> the submodule of ``package`` that defines it.
        public: the package's ``__all__`` (listed by ``__dir__``).

    Returns:
        ``(__getattr__, __dir__)``: the first imports a name's home on first use and keeps
        the value in the package (the next lookup finds it there); it raises
        ``AttributeError`` for a name with no home.
    """
    names = tuple(public)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
