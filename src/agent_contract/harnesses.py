"""Harnesses: what runs a model and tools under the contract, found by name.

A *harness* is any callable ``harness(model, tools, options) -> RunResult | Observation``
(:class:`Harness`): the offline loop, a framework's agent driven through a binding, or
an agent of your own. The contract suite runs every scenario on harnesses by name.

**The registry.** Harnesses register under the entry-point group
:data:`HARNESS_GROUP` (``agent_contract.harnesses``): each entry point names a
:class:`HarnessPlugin` (the harness's name, role, a loader that imports its framework
only when it is used, and optionally a :class:`DurableRunner` for the demo app). The
core registers ``offline`` in its own ``pyproject.toml``; a binding registers its
harnesses in its own, and its CLI subcommands under :data:`COMMAND_GROUP`
(``agent_contract.commands``). The core names no framework: which distribution to
install for a name nobody registered is read from agent-contract's own extras
(:func:`missing_bindings`).

Entry points are read from the installed metadata: after changing a ``pyproject.toml``,
``uv sync`` (or ``pip install -e``) rewrites them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol, cast

from .approval import Approval, PendingApproval
from .budget import Budget
from .errors import ApprovalError, ConfigurationError, DependencyMissingError
from .loop import resume, run
from .messages import Message
from .model import Model
from .runtime import Checkpoint, Contract, RunResult
from .tools import ToolSpec

__all__ = [
    "COMMAND_GROUP",
    "DISTRIBUTION",
    "HARNESS_GROUP",
    "OFFLINE",
    "Decider",
    "DurableRunner",
    "Harness",
    "HarnessPlugin",
    "Observation",
    "OfflineRunner",
    "Role",
    "RunInput",
    "command_entry_points",
    "durable_runner",
    "harness_names",
    "harness_plugin",
    "harness_plugins",
    "load_harness",
    "missing_bindings",
    "offline_harness",
    "settle_approvals",
]

HARNESS_GROUP: Final = "agent_contract.harnesses"
"""Entry-point group of harnesses: ``name = "module:ATTRIBUTE"`` naming a HarnessPlugin."""
COMMAND_GROUP: Final = "agent_contract.commands"
"""Entry-point group of CLI subcommands: ``name = "module:function"``, where
``function(subparsers)`` adds the subcommand ``name`` to ``agent-contract``."""
DISTRIBUTION: Final = "agent-contract"
"""The core's distribution: its entry points come first, its extras name the bindings."""

Role = Literal["contract", "control"]
"""``contract``: a harness that must keep the contract; ``control``: one expected to break
it (shown for comparison, never deciding an exit code)."""


# -- what a harness gets and gives -------------------------------------------------------


class Decider(Protocol):
    """The (scripted) human who answers approvals during a suite run."""

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        """Decisions for some or all of ``pending`` (none: the run stays paused)."""

    def refused(self, exc: ApprovalError) -> None:
        """Note that the runtime refused a decision."""


@dataclass(frozen=True, kw_only=True)
class RunInput:
    """What a harness needs besides the model and the tools."""

    user: str
    """The user message."""
    budget: Budget
    """Run limits."""
    allowlist: tuple[str, ...] | None = None
    """Allowed tools; None allows all."""
    history: tuple[Message, ...] = ()
    """Earlier turns."""
    secrets: tuple[str, ...] = ()
    """Values to redact."""
    caller: str | None = "tester"
    """The identity the run acts for."""
    decider: Decider | None = None
    """Who answers approvals (None: the run stays paused)."""

    def contract(self, tools: Iterable[ToolSpec]) -> Contract:
        """The Contract this input describes: ``tools`` under budget, allowlist, secrets."""
        return Contract(tools, budget=self.budget, allowlist=self.allowlist, secrets=self.secrets)

    def turns(self) -> list[Message]:
        """The input transcript: ``history``, then the user message."""
        return [*self.history, Message(role="user", content=self.user)]


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


def settle_approvals(
    result: RunResult,
    resume: Callable[[Mapping[str, Any], list[Approval]], RunResult],
    options: RunInput,
    *,
    max_rounds: int = 10,
) -> RunResult:
    """Answer ``pending_approval`` stops with the options' decider until the run ends,
    the decider has nothing more to say, or ``max_rounds`` passes. A refused decision
    (:class:`ApprovalError`) is noted and the run stays paused for the next one."""
    for _ in range(max_rounds):
        if result.stop_reason != "pending_approval" or options.decider is None:
            return result
        if result.snapshot is None:
            return result
        approvals = options.decider(result.pending_approvals)
        if not approvals:
            return result
        try:
            result = resume(result.snapshot, approvals)
        except ApprovalError as exc:
            options.decider.refused(exc)
    return result


