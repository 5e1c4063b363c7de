"""The contract's rules, in one place: response shape, allowlist, arguments, budgets,
repeats, the call-ID ledger, execution and the trace.

:class:`Contract` is the configuration (tools, allowlist, budget, redaction);
:meth:`Contract.start` gives a :class:`RunState` for one run. The offline loop
(:mod:`agent_contract.loop`) and the LangChain middleware are thin drivers of the same
RunState methods, called in this order::

    check_before_model_call()  -> Stop | None
    accept_response(completion) -> Decision (final | tool_calls | invalid)
    plan_tool_calls(calls)     -> BatchPlan (each call: run, refused, or awaiting approval;
                                  maybe a Stop)
    submit(planned)() / execute(planned) / aexecute(planned, ...) -> ToolResult (recorded)
    pending_stop()             -> Stop | None (write calls wait for a decision)
    apply_approvals(...) / execute_write(planned)   (after a resume)
    finish(stop, messages=..., output=...) -> RunResult

A rule written in a driver instead of here would drift between harnesses.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from . import budget as budget_checks
from .approval import Approval, PendingApproval, approval_token, idempotency_key
from .budget import Breach, Budget, BudgetUsage
from .errors import ApprovalError, CheckpointError, ConfigurationError, ErrorKind, StopReason
from .executor import (
    Invocation,
    ToolExecutor,
    arun_with_timeout,
    default_executor,
    run_isolated,
)
from .faults import crashpoint
from .messages import Completion, Message, ToolCall, canonical_json
from .results import (
    Outcome,
    ResultNotSerializableError,
    ToolResult,
    classify_exception,
    error_result,
    serialize_result,
    success_result,
)
from .tools import ToolContext, ToolRegistry, ToolSpec
from .trace import PREVIEW_CHARS, RedactionPolicy, Trace, TraceSink

ISOLATION_GRACE_SECONDS = 5.0
"""Extra seconds a pool thread may take to start and reap an isolated tool's process."""

SNAPSHOT_VERSION = 2
"""Version of :meth:`RunState.snapshot`'s format; restore refuses other versions.
(2: trace events carry ``time`` and ``offset_seconds``.)"""

ViolationCode = Literal[
    "text_and_tool_calls",
    "empty_response",
    "empty_tool_name",
    "missing_call_id",
    "duplicate_call_id",
    "arguments_not_object",
    "unparseable_arguments",
]


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One way a model response broke the response contract."""

    code: ViolationCode
    """Machine-readable reason."""
    message: str
    """Human-readable reason."""
    tool_call_id: str | None = None
    """The call it concerns, when the call has an id."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"code": self.code, "message": self.message, "tool_call_id": self.tool_call_id}


def call_key(name: str, arguments: Any) -> str:
    """Identity of a call for repeat detection: the name and a hash of canonical arguments.

    Key order does not matter (``{"a":1,"b":2}`` and ``{"b":2,"a":1}`` give one key).
    The hash keeps argument values (possibly secrets) out of stored state.
    """
    try:
        text = canonical_json(arguments)
    except (TypeError, ValueError):
        text = repr(arguments)
    return f"{name}:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _normalize_arguments(call: ToolCall) -> tuple[Any, Violation | None]:
    args = call.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
            return call.arguments, Violation(
                code="unparseable_arguments",
                message=f"arguments of call {call.id!r} are not valid JSON",
                tool_call_id=call.id or None,
            )
    if not isinstance(args, dict):
        return args, Violation(
            code="arguments_not_object",
            message=(
                f"arguments of call {call.id!r} must be a JSON object, got {type(args).__name__}"
            ),
            tool_call_id=call.id or None,
        )
    return args, None


def validate_response(
    completion: Completion, *, seen_ids: Iterable[str] = ()
) -> tuple[tuple[ToolCall, ...], tuple[Violation, ...]]:
    """Judge a completion against the response contract.

    A response has exactly two legal shapes: a final answer (non-blank text, no tool
    calls) or one or more tool calls (blank text). Each call needs a non-empty name, an
    id that is unique within the response and the run, and arguments that are a JSON
    object (a JSON *string* holding an object is accepted and parsed).

    Args:
        completion: what the model returned.
        seen_ids: tool-call ids issued earlier in the run.

    Returns:
        ``(calls, violations)``: the calls with arguments normalized to dicts (invalid
        calls keep their raw arguments), and every violation found; no violations
        means the response is legal.
    """
    violations: list[Violation] = []
    has_text = bool(completion.text.strip())
    if has_text and completion.tool_calls:
        violations.append(
            Violation(
                code="text_and_tool_calls",
                message="a response is either a final text or tool calls, not both",
            )
        )
    if not has_text and not completion.tool_calls:
        violations.append(
            Violation(code="empty_response", message="the response has neither text nor tool calls")
        )
    seen = set(seen_ids)
    calls: list[ToolCall] = []
    for call in completion.tool_calls:
        call_id = call.id or None
        if not call.name.strip():
            violations.append(
                Violation(
                    code="empty_tool_name",
                    message=f"call {call_id!r} has an empty tool name",
                    tool_call_id=call_id,
                )
            )
        if call_id is None:
            violations.append(
                Violation(code="missing_call_id", message=f"a call to {call.name!r} has no id")
            )
        elif call_id in seen:
            violations.append(
                Violation(
                    code="duplicate_call_id",
                    message=f"tool_call_id {call_id!r} is used more than once in this run",
                    tool_call_id=call_id,
                )
            )
        else:
            seen.add(call_id)
        arguments, problem = _normalize_arguments(call)
        if problem is not None:
            violations.append(problem)
        calls.append(ToolCall(id=call.id, name=call.name, arguments=arguments))
    return tuple(calls), tuple(violations)


