"""Re-checking approved writes on resume: a decision was made under the contract of its
day; a write runs only if it still fits the contract the run was resumed with."""

from __future__ import annotations

from ..budget import check_argument_sizes, check_deadline
from ..errors import ErrorKind
from .ledger import PlannedCall, refusal
from .records import Stop
from .run import Run
from .writes import decided

__all__ = ["still_fits"]


def still_fits(run: Run) -> tuple[list[PlannedCall], Stop | None]:
    """Re-check every decided write against the run's *current* contract (the one the
    run was restored with) before it may run: registered as a write tool, inside the
    allowlist, its arguments valid for the current schema and ``check_arguments``, and
    the run's use within the current budget (tool calls, identical calls, deadline:
    a paused run's counters do not move, so a failure means the contract changed).

    A write that no longer fits gets a bound refusal (it never runs; the human's
    decision stays recorded) and the run a ``policy_changed`` stop. The caller holds the
    run's lock.

    Returns:
        ``(writes that may run, the stop or None)``.
    """
    runnable: list[PlannedCall] = []
    blocked: list[str] = []
    for planned in decided(run):
        problem = _policy_problem(run, planned)
        if problem is None:
            runnable.append(planned)
            continue
        kind, why = problem
        blocked.append(f"{planned.call.name} [{planned.call_id}]: {why}")
        run.ledger.record(
            refusal(
                planned.call,
                kind,
                f"not run: the contract changed after this write was approved ({why}); "
                "the decision is kept for a human to review",
                run.contract.redaction,
            )
        )
    if not blocked:
        return runnable, None
    return runnable, Stop(reason="policy_changed", detail="; ".join(blocked))


def _policy_problem(run: Run, planned: PlannedCall) -> tuple[ErrorKind, str] | None:
    contract, name = run.contract, planned.call.name
    spec = contract.registry.get(name)
    if spec is None or spec.effect != "write":
        return "not_allowed", f"{name!r} is no longer a registered write tool"
    if not contract.is_allowed(name):
        return "not_allowed", f"{name!r} is no longer in the allowlist"
    problem = check_argument_sizes(contract.budget, planned.arguments) or spec.validate(
        planned.arguments
    )
    if problem is not None:
        return "invalid_arguments", f"the arguments fail the current schema: {problem}"
    budget, counters = contract.budget, run.counters
    if counters.tool_calls > budget.max_tool_calls:
        return "budget_exceeded", (
            f"max_tool_calls is now {budget.max_tool_calls}; the run used {counters.tool_calls}"
        )
    if max(counters.call_counts.values(), default=0) > budget.max_identical_calls:
        return "budget_exceeded", (
            f"max_identical_calls is now {budget.max_identical_calls}, below the run's repeats"
        )
    late = check_deadline(budget, counters)
    if late is not None:
        return "budget_exceeded", late.message
    return None
