"""Old module paths, kept for one release as re-export shims (each warns on import)."""

from __future__ import annotations

import warnings

__all__ = ["moved"]


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
