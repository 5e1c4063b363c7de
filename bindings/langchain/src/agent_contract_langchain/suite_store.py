"""Where the contract-suite harnesses keep a run's LangGraph checkpoints, and the
checkpoint-integrity hook on them.

A suite run keeps its graph in an ``InMemorySaver``, unless the scenario asks for a
tampering (:attr:`~agent_contract.runtime.input.RunInput.tamper`, capability
``durable_store``): then the graph is checkpointed by the store's sealed checkpointer
(:func:`~agent_contract_langchain.durable.checkpointer_for`), as the durable runner keeps
it: in a scratch store of the plan's store (:meth:`~agent_contract.tampering.TamperPlan.scratch`):
a fresh data folder's SQLite file, or, when the plan's store is a PostgreSQL database
(``agent-contract check --store URL``, ``$AGENT_CONTRACT_STORE``), a fresh schema of that
database (``agent_contract_suite_<random>``, dropped on exit), with a fresh folder's key;
the same mechanism as the run store's tampered rows
(:meth:`~agent_contract.tampering.TamperPlan.reopen`). Before the decisions go into the paused run, its checkpoint
is sealed (:func:`~agent_contract_langchain.sealed.seal_paused`), its rows are tampered
with by plain SQL (:meth:`~agent_contract.tampering.TamperPlan.reopen_checkpoints`) and
the resume first checks the seal (:func:`~agent_contract_langchain.sealed.check_paused`),
as :func:`~agent_contract_langchain.durable.resume` does: a refusal is noted, the rows
are put right, and the same decisions are carried in again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.approval import Approval
from agent_contract.harnesses import RunInput
from agent_contract.runtime import Contract, RunResult
from agent_contract.sealing import folder_key

from .driving import Mode
from .durable import checkpointer_for
from .resuming import _Endpoint, resume_graph
from .sealed import check_paused, seal_paused

__all__ = ["SealCheck", "SuiteStore"]

_PREFIX = "agent-contract-checkpoints-"

SealCheck = Callable[[Any, str, Any, bytes], None]
"""``check(saver, thread_id, seal, key)``: refuses (``CheckpointError``) a paused thread
that is not as sealed (:func:`~agent_contract_langchain.sealed.check_paused`)."""


class _SyncBacked:
    """A saver whose async methods run its sync ones (as ``InMemorySaver``'s do), so the
    ``ainvoke`` mode drives the same rows; mixed into ``SqliteSaver`` or the sealed
    ``PostgresSaver``."""

    async def aget_tuple(self, config: Any) -> Any:
        return self.get_tuple(config)  # type: ignore[attr-defined]

    async def alist(self, config: Any, **kwargs: Any) -> Any:
        for item in self.list(config, **kwargs):  # type: ignore[attr-defined]
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)  # type: ignore[attr-defined]

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)  # type: ignore[attr-defined]

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)  # type: ignore[attr-defined]


class _SqliteSaver(_SyncBacked, SqliteSaver):
    """``SqliteSaver`` driven by both modes."""


def _sync_backed(opened: Any) -> Any:
    """A saver on ``opened``'s connection and serializer whose async methods run the sync
    ones."""
    if isinstance(opened, SqliteSaver):
        return _SqliteSaver(opened.conn, serde=opened.serde)
    both = type(f"Suite{type(opened).__name__}", (_SyncBacked, type(opened)), {})
    return both(opened.conn, serde=opened.serde)


class SuiteStore:
    """Where one suite run keeps its graph (see the module doc): without
    ``options.tamper``, an ``InMemorySaver`` and no endpoint of its own (``endpoint`` is
    ``None``: the default one); with it, the store's sealed checkpointer (a fresh data
    folder's SQLite file, or a fresh schema of the plan's PostgreSQL store:
    ``options.tamper.store``, the one ``$AGENT_CONTRACT_STORE`` names in the suite), and
    an endpoint that, the first time, tampers with the paused checkpoint and resumes
    through ``check``, then resumes as
    :func:`~agent_contract_langchain.resuming.resume_graph` in ``mode``. Use it as a
    context manager: leaving it closes the checkpointer and removes the folder (and the
    schema).

    Args:
        check: the seal check a resume runs first (a team's own wiring may differ).

    Raises:
        CheckpointError: the checkpoint file cannot be opened.
        DataFolderError: the scratch folder or schema cannot be made.
    """

    def __init__(self, options: RunInput, mode: Mode, *, check: SealCheck = check_paused) -> None:
        self._plan = options.tamper
        self._mode = mode
        self._check = check
        self._stack = ExitStack()
        self._tampered = False
        self.endpoint: _Endpoint | None = None
        """The suite run's endpoint (``run_options(endpoint=...)``)."""
        self.saver: Any = InMemorySaver()
        """The run's checkpointer."""
        if self._plan is None:
            return
        with ExitStack() as stack:
            # the plan's store (check --store): a fresh folder (the key; SQLite: the
            # checkpoint file), and on PostgreSQL a fresh schema of its database
            store = stack.enter_context(self._plan.scratch(prefix=_PREFIX))
            self._folder = store.folder
            self._key = folder_key(self._folder)
            self._store = store
            opened = stack.enter_context(checkpointer_for(store, key=self._key))
            self.saver = _sync_backed(opened)
            self.endpoint = self.guarded(self._resume_graph)
            self._stack = stack.pop_all()

    def __enter__(self) -> SuiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _resume_graph(
        self,
        graph: Any,
        contract: Contract,
        snapshot: Mapping[str, Any],
        approvals: list[Approval],
        checkpoint: Callable[[dict[str, Any]], None] | None,
    ) -> RunResult:
        return resume_graph(
            graph, contract, snapshot, approvals, mode=self._mode, checkpoint=checkpoint
        )

    def guarded(self, decide: _Endpoint) -> _Endpoint:
        """``decide`` (an endpoint: it carries decisions into the paused run on
        :attr:`saver`) behind the checkpoint-integrity hook: without ``options.tamper``,
        ``decide`` itself; with it, the first call seals the paused checkpoint, tampers
        with its rows, and calls ``decide`` after ``check`` (a refusal is noted, the rows
        put right, and ``decide`` called again); later calls go to ``decide``."""
        plan = self._plan
        if plan is None:
            return decide

        def endpoint(
            graph: Any,
            contract: Contract,
            snapshot: Mapping[str, Any],
            approvals: list[Approval],
            checkpoint: Callable[[dict[str, Any]], None] | None,
        ) -> RunResult:
            def resume() -> RunResult:
                return decide(graph, contract, snapshot, approvals, checkpoint)

            if self._tampered:
                return resume()
            self._tampered = True
            thread = str(snapshot.get("run_id", ""))
            seal = seal_paused(self.saver, thread, self._key)

            def checked() -> RunResult:
                self._check(self.saver, thread, seal, self._key)
                return resume()

            return plan.reopen_checkpoints(self._store, thread, checked)

        return endpoint
