"""What the scenarios run with: the planted secret, a probe that sees what tools did,
the scripted human who answers approvals, and the scenarios' tools.

Every tool factory takes the run's :class:`Probe` and returns a fresh
:class:`~agent_contract.tools.ToolSpec` whose handler notes each call on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from ..approval import Approval, PendingApproval, approval_token
from ..errors import ApprovalError
from ..faults import CrashPlan
from ..messages import Message, ToolCall
from ..tampering import TamperPlan
from ..testing import FakeModel
from ..tools import ToolContext, ToolSpec
from ..trace import RedactionPolicy

__all__ = [
    "EARLIER_QUESTION",
    "PLANTED_PASSWORD",
    "PLANTED_SECRET",
    "PLANTED_SHOWN",
    "TEXT_SCHEMA",
    "Probe",
    "ScriptedDecider",
    "ToolFactory",
    "basic_tools",
    "earlier_call",
    "earlier_result",
    "echo_tool",
    "forecast_tool",
    "hide_planted",
    "kind_tool",
    "required_object",
    "text_tool",
    "tools_with",
    "transfer_tool",
]

PLANTED_SECRET: Final = "sk-planted-7f3a9c1e5b2d4a6f8e0c"
"""A secret every scenario hands to the run; it must never be emitted."""


PLANTED_PASSWORD: Final = "hunter2"
"""The password in the exception text ``check --agent``'s probes make a tool raise."""
PLANTED_SHOWN: Final = "<planted secret>"
"""What evidence shows in place of a planted value."""
_EVIDENCE_REDACTION: Final = RedactionPolicy()


def hide_planted(text: str) -> str:
    """``text`` as every report quotes evidence (``check``, ``check --agent``, ``check
    --harness``, the progress lines, JUnit): the planted values (:data:`PLANTED_SECRET`,
    :data:`PLANTED_PASSWORD`) shown as :data:`PLANTED_SHOWN`, and what the default
    redaction hides (secret shapes, a secret key's value such as ``token=...`` in a
    harness's exception text) redacted."""
    for planted in (PLANTED_SECRET, PLANTED_PASSWORD):
        text = text.replace(planted, PLANTED_SHOWN)
    return _EVIDENCE_REDACTION.redact(text)


