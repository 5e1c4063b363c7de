"""What a run reports: why it stopped (:class:`Stop`), each tool call as the report shows
it (:class:`ToolCallRecord`), and the whole result (:class:`RunResult`), the same on every
harness."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from ..approval import PendingApproval
from ..budget import RunUsage
from ..canonical import field_dict
from ..errors import ErrorKind, ModelHTTPError, StopReason
from ..messages import Message
from ..results import Outcome
from ..trace import Trace

__all__ = [
    "ContractViolation",
    "RunInterrupted",
    "RunResult",
    "Scope",
    "Stop",
    "ToolCallRecord",
    "interruption_name",
]

_Code = TypeVar("_Code", bound=str)


def interruption_name(exc: BaseException) -> str:
    """What interrupted a run, for people: a signal's name (an exception that carries
    ``signal_name``, such as the command line's SIGTERM handler raises), else the
    exception's type (``KeyboardInterrupt``, ``SystemExit``); for a task cancelled
    because the thread waiting on it was interrupted (:func:`agent_contract.pools.run_async`),
    what interrupted that thread."""
    if (
        type(exc).__name__ == "CancelledError"
        and exc.args
        and isinstance(exc.args[0], BaseException)
    ):
        exc = exc.args[0]
    name = getattr(exc, "signal_name", None)
    return str(name) if name else type(exc).__name__


@dataclass(frozen=True, kw_only=True)
class ContractViolation(Generic[_Code]):
    """One way what the model sent broke the contract, with the fields a
    ``contract_violation`` trace event records (a response's
    :class:`~agent_contract.runtime.response.Violation`, a transcript's
    :class:`~agent_contract.runtime.history.HistoryProblem`)."""

    code: _Code
    """Machine-readable reason."""
    message: str
    """Human-readable reason."""
    tool_call_id: str | None = None
    """The call or tool message it concerns, when it has an id."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the fields of a ``contract_violation`` trace event)."""
        return field_dict(self)


