"""Shared fixtures for the order tools (issue 5): a data folder under ``tmp_path``, the
two harnesses, a counting order store, and ways to run the CLI in this process or in a
child process.

Every test gets its own data folder; ``AGENT_CONTRACT_DATA_DIR`` and ``XDG_DATA_HOME``
point into ``tmp_path`` too, so nothing can reach the user's home even by accident.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app import cli
from agent_contract.app.builtin_tools.orders import OrderStore, lookup_order_tool, refund_order_tool
from agent_contract.app.demo import DATA_DIR_ENV, start_demo
from agent_contract.approval import Approval
from agent_contract.budget import Budget
from agent_contract.datafolder import LOCK_TIMEOUT_ENV
from agent_contract.faults import CRASH_ENV, CRASH_POINTS, CRASH_SIGNALS
from agent_contract.loop import resume as resume_offline
from agent_contract.loop import run as run_offline
from agent_contract.model import Model
from agent_contract.results import ToolOutput
from agent_contract.runstore import RUNS_LABEL, RunStore
from agent_contract.runtime import Contract, RunResult
from agent_contract.sealing import folder_key, seal, subkey
from agent_contract.stores import STORE_ENV, Database, Store, open_store
from agent_contract.tools import ToolContext
from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.harness import run_agent
from agent_contract_langchain.resuming import resume_agent
from agent_contract_pydantic_ai.harness import resume_agent as resume_pydantic_ai
from agent_contract_pydantic_ai.harness import run_agent as run_pydantic_ai

HARNESSES = ("offline", "langchain", "pydantic-ai")
CLI_TIMEOUT_SECONDS = 900
"""A hang guard for one CLI child, far above its expected seconds (a loaded machine
must not fail a test: the work is bounded by its own logic, not by this)."""


@pytest.fixture(params=HARNESSES)
def harness(request: pytest.FixtureRequest) -> str:
    """``"offline"``, ``"langchain"`` or ``"pydantic-ai"``."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(CRASH_ENV, raising=False)
    monkeypatch.delenv(STORE_ENV, raising=False)