@dataclass(frozen=True, kw_only=True)
class Stop:
    """Why a run ends (or pauses)."""

    reason: StopReason
    """The named stop reason."""
    detail: str = ""
    """Human-readable detail with limits and observed values."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    """The judgment of one model response."""

    shape: Literal["final", "tool_calls", "invalid"]
    """Which legal shape it has, or ``invalid``."""
    text: str = ""
    """The answer, for ``final``."""
    calls: tuple[ToolCall, ...] = ()
    """The calls (arguments normalized), for ``tool_calls`` and ``invalid``."""
    violations: tuple[Violation, ...] = ()
    """For ``invalid``."""
    refusals: tuple[ToolResult, ...] = ()
    """For ``invalid``: one error result per distinct call id, bound to it."""
    stop: Stop | None = None
    """For ``invalid``: the ``invalid_response`` stop."""


@dataclass(frozen=True, kw_only=True)
class PlannedCall:
    """One call of an admitted or refused batch."""

    call: ToolCall
    """The call as issued (arguments normalized)."""
    spec: ToolSpec | None = None
    """The tool, when the call may run."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The validated arguments (the handler gets its own deep copy)."""
    refusal: ToolResult | None = None
    """Set when the call must not run; the bound error result to hand back."""
    approval: PendingApproval | None = None
    """Set for write calls: they wait for a human decision before they may run."""

    @property
    def call_id(self) -> str:
        """The call's id (always set: invalid responses never reach planning)."""
        return self.call.id or ""

    @property
    def shown_arguments(self) -> Any:
        """What the trace and the report show: the validated arguments, or a refused
        call's arguments as the model sent them."""
        return self.call.arguments if self.refusal is not None else self.arguments

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the spec by name) for snapshots."""
        return {
            "call": self.call.to_dict(),
            "spec": self.spec.name if self.spec else None,
            "arguments": self.arguments,
            "refusal": self.refusal.to_dict() if self.refusal else None,
            "approval": self.approval.to_dict() if self.approval else None,
        }


@dataclass(frozen=True, kw_only=True)
class BatchPlan:
    """The verdict on a batch of tool calls, in issue order."""

    calls: tuple[PlannedCall, ...]
    """Every call of the batch, in the order the model issued them."""
    stop: Stop | None = None
    """Set when the batch was refused whole (budget, repeats, deadline)."""

    @property
    def runnable(self) -> tuple[PlannedCall, ...]:
        """The calls that may run now (not refused, not waiting for approval)."""
        return tuple(p for p in self.calls if p.refusal is None and p.approval is None)

    @property
    def pending(self) -> tuple[PendingApproval, ...]:
        """The write calls waiting for a human decision."""
        return tuple(p.approval for p in self.calls if p.approval is not None)


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, without arguments."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "status": self.status}
        if self.error_kind is not None:
            data["error_kind"] = self.error_kind
            data["outcome"] = self.outcome
            data["side_effects_possible"] = self.side_effects_possible
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
        """Inverse of :meth:`to_state`."""
        return cls(
            id=data.get("id"),
            name=str(data["name"]),
            status=data["status"],
            error_kind=data.get("error_kind"),
            outcome=data.get("outcome", "succeeded"),
            side_effects_possible=bool(data.get("side_effects_possible", False)),
            arguments=data.get("arguments"),
        )


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
    """The answer (redacted) when ``stop_reason == "answered"``, else ``None``."""
    messages: tuple[Message, ...]
    """The transcript, oldest first."""
    trace: Trace
    """The redacted trace."""
    tool_calls: tuple[ToolCallRecord, ...]
    """Every call the model issued, in issue order, with how it ended."""
    usage: Mapping[str, Any]
    """Budget usage at the end (model steps, tool calls, elapsed seconds)."""
    harness: str = "offline"
    """Which driver produced it."""
    pending_approvals: tuple[PendingApproval, ...] = ()
    """For ``pending_approval``: the write calls waiting for a decision."""
    snapshot: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """For ``pending_approval``: the JSON state to resume from (see ``Contract.restore``)."""

    @property
    def answered(self) -> bool:
        """True when the run ended with an answer."""
        return self.stop_reason == "answered"

    def trajectory(self) -> list[str]:
        """The tool names the model called, in order."""
        return [record.name for record in self.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        """A JSON summary; raw messages are left out on purpose."""
        return {
            "run_id": self.run_id,
            "harness": self.harness,
            "stop_reason": self.stop_reason,
            "stop_detail": self.stop_detail,
            "output": self.output,
            "tool_calls": [record.to_dict() for record in self.tool_calls],
            "pending_approvals": [
                {k: v for k, v in p.to_dict().items() if k != "arguments"}
                for p in self.pending_approvals
            ],
            "usage": dict(self.usage),
        }


class Contract:
    """The contract's configuration, shared by every run and every harness.

    Args:
        tools: a registry or the specs to register.
        budget: run limits; defaults to :class:`Budget()`.
        allowlist: names of the tools this contract lets run; ``None`` allows every
            registered tool. Only allowlisted tools are offered to the model.
        redaction: the redaction policy; ``secrets`` are added to it.
        secrets: exact values that must never leave a run.
        executor: the worker pool; defaults to the process-wide one.
        expose_exception_text: show (redacted) exception text to the model for tool
            failures that are not ToolErrors. Off by default.
        trace_sink: receives every trace event of every run of this contract as it is
            recorded (see :mod:`agent_contract.trace.sinks`); each run also keeps its
            own trace.

    Raises:
        ConfigurationError: the allowlist names a tool that is not registered.
    """

    def __init__(
        self,
        tools: ToolRegistry | Iterable[ToolSpec] = (),
        *,
        budget: Budget | None = None,
        allowlist: Iterable[str] | None = None,
        redaction: RedactionPolicy | None = None,
        secrets: Iterable[str] = (),
        executor: ToolExecutor | None = None,
        expose_exception_text: bool = False,
        trace_sink: TraceSink | None = None,
    ) -> None:
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.budget = budget or Budget()
        if allowlist is not None:
            names = frozenset(allowlist)
            unknown = sorted(n for n in names if n not in self.registry)
            if unknown:
                raise ConfigurationError(f"allowlist names unregistered tools: {unknown}")
            self.allowlist: frozenset[str] | None = names
        else:
            self.allowlist = None
        base = redaction or RedactionPolicy()
        secrets = tuple(secrets)
        self.redaction = base.with_secrets(secrets) if secrets else base
        self._executor = executor
        self.expose_exception_text = expose_exception_text
        self.trace_sink = trace_sink

    @classmethod
    def of(
        cls,
        tools: ToolRegistry | Iterable[ToolSpec] | Contract,
        *,
        budget: Budget | None = None,
        allowlist: Iterable[str] | None = None,
        redaction: RedactionPolicy | None = None,
        secrets: Iterable[str] = (),
    ) -> Contract:
        """``tools`` if it is a Contract already (then the options must be unset), else a
        new Contract built from the tools and options. Harness entry points use it.

        Raises:
            ConfigurationError: a Contract combined with options.
        """
        if isinstance(tools, Contract):
            secrets = tuple(secrets)
            if budget is not None or allowlist is not None or redaction is not None or secrets:
                raise ConfigurationError("pass budget/allowlist/redaction/secrets to the Contract")
            return tools
        return cls(tools, budget=budget, allowlist=allowlist, redaction=redaction, secrets=secrets)

    def restore(
        self, snapshot: Mapping[str, Any], *, context: Mapping[str, Any] | None = None
    ) -> tuple[RunState, list[Message]]:
        """Rebuild a paused run from :meth:`RunState.snapshot` with this contract's tools.

        Returns:
            ``(state, transcript)``.

        Raises:
            CheckpointError: another snapshot version, a tool that is no longer
                registered, or a snapshot that is not well-formed. Never starts afresh.
        """
        return restore_run(self, snapshot, context=context)

    @property
    def executor(self) -> ToolExecutor:
        """The worker pool tool handlers run on."""
        return self._executor or default_executor()

    def is_allowed(self, name: str) -> bool:
        """True when ``name`` is registered and inside the allowlist."""
        return name in self.registry and (self.allowlist is None or name in self.allowlist)

    def offered_names(self) -> list[str]:
        """Names of the tools offered to the model, in registration order."""
        return [n for n in self.registry.names() if self.is_allowed(n)]

    def offered_tools(self) -> list[dict[str, Any]]:
        """The JSON tool definitions offered to the model (allowlisted tools only)."""
        return self.registry.list_tools(self.allowlist)

    def start(
        self,
        *,
        run_id: str | None = None,
        caller: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> RunState:
        """Begin one run.

        Args:
            run_id: defaults to a random id.
            caller: the identity the run acts for (tools read it from ToolContext).
            context: application values handed to context-aware tools.
        """
        return RunState(
            self,
            run_id=run_id or f"run-{uuid.uuid4().hex[:12]}",
            caller=caller,
            context=dict(context or {}),
        )


def restore_run(
    contract: Contract, snapshot: Mapping[str, Any], *, context: Mapping[str, Any] | None = None
) -> tuple[RunState, list[Message]]:
    """Rebuild a run from :meth:`RunState.snapshot` (see :meth:`Contract.restore`)."""
    if not isinstance(snapshot, Mapping) or snapshot.get("version") != SNAPSHOT_VERSION:
        found = (
            snapshot.get("version") if isinstance(snapshot, Mapping) else type(snapshot).__name__
        )
        raise CheckpointError(
            f"cannot restore a run snapshot of version {found!r}; expected {SNAPSHOT_VERSION}"
        )
    try:
        state = RunState(
            contract,
            run_id=str(snapshot["run_id"]),
            caller=snapshot.get("caller"),
            context=dict(context or {}),
            restoring=True,
        )
        state.usage = BudgetUsage.from_dict(snapshot["usage"])
        state._records = [ToolCallRecord.from_state(r) for r in snapshot["records"]]
        state._issued = [str(i) for i in snapshot["issued"]]
        state._answered = {
            str(k): ToolResult.from_dict(v) for k, v in dict(snapshot["answered"]).items()
        }
        batch: list[PlannedCall] = []
        for item in snapshot["batch"]:
            spec = contract.registry.get(item["spec"]) if item.get("spec") else None
            if item.get("spec") and spec is None:
                raise CheckpointError(f"snapshot names tool {item['spec']!r}, not registered")
            call = item["call"]
            batch.append(
                PlannedCall(
                    call=ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"]),
                    spec=spec,
                    arguments=dict(item.get("arguments") or {}),
                    refusal=ToolResult.from_dict(item["refusal"]) if item.get("refusal") else None,
                    approval=(
                        PendingApproval.from_dict(item["approval"])
                        if item.get("approval")
                        else None
                    ),
                )
            )
        state._batch = batch
        state._decisions = {str(k): dict(v) for k, v in dict(snapshot["decisions"]).items()}
        state.trace = state._new_trace(snapshot["trace"])
        transcript = [Message.from_dict(m) for m in snapshot["transcript"]]
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"corrupt run snapshot: {type(exc).__name__}: {exc}") from exc
    state.trace.append("run_resumed", run_id=state.run_id)
    return state, transcript


class RunState:
    """The mutable state of one run: usage, the call-ID ledger and the trace.

    Thread-safe: tool calls of a batch may execute and be recorded concurrently.
    Create it with :meth:`Contract.start`.
    """

    def __init__(
        self,
        contract: Contract,
        *,
        run_id: str,
        caller: str | None,
        context: dict[str, Any],
        restoring: bool = False,
    ) -> None:
        self.contract = contract
        self.run_id = run_id
        self.caller = caller
        self.context = context
        self.usage = BudgetUsage()
        self.trace = self._new_trace()
        self._lock = threading.RLock()
        self._records: list[ToolCallRecord] = []
        self._issued: list[str] = []
        self._answered: dict[str, ToolResult] = {}
        self._batch: list[PlannedCall] = []
        self.halted: Stop | None = None
        self.answer: str | None = None
        self._decisions: dict[str, dict[str, Any]] = {}
        if restoring:
            return
        self.trace.append(
            "run_started",
            run_id=run_id,
            tools_offered=contract.offered_names(),
            budget=contract.budget.to_dict(),
        )

    def _new_trace(self, events: Sequence[Mapping[str, Any]] = ()) -> Trace:
        """A trace for this run: the contract's redaction and sink, timed by the run's
        clock (active seconds, across resumes)."""
        return Trace(
            self.contract.redaction,
            events,
            run_id=self.run_id,
            sink=self.contract.trace_sink,
            clock=lambda: self.usage.elapsed(),
        )

    # -- model steps ------------------------------------------------------------------

    def check_before_model_call(self) -> Stop | None:
        """Close the previous tool batch, then check deadline, trace size and step budget.

        Returns the stop to end the run with, or ``None`` to go ahead. A ``None`` also
        counts the step: call the model right after.
        """
        with self._lock:
            self._close_batch()
            breach = budget_checks.check_before_model_call(
                self.contract.budget, self.usage, self.trace.size_bytes
            )
            if breach is not None:
                return Stop(reason=breach.reason, detail=breach.message)
            self.usage.model_steps += 1
            self.trace.append("model_call", step=self.usage.model_steps)
            return None

    def model_failed(self, exc: BaseException) -> Stop:
        """The stop for a model that raised: ``model_error``, naming only the type."""
        return Stop(reason="model_error", detail=f"the model raised {type(exc).__name__}")

    def accept_response(self, completion: Completion) -> Decision:
        """Judge the model's response and record it.

        Returns:
            A :class:`Decision`. For ``invalid`` it carries one bound error result per
            distinct call id (kind ``invalid_call``) and the ``invalid_response`` stop;
            those results are already recorded in the ledger.
        """
        with self._lock:
            calls, violations = validate_response(completion, seen_ids=self._issued)
            step = self.usage.model_steps
            shape: Literal["final", "tool_calls", "invalid"] = (
                "invalid" if violations else ("tool_calls" if calls else "final")
            )
            self.trace.append(
                "model_response",
                step=step,
                shape=shape,
                tool_calls=[{"id": c.id, "name": c.name} for c in calls],
                text_chars=len(completion.text),
            )
            if shape == "final":
                return Decision(shape="final", text=completion.text)
            if shape == "tool_calls":
                return Decision(shape="tool_calls", calls=calls)
            for violation in violations:
                self.trace.append("contract_violation", **violation.to_dict())
            refusals = self._refuse_invalid(calls, violations)
            summary = "; ".join(v.message for v in violations)
            return Decision(
                shape="invalid",
                calls=calls,
                violations=violations,
                refusals=refusals,
                stop=Stop(reason="invalid_response", detail=summary),
            )

    def _refuse_invalid(
        self, calls: Sequence[ToolCall], violations: Sequence[Violation]
    ) -> tuple[ToolResult, ...]:
        general = [v.code for v in violations if v.tool_call_id is None]
        refusals: list[ToolResult] = []
        for call in calls:
            own = [
                v for v in violations if v.tool_call_id is not None and v.tool_call_id == call.id
            ]
            self._records.append(
                ToolCallRecord(
                    id=call.id or None,
                    name=call.name,
                    status="error",
                    error_kind="invalid_call",
                    outcome="not_run",
                    arguments=self.contract.redaction.redact_value(call.arguments),
                )
            )
            if not call.id or call.id in self._answered or call.id in self._issued:
                continue
            reason = "; ".join(v.message for v in own) or (
                "not run: the response broke the contract (" + ", ".join(general) + ")"
            )
            result = error_result(
                call.id, call.name, "invalid_call", reason, redaction=self.contract.redaction
            )
            self._issued.append(call.id)
            self._answered[call.id] = result
            self._trace_result(result)
            refusals.append(result)
        return tuple(refusals)

    # -- tool batches -----------------------------------------------------------------

    def plan_tool_calls(self, calls: Sequence[ToolCall]) -> BatchPlan:
        """Judge a batch of calls (from a ``tool_calls`` decision) before any of it runs.

        Batch checks (deadline, trace size, tool-call budget, identical repeats) admit
        or refuse the batch whole; a refused batch gives every call a bound error and a
        stop. In an admitted batch each call is checked alone: registered
        (``unknown_tool``), allowlisted (``not_allowed``), arguments valid
        (``invalid_arguments``); write tools are previewed and then wait for approval
        (a failing preview refuses the call with the preview's error kind).
        """
        with self._lock:
            self._close_batch()
            keys = [call_key(c.name, c.arguments) for c in calls]
            breach = budget_checks.check_before_tool_calls(
                self.contract.budget,
                self.usage,
                self.trace.size_bytes,
                [(c.id, k) for c, k in zip(calls, keys, strict=True)],
            )
            for call in calls:
                self._issued.append(call.id or "")
            if breach is not None:
                planned = tuple(self._refuse_for_breach(c, breach) for c in calls)
                plan = BatchPlan(
                    calls=planned, stop=Stop(reason=breach.reason, detail=breach.message)
                )
            else:
                budget_checks.admit_tool_calls(self.usage, keys)
                plan = BatchPlan(calls=tuple(self._plan_one(c) for c in calls))
            self._batch = list(plan.calls)
            for planned_call in plan.calls:
                self._trace_call(planned_call)
            for planned_call in plan.calls:
                if planned_call.refusal is not None:
                    self._answer(planned_call.refusal)
            return plan

    def _refuse_for_breach(self, call: ToolCall, breach: Breach) -> PlannedCall:
        kind: ErrorKind = "repeated_call" if call.id in breach.call_ids else "budget_exceeded"
        message = (
            breach.message
            if kind == "repeated_call" or breach.reason != "repeated_call"
            else (f"not run: the batch was refused ({breach.message})")
        )
        return PlannedCall(call=call, refusal=self._error(call, kind, message))

    def _error(self, call: ToolCall, kind: ErrorKind, message: str) -> ToolResult:
        return error_result(
            call.id or "", call.name, kind, message, redaction=self.contract.redaction
        )

    def _plan_one(self, call: ToolCall) -> PlannedCall:
        spec = self.contract.registry.get(call.name)
        if spec is None:
            offered = ", ".join(self.contract.offered_names())
            return PlannedCall(
                call=call,
                refusal=self._error(
                    call,
                    "unknown_tool",
                    f"unknown tool {call.name!r}; available: {offered or 'none'}",
                ),
            )
        if not self.contract.is_allowed(call.name):
            return PlannedCall(
                call=call,
                refusal=self._error(
                    call, "not_allowed", f"tool {call.name!r} is not allowed in this run"
                ),
            )
        problem = spec.validate(call.arguments)
        if problem is not None:
            return PlannedCall(
                call=call,
                refusal=self._error(
                    call, "invalid_arguments", f"invalid arguments for {call.name!r}: {problem}"
                ),
            )
        if spec.effect == "write":
            return self._plan_write(call, spec)
        # Validated arguments are shared with the issued call and never mutated: every
        # handler gets its own deep copy (default_invoke, execute_write, isolation).
        return PlannedCall(call=call, spec=spec, arguments=call.arguments)

    def _plan_write(self, call: ToolCall, spec: ToolSpec) -> PlannedCall:
        """Preview a write call and make it wait for approval (or refuse it)."""
        arguments = copy.deepcopy(call.arguments)
        call_id = call.id or ""
        preview, problem = self._preview(spec, call_id, arguments)
        if problem is not None:
            return PlannedCall(call=call, refusal=self._error(call, *problem))
        pending = PendingApproval(
            tool_call_id=call_id,
            name=spec.name,
            arguments=arguments,
            preview=self.contract.redaction.redact_value(preview),
            token=approval_token(self.run_id, call_id, spec.name, arguments),
        )
        self.trace.append(
            "approval_requested",
            id=pending.tool_call_id,
            name=pending.name,
            token=pending.token,
            preview=pending.preview,
        )
        return PlannedCall(call=call, spec=spec, arguments=arguments, approval=pending)

    def _preview(
        self, spec: ToolSpec, call_id: str, arguments: dict[str, Any]
    ) -> tuple[Any, tuple[ErrorKind, str] | None]:
        """Run a write tool's preview: ``(preview, None)``, or ``(None, (kind, message))``
        when it times out, raises, or returns something that is not JSON data."""
        if spec.preview is None:  # ToolSpec guarantees it for writes; fail closed anyway
            return None, ("not_allowed", f"write tool {spec.name!r} has no preview")
        invocation = self._run_hook(spec.preview, spec, self._context_for(call_id), arguments)
        if invocation.timed_out:
            return None, ("timeout", f"preview of {spec.name!r} timed out")
        if invocation.error is not None:
            return None, classify_exception(
                invocation.error,
                spec.name,
                expose_exception_text=self.contract.expose_exception_text,
            )
        try:
            serialize_result(invocation.value)
        except ResultNotSerializableError as exc:
            return None, ("tool_error", exc.message)
        return invocation.value, None

    def _run_hook(
        self,
        fn: Callable[..., Any],
        spec: ToolSpec,
        context: ToolContext,
        arguments: dict[str, Any],
    ) -> Invocation:
        """Run a write tool's preview, handler or verify with its own copy of the
        arguments, on the worker pool, with the tool's timeout."""
        args = copy.deepcopy(arguments)
        return self.contract.executor.run(lambda: fn(context, **args), self._timeout_for(spec))

    # -- approvals and writes --------------------------------------------------------------

    def _waiting(self) -> list[PlannedCall]:
        """Write calls of the open batch with no result yet (caller holds the lock)."""
        return [
            p for p in self._batch if p.approval is not None and p.call_id not in self._answered
        ]

    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """Write calls of the open batch still waiting for a result."""
        with self._lock:
            return tuple(p.approval for p in self._waiting() if p.approval is not None)

    def apply_approvals(self, approvals: Sequence[Approval]) -> tuple[PlannedCall, ...]:
        """Check human decisions against the pending approvals and record them.

        All decisions are checked before any is recorded, so one bad decision changes
        nothing. A decision identical to one already recorded (a resume after a crash)
        is accepted again; a different one is refused.

        Returns:
            The calls to run now (approved, or edited with the new arguments), in the
            order the model issued them. Rejected calls are answered with a bound
            ``rejected`` error and are not returned.

        Raises:
            ApprovalError: a decision names no pending call, carries a token bound to
                other arguments, another call or another run, conflicts with a recorded
                decision, or edits to arguments that fail the schema.
        """
        with self._lock:
            waiting = {p.call_id: p for p in self._waiting()}
            checked: list[tuple[PlannedCall, Approval]] = []
            for approval in approvals:
                planned = waiting.get(approval.tool_call_id)
                if planned is None or planned.approval is None or planned.spec is None:
                    raise ApprovalError(
                        f"no pending approval for call {approval.tool_call_id!r} in run "
                        f"{self.run_id!r}",
                        tool_call_id=approval.tool_call_id,
                    )
                if approval.token != planned.approval.token:
                    raise ApprovalError(
                        f"the approval token does not match call {approval.tool_call_id!r}: it "
                        "was issued for other arguments, another call or another run",
                        tool_call_id=approval.tool_call_id,
                    )
                recorded = self._decisions.get(approval.tool_call_id)
                if (
                    recorded is not None
                    and Approval.from_dict(recorded).binding() != approval.binding()
                ):
                    raise ApprovalError(
                        f"call {approval.tool_call_id!r} was already decided "
                        f"({recorded['decision']}); a different decision is refused",
                        tool_call_id=approval.tool_call_id,
                    )
                if approval.decision == "edit":
                    problem = planned.spec.validate(approval.arguments)
                    if problem is None:
                        problem = self._preview_problem(planned, approval.arguments or {})
                    if problem is not None:
                        raise ApprovalError(
                            f"edited arguments are invalid: {problem}",
                            tool_call_id=approval.tool_call_id,
                        )
                checked.append((planned, approval))
            to_run: list[PlannedCall] = []
            for planned, approval in checked:
                self._decisions[planned.call_id] = approval.to_dict()
                self.trace.append(
                    "approval_decided",
                    id=planned.call_id,
                    name=planned.call.name,
                    decision=approval.decision,
                    decided_by=approval.decided_by,
                    reason=approval.reason,
                    arguments=approval.arguments if approval.decision == "edit" else None,
                )
                if approval.decision == "reject":
                    reason = f": {approval.reason}" if approval.reason else ""
                    self._answer(
                        self._error(planned.call, "rejected", f"a human rejected this call{reason}")
                    )
                    continue
                if approval.decision == "edit" and approval.arguments is not None:
                    planned = PlannedCall(
                        call=planned.call,
                        spec=planned.spec,
                        arguments=copy.deepcopy(approval.arguments),
                        approval=planned.approval,
                    )
                    self._batch = [
                        planned if p.call_id == planned.call_id else p for p in self._batch
                    ]
                to_run.append(planned)
            chosen = {p.call_id for p in to_run}  # edits are already swapped into the batch
            return tuple(p for p in self._batch if p.call_id in chosen)

    def _preview_problem(self, planned: PlannedCall, arguments: dict[str, Any]) -> str | None:
        """Preview an edit before accepting it: ``None`` when the tool accepts the edited
        arguments, else the (redacted) reason. An approver's typo is refused, and the
        call stays pending, instead of ending the run in a failed write."""
        if planned.spec is None:
            return None
        _, problem = self._preview(planned.spec, planned.call_id, arguments)
        if problem is None:
            return None
        kind, message = problem
        return self.contract.redaction.redact(f"{kind}: {message}")

    def decision_for(self, tool_call_id: str) -> Approval | None:
        """The recorded decision on a write call, if any."""
        with self._lock:
            recorded = self._decisions.get(tool_call_id)
            return Approval.from_dict(recorded) if recorded is not None else None

    def decided_calls(self) -> tuple[PlannedCall, ...]:
        """Approved or edited calls that have a recorded decision but no result yet
        (their write may or may not have happened: a crash came in between)."""
        with self._lock:
            return tuple(
                p
                for p in self._waiting()
                if self._decisions.get(p.call_id, {}).get("decision") in ("approve", "edit")
            )

    def _verify(
        self, spec: ToolSpec, context: ToolContext, arguments: dict[str, Any]
    ) -> Invocation:
        if spec.verify is None:
            raise ConfigurationError(f"write tool {spec.name!r} has no verify")
        return self._run_hook(spec.verify, spec, context, arguments)

    def execute_write(self, planned: PlannedCall) -> ToolResult:
        """Run an approved write once: settle any unknown outcome first, write with an
        idempotency key, then read back to confirm.

        1. ``verify`` with the idempotency key: if the write is already applied (a
           retry, or a resume after a crash), it is not written again.
        2. If ``verify`` cannot tell, nothing is written: ``transient``, outcome
           unknown, side effects possible.
        3. Otherwise the handler runs (with the timeout), then ``verify`` confirms. A
           confirmed write succeeds even if the handler timed out; an unconfirmed one
           is an error with outcome unknown unless the handler failed cleanly.

        Raises:
            ConfigurationError: ``planned`` is not an approved write.
        """
        spec = planned.spec
        if spec is None or planned.approval is None or spec.effect != "write":
            raise ConfigurationError("execute_write() needs an approved write call")
        call_id, name, redaction = planned.call_id, spec.name, self.contract.redaction
        key = idempotency_key(self.run_id, call_id, name, planned.arguments)
        context = self._context_for(call_id, idempotency_key=key)
        before = self._verify(spec, context, planned.arguments)
        if before.timed_out or before.error is not None:
            result = error_result(
                call_id,
                name,
                "transient",
                "could not check whether this write already happened; it was not written "
                "again; retry later",
                redaction=redaction,
                outcome="unknown",
                side_effects_possible=True,
            )
        elif before.value is not None:
            result = success_result(
                call_id,
                name,
                {
                    "status": "applied",
                    "verified": True,
                    "already_applied": True,
                    "idempotency_key": key,
                    "record": before.value,
                },
                max_result_chars=spec.max_result_chars,
                on_oversize=spec.on_oversize,
                redaction=redaction,
            )
        else:
            invocation = self._run_hook(spec.handler, spec, context, planned.arguments)
            crashpoint("after_write")
            after = self._verify(spec, context, planned.arguments)
            result = self._write_outcome(planned, spec, key, invocation, after)
        self.trace.append(
            "write_settled",
            id=call_id,
            name=name,
            idempotency_key=key,
            status=result.status,
            outcome=result.outcome,
        )
        return self.record_result(result)

    def _write_outcome(
        self,
        planned: PlannedCall,
        spec: ToolSpec,
        key: str,
        invocation: Invocation,
        after: Invocation,
    ) -> ToolResult:
        call_id, name, redaction = planned.call_id, spec.name, self.contract.redaction
        confirmed = not after.timed_out and after.error is None and after.value is not None
        if confirmed:
            value: Any = (
                invocation.value
                if invocation.error is None and not invocation.timed_out
                else {"status": "applied", "verified": True, "record": after.value}
            )
            return success_result(
                call_id,
                name,
                value,
                max_result_chars=spec.max_result_chars,
                on_oversize=spec.on_oversize,
                redaction=redaction,
                duration_seconds=invocation.duration_seconds,
            )
        settled = not after.timed_out and after.error is None  # verify says: not applied
        if invocation.error is not None and settled:
            return self._failed(call_id, name, invocation.error, invocation.duration_seconds)
        if invocation.timed_out:
            return error_result(
                call_id,
                name,
                "timeout",
                f"write {name!r} did not finish in time and is not confirmed; its outcome is "
                f"unknown and side effects are possible (idempotency key {key})",
                redaction=redaction,
                outcome="unknown",
                side_effects_possible=True,
                duration_seconds=invocation.duration_seconds,
            )
        return error_result(
            call_id,
            name,
            "tool_error",
            f"write {name!r} could not be confirmed by reading it back; its outcome is unknown "
            f"(idempotency key {key})",
            redaction=redaction,
            outcome="unknown",
            side_effects_possible=True,
            duration_seconds=invocation.duration_seconds,
        )

    # -- snapshots -----------------------------------------------------------------------

    def snapshot(self, transcript: Sequence[Message]) -> dict[str, Any]:
        """The run's whole state as JSON data, to resume it in another process.

        Holds the transcript (redacted: a secret handed to the run is not written to
        disk, and a resumed model sees the redaction marker), the budget's limits (for
        drivers that resume without the original Contract) and usage, the call-ID
        ledger, the open batch with its approvals and recorded decisions (arguments kept
        exact, since an approved write must run with them), and the trace (redacted when
        recorded). Application context values are not stored: pass them again to
        :meth:`Contract.restore`.
        """
        with self._lock:
            return {
                "version": SNAPSHOT_VERSION,
                "run_id": self.run_id,
                "caller": self.caller,
                "budget": self.contract.budget.to_dict(),
                "usage": self.usage.to_dict(),
                "records": [r.to_state() for r in self._records],
                "issued": list(self._issued),
                "answered": {k: v.to_dict() for k, v in self._answered.items()},
                "batch": [p.to_dict() for p in self._batch],
                "decisions": dict(self._decisions),
                "trace": self.trace.events,
                "transcript": [
                    self.contract.redaction.redact_value(m.to_dict()) for m in transcript
                ],
            }

    def _trace_call(self, planned: PlannedCall) -> None:
        fields: dict[str, Any] = {
            "id": planned.call.id,
            "name": planned.call.name,
            "arguments": planned.shown_arguments,
            "decision": (
                "refused"
                if planned.refusal is not None
                else ("awaiting_approval" if planned.approval is not None else "run")
            ),
        }
        if planned.refusal is not None:
            fields["error_kind"] = planned.refusal.error_kind
        self.trace.append("tool_call", **fields)

    def _timeout_for(self, spec: ToolSpec) -> float:
        timeout = float(spec.timeout_seconds)
        deadline = self.contract.budget.deadline_seconds
        if deadline is not None:
            timeout = max(0.0, min(timeout, deadline - self.usage.elapsed()))
        return timeout

    def tool_context(self, planned: PlannedCall) -> ToolContext:
        """The :class:`ToolContext` a handler of ``planned`` gets (no idempotency key)."""
        return self._context_for(planned.call_id)

    def _context_for(self, call_id: str, *, idempotency_key: str | None = None) -> ToolContext:
        return ToolContext(
            run_id=self.run_id,
            tool_call_id=call_id,
            caller=self.caller,
            values=self.context,
            idempotency_key=idempotency_key,
        )

    def default_invoke(self, planned: PlannedCall) -> Callable[[], Any]:
        """The plain way to run a planned call: its handler with a copy of the arguments."""
        spec = planned.spec
        if spec is None:
            raise ConfigurationError("default_invoke() needs a runnable planned call")
        arguments = copy.deepcopy(planned.arguments)
        if spec.needs_context:
            context = self.tool_context(planned)
            return lambda: spec.handler(context, **arguments)
        return lambda: spec.handler(**arguments)

    def submit(
        self, planned: PlannedCall, invoke: Callable[[], Any] | None = None
    ) -> Callable[[], ToolResult]:
        """Start one admitted call on the worker pool; the returned function waits for it.

        A tool with ``isolation="process"`` always runs its own handler in a child
        process killed at the timeout (``invoke`` is then not used).

        Args:
            planned: a runnable call from :meth:`plan_tool_calls`.
            invoke: how to run it; defaults to :meth:`default_invoke`. A binding passes
                its framework's handler here; it must return the tool's raw value.

        Returns:
            ``wait()``: blocks until the call returns or its timeout (seconds, from
            submission) passes, records the result in the ledger and returns it.

        Raises:
            ConfigurationError: ``planned`` was refused (it has nothing to run).
        """
        spec = self._require_spec(planned)
        timeout = self._timeout_for(spec)
        if spec.isolation == "process":
            args = (self.tool_context(planned),) if spec.needs_context else ()
            kwargs = copy.deepcopy(planned.arguments)
            handler = spec.handler
            isolated = self.contract.executor.submit(
                lambda: run_isolated(handler, args, kwargs, timeout)
            )

            def wait_isolated() -> ToolResult:
                outer = isolated.result(timeout + ISOLATION_GRACE_SECONDS)
                invocation = outer.value if isinstance(outer.value, Invocation) else outer
                return self.record_result(self._result_from(planned, spec, invocation, timeout))

            return wait_isolated
        handle = self.contract.executor.submit(invoke or self.default_invoke(planned))

        def wait() -> ToolResult:
            invocation = handle.result(timeout)
            return self.record_result(self._result_from(planned, spec, invocation, timeout))

        return wait

    def execute(self, planned: PlannedCall, invoke: Callable[[], Any] | None = None) -> ToolResult:
        """Run one call and wait for it (see :meth:`submit`).

        Refused calls return their recorded refusal without running.
        """
        if planned.refusal is not None:
            return planned.refusal
        return self.submit(planned, invoke)()

    async def aexecute(
        self, planned: PlannedCall, ainvoke: Callable[[], Awaitable[Any]]
    ) -> ToolResult:
        """Async :meth:`execute`: await ``ainvoke()`` with the call's timeout."""
        if planned.refusal is not None:
            return planned.refusal
        spec = self._require_spec(planned)
        if spec.isolation == "process":
            return await asyncio.to_thread(self.execute, planned)
        timeout = self._timeout_for(spec)
        invocation = await arun_with_timeout(ainvoke, timeout)
        return self.record_result(self._result_from(planned, spec, invocation, timeout))

    def _require_spec(self, planned: PlannedCall) -> ToolSpec:
        if planned.spec is None or planned.refusal is not None:
            raise ConfigurationError("a planned call without a spec or refusal cannot run")
        if planned.approval is not None:
            raise ConfigurationError(
                "a write call runs only through execute_write(), after a human decision"
            )
        return planned.spec

    def _result_from(
        self, planned: PlannedCall, spec: ToolSpec, invocation: Invocation, timeout: float
    ) -> ToolResult:
        call_id, name, redaction = planned.call_id, spec.name, self.contract.redaction
        if invocation.killed:
            return error_result(
                call_id,
                name,
                "timeout",
                f"tool {name!r} did not finish within {timeout:.3g} s and its process was "
                "killed; nothing it had not done yet can happen, but work before the kill may "
                "have happened",
                redaction=redaction,
                outcome="killed",
                side_effects_possible=True,
                duration_seconds=invocation.duration_seconds,
            )
        if invocation.timed_out:
            if not invocation.started:
                return error_result(
                    call_id,
                    name,
                    "timeout",
                    f"tool {name!r} did not start within {timeout:.3g} s; it was not run",
                    redaction=redaction,
                    outcome="not_run",
                )
            return error_result(
                call_id,
                name,
                "timeout",
                f"tool {name!r} did not finish within {timeout:.3g} s; its outcome is unknown "
                "and side effects are possible",
                redaction=redaction,
                outcome="unknown",
                side_effects_possible=True,
                duration_seconds=invocation.duration_seconds,
            )
        if invocation.error is not None:
            return self._failed(
                call_id,
                name,
                invocation.error,
                invocation.duration_seconds,
            )
        return success_result(
            call_id,
            name,
            invocation.value,
            max_result_chars=spec.max_result_chars,
            on_oversize=spec.on_oversize,
            redaction=redaction,
            duration_seconds=invocation.duration_seconds,
            artifact=invocation.value,
        )

    def _failed(
        self,
        call_id: str,
        name: str,
        error: BaseException,
        duration_seconds: float,
        *,
        side_effects_possible: bool = False,
    ) -> ToolResult:
        """The classified error result of a handler that raised (outcome ``failed``)."""
        kind, message = classify_exception(
            error, name, expose_exception_text=self.contract.expose_exception_text
        )
        return error_result(
            call_id,
            name,
            kind,
            message,
            redaction=self.contract.redaction,
            outcome="failed",
            side_effects_possible=side_effects_possible,
            duration_seconds=duration_seconds,
        )

    def _trace_result(self, result: ToolResult) -> None:
        self.trace.append("tool_result", **result.summary(), preview=result.content[:PREVIEW_CHARS])

    def record_result(self, result: ToolResult) -> ToolResult:
        """Bind ``result`` to its call in the ledger (once per id) and return it.

        Raises:
            ConfigurationError: the id was never issued in this run, or is already
                answered (a driver bug: a tool message must answer exactly one call).
        """
        with self._lock:
            self._answer(result)
            return result

    def _answer(self, result: ToolResult) -> None:
        if result.tool_call_id not in self._issued:
            raise ConfigurationError(f"tool_call_id {result.tool_call_id!r} was never issued")
        if result.tool_call_id in self._answered:
            raise ConfigurationError(f"tool_call_id {result.tool_call_id!r} is already answered")
        self._answered[result.tool_call_id] = result

    def _close_batch(self, *, force: bool = False) -> None:
        """Write the batch's results to the ledger records and the trace, in issue order.

        A batch with write calls still waiting for a decision stays open, unless
        ``force`` (the run is ending): then every unanswered call gets an error.
        """
        if not self._batch:
            return
        if not force and self._waiting():
            return
        for planned in self._batch:
            result = self._answered.get(planned.call_id)
            if result is None:
                result = self._error(
                    planned.call, "tool_error", "no result was recorded for this call"
                )
                self._answered[planned.call_id] = result
            self._records.append(
                ToolCallRecord(
                    id=planned.call.id,
                    name=planned.call.name,
                    status=result.status,
                    error_kind=result.error_kind,
                    outcome=result.outcome,
                    side_effects_possible=result.side_effects_possible,
                    arguments=self.contract.redaction.redact_value(planned.shown_arguments),
                )
            )
            self._trace_result(result)
        self._batch = []

    def planned_call(self, tool_call_id: str) -> PlannedCall | None:
        """The call with this id in the open batch, or ``None`` (never planned)."""
        with self._lock:
            return next((p for p in self._batch if p.call_id == tool_call_id), None)

    def halt(self, stop: Stop, output: str | None = None) -> None:
        """Record the stop a driver decided on, before it can call :meth:`finish`.

        Drivers that end inside a framework (the LangChain middleware) record the
        decision here; the harness reads :attr:`halted` and :attr:`answer` when the
        framework returns.
        """
        with self._lock:
            self.halted = stop
            self.answer = output if stop.reason == "answered" else None

    def result_for(self, tool_call_id: str) -> ToolResult | None:
        """The result bound to ``tool_call_id``, if any."""
        with self._lock:
            return self._answered.get(tool_call_id)

    def open_batch_messages(self) -> list[Message] | None:
        """Tool messages answering the open batch in issue order, or ``None`` while a
        call of it still waits (for a decision or a result)."""
        with self._lock:
            if any(p.call_id not in self._answered for p in self._batch):
                return None
            return [self._answered[p.call_id].to_message() for p in self._batch]

    def pending_stop(self) -> Stop | None:
        """The ``pending_approval`` stop while write calls of the open batch wait for a
        decision, else ``None``. Every driver pauses with this one stop."""
        pending = self.pending_approvals()
        if not pending:
            return None
        waiting = ", ".join(f"{p.name} [{p.tool_call_id}]" for p in pending)
        return Stop(reason="pending_approval", detail=f"waiting for approval of {waiting}")

    def batch_results(self, plan: BatchPlan) -> list[ToolResult]:
        """The results answering ``plan``, in the order the model issued the calls.

        Raises:
            KeyError: a call of the plan has no result yet (a driver bug).
        """
        with self._lock:
            return [self._answered[p.call_id] for p in plan.calls]

    def batch_messages(self, plan: BatchPlan) -> list[Message]:
        """The tool messages answering ``plan``, in the order the model issued the calls."""
        return [result.to_message() for result in self.batch_results(plan)]

    # -- the end ----------------------------------------------------------------------

    def finish(
        self,
        stop: Stop,
        *,
        messages: Sequence[Message],
        output: str | None = None,
        harness: str = "offline",
    ) -> RunResult:
        """End the run: close the batch, record the stop, and build the result.

        ``output`` is kept (redacted) only for ``answered``; any other stop has no
        output, so running out of budget can never pass for an answer.
        """
        with self._lock:
            pausing = stop.reason == "pending_approval"
            self._close_batch(force=not pausing)
            detail = self.contract.redaction.redact(stop.detail)
            self.trace.append("stop", reason=stop.reason, detail=detail)
            answer = (
                self.contract.redaction.redact(output)
                if stop.reason == "answered" and output is not None
                else None
            )
            return RunResult(
                run_id=self.run_id,
                stop_reason=stop.reason,
                stop_detail=detail,
                output=answer,
                messages=tuple(messages),
                trace=self.trace,
                tool_calls=tuple(self._records),
                usage=self.usage.summary(),
                harness=harness,
                pending_approvals=self.pending_approvals() if pausing else (),
                snapshot=self.snapshot(messages) if pausing else None,
            )
