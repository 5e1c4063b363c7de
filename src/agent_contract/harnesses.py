"""Harnesses: what runs a model and tools under the contract.

A *harness* is any callable ``harness(model, tools, options) -> RunResult | Observation``
(:class:`Harness`): the offline loop, a framework's agent driven through a binding, or
an agent of your own. The contract suite runs every scenario on harnesses by name.

A harness is registered by an entry point that names a :class:`HarnessPlugin`: its
name, role, a loader that imports its framework only when it is used, and optionally a
:class:`DurableRunner` for the demo app. :mod:`agent_contract.registry` finds them; the
core's own is :data:`OFFLINE`.

What a harness is handed, :class:`RunInput` (and its :class:`Decider`), is the run's
input to the runtime: it lives in :mod:`agent_contract.runtime` and is re-exported here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from .approval import Approval
from .errors import ApprovalError
from .faults import CrashPlan, is_simulated_crash
from .loop import resume, run_child, run_input
from .model import Model
from .runstore import RunStore
from .runtime import Checkpoint, Contract, Decider, RunInput, RunResult, RunState
from .stores import Store
from .tampering import OpenStore
from .tools import ToolContext, ToolSpec

__all__ = [
    "CORE_CAPABILITIES",
    "COUNTED_CAPABILITIES",
    "OFFLINE",
    "OFFLINE_CAPABILITIES",
    "Decider",
    "DurableRunner",
    "Harness",
    "HarnessPlugin",
    "Observation",
    "Restart",
    "Resume",
    "Role",
    "RunInput",
    "SnapshotRunner",
    "WireClient",
    "capabilities_of",
    "mode_plugins",
    "offline_harness",
    "offline_runner",
    "settle_approvals",
]

Role = Literal["contract", "control"]
"""``contract``: a harness that must keep the contract; ``control``: one expected to break
it (shown for comparison, never deciding an exit code)."""


# -- what a harness gets and gives -------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Observation:
    """What a run showed, in a harness-neutral form: what a harness returns when it cannot
    produce a RunResult (a foreign agent without the contract, such as a control)."""

    harness: str
    """The harness's name."""
    stop_reason: str
    """The contract's stop reason, or ``crashed:<ExceptionType>`` for a run that raised."""
    output: str | None
    """The answer, if any."""
    trajectory: tuple[str, ...]
    """Tool names in the order the model called them."""
    tool_messages: tuple[dict[str, Any], ...]
    """Per tool message, in transcript order: ``id``, ``name``, ``status``,
    ``error_kind`` (from the JSON error content), ``side_effects_possible``, ``content``."""
    trace_types: tuple[str, ...]
    """Trace event types in order (empty when the harness keeps no trace)."""
    emitted: str
    """Everything the run emitted for people and the model: trace JSONL, tool message
    contents, output, JSON summary. Searched for planted secrets."""
    issued_ids: tuple[str | None, ...] = ()
    """Tool-call ids in the order the model issued them."""

    @classmethod
    def crashed(cls, harness: str, exc: BaseException) -> Observation:
        """What a run that raised showed: stop reason ``crashed:<ExceptionType>``, nothing
        else but the exception's text (searched for planted secrets like the rest)."""
        return cls(
            harness=harness,
            stop_reason=f"crashed:{type(exc).__name__}",
            output=None,
            trajectory=(),
            tool_messages=(),
            trace_types=(),
            emitted=str(exc),
        )

    @classmethod
    def answered(
        cls,
        harness: str,
        output: str | None,
        trajectory: Sequence[str],
        tool_messages: tuple[dict[str, Any], ...],
        issued_ids: Sequence[str | None],
    ) -> Observation:
        """What a run that ended with an answer showed, with no trace kept (a control's
        run): stop reason ``answered``; ``emitted`` is the tool messages' contents and the
        output."""
        return cls(
            harness=harness,
            stop_reason="answered",
            output=output,
            trajectory=tuple(trajectory),
            tool_messages=tool_messages,
            trace_types=(),
            emitted="\n".join([*(str(m["content"]) for m in tool_messages), output or ""]),
            issued_ids=tuple(issued_ids),
        )

    def comparable(self) -> dict[str, Any]:
        """The fields every harness must agree on."""
        return {
            "stop_reason": self.stop_reason,
            "output": self.output,
            "trajectory": self.trajectory,
            "tool_messages": [
                (m["id"], m["status"], m["error_kind"], m["side_effects_possible"])
                for m in self.tool_messages
            ],
            "trace_types": self.trace_types,
        }


