"""The checks a scenario adds to its expectations (``Scenario.extra``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..harnesses import Observation
from ..testing import FakeModel
from .fixtures import Probe
from .problems import Check, Problem

__all__ = [
    "check_cancelled",
    "check_contents",
    "check_hidden_text",
    "check_history",
    "check_model_calls",
    "check_not_emitted",
    "check_offered",
    "check_ran",
    "check_timeout",
    "check_truncated",
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


def check_offered(expected: set[str]) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if not model.calls:
            return [Problem(boundary="allowlist", message="the model was never called")]
        tools = model.calls[0]["tools"] or []
        offered = {t["function"]["name"] for t in tools}
        if offered != expected:
            return [
                Problem(
                    boundary="allowlist",
                    message=f"offered {sorted(offered)}, expected {sorted(expected)}",
                )
            ]
        return []

    return check


def check_history(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    if not model.calls:
        return [Problem(boundary="history", message="the model was never called")]
    sent = [(m.role, m.content) for m in model.calls[0]["messages"] if m.role != "system"]
    wanted = [
        ("user", "what is 2+2?"),
        ("assistant", "4"),
        ("user", "and in words?"),
    ]
    if sent != wanted:
        return [Problem(boundary="history", message=f"sent {sent}, expected {wanted}")]
    return []


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


def check_cancelled(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The timed-out async tool was cancelled (outcome ``cancelled``) and its late write
    never happened."""
    problems = []
    outcomes = [
        json.loads(m["content"]).get("outcome")
        for m in obs.tool_messages
        if m["error_kind"] == "timeout"
    ]
    if outcomes != ["cancelled"]:
        problems.append(f"timeout outcomes {outcomes}, expected ['cancelled']")
    if probe.late_writes:
        problems.append(f"the cancelled tool still wrote {probe.late_writes}")
    return [Problem(boundary="timeouts", message=m) for m in problems]


def check_timeout(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    timeouts = [m for m in obs.tool_messages if m["error_kind"] == "timeout"]
    if not timeouts or not all(m["side_effects_possible"] for m in timeouts):
        return [
            Problem(boundary="timeouts", message="a timeout did not report side_effects_possible")
        ]
    return []


def check_truncated(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
    if len(content) > 500 or "[truncated" not in content:
        return [
            Problem(boundary="result_size", message=f"result of {len(content)} chars, no marker")
        ]
    return []


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


def check_hidden_text(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    text = " ".join(m["content"] for m in obs.tool_messages)
    if "traceback" in text.lower() or "database password" in text:
        return [Problem(boundary="tool_errors", message="exception text reached the model")]
    return []


def check_ran(name: str, times: int, boundary: str) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if probe.ran(name) != times:
            message = f"{name} ran {probe.ran(name)} times, expected {times}"
            return [Problem(boundary=boundary, message=message)]
        return []

    return check
