"""The contract suite's scenarios, defined once and run on every harness.

A :class:`Scenario` is a script of model replies, the tools (built fresh per run
around a :class:`Probe` that records what the handlers saw), a budget, and the
expected observable outcome. A *harness* is any callable that runs a model and tools
under the scenario's :class:`RunOptions` and returns a
:class:`~agent_contract.runtime.RunResult`; :func:`observe` turns that into an
:class:`Observation` (a plain view that a foreign harness, such as a bare
``create_agent``, can also produce), and :func:`evaluate` lists the problems, each
tagged with the boundary it breaks.

Every scenario plants :data:`PLANTED_SECRET` (in arguments, tool results or
exception text) and checks that it appears nowhere a run emits: trace, tool
messages, output, the JSON summary.

No pytest import: ``agent-contract check`` and the pytest plugin both use this module.
"""

from __future__ import annotations

import importlib
import inspect
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, cast

from .approval import Approval, PendingApproval, approval_token
from .budget import Budget
from .errors import (
    ApprovalError,
    ConfigurationError,
    NotFoundError,
    TransientError,
    UnauthorizedError,
    load_binding,
)
from .loop import resume, run
from .messages import Completion, Message, ToolCall
from .model import Model
from .runtime import Contract, RunResult
from .testing import FakeModel, Reply, tool_call, tool_calls
from .tools import ToolContext, ToolSpec

PLANTED_SECRET: Final = "sk-planted-7f3a9c1e5b2d4a6f8e0c"
"""A secret every scenario hands to the run; it must never be emitted."""


def hide_planted(text: str) -> str:
    """``text`` with :data:`PLANTED_SECRET` replaced, for reports that quote evidence."""
    return text.replace(PLANTED_SECRET, "<planted secret>")


BOUNDARIES: Final[dict[str, str]] = {
    "response_shape": "a response is a final answer or tool calls, nothing else",
    "allowlist": "only registered, allowlisted tools run, and only they are offered",
    "argument_validation": "arguments are validated against the JSON Schema before running",
    "call_id_binding": "every call gets exactly one tool message with its id, in issue order",
    "tool_errors": "tool failures are classified errors, never raw exceptions or text",
    "model_step_budget": "the model-step budget stops the run with a named reason",
    "tool_call_budget": "a batch crossing the tool-call budget is refused before it runs",
    "repeated_calls": "identical repeated calls are refused with a named reason",
    "timeouts": "a slow tool times out with outcome unknown and side effects possible",
    "result_size": "oversized results are cut with an explicit marker",
    "serialization": "non-string results reach the model as JSON, non-ASCII kept",
    "history": "earlier turns are replayed to the model in order",
    "trace_redaction": "every run leaves a trace, and planted secrets appear nowhere",
    "write_approval": "writes wait for a human decision bound to the exact call, and apply once",
}
"""Each boundary the suite checks, with what holding it means."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What a harness needs besides the model and the tools."""

    user: str
    """The user message."""
    budget: Budget
    """Run limits."""
    allowlist: tuple[str, ...] | None = None
    """Allowed tools; None allows all."""
    history: tuple[Message, ...] = ()
    """Earlier turns."""
    secrets: tuple[str, ...] = (PLANTED_SECRET,)
    """Values to redact."""
    caller: str | None = "tester"
    """The identity the run acts for."""
    decider: Decider | None = None
    """The scripted human who answers approvals (None: the run stays paused)."""

    def contract(self, tools: Iterable[ToolSpec]) -> Contract:
        """The Contract these options describe: ``tools`` under budget, allowlist, secrets."""
        return Contract(tools, budget=self.budget, allowlist=self.allowlist, secrets=self.secrets)

    def turns(self) -> list[Message]:
        """The input transcript: ``history``, then the user message."""
        return [*self.history, Message(role="user", content=self.user)]


class Decider:
    """A scripted human: answers pending approvals one decision at a time.

    Args:
        decisions: consumed in order, one per pending approval: ``"approve"``,
            ``"reject"``, ``("edit", arguments)``, or ``"replay"`` (an approval token
            issued for other arguments, which the runtime must refuse).
        probe: where refusals are noted (``probe.refusals``).
    """

    def __init__(self, decisions: Sequence[str | tuple[str, dict[str, Any]]], probe: Probe) -> None:
        self._decisions = list(decisions)
        self._probe = probe

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        """Decisions for ``pending`` (as many as are left in the script)."""
        approvals: list[Approval] = []
        for item in pending:
            if not self._decisions:
                break
            spec = self._decisions.pop(0)
            if spec == "replay":
                other = {**item.arguments, "replayed": True}
                token = approval_token("another-run", item.tool_call_id, item.name, other)
                approvals.append(
                    Approval(tool_call_id=item.tool_call_id, decision="approve", token=token)
                )
            elif isinstance(spec, tuple):
                approvals.append(Approval.for_pending(item, "edit", arguments=spec[1]))
            elif spec == "approve":
                approvals.append(Approval.for_pending(item, "approve"))
            elif spec == "reject":
                approvals.append(Approval.for_pending(item, "reject", reason="not today"))
        return approvals

    def refused(self, exc: ApprovalError) -> None:
        """Note that the runtime refused a decision."""
        self._probe.refusals.append(str(exc))


