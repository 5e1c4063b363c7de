"""Old module paths, kept for one release as re-export shims (each warns on import)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved", "renamed"]


def moved(old: str, new: str) -> None:
    """Warn that module ``old`` is deprecated in favour of ``new``.

    Raises:
        DeprecationWarning: when warnings are errors (``-W error``).
    """
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; import from {new}",
        DeprecationWarning,
        stacklevel=3,
    )


def renamed(module: str, names: Mapping[str, tuple[str, Any]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves old names: ``names`` maps each old name to
    ``(new name, object)``; reading an old name warns and returns the object.

    Raises:
        AttributeError: (from the returned function) a name that is neither.
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, value = names[name]
        warnings.warn(f"{module}.{name} is deprecated; use {new}", DeprecationWarning, stacklevel=2)
        return value

    return __getattr__
