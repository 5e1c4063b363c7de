"""A resumed run whose graph ended before the run store recorded the end.

A process can stop (a crash, a signal) after a resumed graph ended and before the run
store wrote its "finished" record. The stored snapshot still says "paused"; the
checkpoint says "ended". Resuming that graph would do nothing, and the run would stay
paused forever: :func:`resume_or_reconcile` settles it from the checkpoint instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_contract.approval import Approval
from agent_contract.model import Model
from agent_contract.runtime import Checkpoint, Contract, RunResult, Stop

from .errors import framework_errors
from .harness import build_agent
from .messages import from_langchain_messages
from .resuming import resume_graph
from .stops import stop_of, without_stops

__all__ = ["reconcile_finished", "resume_or_reconcile"]


def resume_or_reconcile(
    model: Model,
    contract: Contract,
    snapshot: Mapping[str, Any],
    approvals: Sequence[Approval],
    *,
    checkpointer: Any,
    checkpoint: Checkpoint | None = None,
) -> RunResult:
    """:func:`~agent_contract_langchain.resuming.resume_agent`, unless the thread's graph
    already ended: then :func:`reconcile_finished` reports the run it finished.

    A process can stop (a crash, a signal) after a resumed graph ended and before the
    run store recorded the end. The stored snapshot still says "paused"; the
    checkpoint says "ended". Resuming that graph would do nothing and the run would stay
    paused forever, so the run is settled from the checkpoint instead.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot or the checkpoint cannot be read.
    """
    graph = build_agent(model, contract, checkpointer=checkpointer)
    config = {"configurable": {"thread_id": str(snapshot.get("run_id", ""))}}
    with framework_errors():
        current = graph.get_state(config)
    if current.values and not current.next and not current.interrupts:
        return reconcile_finished(contract, snapshot, current.values, approvals)
    return resume_graph(graph, contract, snapshot, approvals, checkpoint=checkpoint)


def reconcile_finished(
    contract: Contract,
    snapshot: Mapping[str, Any],
    values: Mapping[str, Any],
    approvals: Sequence[Approval] = (),
) -> RunResult:
    """The result of a run whose graph ended (``values``: its final graph state) while
    the stored ``snapshot`` was not updated: decisions in ``approvals`` are checked and
    recorded, every approved write is settled (``verify`` finds what the graph wrote,
    and nothing is written twice), and the run ends with the stop the graph recorded.

    Raises:
        ApprovalError: a decision does not fit.
        CheckpointError: the snapshot cannot be restored.
    """
    state, _ = contract.restore(snapshot)
    messages = list(values.get("messages", ()))
    transcript = from_langchain_messages(without_stops(messages))
    for planned in state.resume(approvals, transcript=transcript):
        state.execute(planned)
    stop = stop_of(messages)
    if stop is None:  # the graph ended on the model's answer
        last = next((m for m in reversed(transcript) if m.role == "assistant"), None)
        if last is not None and not last.tool_calls:
            state.halt(Stop(reason="answered"), last.content)
    else:
        state.halt(stop)
    return state.finish(messages=transcript, harness="langchain-invoke")