def settle_approvals(
    result: RunResult,
    resume: Callable[[Mapping[str, Any], list[Approval]], RunResult],
    options: RunOptions,
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


class Harness(Protocol):
    """Runs a model and tools under options; returns a RunResult (or an Observation)."""

    def __call__(
        self, model: Model, tools: list[ToolSpec], options: RunOptions
    ) -> RunResult | Observation: ...


class Probe:
    """Records what tool handlers saw, across threads."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.late_writes: list[str] = []
        self.writes: dict[str, dict[str, Any]] = {}
        self.write_calls = 0
        self.previews = 0
        self.refusals: list[str] = []
        self._lock = threading.Lock()

    def record(self, name: str, arguments: Mapping[str, Any]) -> None:
        """Note that ``name`` ran with ``arguments``."""
        with self._lock:
            self.calls.append((name, dict(arguments)))

    def ran(self, name: str) -> int:
        """How often ``name`` ran."""
        with self._lock:
            return sum(1 for n, _ in self.calls if n == name)


@dataclass(frozen=True, kw_only=True)
class Observation:
    """What a run showed, in a harness-neutral form."""

    harness: str
    stop_reason: str
    """The contract's stop reason, or ``crashed:<ExceptionType>`` for a run that raised."""
    output: str | None
    trajectory: tuple[str, ...]
    tool_messages: tuple[dict[str, Any], ...]
    """Per tool message, in transcript order: ``id``, ``name``, ``status``,
    ``error_kind`` (from the JSON error content), ``side_effects_possible``, ``content``."""
    trace_types: tuple[str, ...]
    """Trace event types in order (empty when the harness keeps no trace)."""
    emitted: str
    """Everything the run emitted for people and the model: trace JSONL, tool message
    contents, output, JSON summary. Searched for the planted secret."""
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


def _error_fields(content: str) -> tuple[str | None, bool]:
    try:
        data = json.loads(content)
    except ValueError:
        return None, False
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"], bool(data.get("side_effects_possible", False))
    return None, False


def tool_message_view(message: Message) -> dict[str, Any]:
    """The Observation view of one tool message."""
    kind, side_effects = (
        _error_fields(message.content) if message.status == "error" else (None, False)
    )
    return {
        "id": message.tool_call_id,
        "name": message.name,
        "status": message.status,
        "error_kind": kind,
        "side_effects_possible": side_effects,
        "content": message.content,
    }


def observe(result: RunResult | Observation) -> Observation:
    """The Observation of a RunResult (an Observation is returned as it is)."""
    if isinstance(result, Observation):
        return result
    tool_messages = tuple(tool_message_view(m) for m in result.messages if m.role == "tool")
    emitted = "\n".join(
        [
            result.trace.to_jsonl(),
            *(m["content"] for m in tool_messages),
            result.output or "",
            json.dumps(result.to_dict(), ensure_ascii=False),
        ]
    )
    issued = tuple(c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls)
    return Observation(
        harness=result.harness,
        stop_reason=result.stop_reason,
        output=result.output,
        trajectory=tuple(result.trajectory()),
        tool_messages=tool_messages,
        trace_types=tuple(e["type"] for e in result.trace.events),
        emitted=emitted,
        issued_ids=issued,
    )


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One failed expectation."""

    boundary: str
    """Key of :data:`BOUNDARIES`."""
    message: str
    """What was expected and what was observed."""


Check = Callable[[Observation, FakeModel, Probe], list[Problem]]


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scripted situation and its expected outcome on every harness."""

    name: str
    """Stable id, used in test ids and reports."""
    boundary: str
    """The main boundary it exercises (a key of :data:`BOUNDARIES`)."""
    description: str
    script: tuple[Reply, ...]
    """The FakeModel script."""
    tools: Callable[[Probe], list[ToolSpec]]
    """Builds fresh tools around a probe."""
    stop_reason: str
    """Expected stop reason."""
    trajectory: tuple[str, ...] = ()
    """Expected tool names, in issue order."""
    results: tuple[tuple[str, str | None], ...] = ()
    """Expected ``(status, error_kind)`` per tool message, in issue order."""
    output_contains: tuple[str, ...] = ()
    """Substrings of the answer."""
    must_not_run: tuple[str, ...] = ()
    """Tools whose handlers must never run."""
    user: str = "please help"
    budget: Budget = field(default_factory=lambda: Budget(deadline_seconds=30.0))
    allowlist: tuple[str, ...] | None = None
    history: tuple[Message, ...] = ()
    extra: tuple[Check, ...] = ()
    """Scenario-specific checks."""
    requires: tuple[str, ...] = ()
    """Capabilities a harness must have (e.g. ``"write_tools"``, ``"timeouts"``); others
    skip it. A :class:`~agent_contract.suite.ContractSuite` declares each capability as a
    boolean ``has_<capability>`` or ``supports_<capability>`` class attribute."""

    decisions: tuple[str | tuple[str, dict[str, Any]], ...] = ()
    """The scripted human's decisions on approvals (see :class:`Decider`)."""

    def options(self, probe: Probe | None = None) -> RunOptions:
        """The harness options for this scenario (a decider needs the run's probe)."""
        decider = Decider(self.decisions, probe) if self.decisions and probe else None
        return RunOptions(
            user=self.user,
            budget=self.budget,
            allowlist=self.allowlist,
            history=self.history,
            decider=decider,
        )


def evaluate(scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """Every way ``obs`` breaks the scenario's expectations, tagged by boundary."""
    problems: list[Problem] = []

    def fail(boundary: str, message: str) -> None:
        problems.append(Problem(boundary=boundary, message=message))

    if obs.stop_reason != scenario.stop_reason:
        fail(
            scenario.boundary, f"stop_reason {obs.stop_reason!r}, expected {scenario.stop_reason!r}"
        )
    if scenario.stop_reason != "answered" and obs.output is not None:
        fail(scenario.boundary, f"a {scenario.stop_reason} stop produced an answer {obs.output!r}")
    if obs.trajectory != scenario.trajectory:
        fail(
            scenario.boundary,
            f"trajectory {list(obs.trajectory)}, expected {list(scenario.trajectory)}",
        )
    seen = tuple((m["status"], m["error_kind"]) for m in obs.tool_messages)
    if seen != scenario.results:
        fail(scenario.boundary, f"tool messages {list(seen)}, expected {list(scenario.results)}")
    for text in scenario.output_contains:
        if text not in (obs.output or ""):
            fail(scenario.boundary, f"answer lacks {text!r}: {obs.output!r}")
    for name in scenario.must_not_run:
        if probe.ran(name):
            fail(scenario.boundary, f"tool {name!r} ran {probe.ran(name)} time(s); it must not run")
    # Call-ID binding: one message per issued id, in issue order.
    issued = [i for i in obs.issued_ids if i]
    answered = [m["id"] for m in obs.tool_messages]
    unique_issued = list(dict.fromkeys(issued))
    paused_or_invalid = scenario.stop_reason in ("invalid_response", "pending_approval")
    if answered != unique_issued and not paused_or_invalid:
        fail("call_id_binding", f"tool messages answer {answered}, calls issued {unique_issued}")
    if len(answered) != len(set(answered)):
        fail("call_id_binding", f"an id is answered more than once: {answered}")
    # Trace and redaction.
    if not obs.trace_types or obs.trace_types[0] != "run_started" or obs.trace_types[-1] != "stop":
        fail("trace_redaction", f"no complete trace (events: {list(obs.trace_types)[:3]}...)")
    if PLANTED_SECRET in obs.emitted:
        fail("trace_redaction", "the planted secret appears in what the run emitted")
    for check in scenario.extra:
        problems.extend(check(obs, model, probe))
    return problems


# -- tools used by the scenarios --------------------------------------------------------

_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _text_tool(
    name: str, description: str, reply: Callable[[str], Any], **limits: Any
) -> Callable[[Probe], ToolSpec]:
    """A factory of a one-argument (``text``) tool that notes each call on the probe."""

    def make(probe: Probe) -> ToolSpec:
        def handler(text: str) -> Any:
            probe.record(name, {"text": text})
            return reply(text)

        return ToolSpec(
            name=name, description=description, parameters=_TEXT, handler=handler, **limits
        )

    return make


def _explode(text: str) -> str:
    raise RuntimeError(f"database password is {PLANTED_SECRET}; traceback follows")


_echo = _text_tool("echo", "Echo the text back.", lambda text: f"echo: {text}")
_raiser = _text_tool("explode", "A tool that fails.", _explode)
_big = _text_tool("big", "Returns a lot.", lambda text: "x" * 5_000, max_result_chars=500)
_secret_result = _text_tool(
    "credentials", "Returns credentials.", lambda text: {"user": text, "token": PLANTED_SECRET}
)


def _lookup(probe: Probe) -> ToolSpec:
    def handler(city: str, days: int) -> dict[str, Any]:
        probe.record("forecast", {"city": city, "days": days})
        return {"city": city, "days": days, "summary": "sunny"}

    return ToolSpec(
        name="forecast",
        description="Weather forecast for a city.",
        parameters={
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 2},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "days"],
        },
        handler=handler,
    )