class Harness(Protocol):
    """Runs a model and tools under ``options``; returns a RunResult (or an Observation)."""

    def __call__(
        self, model: Model, tools: list[ToolSpec], options: RunInput
    ) -> RunResult | Observation: ...


Resume = Callable[..., RunResult]
"""``resume(snapshot, approvals, checkpoint=None) -> RunResult``: continue a paused run
with decisions (``checkpoint(snapshot)`` stores the snapshot before any write runs; a
resume that is never asked to crash is called with the first two only)."""
Restart = Callable[[Mapping[str, Any], list[Approval]], RunResult]
"""``restart(stored_snapshot, approvals) -> RunResult``: resume in a *fresh* instance
(new contract, graph or agent; the same durable stores) after a crash."""


def settle_approvals(
    result: RunResult,
    resume: Resume,
    options: RunInput,
    *,
    max_rounds: int = 10,
    restart: Restart | None = None,
    open_store: OpenStore = RunStore,
) -> RunResult:
    """Answer ``pending_approval`` stops with the options' decider until the run ends,
    the decider has nothing more to say, or ``max_rounds`` passes. A refused decision
    (:class:`ApprovalError`) is noted and the run stays paused for the next one.

    With ``options.crash`` and a ``restart``, the first resume runs with the crash plan
    armed and a ``checkpoint`` that stores the snapshot (as a JSON copy, what a store
    on disk keeps); when it crashes, everything it held is dropped and ``restart`` gets
    the last stored snapshot and the same decisions (an identical decision is accepted
    again; a write that already happened is verified, not repeated).

    With ``options.tamper`` (capability ``durable_store``), the first decisions go to
    the run as a durable store reads it back: the paused snapshot is stored with
    ``open_store`` (the harness's store, opened on a
    :class:`~agent_contract.stores.Database`; default
    :class:`~agent_contract.runstore.RunStore`) in a fresh scratch store (a temporary
    data folder, or a new schema of the plan's PostgreSQL store: ``check --store``), its
    row tampered with and the store reopened
    (:meth:`~agent_contract.tampering.TamperPlan.reopen`): a store that refuses the row
    has it put right and resumes from what it reads then."""
    plan = options.crash if restart is not None else None
    for _ in range(max_rounds):
        if result.stop_reason != "pending_approval" or options.decider is None:
            return result
        if result.snapshot is None:
            return result
        approvals = options.decider(result.pending_approvals)
        if not approvals:
            return result
        snapshot = result.snapshot
        if options.tamper is not None and not options.tamper.reopened:
            snapshot = options.tamper.reopen(
                snapshot, open_store=open_store, harness=result.harness
            )
        try:
            if plan is not None and restart is not None and not plan.fired:
                result = _resume_crashing(snapshot, approvals, resume, restart, plan)
            else:
                result = resume(snapshot, approvals)
        except ApprovalError as exc:
            options.decider.refused(exc)
    return result


def _resume_crashing(
    snapshot: Mapping[str, Any],
    approvals: list[Approval],
    resume: Resume,
    restart: Restart,
    plan: CrashPlan,
) -> RunResult:
    """Resume with ``plan`` armed; on its crash, restart from the last stored snapshot."""
    stored: list[str] = [json.dumps(dict(snapshot))]

    def checkpoint(data: Mapping[str, Any]) -> None:
        stored.append(json.dumps(dict(data)))

    try:
        with plan.armed():
            return resume(snapshot, approvals, checkpoint)
    except BaseException as exc:
        if not is_simulated_crash(exc):
            raise
    plan.restarted()
    return restart(json.loads(stored[-1]), approvals)


def offline_harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
    """The offline loop as a harness (it has no framework: a scenario's extras that need
    one are not applied; see :data:`OFFLINE_CAPABILITIES`)."""
    plan, state = options.sub_agent, None
    if plan is None:
        contract = options.contract(tools)
    else:  # the sub-agent hook: the delegating tool runs the child in this loop
        started: list[RunState] = []
        child_model = plan.model

        def run_offline_child(child: Contract, context: ToolContext, text: str) -> str:
            return run_child(child_model, child, started[0], context.tool_call_id, text) or ""

        contract = plan.contract(tools, options.contract, run_offline_child)
        state = options.start(contract)
        started.append(state)
    result = run_input(model, contract, options, state=state)
    return settle_approvals(
        result,
        lambda snapshot, approvals, checkpoint=None: resume(
            model, contract, snapshot, approvals, checkpoint=checkpoint
        ),
        options,
        restart=lambda snapshot, approvals: resume(
            model, options.contract(tools), snapshot, approvals
        ),
    )