def offline_harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
    """The offline loop as a harness."""
    contract = options.contract(tools)
    result = run(model, contract, options.user, history=options.history, caller=options.caller)
    return settle_approvals(
        result, lambda snapshot, approvals: resume(model, contract, snapshot, approvals), options
    )


# -- durable runs (the demo app) ---------------------------------------------------------


class DurableRunner(Protocol):
    """How a harness runs an agent durably: a run that pauses for approval is resumed
    later, in another process, from its stored snapshot (``agent-contract run`` and
    ``approve``). ``folder`` is the data folder, where a runner may keep state of its
    own (a framework's checkpointer)."""

    def run(
        self, model: Model, contract: Contract, text: str, *, caller: str | None, folder: Path
    ) -> RunResult:
        """Run ``model`` on ``text``.

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
        folder: Path,
    ) -> RunResult:
        """Continue a paused run with human decisions (``checkpoint`` stores the
        snapshot before any write runs).

        Raises:
            ApprovalError: a decision does not fit.
            CheckpointError: the run cannot be restored.
        """


class OfflineRunner:
    """The offline loop as a :class:`DurableRunner`: the snapshot is all its state."""

    def run(
        self, model: Model, contract: Contract, text: str, *, caller: str | None, folder: Path
    ) -> RunResult:
        """:func:`agent_contract.run`."""
        return run(model, contract, text, caller=caller)

    def resume(
        self,
        model: Model,
        contract: Contract,
        snapshot: Mapping[str, Any],
        approvals: Sequence[Approval],
        *,
        checkpoint: Checkpoint,
        folder: Path,
    ) -> RunResult:
        """:func:`agent_contract.loop.resume`."""
        return resume(model, contract, snapshot, approvals, checkpoint=checkpoint)


# -- the registry ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class HarnessPlugin:
    """What an entry point of :data:`HARNESS_GROUP` names: one harness and how to load it.

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
    """Checked (or shown as a control) by ``agent-contract check`` with no ``--harness``."""
    durable: Callable[[], DurableRunner] | None = None
    """Its durable runner, for ``agent-contract run --harness NAME`` and ``approve``."""
    versions: tuple[str, ...] = ()
    """Distributions whose installed versions a report of this harness shows."""


OFFLINE: Final = HarnessPlugin(
    name="offline",
    description="the offline reference loop",
    load=lambda: offline_harness,
    default=True,
    durable=OfflineRunner,
)
"""The core's own harness (registered in the core's ``pyproject.toml``)."""


@functools.cache
def _entries(group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    """The entry points of ``group``: the core's first, then by distribution name, each
    distribution's in the order it declares them."""
    found = list(importlib.metadata.entry_points(group=group))
    order = {id(ep): index for index, ep in enumerate(found)}

    def key(ep: importlib.metadata.EntryPoint) -> tuple[bool, str, int]:
        dist = ep.dist.name if ep.dist is not None else ""
        return dist != DISTRIBUTION, dist, order[id(ep)]

    return tuple(sorted(found, key=key))


def _distribution_of(ep: importlib.metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else ep.module.split(".")[0]


def _dependency_missing(
    exc: ImportError, ep: importlib.metadata.EntryPoint
) -> DependencyMissingError:
    """The error for an import that failed while loading ``ep``: it names the entry
    point's distribution, or the requirement of it the missing module belongs to."""
    missing = exc.name or ep.module
    top = missing.split(".")[0].replace("_", "-").lower()
    package = _distribution_of(ep)
    if ep.dist is not None and top != package.lower():
        for requirement in ep.dist.requires or ():
            name = re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0]
            if name.lower().replace("_", "-") == top:
                package = name
                break
    return DependencyMissingError(package, f"cannot import {missing}")


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def missing_bindings() -> tuple[str, ...]:
    """Distributions agent-contract names in its extras (its bindings) that are not
    installed, in the order the metadata lists them."""
    try:
        requires = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return ()
    names = [
        re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0]
        for r in requires
        if re.search(r"""extra\s*==\s*["']""", r)
    ]
    return tuple(dict.fromkeys(n for n in names if not _installed(n)))