class Probe:
    """Records what tool handlers saw, across threads."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.contexts: list[tuple[str, ToolContext]] = []
        """``(tool name, the ToolContext its handler got)`` per run of a context-aware
        handler that handed it to :meth:`record`."""
        self.pending: list[PendingApproval] = []
        """Every pending approval the scripted human was shown, in order."""
        self.write_runs: list[tuple[ToolContext, dict[str, Any]]] = []
        """``(context, arguments)`` per run of the write handler."""
        self.counted: set[str] = set()
        """Read tools whose every handler run :meth:`record` notes with its context, so
        runs are counted per ``tool_call_id`` (:meth:`runs_by_call`)."""
        self.coroutines: dict[str, str] = {}
        """``tool name -> running | cancelled | returned | raised``: where an ``async
        def`` handler's coroutine is (:meth:`coroutine`), so a check sees whether a
        timed-out tool really stopped, not only what was reported."""
        self.late_writes: list[str] = []
        self.writes: dict[str, dict[str, Any]] = {}
        self.secret_reads: list[tuple[str, str]] = []
        """``(where, outcome)`` of each ``context.secret(...)`` a suite tool asked:
        ``where`` is the tool (``tool:preview`` for a preview), ``outcome`` is
        ``"value"`` (the run's value), ``"other value"``, or the refusal's message."""
        self.write_calls = 0
        self.previews = 0
        self.refusals: list[str] = []
        self.crash: CrashPlan | None = None
        """The scenario's crash plan, if it asks the harness to crash and restart."""
        self.tamper: TamperPlan | None = None
        """The scenario's tamper plan, if it asks the harness to reopen a tampered store."""
        self.child_model: FakeModel | None = None
        """The scenario's child agent's model, if its top agent delegates to one."""
        self.lock = threading.Lock()
        """Held while a list or count of the probe changes (handlers run on threads)."""

    def record(
        self, name: str, arguments: Mapping[str, Any], context: ToolContext | None = None
    ) -> None:
        """Note that ``name`` ran with ``arguments`` (and, for a context-aware handler,
        the ``context`` it got)."""
        with self.lock:
            self.calls.append((name, dict(arguments)))
            if context is not None:
                self.contexts.append((name, context))

    def ran(self, name: str) -> int:
        """How often ``name`` ran."""
        with self.lock:
            return sum(1 for n, _ in self.calls if n == name)

    def runs_by_call(self, names: Iterable[str]) -> dict[str, int]:
        """How often the handlers of ``names`` ran, per ``tool_call_id`` their contexts
        named (``{}`` when none ran)."""
        wanted = set(names)
        counts: dict[str, int] = {}
        with self.lock:
            for name, context in self.contexts:
                if name in wanted:
                    counts[context.tool_call_id] = counts.get(context.tool_call_id, 0) + 1
        return counts

    @contextlib.contextmanager
    def coroutine(self, name: str) -> Iterator[None]:
        """Around an ``async def`` handler's body: notes its coroutine ``running`` until
        it stops, then ``cancelled`` (a cancellation ended it), ``raised`` or
        ``returned``."""
        with self.lock:
            self.coroutines[name] = "running"
        end = "raised"
        try:
            yield
            end = "returned"
        except asyncio.CancelledError:
            end = "cancelled"
            raise
        finally:
            with self.lock:
                self.coroutines[name] = end


class ScriptedDecider:
    """A scripted human (a :class:`~agent_contract.harnesses.Decider`): answers pending
    approvals one decision at a time.

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
        self._probe.pending.extend(pending)
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


ToolFactory = Callable[[Probe], ToolSpec]
"""Builds a fresh tool around a run's probe."""

# -- the scenarios' tools --------------------------------------------------------------


def required_object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an object with these ``properties`` (name -> schema), every
    one of them required, in their order."""
    return {"type": "object", "properties": dict(properties), "required": list(properties)}


TEXT_SCHEMA: Final = required_object({"text": {"type": "string"}})
"""The parameters of a tool taking one required string, ``text``."""


def text_tool(
    name: str, description: str, reply: Callable[[str], Any], **limits: Any
) -> ToolFactory:
    """A factory of a one-argument (``text``) tool that notes each call, with its
    context, on the probe (its runs are counted per call: ``probe.counted``)."""

    def make(probe: Probe) -> ToolSpec:
        probe.counted.add(name)

        def handler(context: ToolContext, text: str) -> Any:
            probe.record(name, {"text": text}, context)
            return reply(text)

        return ToolSpec(
            name=name,
            description=description,
            parameters=TEXT_SCHEMA,
            handler=handler,
            needs_context=True,
            **limits,
        )

    return make


echo_tool: Final = text_tool("echo", "Echo the text back.", lambda text: f"echo: {text}")
"""``echo(text)``: returns ``echo: <text>``."""


def forecast_tool(probe: Probe) -> ToolSpec:
    """``forecast(city, days)``: a read tool with a constrained schema (its runs are
    counted per call)."""
    probe.counted.add("forecast")

    def handler(context: ToolContext, city: str, days: int) -> dict[str, Any]:
        probe.record("forecast", {"city": city, "days": days}, context)
        return {"city": city, "days": days, "summary": "sunny"}

    return ToolSpec(
        name="forecast",
        description="Weather forecast for a city.",
        parameters=required_object(
            {
                "city": {"type": "string", "minLength": 2},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            }
        ),
        handler=handler,
        needs_context=True,
    )


def kind_tool(
    name: str, description: str, kinds: Mapping[str, Any], act: Callable[[str, Any], Any]
) -> ToolFactory:
    """A factory of a tool taking one ``kind`` (an enum of ``kinds``' keys): it notes the
    call, with its context, on the probe and returns ``act(kind, kinds[kind])``."""

    def make(probe: Probe) -> ToolSpec:
        probe.counted.add(name)

        def handler(context: ToolContext, kind: str) -> Any:
            probe.record(name, {"kind": kind}, context)
            return act(kind, kinds[kind])

        return ToolSpec(
            name=name,
            description=description,
            parameters=required_object({"kind": {"type": "string", "enum": sorted(kinds)}}),
            handler=handler,
            needs_context=True,
        )

    return make


def transfer_tool(probe: Probe) -> ToolSpec:
    """``transfer(to, amount)``: a write tool over the probe's in-memory ledger,
    idempotent by the runtime's key; its preview names the caller (``requested_by``)
    and each write notes the caller it ran for (and, on the probe, its context:
    ``probe.write_runs``)."""

    def preview(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.previews += 1
        return {"would_send": amount, "to": to, "requested_by": context.caller}

    def handler(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.write_calls += 1
        with probe.lock:
            probe.write_runs.append((context, {"to": to, "amount": amount}))
        key = context.idempotency_key or ""
        if key not in probe.writes:
            probe.writes[key] = {"to": to, "amount": amount, "caller": context.caller}
        return {"sent": amount, "to": to}

    def verify(context: ToolContext, to: str, amount: int) -> dict[str, Any] | None:
        return probe.writes.get(context.idempotency_key or "")

    return ToolSpec(
        name="transfer",
        description="Send credits to a user (a write: needs approval).",
        parameters=required_object(
            {
                "to": {"type": "string", "minLength": 1},
                "amount": {"type": "integer", "minimum": 1, "maximum": 1000},
            }
        ),
        handler=handler,
        effect="write",
        preview=preview,
        verify=verify,
    )


def basic_tools(probe: Probe) -> list[ToolSpec]:
    """``echo`` and ``forecast``: the tools most scenarios offer."""
    return [echo_tool(probe), forecast_tool(probe)]


def tools_with(*makers: ToolFactory) -> Callable[[Probe], list[ToolSpec]]:
    """``echo`` plus the tools ``makers`` build."""
    return lambda probe: [echo_tool(probe), *(make(probe) for make in makers)]


# -- earlier turns of a history --------------------------------------------------------

EARLIER_QUESTION: Final = Message(role="user", content="echo a")
"""The user turn a history starts with, before :func:`earlier_call`."""


def earlier_call(call_id: str, text: str = "a") -> Message:
    """An assistant turn of a history that called ``echo`` with id ``call_id``."""
    return Message(
        role="assistant", tool_calls=(ToolCall(id=call_id, name="echo", arguments={"text": text}),)
    )


def earlier_result(call_id: str, text: str = "a") -> Message:
    """The tool message answering :func:`earlier_call`."""
    return Message(
        role="tool", content=f"echo: {text}", tool_call_id=call_id, name="echo", status="success"
    )
