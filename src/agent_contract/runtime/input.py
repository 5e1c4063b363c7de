"""A run's input: the one value that travels from whoever starts a run (the CLI, ``check``,
a harness, a keyword front door such as :func:`agent_contract.run`) to the runtime.

:class:`RunInput` holds what the run is asked (the user turn, earlier turns, a system
message), for whom and under which name (caller, context, run id), the settings of the
contract it runs under (budget, allowlist, redaction, secrets, commentary, answer format,
trace sink)
and what a harness needs to drive it to its end (the approvals' :class:`Decider`, a
scenario's extras, the crash/restart hook). It reaches the runtime in two calls:
:meth:`RunInput.contract` builds the Contract, :meth:`RunInput.start` begins the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack

from ..approval import Approval, PendingApproval
from ..budget import Budget
from ..errors import ApprovalError, ConfigurationError
from ..faults import CrashPlan
from ..messages import Message
from ..tools import ToolRegistry, ToolSpec
from ..trace import RedactionPolicy, TraceSink
from .answers import AnswerFormat
from .contract import Contract
from .response import Commentary
from .state import Checkpoint, RunState

if TYPE_CHECKING:
    from ..delegation import SubAgentPlan
    from ..tampering import TamperPlan

__all__ = ["Decider", "ResumeOptions", "RunInput", "RunOptions"]


class Decider(Protocol):
    """The (scripted) human who answers approvals during a suite run."""

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        """Decisions for some or all of ``pending`` (none: the run stays paused)."""

    def refused(self, exc: ApprovalError) -> None:
        """Note that the runtime refused a decision."""


class RunOptions(TypedDict, total=False):
    """The keywords of a run a keyword front door takes (:func:`agent_contract.run`, the
    bindings' ``run_agent`` and ``arun_agent``), declared once: each is the
    :class:`RunInput` field of the same name, in the looser type a caller may hand
    (any sequence or iterable; :meth:`RunInput.of` makes it a tuple). Every key is
    optional; one left out takes the field's default."""

    budget: Budget | None
    """Run limits (default ``Budget()``)."""
    history: Sequence[Message]
    """Earlier turns, replayed to the model in order before the new user turn."""
    allowlist: Iterable[str] | None
    """Tool names that may run (default: all registered)."""
    redaction: RedactionPolicy | None
    """The redaction policy; ``secrets`` are added to it."""
    secrets: Iterable[str] | Mapping[str, str]
    """Values that must never appear in the trace, tool messages or output; as a
    mapping ``name -> value``, also the run's named secrets (see ``RunInput.secrets``)."""
    system: str | None
    """An optional system message, sent first."""
    caller: str | None
    """The identity the run acts for (tools see it in ``ToolContext``)."""
    context: Mapping[str, Any] | None
    """Application values for context-aware tools."""
    run_id: str | None
    """The run's id (default: a random id)."""


class ResumeOptions(TypedDict, total=False):
    """The keywords of a resume every binding takes (the LangChain binding's
    ``resume_agent``/``resume_graph`` and their async twins, the PydanticAI binding's
    ``resume_agent``), declared once: each is the parameter of the same name of the call
    it reaches (:meth:`Contract.restore`'s ``context``, :meth:`RunState.resume`'s
    ``checkpoint``). Every key is optional; one left out is ``None``."""

    context: Mapping[str, Any] | None
    """Application values for context-aware tools (:meth:`Contract.restore`)."""
    checkpoint: Checkpoint | None
    """Stores a snapshot durably; called before any write runs (:meth:`RunState.resume`)."""


@dataclass(frozen=True, kw_only=True)
class RunInput:
    """Everything a run is started with, besides the model and the tools."""

    user: str
    """The user message."""
    budget: Budget | None = None
    """Run limits (None: ``Budget()``, or the Contract's own when one is handed to
    :meth:`contract`)."""
    allowlist: tuple[str, ...] | None = None
    """Allowed tools; None allows all."""
    history: tuple[Message, ...] = ()
    """Earlier turns, replayed to the model in order before the user message."""
    secrets: tuple[str, ...] | Mapping[str, str] = ()
    """Values to redact from the trace, tool messages and output. A mapping
    ``name -> value`` also names them: the run's named secrets, whose values a tool
    that declared the name (``ToolSpec(secrets=(name,))``) reads with
    ``context.secret(name)`` and every other tool, the approval step and the trace see
    at most as a :class:`~agent_contract.tools.SecretHandle` (``<secret name>``); they
    become the contract's ``named_secrets`` (:meth:`contract`), so a restored run has
    them too (a snapshot never holds them)."""
    redaction: RedactionPolicy | None = None
    """The redaction policy (None: the default one); ``secrets`` are added to it."""
    system: str | None = None
    """A system message, sent first (None: none)."""
    caller: str | None = None
    """The identity the run acts for (tools read it from ``ToolContext``; None: nobody)."""
    context: Mapping[str, Any] | None = None
    """Application values handed to context-aware tools (None: none)."""
    run_id: str | None = None
    """The run's id (None: a random ``run-<12 hex digits>``)."""
    decider: Decider | None = None
    """Who answers approvals (None: the run stays paused)."""
    commentary: Commentary = "keep"
    """Text beside tool calls: kept as commentary, or refused (see ``Contract``)."""
    answer_format: AnswerFormat | None = None
    """The structured answer asked for, if any."""
    extras: Mapping[str, Any] = field(default_factory=dict)
    """Harness-specific pieces of a scenario, by name (a framework middleware, a tool
    returning a framework command...); a harness uses the ones it knows and declares
    them in its ``capabilities``."""
    trace_sink: TraceSink | None = None
    """Receives the run's trace events as they are recorded (a Contract setting: see
    ``Contract(trace_sink=...)``; ``check --otel`` sets it on every scenario's input);
    None: no sink."""
    crash: CrashPlan | None = None
    """The crash/restart hook (capability ``crash_restart``): crash once at
    ``crash.point`` while resuming, then resume the run in a fresh instance (a new
    contract, graph or agent) from what was stored: the snapshot handed to the
    ``checkpoint`` and the framework's checkpointer, never the crashed instance's
    memory. :func:`agent_contract.harnesses.settle_approvals` does it for a harness
    that passes ``restart``."""
    tamper: TamperPlan | None = None
    """The checkpoint-integrity hook (capability ``durable_store``): before the first
    decisions are carried into the paused run, its snapshot is stored in a fresh
    scratch store (a temporary data folder, or a new schema of ``tamper.store``'s
    PostgreSQL database) with the harness's store, its row tampered with
    (``tamper.kind``) and the store reopened; a refusal is noted on the plan, the tampering undone, and the run
    resumes from what the store reads back.
    :func:`agent_contract.harnesses.settle_approvals` does it."""
    sub_agent: SubAgentPlan | None = None
    """The sub-agent hook (capability ``sub_agents``): the run's tools get the plan's
    delegating tool, each call of which runs the plan's child agent under the run's
    child contract, as a child scope of that call (see :mod:`agent_contract.delegation`)."""

    @classmethod
    def of(cls, user_message: str, **options: Unpack[RunOptions]) -> RunInput:
        """The input a keyword front door describes (:func:`agent_contract.run`, the
        bindings' ``run_agent`` and ``arun_agent``): ``user_message`` and the
        :class:`RunOptions` it was handed. Sequences become tuples, so the input is
        frozen."""
        allowlist = options.get("allowlist")
        return cls(
            user=user_message,
            budget=options.get("budget"),
            allowlist=tuple(allowlist) if allowlist is not None else None,
            history=tuple(options.get("history", ())),
            secrets=_secrets(options.get("secrets", ())),
            redaction=options.get("redaction"),
            system=options.get("system"),
            caller=options.get("caller"),
            context=options.get("context"),
            run_id=options.get("run_id"),
        )

    def contract(self, tools: ToolRegistry | Iterable[ToolSpec] | Contract) -> Contract:
        """The Contract this input describes: ``tools`` under budget, allowlist,
        redaction, secrets, commentary, answer format and trace sink; or ``tools`` itself
        when it is a Contract already (then those settings must be left unset).

        Raises:
            ConfigurationError: a Contract combined with settings, or an allowlist that
                names unregistered tools.
        """
        if isinstance(tools, Contract):
            if self.commentary != "keep" or self.answer_format is not None:
                raise ConfigurationError("pass commentary/answer_format to the Contract")
            if self.trace_sink is not None and self.trace_sink is not tools.trace_sink:
                raise ConfigurationError("pass trace_sink to the Contract")
            return Contract.of(
                tools,
                budget=self.budget,
                allowlist=self.allowlist,
                redaction=self.redaction,
                secrets=self.secret_values,
            )
        return Contract(
            tools,
            budget=self.budget,
            allowlist=self.allowlist,
            redaction=self.redaction,
            secrets=self.secrets,
            commentary=self.commentary,
            answer_format=self.answer_format,
            trace_sink=self.trace_sink,
        )

    def start(self, contract: Contract) -> RunState:
        """Begin this run on ``contract`` (usually :meth:`contract`'s): its run id,
        caller and context (see :meth:`Contract.start`)."""
        return contract.start(run_id=self.run_id, caller=self.caller, context=self.context)

    @property
    def secret_values(self) -> tuple[str, ...]:
        """The values of :attr:`secrets` (the mapping's values, or the tuple itself)."""
        if isinstance(self.secrets, Mapping):
            return tuple(self.secrets.values())
        return self.secrets

    def turns(self) -> list[Message]:
        """The input turns: ``history``, then the user message (a driver that gives the
        system message to its framework apart uses these)."""
        return [*self.history, Message(role="user", content=self.user)]

    def messages(self) -> list[Message]:
        """The input transcript: the system message (if any), then :meth:`turns`."""
        first = [Message(role="system", content=self.system)] if self.system is not None else []
        return [*first, *self.turns()]


def _secrets(secrets: Iterable[str] | Mapping[str, str]) -> tuple[str, ...] | Mapping[str, str]:
    """A run's ``secrets`` option, frozen: a mapping copied, any other iterable a tuple."""
    if isinstance(secrets, Mapping):
        return dict(secrets)
    return tuple(secrets)