STORES = ("sqlite", "postgresql")


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each store in turn for a test that proves a durable guarantee: ``"sqlite"`` (the
    data folder's files), then ``"postgresql"`` (a new database, named by
    ``$AGENT_CONTRACT_STORE`` for everything the test runs: ``start_demo``, the CLI in
    this process and in children, and :class:`DataFolder`'s reads)."""
    if request.param == "postgresql":
        monkeypatch.setenv(STORE_ENV, str(request.getfixturevalue("postgres_url")))
    return str(request.param)


EXCLUDED: frozenset[tuple[str, str]] = frozenset({})
"""(harness, store) pairs not run yet: the one place to switch one on."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the :data:`EXCLUDED` (harness, store) pairs."""
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        pair = (params.get("harness", params.get("harness_name")), params.get("store_kind"))
        (dropped if pair in EXCLUDED else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The data folder of this test (orders.sqlite3, runs.sqlite3, checkpoints.sqlite3)."""
    return tmp_path / "data"


# -- reading the databases -------------------------------------------------------------


@dataclass(frozen=True)
class DataFolder:
    """Views of a data folder's stores, each through a fresh, closed connection: its
    SQLite files, or the PostgreSQL database ``$AGENT_CONTRACT_STORE`` names (read when
    a view is used, so :func:`store_kind` decides)."""

    path: Path

    @property
    def store(self) -> Store:
        return open_store(self.path)

    def _database(self, db: Path | str) -> Database:
        """The store database of ``db`` (a file path such as ``runs_db``, or a name)."""
        name = db.name if isinstance(db, Path) else db
        return self.store.database(name.removesuffix(".sqlite3"))

    def has_table(self, db: Path | str, table: str) -> bool:
        """Whether store ``db`` exists and has ``table``."""
        return table in self._database(db).tables()

    def execute(self, db: Path | str, sql: str, *params: Any) -> None:
        """Run one writing statement on store ``db`` with plain SQL, as another local
        user (or anyone who can write the database without the key) could."""
        with self._database(db).transaction() as conn:
            conn.execute(sql, params)

    @property
    def orders_db(self) -> Path:
        return self.path / "orders.sqlite3"

    @property
    def runs_db(self) -> Path:
        return self.path / "runs.sqlite3"

    @property
    def checkpoints_db(self) -> Path:
        return self.path / "checkpoints.sqlite3"

    def query(self, db: Path | str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self._database(db).transaction(write=False, create=False) as conn:
            return [tuple(row) for row in conn.execute(sql, params).fetchall()]

    def refund_rows(self, order_id: str | None = None) -> list[dict[str, Any]]:
        """The refunds table (all, or one order's), as dicts."""
        if not self.has_table(self.orders_db, "refunds"):
            return []
        names = ("idempotency_key", "order_id", "amount_cents", "reason", "caller", "run_id")
        sql = f"SELECT {', '.join(names)} FROM refunds"  # noqa: S608 - fixed column names
        rows = (
            self.query(self.orders_db, sql + " WHERE order_id = ? ORDER BY created_at", order_id)
            if order_id is not None
            else self.query(self.orders_db, sql + " ORDER BY created_at")
        )
        return [dict(zip(names, row, strict=True)) for row in rows]

    def refund_count(self, order_id: str | None = None) -> int:
        return len(self.refund_rows(order_id))

    def order(self, order_id: str) -> dict[str, Any]:
        ((refunded, status),) = self.query(
            self.orders_db,
            "SELECT refunded_cents, status FROM orders WHERE order_id = ?",
            order_id,
        )
        return {"refunded_cents": refunded, "status": status}

    def write_run(self, thread_id: str, harness: str, text: str) -> None:
        """Replace a stored run's row with ``text``, sealed with the folder's key (what
        only agent-contract itself, or a holder of the key, can do)."""
        key = subkey(folder_key(self.path), RUNS_LABEL)
        self.execute(
            self.runs_db,
            "UPDATE runs SET harness = ?, snapshot = ?, mac = ? WHERE thread_id = ?",
            harness,
            text,
            seal(key, thread_id, harness, text),
            thread_id,
        )

    def runs(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """``{thread_id: (harness column, snapshot)}`` from runs.sqlite3."""
        if not self.has_table(self.runs_db, "runs"):
            return {}
        rows = self.query(self.runs_db, "SELECT thread_id, harness, snapshot FROM runs")
        store = RunStore(self.store.database("runs"), key=folder_key(self.path))  # encrypted
        return {t: (h, json.loads(store.decode(s))) for t, h, s in rows}


@pytest.fixture
def data(folder: Path) -> DataFolder:
    """Views of this test's data folder."""
    return DataFolder(folder)


@pytest.fixture(scope="session")
def data_at() -> type[DataFolder]:
    """``data_at(path)``: views of any data folder."""
    return DataFolder


@contextmanager
def exclusive_lock(path: Path) -> Iterator[sqlite3.Connection]:
    """Hold an exclusive lock on the SQLite file ``path`` (created if missing) that keeps
    readers out too (the stores use WAL, where ``BEGIN EXCLUSIVE`` alone lets them read)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")


@pytest.fixture
def locked(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Any]:
    """``with locked(path):`` holds an exclusive SQLite lock on ``path``; the stores give
    up after 0.6 s instead of the default 30 s (this process and its children)."""
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.6")
    return exclusive_lock


# -- a counting order store --------------------------------------------------------------


class CountingStore(OrderStore):
    """An OrderStore that counts how often each entry point ran (all threads)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.counts: dict[str, int] = {"lookup": 0, "preview": 0, "refund": 0, "verify": 0}

    def lookup(self, context: ToolContext, order_id: str) -> ToolOutput:
        self.counts["lookup"] += 1
        return super().lookup(context, order_id)

    def preview_refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any]:
        self.counts["preview"] += 1
        return super().preview_refund(context, order_id, amount_cents, reason)

    def refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any]:
        self.counts["refund"] += 1
        return super().refund(context, order_id, amount_cents, reason)

    def verify_refund(
        self, context: ToolContext, order_id: str, amount_cents: int, reason: str
    ) -> dict[str, Any] | None:
        self.counts["verify"] += 1
        return super().verify_refund(context, order_id, amount_cents, reason)


@pytest.fixture
def store(folder: Path) -> CountingStore:
    """A counting order store on this test's ``orders.sqlite3`` (created on first use)."""
    return CountingStore(folder / "orders.sqlite3")


@pytest.fixture
def order_contract(store: CountingStore) -> Callable[..., Contract]:
    """``order_contract(**options)``: a Contract with lookup_order and refund_order."""

    def build(**options: Any) -> Contract:
        return Contract([lookup_order_tool(store), refund_order_tool(store)], **options)

    return build


# -- one driver for both harnesses ---------------------------------------------------------


@dataclass
class Driver:
    """Runs and resumes a model on one harness. LangChain runs keep their graph in a
    file-backed SqliteSaver that is opened afresh for every call, as a new process
    would; a PydanticAI run resumes from the contract's snapshot alone."""

    harness: str
    folder: Path
    saved: list[dict[str, Any]] = field(default_factory=list)

    def run(
        self,
        model: Model,
        contract: Contract,
        text: str,
        *,
        caller: str | None = "alice",
        run_id: str | None = None,
    ) -> RunResult:
        if self.harness == "offline":
            return run_offline(model, contract, text, caller=caller, run_id=run_id)
        if self.harness == "pydantic-ai":  # the snapshot is all it keeps
            return run_pydantic_ai(model, contract, text, caller=caller, run_id=run_id)
        with sqlite_checkpointer(self.folder / "checkpoints.sqlite3") as saver:
            return run_agent(
                model, contract, text, caller=caller, run_id=run_id, checkpointer=saver
            )

    def resume(
        self,
        model: Model,
        contract: Contract,
        snapshot: Mapping[str, Any],
        approvals: Sequence[Approval],
        *,
        checkpoint: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        def keep(data: dict[str, Any]) -> None:
            self.saved.append(json.loads(json.dumps(data)))
            if checkpoint is not None:
                checkpoint(data)

        if self.harness == "offline":
            return resume_offline(model, contract, snapshot, approvals, checkpoint=keep)
        if self.harness == "pydantic-ai":
            return resume_pydantic_ai(model, contract, snapshot, approvals, checkpoint=keep)
        with sqlite_checkpointer(self.folder / "checkpoints.sqlite3") as saver:
            return resume_agent(
                model, contract, snapshot, approvals, checkpointer=saver, checkpoint=keep
            )

    def settle(
        self,
        model: Model,
        contract: Contract,
        result: RunResult,
        decide: Callable[[RunResult], Sequence[Approval]],
        *,
        max_rounds: int = 20,
    ) -> tuple[RunResult, int]:
        """Resume with ``decide(result)`` while the run waits; returns the end and the
        number of resumes."""
        rounds = 0
        while result.stop_reason == "pending_approval" and rounds < max_rounds:
            assert result.snapshot is not None
            result = self.resume(model, contract, result.snapshot, decide(result))
            rounds += 1
        return result, rounds


@pytest.fixture
def driver(harness: str, folder: Path) -> Driver:
    """The driver for this test's harness."""
    return Driver(harness, folder)


def approve_all(result: RunResult) -> list[Approval]:
    """Approve every pending call of ``result``."""
    return [Approval.for_pending(p, "approve") for p in result.pending_approvals]


@pytest.fixture
def approve_every() -> Callable[[RunResult], list[Approval]]:
    """A decider that approves every pending call."""
    return approve_all


def base_budget(**limits: Any) -> Budget:
    """A Budget without a wall-clock deadline (slow CI machines must not change stops)."""
    return Budget(deadline_seconds=None, **limits)


@pytest.fixture
def budget() -> Callable[..., Budget]:
    """``budget(**limits)``: a Budget with no deadline."""
    return base_budget


# -- the command line ------------------------------------------------------------------------


def python_flags() -> list[str]:
    """Run children the way this test run was started (-O, -W error)."""
    return ["-O"] * sys.flags.optimize + [f"-W{option}" for option in sys.warnoptions]


@dataclass(frozen=True)
class CliCall:
    """One ``agent-contract`` command for a child process."""

    argv: tuple[str, ...]
    folder: Path
    crash_at: str | None = None

    def command(self) -> list[str]:
        return [sys.executable, *python_flags(), "-m", "agent_contract.app.cli", *self.argv]

    def env(self) -> dict[str, str]:
        env = {**os.environ, DATA_DIR_ENV: str(self.folder), "PYTHONIOENCODING": "utf-8"}
        env.pop(CRASH_ENV, None)
        if self.crash_at is not None:
            env[CRASH_ENV] = self.crash_at
        return env


def start_children(calls: Sequence[CliCall]) -> list[subprocess.Popen[str]]:
    """Start the commands as child processes, all at once."""
    return [
        subprocess.Popen(
            call.command(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=call.env(),
        )
        for call in calls
    ]


def wait_children(
    calls: Sequence[CliCall], started: Sequence[subprocess.Popen[str]]
) -> list[subprocess.CompletedProcess[str]]:
    """Wait for every child of :func:`start_children` (killed after the timeout)."""
    done = []
    for call, child in zip(calls, started, strict=True):
        try:
            out, err = child.communicate(timeout=CLI_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
        done.append(subprocess.CompletedProcess(call.command(), child.returncode, out, err))
    return done


def run_children(calls: Sequence[CliCall]) -> list[subprocess.CompletedProcess[str]]:
    """Run the commands as child processes, all at once, and wait for every one."""
    return wait_children(calls, start_children(calls))


@pytest.fixture(scope="session")
def children() -> Callable[[Sequence[CliCall]], list[subprocess.CompletedProcess[str]]]:
    """``children([CliCall(...), ...])``: run CLI commands in parallel child processes."""
    return run_children


@pytest.fixture(scope="session")
def cli_call() -> type[CliCall]:
    """The :class:`CliCall` type, to build child-process commands."""
    return CliCall


@pytest.fixture(scope="session")
def invoke() -> Callable[..., tuple[int, str, str]]:
    """``invoke(*argv)``: ``agent-contract`` in this process -> ``(code, out, err)``."""

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(list(argv), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    return run


# -- the child processes of the cross-process tests, started together -----------------------
#
# A child that imports LangChain needs seconds of CPU before it does anything. The
# cross-process tests of test_crash_points.py and test_durable_cli.py start all their
# children from this one session fixture, so that they overlap instead of queueing.

EDIT_A1001 = {"order_id": "A-1001", "amount_cents": 700, "reason": "partial"}
EDIT_A1002 = {"order_id": "A-1002", "amount_cents": 1000, "reason": "partial"}
CRASH_CASES = [
    (point, sig, harness, decision)
    for point in CRASH_POINTS
    for sig in CRASH_SIGNALS
    for harness, decision in (("offline", "approve"), ("langchain", "approve"), ("offline", "edit"))
    if decision == "approve" or sig == "SIGKILL"
]
"""Each crash point with each signal (SIGKILL, SIGINT, SIGTERM) on both harnesses with
``approve``, and offline with ``edit`` (SIGKILL)."""


@dataclass
class CrashStart:
    """A run paused in this process, then ``approve`` in a child that sends itself
    ``signal`` at ``point``."""

    point: str
    signal: str
    harness: str
    decision: str
    folder: Path
    thread_id: str
    call_id: str
    killed: subprocess.CompletedProcess[str] | None = None

    @property
    def case_id(self) -> str:
        return f"{self.point}-{self.signal}-{self.harness}-{self.decision}"

    @property
    def crash_at(self) -> str:
        """The crash point's setting: ``point`` (SIGKILL) or ``point:SIGNAL``."""
        return self.point if self.signal == "SIGKILL" else f"{self.point}:{self.signal}"

    def decide(self) -> tuple[str, ...]:
        """The ``approve`` command line, the same before and after the crash."""
        extra = ("--arguments", json.dumps(EDIT_A1001)) if self.decision == "edit" else ()
        return ("approve", self.thread_id, "--decision", self.decision, *extra, "--json")


@dataclass
class CliFlow:
    """``run`` in one child process, ``approve --decision edit`` in another."""

    folder: Path
    run: subprocess.CompletedProcess[str]
    report: dict[str, Any]
    rows_after_run: int
    approve: subprocess.CompletedProcess[str] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ChildRuns:
    crashes: dict[str, CrashStart]
    flows: dict[str, CliFlow]


def crash_cases_selected(session: pytest.Session) -> list[tuple[str, str, str, str]]:
    """The :data:`CRASH_CASES` whose tests this session runs (the ``case`` parameter of
    test_crash_points.py's tests, after ``-k`` or CI's flag-mode rotation: the conftest
    at the root); all of them when only that module's unparametrized tests run."""
    chosen = set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if item.path.name == "test_crash_points.py" and callspec is not None:
            chosen.add(callspec.params.get("case"))
    if not chosen:
        return list(CRASH_CASES)
    return [c for c in CRASH_CASES if "-".join(c) in chosen]


@pytest.fixture(scope="session")
def child_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> ChildRuns:
    """Every child process of the cross-process tests, overlapping (the crash points:
    those of :func:`crash_cases_selected`)."""
    flow_folders = {h: tmp_path_factory.mktemp(f"cli-{h}") / "data" for h in HARNESSES}
    run_calls = [
        CliCall(
            ("run", "refund order A-1002", "--caller", "alice", "--harness", h, "--json"),
            flow_folders[h],
        )
        for h in HARNESSES
    ]
    runs_started = start_children(run_calls)

    crashes: dict[str, CrashStart] = {}
    for point, sig, harness, decision in crash_cases_selected(request.session):
        folder = tmp_path_factory.mktemp(f"{point}-{sig}-{harness}-{decision}") / "data"
        demo = start_demo("refund order A-1001", harness=harness, caller="alice", folder=folder)
        (pending,) = demo.result.pending_approvals
        start = CrashStart(
            point, sig, harness, decision, folder, demo.thread_id, pending.tool_call_id
        )
        crashes[start.case_id] = start
    kill_calls = [CliCall(c.decide(), c.folder, c.crash_at) for c in crashes.values()]
    kills_started = start_children(kill_calls)

    flows: dict[str, CliFlow] = {}
    for harness, proc in zip(HARNESSES, wait_children(run_calls, runs_started), strict=True):
        report = json.loads(proc.stdout) if proc.returncode == 7 else {}
        rows = DataFolder(flow_folders[harness]).refund_count()
        flows[harness] = CliFlow(flow_folders[harness], proc, report, rows)
    approve_calls = [
        CliCall(
            (
                "approve",
                flows[h].report.get("thread_id", "missing"),
                "--decision",
                "edit",
                "--arguments",
                json.dumps(EDIT_A1002),
                "--decided-by",
                "ops",
            ),
            flow_folders[h],
        )
        for h in HARNESSES
    ]
    approvals_started = start_children(approve_calls)

    for start, proc in zip(crashes.values(), wait_children(kill_calls, kills_started), strict=True):
        start.killed = proc
    for harness, proc in zip(
        HARNESSES, wait_children(approve_calls, approvals_started), strict=True
    ):
        flows[harness].approve = proc
        flows[harness].rows = DataFolder(flow_folders[harness]).refund_rows()
    return ChildRuns(crashes, flows)