@dataclass(frozen=True, kw_only=True)
class Stop:
    """Why a run ends (or pauses)."""

    reason: StopReason
    """The named stop reason."""
    detail: str = ""
    """Human-readable detail with limits and observed values."""
    from_outside: bool = field(default=False, compare=False)
    """True for a run interrupted from outside (:meth:`interrupted`): the calls of the
    open batch that were admitted to run and have no result are recorded with an
    unknown outcome when the run ends (a framework's own interrupt leaves them open)."""

    @classmethod
    def model_error(cls, exc: BaseException) -> Stop:
        """The stop for a model that raised: ``model_error``, naming only the exception's
        type (its text may hold anything, secrets included) and, for a
        :class:`~agent_contract.errors.ModelHTTPError`, its structured fields (kind, HTTP
        status, attempts): ``"the model raised ModelHTTPError (rate_limited, HTTP 429, 3
        attempts)"``."""
        detail = f"the model raised {type(exc).__name__}"
        if isinstance(exc, ModelHTTPError):
            status = "no response" if exc.status is None else f"HTTP {exc.status}"
            detail += f" ({exc.kind}, {status}, {exc.attempts} attempt"
            detail += ")" if exc.attempts == 1 else "s)"
        return cls(reason="model_error", detail=detail)

    @classmethod
    def interrupted(cls, exc: BaseException) -> Stop:
        """The pause of a run interrupted from outside by ``exc`` (a ``KeyboardInterrupt``,
        ``SystemExit``, a signal): ``interrupted``, naming what interrupted it."""
        return cls(
            reason="interrupted",
            detail=f"interrupted by {interruption_name(exc)}",
            from_outside=True,
        )


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Where a child scope sits in its run's tree of agents."""

    agent: str
    """The child agent's name (what the trace and every message about it say)."""
    call_path: tuple[str, ...]
    """The ``tool_call_id`` of each call that started a scope, from the run's top agent
    down to this one (its last item: the parent's call this agent runs inside)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"agent", "call_path"}``, JSON-ready (the ``scope`` field of its events)."""
        return {"agent": self.agent, "call_path": list(self.call_path)}


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord:
    """A tool call as the run report shows it."""

    id: str | None
    """The ``tool_call_id`` (None only for a call that broke the contract without one)."""
    name: str
    """The tool the model asked for."""
    status: Literal["success", "error"]
    """How the call ended."""
    error_kind: ErrorKind | None = None
    """The classification, for errors."""
    outcome: Outcome = "succeeded"
    """``succeeded``, ``failed``, ``unknown``, ``killed`` or ``not_run``."""
    side_effects_possible: bool = False
    """True when a failed call may still have changed something."""
    arguments: Any = None
    """The arguments (validated, redacted)."""
    scope: Scope | None = None
    """The child scope whose agent issued the call (its agent and call path, see
    docs/MULTI_AGENT.md); ``None`` for a call of the run's top agent. Call ids are
    unique within a scope only: a child's ``call_1`` is not its parent's."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, without arguments (``scope`` only for a child's call)."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "status": self.status}
        if self.error_kind is not None:
            data["error_kind"] = self.error_kind
            data["outcome"] = self.outcome
            data["side_effects_possible"] = self.side_effects_possible
        if self.scope is not None:
            data["scope"] = self.scope.to_dict()
        return data

    def to_state(self) -> dict[str, Any]:
        """Complete JSON-ready form, for snapshots."""
        return {
            **self.to_dict(),
            "outcome": self.outcome,
            "side_effects_possible": self.side_effects_possible,
            "arguments": self.arguments,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> ToolCallRecord:
        """Inverse of :meth:`to_state`.

        Raises:
            KeyError: ``name`` or ``status`` is missing.
        """
        return cls(
            id=data.get("id"),
            name=str(data["name"]),
            status=data["status"],
            error_kind=data.get("error_kind"),
            outcome=data.get("outcome", "succeeded"),
            side_effects_possible=bool(data.get("side_effects_possible", False)),
            arguments=data.get("arguments"),
            scope=_scope(data.get("scope")),
        )


def _scope(data: Any) -> Scope | None:
    """The :class:`Scope` of a record's ``scope`` field (``None`` when absent)."""
    if not isinstance(data, Mapping):
        return None
    return Scope(agent=str(data["agent"]), call_path=tuple(map(str, data["call_path"])))


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """What a run produced, the same on every harness."""

    run_id: str
    """Unique id of the run."""
    stop_reason: StopReason
    """Why it ended; only ``answered`` carries an answer."""
    stop_detail: str
    """Human-readable detail of the stop."""
    output: str | None
    """The answer (redacted) when ``stop_reason == "answered"``, else ``None``; for a
    structured answer, its canonical JSON text."""
    messages: tuple[Message, ...]
    """The transcript, oldest first."""
    trace: Trace
    """The redacted trace."""
    tool_calls: tuple[ToolCallRecord, ...]
    """Every call the run's agents issued, with how it ended: the ones the budget's
    ``max_tool_calls`` charged (``usage.tool_calls``) and the ones refused. In tree order: the top agent's calls in issue order,
    each followed by the calls of the child agents it started (each record's
    ``scope`` names the child; ``None`` for the top agent's own calls; see
    :meth:`own_tool_calls`)."""
    usage: RunUsage
    """What the run used: model steps, tool calls, active seconds."""
    harness: str = "offline"
    """Which driver produced it."""
    structured_response: Any = None
    """For an answered run that was asked for a structured answer
    (:class:`~agent_contract.runtime.answers.AnswerFormat`): the validated value
    (JSON data, redacted); else ``None``."""
    pending_approvals: tuple[PendingApproval, ...] = ()
    """For a pause (``pending_approval``, ``interrupted``): the write calls waiting for a
    decision."""
    artifacts: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Application-only data of each call, by ``tool_call_id``, in issue order: a
    ``ToolOutput``'s artifact, or the handler's raw return value (the uncut value of a
    truncated result). Never shown to the model, never in the trace, a snapshot or a
    checkpoint; so only calls run by this process are here (a run resumed in another
    process has the artifacts of the calls since the resume)."""
    snapshot: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """For a pause (``pending_approval``, ``interrupted``): the JSON state to resume from
    (see ``Contract.restore``)."""

    @property
    def answered(self) -> bool:
        """True when the run ended with an answer."""
        return self.stop_reason == "answered"

    def own_tool_calls(self) -> tuple[ToolCallRecord, ...]:
        """The top agent's own calls (``scope is None``), in issue order: without the
        calls of child agents."""
        return tuple(record for record in self.tool_calls if record.scope is None)

    def trajectory(self) -> list[str]:
        """The tool names the top agent's model called, in order (a child agent's calls
        are in :attr:`tool_calls`, with their ``scope``)."""
        return [record.name for record in self.own_tool_calls()]

    def to_dict(self) -> dict[str, Any]:
        """A JSON summary; raw messages are left out on purpose."""
        return {
            "run_id": self.run_id,
            "harness": self.harness,
            "stop_reason": self.stop_reason,
            "stop_detail": self.stop_detail,
            "output": self.output,
            "structured_response": self.structured_response,
            "tool_calls": [record.to_dict() for record in self.tool_calls],
            "pending_approvals": [
                {k: v for k, v in p.to_dict().items() if k != "arguments"}
                for p in self.pending_approvals
            ],
            "usage": self.usage.to_dict(),
        }


class RunInterrupted(KeyboardInterrupt):
    """A run was interrupted from outside: something that is not an ``Exception``
    (``KeyboardInterrupt``, ``SystemExit``, a signal handler's exception) reached the
    driver. The driver finished the run with the pause ``interrupted`` first, so nothing
    is lost: ``result`` carries the snapshot to resume from (a call in flight is
    recorded with outcome ``unknown``; an approved write that did not settle is verified,
    not repeated, when the run resumes).

    It is a ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops.

    Attributes:
        result: the run, stopped ``interrupted``.
        cause: what interrupted it (also ``__cause__``).
    """

    def __init__(self, result: RunResult, cause: BaseException) -> None:
        self.result = result
        self.cause = cause
        super().__init__(f"run {result.run_id!r} {result.stop_detail}")
