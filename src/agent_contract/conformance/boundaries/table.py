"""The table of boundaries: :data:`DEFINITIONS` lists every boundary module's
``DEFINITION`` in report order, and the rest is derived from it (the rows, the checks
made in every run, lookups by id). Adding a boundary is one module of this package and
one line here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ..base import Boundary, BoundaryDefinition, RunCheck, Scenario
from . import (
    allowlist,
    argument_size,
    argument_validation,
    call_id_binding,
    checkpoint_integrity,
    deadline,
    finish_reasons,
    history,
    model_step_budget,
    repeated_calls,
    response_shape,
    result_size,
    serialization,
    streamed_arguments,
    sub_agents,
    timeouts,
    tool_call_budget,
    tool_context,
    tool_errors,
    trace_redaction,
    write_approval,
)

__all__ = [
    "BOUNDARIES",
    "CHECKED_IN_EVERY_RUN",
    "DEFINITIONS",
    "EVERY_RUN",
    "boundary",
    "boundary_label",
    "boundary_rows",
    "scenario_count",
]

DEFINITIONS: Final[tuple[BoundaryDefinition, ...]] = (
    response_shape.DEFINITION,
    finish_reasons.DEFINITION,
    allowlist.DEFINITION,
    argument_validation.DEFINITION,
    argument_size.DEFINITION,
    call_id_binding.DEFINITION,
    tool_errors.DEFINITION,
    model_step_budget.DEFINITION,
    tool_call_budget.DEFINITION,
    repeated_calls.DEFINITION,
    deadline.DEFINITION,
    timeouts.DEFINITION,
    result_size.DEFINITION,
    serialization.DEFINITION,
    history.DEFINITION,
    trace_redaction.DEFINITION,
    write_approval.DEFINITION,
    tool_context.DEFINITION,
    checkpoint_integrity.DEFINITION,
    sub_agents.DEFINITION,
    streamed_arguments.DEFINITION,
)
"""Every boundary's definition, in report order (one line per boundary module)."""

BOUNDARIES: Final[tuple[Boundary, ...]] = tuple(d.boundary for d in DEFINITIONS)
"""Every boundary, in report order."""

EVERY_RUN: Final[tuple[RunCheck, ...]] = tuple(c for d in DEFINITIONS for c in d.every_run)
"""The checks :func:`~agent_contract.conformance.evaluate.evaluate` makes in every
scenario's run, in report order of their boundaries."""

CHECKED_IN_EVERY_RUN: Final = frozenset(d.boundary.id for d in DEFINITIONS if d.held_by_every_run)
"""Boundaries :func:`~agent_contract.conformance.evaluate.evaluate` checks in every
scenario's run, whatever its own boundary (one tool message per issued id, in issue
order): a harness whose runs show no problem holds them even where no scenario is their
own (e.g. ``check --agent`` on an agent that offers no tools)."""

_BY_ID: Final = {b.id: b for b in BOUNDARIES}


def boundary(boundary_id: str) -> Boundary:
    """The boundary with this id.

    Raises:
        KeyError: no such boundary.
    """
    return _BY_ID[boundary_id]


def boundary_label(boundary_id: str) -> str:
    """What reports print for ``boundary_id`` (its id with spaces for a boundary this
    release does not know, e.g. one a newer scenario set names)."""
    known = _BY_ID.get(boundary_id)
    return known.label if known else boundary_id.replace("_", " ")


def boundary_rows(scenarios: Iterable[Scenario]) -> tuple[str, ...]:
    """A report's rows: the ids of :data:`BOUNDARIES` that have at least one scenario, in
    table order, then ids known only from scenarios, in order of first appearance."""
    used = [s.boundary for s in scenarios]
    rows = [b.id for b in BOUNDARIES if b.id in used]
    rows += [b for b in dict.fromkeys(used) if b not in _BY_ID]
    return tuple(rows)


def scenario_count(boundary_id: str, scenarios: Sequence[Scenario]) -> int:
    """How many of ``scenarios`` exercise ``boundary_id`` as their main boundary."""
    return sum(1 for s in scenarios if s.boundary == boundary_id)
