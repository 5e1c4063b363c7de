"""The checks a scenario adds to its expectations (``Scenario.extra``) that scenarios of
several boundaries use, each filing its problems under the boundary it is given. A check
only one boundary makes lives in that boundary's module."""

from __future__ import annotations

from collections.abc import Sequence

from ..harnesses import Observation
from ..testing import FakeModel
from .base import Check, Problem
from .fixtures import Probe

__all__ = [
    "check_contents",
    "check_model_calls",
    "check_not_emitted",
    "check_output",
    "check_ran",
    "check_writes",
]


def check_writes(
    amounts: Sequence[int],
    *,
    previews: int,
    refusals: int = 0,
    boundary: str = "write_approval",
    handler_runs: int | None = None,
) -> Check:
    """The writes applied (by amount), how often the handler and the preview ran
    (``handler_runs`` defaults to one per write), and how many decisions were refused."""
    runs = len(amounts) if handler_runs is None else handler_runs

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        problems = []
        written = sorted(w["amount"] for w in probe.writes.values())
        if written != sorted(amounts):
            problems.append(f"writes applied {written}, expected {sorted(amounts)}")
        if probe.write_calls != runs:
            problems.append(f"the write handler ran {probe.write_calls} times, expected {runs}")
        if probe.previews != previews:
            problems.append(f"preview ran {probe.previews} times, expected {previews}")
        if len(probe.refusals) != refusals:
            problems.append(f"{len(probe.refusals)} decisions refused, expected {refusals}")
        return [Problem(boundary=boundary, message=m) for m in problems]

    return check


def check_model_calls(times: int, boundary: str) -> Check:
    """The model was called exactly ``times`` times."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if len(model.calls) != times:
            message = f"the model was called {len(model.calls)} times, expected {times}"
            return [Problem(boundary=boundary, message=message)]
        return []

    return check


def check_not_emitted(values: Sequence[object], boundary: str) -> Check:
    """None of ``values`` (as text) appears in anything the run emitted."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        found = [str(v) for v in values if str(v) in obs.emitted]
        if found:
            return [Problem(boundary=boundary, message=f"emitted unredacted: {found}")]
        return []

    return check


def check_contents(expected: Sequence[str], boundary: str = "serialization") -> Check:
    """The first tool messages' contents are ``expected``, in order (a difference breaks
    ``boundary``: the serialization, or the call-ID binding when the order is the point)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        got = [m["content"] for m in obs.tool_messages]
        if got[: len(expected)] != list(expected):
            return [
                Problem(boundary=boundary, message=f"contents {got}, expected {list(expected)}")
            ]
        return []

    return check


def check_ran(name: str, times: int, boundary: str) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if probe.ran(name) != times:
            message = f"{name} ran {probe.ran(name)} times, expected {times}"
            return [Problem(boundary=boundary, message=message)]
        return []

    return check


def check_output(expected: str, boundary: str = "response_shape") -> Check:
    """The answer is exactly ``expected``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if obs.output != expected:
            return [
                Problem(boundary=boundary, message=f"output {obs.output!r}, expected {expected!r}")
            ]
        return []

    return check
