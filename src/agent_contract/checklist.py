"""Deprecated: ``check`` moved to :mod:`agent_contract.conformance` (the measurement and
the renderers) and :mod:`agent_contract.app.check_command` (the command); the migration
checklist moved to the binding that measures it (kept for one release).

``LABELS`` here is the old ``{id: label}`` view of
:data:`agent_contract.conformance.BOUNDARIES`; ``harness_names`` is
:func:`agent_contract.app.check_command.split_harness_names`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ._deprecated import moved
from .app.check_command import TerminalProgress, add_check_command, cmd_check
from .app.check_command import split_harness_names as harness_names
from .conformance import BOUNDARIES, SCENARIOS, Scenario, boundary_label
from .conformance import boundary_rows as _boundary_rows
from .conformance.check import Cell, CheckReport, Evidence, HarnessRun, run_check
from .conformance.report import (
    CHECK_FORMAT_VERSION,
    FORMATS,
    render_json,
    render_markdown,
    render_text,
    to_json_data,
)

moved(__name__, "agent_contract.conformance and agent_contract.app.check_command")

__all__ = [
    "CHECK_FORMAT_VERSION",
    "FORMATS",
    "LABELS",
    "Cell",
    "CheckReport",
    "Evidence",
    "HarnessRun",
    "TerminalProgress",
    "add_check_command",
    "boundary_label",
    "boundary_rows",
    "cmd_check",
    "harness_names",
    "render_json",
    "render_markdown",
    "render_text",
    "run_check",
    "to_json_data",
]

LABELS: Final[dict[str, str]] = {b.id: b.label for b in BOUNDARIES}
"""Deprecated: ``{id: label}`` of :data:`agent_contract.conformance.BOUNDARIES`."""


def boundary_rows(scenarios: Sequence[Scenario] = SCENARIOS) -> tuple[str, ...]:
    """Deprecated: :func:`agent_contract.conformance.boundary_rows`."""
    return _boundary_rows(scenarios)