def _slow(probe: Probe) -> ToolSpec:
    def handler(text: str, delay: float) -> str:
        time.sleep(delay)
        probe.record("slow_echo", {"text": text})
        return f"slow: {text}"

    return ToolSpec(
        name="slow_echo",
        description="Echo after a delay (seconds).",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}, "delay": {"type": "number", "minimum": 0}},
            "required": ["text", "delay"],
        },
        handler=handler,
        timeout_seconds=5.0,
    )


def _hang(probe: Probe) -> ToolSpec:
    def handler(text: str) -> str:
        time.sleep(0.6)
        probe.late_writes.append(text)
        return "finished late"

    return ToolSpec(
        name="hang",
        description="A tool that is too slow.",
        parameters=_TEXT,
        handler=handler,
        timeout_seconds=0.15,
    )


def _kind_tool(
    name: str, description: str, kinds: Mapping[str, Any], act: Callable[[str, Any], Any]
) -> Callable[[Probe], ToolSpec]:
    """A factory of a tool taking one ``kind`` (an enum of ``kinds``' keys): it notes the
    call on the probe and returns ``act(kind, kinds[kind])``."""

    def make(probe: Probe) -> ToolSpec:
        def handler(kind: str) -> Any:
            probe.record(name, {"kind": kind})
            return act(kind, kinds[kind])

        return ToolSpec(
            name=name,
            description=description,
            parameters={
                "type": "object",
                "properties": {"kind": {"type": "string", "enum": sorted(kinds)}},
                "required": ["kind"],
            },
            handler=handler,
        )

    return make


