"""A failed expectation (:class:`Problem`) and a scenario's own check (:data:`Check`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..harnesses import Observation
from ..testing import FakeModel
from .fixtures import Probe

__all__ = ["Check", "Problem"]


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One failed expectation."""

    boundary: str
    """Key of :data:`BOUNDARIES`."""
    message: str
    """What was expected and what was observed."""
    verdict: Literal["broken", "crashed"] = "broken"
    """``crashed``: the run raised instead of ending (its own verdict, filed under the
    scenario's boundary only, never as a redaction failure too)."""


Check = Callable[[Observation, FakeModel, Probe], list[Problem]]
"""``check(observation, model, probe) -> problems``: an expectation a scenario adds."""