CORE_CAPABILITIES: Final = ("timeouts", "write_tools")
"""What a harness can express unless it declares ``capabilities`` itself: the contract's
own features. Scenarios that need a framework's pieces (middleware, commands, pauses,
threads) run only on a harness that declares them."""
COUNTED_CAPABILITIES: Final = (*CORE_CAPABILITIES, "crash_restart", "durable_store")
"""Capabilities whose scenarios check the contract itself: a harness that does not
declare one leaves those scenarios, and so their boundaries, *not checked*, which
``agent-contract check`` counts and fails on unless the team opts out
(``--allow-unchecked``). A framework's pieces (middleware, commands...) are not
counted: a harness without that framework has nothing there to check.
``crash_restart`` is the crash/restart hook
(:attr:`~agent_contract.runtime.input.RunInput.crash`); ``durable_store`` is the
checkpoint-integrity hook (:attr:`~agent_contract.runtime.input.RunInput.tamper`: a paused
run's stored row tampered with, the store reopened). Neither is assumed for a harness
that declares nothing."""
OFFLINE_CAPABILITIES: Final = (*CORE_CAPABILITIES, "crash_restart", "durable_store", "sub_agents")
"""What the offline loop can express."""
offline_harness.capabilities = OFFLINE_CAPABILITIES  # type: ignore[attr-defined]


def capabilities_of(harness: object) -> frozenset[str]:
    """The capabilities ``harness`` declares (its ``capabilities`` attribute), else
    :data:`CORE_CAPABILITIES`."""
    declared = getattr(harness, "capabilities", None)
    return frozenset(CORE_CAPABILITIES if declared is None else declared)


# -- durable runs (the demo app) ---------------------------------------------------------


class DurableRunner(Protocol):
    """How a harness runs an agent durably: a run that pauses for approval is resumed
    later, in another process, from its stored snapshot (``agent-contract run`` and
    ``approve``). ``store`` is where the data folder's state lives (SQLite files in the
    folder, or a PostgreSQL database: :class:`~agent_contract.stores.Store`; its key
    files in ``store.folder``), where a runner may keep state of its own (a framework's
    checkpointer)."""

    def run(
        self, model: Model, contract: Contract, options: RunInput, *, store: Store
    ) -> RunResult:
        """Run ``model`` on ``options`` under ``contract`` (``options.contract(tools)``:
        the durable runner reads no contract setting from ``options``).

        Raises:
            CheckpointError: the runner's own state cannot be read.
        """

    def resume(
        self,
        model: Model,
        contract: Contract,
        snapshot: Mapping[str, Any],
        approvals: Sequence[Approval],
        *,
        checkpoint: Checkpoint,
        store: Store,
    ) -> RunResult:
        """Continue a paused run with human decisions (``checkpoint`` stores the
        snapshot before any write runs).

        Raises:
            ApprovalError: a decision does not fit.
            CheckpointError: the run cannot be restored.
        """


@dataclass(frozen=True)
class SnapshotRunner:
    """A :class:`DurableRunner` whose only state is the contract's snapshot (``store`` is
    not used): the offline loop's, and any harness's whose framework keeps nothing between
    runs (PydanticAI's). It calls the harness's two functions."""

    run_input: Callable[[Model, Contract, RunInput], RunResult]
    """Runs ``(model, contract, options)``, as :func:`agent_contract.loop.run_input`."""
    resume_run: Callable[..., RunResult]
    """Resumes ``(model, contract, snapshot, approvals, checkpoint=...)``, as
    :func:`agent_contract.loop.resume`."""

    def run(
        self, model: Model, contract: Contract, options: RunInput, *, store: Store
    ) -> RunResult:
        """:attr:`run_input` on ``model``, ``contract`` and ``options``.

        Raises:
            ConfigurationError: bad wiring (as the harness's function raises).
        """
        return self.run_input(model, contract, options)

    def resume(
        self,
        model: Model,
        contract: Contract,
        snapshot: Mapping[str, Any],
        approvals: Sequence[Approval],
        *,
        checkpoint: Checkpoint,
        store: Store,
    ) -> RunResult:
        """:attr:`resume_run` (``checkpoint`` stores the snapshot before any write runs).

        Raises:
            ApprovalError: a decision does not fit.
            CheckpointError: the snapshot cannot be read.
        """
        return self.resume_run(model, contract, snapshot, approvals, checkpoint=checkpoint)


def offline_runner() -> SnapshotRunner:
    """The offline loop as a :class:`DurableRunner` (:func:`agent_contract.loop.run_input`
    and :func:`agent_contract.loop.resume`): the snapshot is all its state."""
    return SnapshotRunner(run_input, resume)