def _raise_classified(kind: str, error: Callable[[str], Exception]) -> Any:
    raise error(f"record lookup failed: {kind}")


_classified = _kind_tool(
    "fetch_record",
    "Fetch a record; fails in a classified way.",
    {"unauthorized": UnauthorizedError, "not_found": NotFoundError, "transient": TransientError},
    _raise_classified,
)
_typed = _kind_tool(
    "typed",
    "Returns a value of the requested type.",
    {
        "int": 42,
        "float": 2.5,
        "dict": {"城市": "北京", "ok": True, "none": None},
        "list": [1, "二", {"three": 3}],
        "set": {1, 2},
    },
    lambda kind, value: value,
)


def _transfer(probe: Probe) -> ToolSpec:
    """A write tool over the probe's in-memory ledger, idempotent by the runtime's key."""

    def preview(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.previews += 1
        return {"would_send": amount, "to": to}

    def handler(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.write_calls += 1
        key = context.idempotency_key or ""
        if key not in probe.writes:
            probe.writes[key] = {"to": to, "amount": amount, "caller": context.caller}
        return {"sent": amount, "to": to}

    def verify(context: ToolContext, to: str, amount: int) -> dict[str, Any] | None:
        return probe.writes.get(context.idempotency_key or "")

    return ToolSpec(
        name="transfer",
        description="Send credits to a user (a write: needs approval).",
        parameters={
            "type": "object",
            "properties": {
                "to": {"type": "string", "minLength": 1},
                "amount": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            "required": ["to", "amount"],
        },
        handler=handler,
        effect="write",
        preview=preview,
        verify=verify,
    )


def _check_writes(amounts: Sequence[int], *, previews: int, refusals: int = 0) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        problems = []
        written = sorted(w["amount"] for w in probe.writes.values())
        if written != sorted(amounts):
            problems.append(f"writes applied {written}, expected {sorted(amounts)}")
        if probe.write_calls != len(amounts):
            problems.append(f"the write handler ran {probe.write_calls} times")
        if probe.previews != previews:
            problems.append(f"preview ran {probe.previews} times, expected {previews}")
        if len(probe.refusals) != refusals:
            problems.append(f"{len(probe.refusals)} decisions refused, expected {refusals}")
        return [Problem(boundary="write_approval", message=m) for m in problems]

    return check


def _basic(probe: Probe) -> list[ToolSpec]:
    return [_echo(probe), _lookup(probe)]


def _with(*makers: Callable[[Probe], ToolSpec]) -> Callable[[Probe], list[ToolSpec]]:
    return lambda probe: [_echo(probe), *(make(probe) for make in makers)]


# -- scenario-specific checks ------------------------------------------------------------


def _check_offered(expected: set[str]) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if not model.calls:
            return [Problem(boundary="allowlist", message="the model was never called")]
        tools = model.calls[0]["tools"] or []
        offered = {t["function"]["name"] for t in tools}
        if offered != expected:
            return [
                Problem(
                    boundary="allowlist",
                    message=f"offered {sorted(offered)}, expected {sorted(expected)}",
                )
            ]
        return []

    return check


def _check_history(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    if not model.calls:
        return [Problem(boundary="history", message="the model was never called")]
    sent = [(m.role, m.content) for m in model.calls[0]["messages"] if m.role != "system"]
    wanted = [
        ("user", "what is 2+2?"),
        ("assistant", "4"),
        ("user", "and in words?"),
    ]
    if sent != wanted:
        return [Problem(boundary="history", message=f"sent {sent}, expected {wanted}")]
    return []


def _check_timeout(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    timeouts = [m for m in obs.tool_messages if m["error_kind"] == "timeout"]
    if not timeouts or not all(m["side_effects_possible"] for m in timeouts):
        return [
            Problem(boundary="timeouts", message="a timeout did not report side_effects_possible")
        ]
    return []


def _check_truncated(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
    if len(content) > 500 or "[truncated" not in content:
        return [
            Problem(boundary="result_size", message=f"result of {len(content)} chars, no marker")
        ]
    return []


def _check_contents(expected: Sequence[str]) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        got = [m["content"] for m in obs.tool_messages]
        if got[: len(expected)] != list(expected):
            return [
                Problem(
                    boundary="serialization", message=f"contents {got}, expected {list(expected)}"
                )
            ]
        return []

    return check


def _check_hidden_text(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    text = " ".join(m["content"] for m in obs.tool_messages)
    if "traceback" in text.lower() or "database password" in text:
        return [Problem(boundary="tool_errors", message="exception text reached the model")]
    return []


def _check_ran(name: str, times: int, boundary: str) -> Check:
    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if probe.ran(name) != times:
            message = f"{name} ran {probe.ran(name)} times, expected {times}"
            return [Problem(boundary=boundary, message=message)]
        return []

    return check


def _loop_forever() -> tuple[Reply, ...]:
    return tuple(tool_call("echo", {"text": f"step {i}"}) for i in range(1, 8))


_SECRET_ARGS = {"text": f"my key is {PLANTED_SECRET}"}


def build_scenarios() -> list[Scenario]:
    """All scenarios, in a stable order."""
    return [
        Scenario(
            name="direct_answer",
            boundary="response_shape",
            description="a plain text reply is the answer; no tool runs",
            script=("Tool calling lets a model ask the runtime to act.",),
            tools=_basic,
            stop_reason="answered",
            output_contains=("Tool calling",),
            must_not_run=("echo", "forecast"),
        ),
        Scenario(
            name="single_tool_call",
            boundary="call_id_binding",
            description="one call, its result bound to its id, then an answer",
            script=(tool_call("echo", _SECRET_ARGS, id="call_a"), "done"),
            tools=_basic,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None),),
            output_contains=("done",),
        ),
        Scenario(
            name="parallel_calls_issue_order",
            boundary="call_id_binding",
            description="two calls at once; the first is slowest; results come back in issue order",
            script=(
                tool_calls(
                    ("slow_echo", {"text": "first", "delay": 0.15}, "call_first"),
                    ("slow_echo", {"text": "second", "delay": 0.0}, "call_second"),
                ),
                "both done",
            ),
            tools=_with(_slow),
            stop_reason="answered",
            trajectory=("slow_echo", "slow_echo"),
            results=(("success", None), ("success", None)),
            extra=(_check_contents(["slow: first", "slow: second"]),),
        ),
        Scenario(
            name="unknown_tool",
            boundary="allowlist",
            description="a call to a tool nobody registered gets unknown_tool",
            script=(tool_call("delete_everything", {"text": "now"}), "could not do it"),
            tools=_basic,
            stop_reason="answered",
            trajectory=("delete_everything",),
            results=(("error", "unknown_tool"),),
        ),
        Scenario(
            name="outside_allowlist",
            boundary="allowlist",
            description="a registered tool outside the run's allowlist is neither offered nor run",
            script=(tool_call("forecast", {"city": "Oslo", "days": 2}), "not allowed"),
            tools=_basic,
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "not_allowed"),),
            must_not_run=("forecast",),
            extra=(_check_offered({"echo"}),),
        ),
        *[
            Scenario(
                name=f"invalid_arguments_{label}",
                boundary="argument_validation",
                description=f"arguments with {label.replace('_', ' ')} are refused before running",
                script=(tool_call("forecast", args), "bad arguments"),
                tools=_basic,
                stop_reason="answered",
                trajectory=("forecast",),
                results=(("error", "invalid_arguments"),),
                must_not_run=("forecast",),
            )
            for label, args in (
                ("missing_field", {"city": "Oslo"}),
                ("wrong_type", {"city": "Oslo", "days": "two"}),
                ("extra_property", {"city": "Oslo", "days": 2, "units": "metric"}),
                ("failed_constraint", {"city": "Oslo", "days": 30}),
            )
        ],
        Scenario(
            name="malformed_json_arguments",
            boundary="response_shape",
            description="arguments that are not parseable JSON are a contract violation",
            script=(tool_call("echo", '{"text": "unterminated', id="call_bad"),),
            tools=_basic,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="arguments_not_object",
            boundary="response_shape",
            description="arguments that are a JSON list are a contract violation",
            script=(tool_call("echo", ["a", "b"], id="call_list"),),
            tools=_basic,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="missing_call_id",
            boundary="response_shape",
            description="a call without an id cannot be answered: the run stops, nothing runs",
            script=(tool_call("echo", {"text": "hi"}, id=None),),
            tools=_basic,
            stop_reason="invalid_response",
            trajectory=("echo",),
            must_not_run=("echo",),
        ),
        Scenario(
            name="duplicate_call_ids",
            boundary="response_shape",
            description="two calls sharing one id are a contract violation",
            script=(
                tool_calls(
                    ("echo", {"text": "one"}, "call_dup"), ("echo", {"text": "two"}, "call_dup")
                ),
            ),
            tools=_basic,
            stop_reason="invalid_response",
            trajectory=("echo", "echo"),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="empty_response",
            boundary="response_shape",
            description="a reply with neither text nor calls is never an answer",
            script=(Completion(text=""),),
            tools=_basic,
            stop_reason="invalid_response",
        ),
        Scenario(
            name="text_and_tool_calls",
            boundary="response_shape",
            description="a reply with both text and calls is a contract violation",
            script=(
                Completion(
                    text="Sure, running it.",
                    tool_calls=(ToolCall(id="call_both", name="echo", arguments={"text": "x"}),),
                ),
            ),
            tools=_basic,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="tool_raises",
            boundary="tool_errors",
            description="an exception becomes tool_error; its text (with a secret) stays hidden",
            script=(tool_call("explode", {"text": "go"}), "it failed"),
            tools=_with(_raiser),
            stop_reason="answered",
            trajectory=("explode",),
            results=(("error", "tool_error"),),
            extra=(_check_hidden_text,),
        ),
        *[
            Scenario(
                name=f"classified_{kind}",
                boundary="tool_errors",
                description=f"a tool's own {kind} error keeps its kind",
                script=(tool_call("fetch_record", {"kind": kind}), "handled"),
                tools=_with(_classified),
                stop_reason="answered",
                trajectory=("fetch_record",),
                results=(("error", kind),),
            )
            for kind in ("unauthorized", "not_found", "transient")
        ],
        Scenario(
            name="tool_timeout",
            boundary="timeouts",
            description="a tool past its timeout: outcome unknown, side effects possible",
            script=(tool_call("hang", {"text": "slow"}), "timed out"),
            tools=_with(_hang),
            stop_reason="answered",
            trajectory=("hang",),
            results=(("error", "timeout"),),
            extra=(_check_timeout,),
            requires=("timeouts",),
        ),
        Scenario(
            name="oversized_result",
            boundary="result_size",
            description="a 5000-char result is cut to 500 chars with a marker",
            script=(tool_call("big", {"text": "all"}), "truncated"),
            tools=_with(_big),
            stop_reason="answered",
            trajectory=("big",),
            results=(("success", None),),
            extra=(_check_truncated,),
        ),
        Scenario(
            name="non_string_results",
            boundary="serialization",
            description="numbers, dicts and lists reach the model as JSON; a set is an error",
            script=(
                tool_calls(
                    ("typed", {"kind": "int"}, "call_int"),
                    ("typed", {"kind": "float"}, "call_float"),
                    ("typed", {"kind": "dict"}, "call_dict"),
                    ("typed", {"kind": "list"}, "call_list"),
                    ("typed", {"kind": "set"}, "call_set"),
                ),
                "typed",
            ),
            tools=_with(_typed),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=8),
            stop_reason="answered",
            trajectory=("typed",) * 5,
            results=(("success", None),) * 4 + (("error", "tool_error"),),
            extra=(
                _check_contents(
                    [
                        "42",
                        "2.5",
                        '{"城市": "北京", "ok": true, "none": null}',
                        '[1, "二", {"three": 3}]',
                    ]
                ),
            ),
        ),
        Scenario(
            name="non_ascii",
            boundary="serialization",
            description="non-ASCII arguments and results pass through unchanged",
            script=(tool_call("echo", {"text": "你好, café ☕"}), "好的"),
            tools=_basic,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None),),
            output_contains=("好的",),
            extra=(_check_contents(["echo: 你好, café ☕"]),),
        ),
        Scenario(
            name="step_budget",
            boundary="model_step_budget",
            description="a model that keeps calling tools stops at max_model_steps, unanswered",
            script=_loop_forever(),
            tools=_basic,
            budget=Budget(deadline_seconds=30.0, max_model_steps=3, max_tool_calls=10),
            stop_reason="max_model_steps",
            trajectory=("echo",) * 3,
            results=(("success", None),) * 3,
        ),
        Scenario(
            name="tool_call_budget_parallel_batch",
            boundary="tool_call_budget",
            description="a batch of 3 under a budget of 2 is refused whole, before any runs",
            script=(
                tool_calls(
                    ("echo", {"text": "a"}), ("echo", {"text": "b"}), ("echo", {"text": "c"})
                ),
            ),
            tools=_basic,
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            stop_reason="max_tool_calls",
            trajectory=("echo",) * 3,
            results=(("error", "budget_exceeded"),) * 3,
            must_not_run=("echo",),
        ),
        Scenario(
            name="repeated_identical_calls",
            boundary="repeated_calls",
            description="the same call (arguments in another key order) a third time is refused",
            script=(
                tool_call("forecast", {"city": "Oslo", "days": 2}),
                tool_call("forecast", {"days": 2, "city": "Oslo"}),
                tool_call("forecast", {"city": "Oslo", "days": 2}),
            ),
            tools=_basic,
            budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
            stop_reason="repeated_call",
            trajectory=("forecast",) * 3,
            results=(("success", None), ("success", None), ("error", "repeated_call")),
            extra=(_check_ran("forecast", 2, "repeated_calls"),),
        ),
        Scenario(
            name="history_replayed",
            boundary="history",
            description="earlier turns reach the model before the new one, in order",
            script=("four",),
            tools=_basic,
            user="and in words?",
            history=(
                Message(role="user", content="what is 2+2?"),
                Message(role="assistant", content="4"),
            ),
            stop_reason="answered",
            output_contains=("four",),
            extra=(_check_history,),
        ),
        Scenario(
            name="tool_schemas_offered",
            boundary="allowlist",
            description="the model is offered exactly the allowlisted tools, with their schemas",
            script=("nothing to do",),
            tools=_basic,
            stop_reason="answered",
            extra=(_check_offered({"echo", "forecast"}),),
        ),
        Scenario(
            name="secret_in_result",
            boundary="trace_redaction",
            description="a secret a tool returns is redacted before the model or trace sees it",
            script=(tool_call("credentials", {"text": "alice"}), "got them"),
            tools=_with(_secret_result),
            stop_reason="answered",
            trajectory=("credentials",),
            results=(("success", None),),
        ),
    ]