def _not_registered(kind: str, name: str, known: str) -> Exception:
    """A name nobody registered: ``dependency_missing`` when a binding agent-contract
    declares is not installed (it may provide it), else a configuration error."""
    missing = missing_bindings()
    if missing:
        return DependencyMissingError(
            ", ".join(missing),
            f"no {kind} {name!r} is registered; a binding that is not installed may provide it",
        )
    return ConfigurationError(f"unknown {kind} {name!r}; use {known}")


def harness_names() -> tuple[str, ...]:
    """The registered harness names, in registry order (nothing is imported)."""
    return tuple(ep.name for ep in _entries(HARNESS_GROUP))


def _find(name: str) -> tuple[importlib.metadata.EntryPoint, HarnessPlugin]:
    for ep in _entries(HARNESS_GROUP):
        if ep.name != name:
            continue
        try:
            found = ep.load()
        except ImportError as exc:
            raise _dependency_missing(exc, ep) from exc
        if not isinstance(found, HarnessPlugin) or found.name != name:
            raise ConfigurationError(
                f"entry point {name!r} of {HARNESS_GROUP} ({ep.value}) is not a "
                f"HarnessPlugin named {name!r}"
            )
        return ep, found
    known = f"one of {', '.join(harness_names())} or module:factory"
    raise _not_registered("harness", name, known)


def harness_plugin(name: str) -> HarnessPlugin:
    """The plugin registered as ``name`` (its framework is not imported yet).

    Raises:
        DependencyMissingError: no such harness while a binding is missing (see
            :func:`missing_bindings`), or its plugin module cannot be imported.
        ConfigurationError: no such harness, or the entry point does not name a
            HarnessPlugin called ``name``.
    """
    return _find(name)[1]


def harness_plugins() -> tuple[HarnessPlugin, ...]:
    """Every registered plugin, in registry order.

    Raises:
        DependencyMissingError, ConfigurationError: as :func:`harness_plugin`.
    """
    return tuple(harness_plugin(name) for name in harness_names())


def durable_runner(name: str) -> DurableRunner:
    """The durable runner of the harness registered as ``name``.

    Raises:
        DependencyMissingError: as :func:`harness_plugin`, or its framework is missing.
        ConfigurationError: no such harness, or it has no durable runner.
    """
    ep, plugin = _find(name)
    if plugin.durable is None:
        raise ConfigurationError(f"harness {name!r} cannot run durably (it has no runner)")
    try:
        return plugin.durable()
    except ImportError as exc:
        raise _dependency_missing(exc, ep) from exc


def command_entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The registered CLI subcommands (:data:`COMMAND_GROUP`), in registry order."""
    return _entries(COMMAND_GROUP)


def load_harness(name: str) -> Harness:
    """A harness by name: a registered one (:func:`harness_names`), or
    ``"module:attribute"`` naming a harness (a callable taking ``(model, tools,
    options)``) or a zero-argument factory returning one, in an importable module.

    Raises:
        DependencyMissingError: the harness's framework (or binding) is not installed.
        ConfigurationError: an unknown name, or an attribute that is not a harness.
    """
    module_name, colon, attribute = name.partition(":")
    if not colon:
        ep, plugin = _find(name)
        try:
            return plugin.load()
        except ImportError as exc:
            raise _dependency_missing(exc, ep) from exc
    if not module_name or not attribute:
        raise ConfigurationError(
            f"unknown harness {name!r}; use one of {', '.join(harness_names())} or module:factory"
        )
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot load harness {name!r}: {exc}") from exc
    if not callable(target):
        raise ConfigurationError(f"harness {name!r} is not callable")
    if _takes_no_arguments(target):
        try:
            target = target()
        except Exception as exc:  # re-raised as a wiring error
            raise ConfigurationError(
                f"harness factory {name!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(target):
            raise ConfigurationError(
                f"harness factory {name!r} returned {type(target).__name__}, not a harness"
            )
    if not _takes_no_arguments(target) and _accepts_three(target):
        return cast(Harness, target)
    raise ConfigurationError(
        f"{name!r} is neither a harness (model, tools, options) nor a zero-argument factory "
        "returning one"
    )


def _takes_no_arguments(fn: Any) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def _accepts_three(fn: Any) -> bool:
    try:
        inspect.signature(fn).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature available (some builtins): let the run tell
        return True
    return True