# -- registration ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WireClient:
    """A real provider client a harness can run on, for ``agent-contract check --wire``
    (:mod:`agent_contract.conformance.wire_check`): the binding declares it, so the core
    learns no framework. The check points the client at its replay server and hands it
    to the harness in place of the scripted model."""

    wire: Literal["openai", "anthropic"]
    """The provider API the client speaks: OpenAI Chat Completions or Anthropic
    Messages."""
    client: str
    """What reports call it (``ChatOpenAI``)."""
    streamed: bool
    """True when the harness's requests ask for a stream (its model calls stream)."""
    distribution: str
    """The distribution the client needs (``langchain-openai``)."""
    install: str
    """How to install it (``pip install 'agent-contract-langchain[openai]'``), shown
    when it is missing."""
    build: Callable[[str], Any]
    """``build(base_url) -> client``: the client pointed at ``base_url`` (the API root
    its class expects: ``http://127.0.0.1:PORT/v1`` for OpenAI clients,
    ``http://127.0.0.1:PORT`` for Anthropic ones), with a placeholder key, no retries of
    its own (each request is one model call).

    Raises:
        ImportError: :attr:`distribution` is not installed.
    """
    close: Callable[[Any], None] | None = None
    """``close(client)``: release what a built client holds (its connections), called in
    the thread that ran it once its scenario ended; None: nothing to release (a client
    whose connections the framework pools itself)."""
    not_expressible: Mapping[str, str] = field(default_factory=dict)
    """Scenario name -> why the client cannot express it (the reply can be sent, the
    client cannot hold it), beside the harness's own declarations; as a harness's
    ``not_expressible``, each such scenario must still break there."""


@dataclass(frozen=True, kw_only=True)
class HarnessPlugin:
    """What an entry point of ``agent_contract.harnesses`` names: one harness and how to
    load it (see :mod:`agent_contract.registry`).

    Importing the module that defines it must stay cheap (no framework import): the CLI
    reads every plugin to list names; only :attr:`load` imports the framework.
    """

    name: str
    """The harness's name; must equal the entry point's name."""
    description: str
    """One line for reports (a control's reads: ``a bare create_agent without the
    contract``)."""
    load: Callable[[], Harness]
    """Imports what the harness needs and returns it.

    Raises:
        ImportError: its framework is not installed (reported as ``dependency_missing``).
    """
    role: Role = "contract"
    """Whether the harness must keep the contract, or is a control."""
    default: bool = False
    """A contract harness: checked by ``agent-contract check`` with no ``--harness``; a
    control: shown as a control column by ``agent-contract check --control``."""
    durable: Callable[[], DurableRunner] | None = None
    """Its durable runner, for ``agent-contract run --harness NAME`` and ``approve``."""
    versions: tuple[str, ...] = ()
    """Distributions whose installed versions a report of this harness shows."""
    wires: tuple[WireClient, ...] = ()
    """The real provider clients ``check --wire`` runs this harness on, one column each
    (``<name>@<wire>``)."""


def mode_plugins(
    load: Callable[..., Harness],
    modes: Sequence[tuple[str, str, str]],
    *,
    description: str,
    durable: Callable[[], DurableRunner],
    versions: tuple[str, ...],
    wires: Callable[[str], tuple[WireClient, ...]] | None = None,
) -> tuple[HarnessPlugin, ...]:
    """One :class:`HarnessPlugin` per way a binding drives its framework's agent, in the
    order of ``modes``; the first is checked by default and is the durable one.

    Args:
        load: ``load(mode) -> Harness``; it imports the framework when it is called.
        modes: per plugin, ``(harness name, mode handed to load, how the agent is
            driven)``; the last is shown in the description.
        description: what the harnesses run (``"create_agent with
            ContractMiddleware"``), before ``", <how it is driven>"``.
        durable: the first plugin's durable runner.
        versions: as :attr:`HarnessPlugin.versions`, for every plugin.
        wires: ``wires(mode) -> clients``: each plugin's :attr:`HarnessPlugin.wires`
            (None: none).
    """
    return tuple(
        HarnessPlugin(
            name=name,
            description=f"{description}, {driven}",
            load=functools.partial(load, mode),
            default=index == 0,
            durable=durable if index == 0 else None,
            versions=versions,
            wires=wires(mode) if wires is not None else (),
        )
        for index, (name, mode, driven) in enumerate(modes)
    )


OFFLINE: Final = HarnessPlugin(
    name="offline",
    description="the offline reference loop",
    load=lambda: offline_harness,
    default=True,
    durable=offline_runner,
)
"""The core's own harness (registered in the core's ``pyproject.toml``)."""