def build_approval_scenarios() -> list[Scenario]:
    """Scenarios for write tools (capability ``write_tools``)."""
    send = {"to": "bob", "amount": 10}
    return [
        Scenario(
            name="write_waits_for_approval",
            boundary="write_approval",
            description="a write call pauses the run; nothing is written without a decision",
            script=(tool_call("transfer", send),),
            tools=_with(_transfer),
            stop_reason="pending_approval",
            trajectory=(),
            must_not_run=(),
            requires=("write_tools",),
            extra=(_check_writes([], previews=1),),
        ),
        Scenario(
            name="write_approved",
            boundary="write_approval",
            description="an approved write runs once and is verified",
            script=(tool_call("transfer", send), "sent"),
            tools=_with(_transfer),
            decisions=("approve",),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("success", None),),
            requires=("write_tools",),
            extra=(_check_writes([10], previews=1),),
        ),
        Scenario(
            name="write_rejected",
            boundary="write_approval",
            description="a rejected write never runs and gets a bound rejection",
            script=(tool_call("transfer", send), "not sent"),
            tools=_with(_transfer),
            decisions=("reject",),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("error", "rejected"),),
            requires=("write_tools",),
            extra=(_check_writes([], previews=1),),
        ),
        Scenario(
            name="write_edited",
            boundary="write_approval",
            description="an edited write is previewed again, then runs once with the edit",
            script=(tool_call("transfer", send), "sent less"),
            tools=_with(_transfer),
            decisions=(("edit", {"to": "bob", "amount": 5}),),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("success", None),),
            requires=("write_tools",),
            extra=(_check_writes([5], previews=2),),
        ),
        Scenario(
            name="approval_replay_refused",
            boundary="write_approval",
            description="an approval issued for other arguments is refused; nothing runs",
            script=(tool_call("transfer", send), "not sent"),
            tools=_with(_transfer),
            decisions=("replay", "reject"),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("error", "rejected"),),
            requires=("write_tools",),
            extra=(_check_writes([], previews=1, refusals=1),),
        ),
        Scenario(
            name="write_budget_across_resumes",
            boundary="write_approval",
            description="the tool-call budget counts across resumes (LangChain's counters reset)",
            script=(
                tool_call("transfer", {"to": "bob", "amount": 1}),
                tool_call("transfer", {"to": "bob", "amount": 2}),
                tool_call("transfer", {"to": "bob", "amount": 3}),
            ),
            tools=_with(_transfer),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            decisions=("approve", "approve", "approve"),
            stop_reason="max_tool_calls",
            trajectory=("transfer",) * 3,
            results=(("success", None), ("success", None), ("error", "budget_exceeded")),
            requires=("write_tools",),
            extra=(_check_writes([1, 2], previews=2),),
        ),
    ]


