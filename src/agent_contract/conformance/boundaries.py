"""The boundaries of the contract: one table, read by the scenarios, the pytest suite,
``check`` and every report.

Each :class:`Boundary` has an ``id`` (the key scenarios, problems and reports use), the
``label`` reports print, the ``rule`` holding it means, and framework-neutral ``keep_it``
advice: what in this package keeps it. A binding adds advice in its framework's terms
keyed by the same ids (the LangChain binding's migration checklist does).

Each boundary has a standard test of its own in
:class:`~agent_contract.conformance.suite.ContractSuite` (``test_<id>``). How many
scenarios check a boundary is derived from the scenarios (:func:`scenario_count`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .evaluate import Scenario

__all__ = [
    "BOUNDARIES",
    "Boundary",
    "boundary",
    "boundary_label",
    "boundary_rows",
    "scenario_count",
]


@dataclass(frozen=True, kw_only=True)
class Boundary:
    """One boundary of the contract."""

    id: str
    """Stable key (``response_shape``, ...), used by scenarios, problems and reports."""
    label: str
    """What reports print for it (``response shape``, ...)."""
    rule: str
    """What holding it means, in one sentence without a final period."""
    keep_it: str
    """What in this package keeps it, in framework-neutral terms."""


BOUNDARIES: Final[tuple[Boundary, ...]] = (
    Boundary(
        id="response_shape",
        label="response shape",
        rule="a response is a final answer or tool calls, nothing else",
        keep_it=(
            "Judge every model reply with `RunState.accept_response` before acting on it: "
            "a final text or tool calls, never both or neither; ids present and unique; "
            "arguments a JSON object. Anything else stops the run with `invalid_response`."
        ),
    ),
    Boundary(
        id="allowlist",
        label="allowlist",
        rule="only registered, allowlisted tools run, and only they are offered",
        keep_it=(
            "`Contract(tools, allowlist=[...])`: offer the model `contract.offered_tools()` "
            "only, and plan every call with `RunState.plan_tool_calls`, which refuses "
            "`unknown_tool` and `not_allowed`."
        ),
    ),
    Boundary(
        id="argument_validation",
        label="argument validation",
        rule="arguments are validated against the JSON Schema before running",
        keep_it=(
            "Declare each tool as a `ToolSpec(parameters=<JSON Schema>)`: planning validates "
            "the arguments (Draft 2020-12, closed objects) before any handler runs, and "
            "refuses them as `invalid_arguments` naming the JSON path."
        ),
    ),
    Boundary(
        id="call_id_binding",
        label="call-ID binding",
        rule="every call gets exactly one tool message with its id, in issue order",
        keep_it=(
            "Answer each call with the result the run's ledger binds to its id "
            "(`RunState.view.batch_messages()`), in issue order, and add no tool messages of "
            "your own."
        ),
    ),
    Boundary(
        id="tool_errors",
        label="fail-closed tool errors",
        rule="tool failures are classified errors, never raw exceptions or text",
        keep_it=(
            "Run tools through `RunState.execute`: exceptions become `tool_error`, or the "
            "kind of a raised `UnauthorizedError` / `NotFoundError` / `TransientError`; "
            "exception text stays out unless `Contract(expose_exception_text=True)`."
        ),
    ),
    Boundary(
        id="model_step_budget",
        label="model-step budget",
        rule="the model-step budget stops the run with a named reason",
        keep_it=(
            "`Budget(max_model_steps=N)`, checked by `RunState.check_before_model_call` "
            "before every model call; a run out of steps stops with `max_model_steps`, "
            "never with an answer."
        ),
    ),
    Boundary(
        id="tool_call_budget",
        label="tool-call budget",
        rule="a batch crossing the tool-call budget is refused before it runs",
        keep_it=(
            "`Budget(max_tool_calls=N)`: planning refuses a batch that would cross it whole, "
            "before any of it runs, and the budget counts across resumes."
        ),
    ),
    Boundary(
        id="repeated_calls",
        label="repeated calls",
        rule="identical repeated calls are refused with a named reason",
        keep_it=(
            "`Budget(max_identical_calls=N)`: the same tool with the same canonical "
            "arguments (RFC 8785: key order ignored, `3` and `3.0` one number) beyond N is "
            "refused with `repeated_call`."
        ),
    ),
    Boundary(
        id="deadline",
        label="run deadline",
        rule="the run's wall-clock deadline cuts a tool short and stops the run with a named reason",
        keep_it=(
            "`Budget(deadline_seconds=S)`: a call in flight gets at most the time left "
            "(past it: `timeout`, outcome unknown) and the run stops with `deadline` before "
            "the next model call; never switch it off in a driver or adapter."
        ),
    ),
    Boundary(
        id="timeouts",
        label="timeouts",
        rule="a slow tool times out with outcome unknown and side effects possible",
        keep_it=(
            "`ToolSpec(timeout_seconds=...)`: `RunState.execute` runs each call on the "
            "contract's executor and reports a call past its limit as `timeout` with "
            "`outcome: unknown` and `side_effects_possible: true` while the run goes on "
            "(`isolation='process'` kills it instead)."
        ),
    ),
    Boundary(
        id="result_size",
        label="result size",
        rule="oversized results are cut with an explicit marker",
        keep_it=(
            "`ToolSpec(max_result_chars=..., on_oversize='truncate' | 'error')`: oversized "
            "results are cut with an explicit marker, or refused as `result_too_large`."
        ),
    ),
    Boundary(
        id="serialization",
        label="serialization",
        rule="non-string results reach the model as JSON, non-ASCII kept",
        keep_it=(
            "Hand the model the tool's raw value through the contract's one serializer "
            "(`RunState.execute` applies it): JSON with non-ASCII kept; a value that is not "
            "JSON is a `tool_error`, never its `str()`."
        ),
    ),
    Boundary(
        id="history",
        label="history",
        rule=(
            "earlier turns reach the model in order, and only as a conversation a provider "
            "accepts: every tool message answers a call of the turn before it, every call "
            "is answered once, ids are unique"
        ),
        keep_it=(
            "Pass earlier turns as messages before the new user turn and hand the transcript "
            "to `RunState.check_before_model_call(messages)` before every model call, as "
            "late as possible (what the model really gets): an orphan tool result, an "
            "unanswered call or a reused id stops the run with `invalid_history`, and the "
            "model is not called."
        ),
    ),
    Boundary(
        id="trace_redaction",
        label="trace redaction",
        rule="every run leaves a trace, and planted secrets appear nowhere",
        keep_it=(
            "`Contract(..., secrets=[...])` and one `RunState` per run: its result carries "
            "an append-only, redacted trace (`Contract(trace_sink=...)` exports it), and "
            "secrets in tool results are redacted before the model sees them."
        ),
    ),
    Boundary(
        id="write_approval",
        label="approval for writes",
        rule="writes wait for a human decision bound to the exact call, and apply once",
        keep_it=(
            "`ToolSpec(effect='write', preview=..., verify=...)`: the run pauses with "
            "`pending_approval`, `RunState.resume` takes the human's `Approval`s bound to "
            "the exact call, and an approved write runs once with an idempotency key."
        ),
    ),
)
"""Every boundary, in report order."""

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