SCENARIOS: Final[tuple[Scenario, ...]] = tuple(build_scenarios() + build_approval_scenarios())
"""Every scenario, by stable name order of definition."""


def scenario(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        KeyError: no such scenario.
    """
    for item in SCENARIOS:
        if item.name == name:
            return item
    raise KeyError(name)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One scenario run on one harness."""

    scenario: Scenario
    harness: str
    observation: Observation
    problems: tuple[Problem, ...]

    @property
    def holds(self) -> bool:
        """True when no expectation failed."""
        return not self.problems


def run_scenario(scenario: Scenario, harness: Harness, harness_name: str) -> Outcome:
    """Run ``scenario`` on ``harness`` and evaluate it.

    Any exception the harness raises (``ScriptExhaustedError`` included: looping past
    the script breaks the step boundary) yields an observation with stop reason
    ``crashed:<ExceptionType>``, which breaks the scenario's boundary.
    """
    probe = Probe()
    model = FakeModel(scenario.script)
    tools = scenario.tools(probe)
    try:
        obs = observe(harness(model, tools, scenario.options(probe)))
    except Exception as exc:  # noqa: BLE001 - a crash is an observation, not a suite error
        obs = Observation(
            harness=harness_name,
            stop_reason=f"crashed:{type(exc).__name__}",
            output=None,
            trajectory=(),
            tool_messages=(),
            trace_types=(),
            emitted=str(exc),
        )
    return Outcome(
        scenario=scenario,
        harness=harness_name,
        observation=obs,
        problems=tuple(evaluate(scenario, obs, model, probe)),
    )


CONTROL_HARNESS: Final = "plain-create-agent"
"""The negative control: a bare ``create_agent`` expected to break most boundaries."""

LANGCHAIN_MODES: Final[dict[str, str]] = {
    "langchain": "invoke",
    "langchain-async": "ainvoke",
    "langchain-stream": "stream",
}
"""The LangChain harnesses and the way each drives the graph."""

HARNESS_NAMES: Final[tuple[str, ...]] = ("offline", *LANGCHAIN_MODES, CONTROL_HARNESS)
"""Built-in harnesses. ``plain-create-agent`` is the negative control: a bare
``create_agent`` expected to break most boundaries."""


def load_harness(name: str) -> Harness:
    """A harness by name: one of :data:`HARNESS_NAMES`, or ``"module:attribute"`` naming a
    harness (a callable taking ``(model, tools, options)``) or a zero-argument factory
    returning one, in an importable module.

    Raises:
        DependencyMissingError: a LangChain harness without the binding installed.
        ConfigurationError: an unknown name, or an attribute that is not callable.
    """
    if name == "offline":
        return offline_harness
    if name == CONTROL_HARNESS:
        baseline = load_binding("agent_contract_langchain.baseline")
        return cast(Harness, baseline.plain_create_agent_harness)
    if name in LANGCHAIN_MODES:
        harness_module = load_binding("agent_contract_langchain.harness")
        return cast(Harness, harness_module.suite_harness(LANGCHAIN_MODES[name]))
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(
            f"unknown harness {name!r}; use one of {', '.join(HARNESS_NAMES)} or module:factory"
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


def offline_harness(model: Model, tools: list[ToolSpec], options: RunOptions) -> RunResult:
    """The offline loop as a suite harness."""
    contract = options.contract(tools)
    result = run(model, contract, options.user, history=options.history, caller=options.caller)
    return settle_approvals(
        result, lambda snapshot, approvals: resume(model, contract, snapshot, approvals), options
    )
