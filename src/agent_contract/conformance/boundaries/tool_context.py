"""The tool-context boundary: what the runtime, never the model, tells a tool reaches it
only as declared. A context-aware tool (``needs_context=True``) gets the run's caller,
the run's application values and its own call's ``tool_call_id``; a write's approval
step (its preview, the pending approval the human sees, the write itself) acts for the
run's caller; a tool that declared no context gets none; and a secret handed in the
run's values (and declared a secret) reaches the tool but never the trace or the tool
message the model reads.

The core has no secret *handles*: values travel as they are in
:attr:`~agent_contract.tools.ToolContext.values`, and what keeps them out of the trace
and the model's view is the run's redaction (``RunInput.secrets``).
"""

from __future__ import annotations

from typing import Any, Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ...tools import ToolContext, ToolSpec
from ..base import SUITE_CALLER, Boundary, BoundaryDefinition, Problem, call_then_answer
from ..checks import check_not_emitted, check_writes
from ..fixtures import PLANTED_SECRET, TEXT_SCHEMA, Probe, tools_with, transfer_tool

__all__ = ["DEFINITION", "check_context_of", "plain_tool", "vault_tool", "whoami_tool"]

_VALUES: Final = {"api_key": PLANTED_SECRET, "region": "eu-west"}
"""The application values the values scenario hands to the run."""


def whoami_tool(probe: Probe) -> ToolSpec:
    """``whoami(text)``: a context-aware tool that notes its context on the probe and
    answers with the caller it acts for."""

    probe.counted.add("whoami")

    def handler(context: ToolContext, text: str) -> str:
        probe.record("whoami", {"text": text}, context)
        return f"acting for {context.caller}"

    return ToolSpec(
        name="whoami",
        description="Say whom the run acts for.",
        parameters=TEXT_SCHEMA,
        handler=handler,
        needs_context=True,
    )


def vault_tool(probe: Probe) -> ToolSpec:
    """``vault(text)``: a context-aware tool that reads the run's values ``api_key`` and
    ``region`` and, carelessly, returns the key in its result (the run's redaction must
    keep it from the model and the trace)."""

    probe.counted.add("vault")

    def handler(context: ToolContext, text: str) -> str:
        probe.record("vault", {"text": text}, context)
        values = context.values
        return f"connected to {values['region']} with key {values['api_key']}"

    return ToolSpec(
        name="vault",
        description="Connect to the vault with the run's key.",
        parameters=TEXT_SCHEMA,
        handler=handler,
        needs_context=True,
    )


def plain_tool(probe: Probe) -> ToolSpec:
    """``plain(text)``: a tool that declared no context; its handler takes anything, so
    a context handed to it anyway is noted (``probe.contexts``)."""

    def handler(*args: Any, **arguments: Any) -> str:
        probe.record("plain", arguments)
        for value in (*args, *arguments.values()):
            if isinstance(value, ToolContext):
                probe.contexts.append(("plain", value))
        return f"plain: {arguments.get('text')}"

    return ToolSpec(
        name="plain",
        description="A tool that needs no context.",
        parameters=TEXT_SCHEMA,
        handler=handler,
    )


def _problems(messages: list[str]) -> list[Problem]:
    return [Problem(boundary="tool_context", message=m) for m in messages]


def check_context_of(name: str, call_id: str, values: dict[str, Any] | None = None) -> Any:
    """The tool ``name`` ran once, with a context naming the suite's caller, the call's
    own ``call_id``, a run id, and (when given) exactly these application ``values``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        seen = [c for n, c in probe.contexts if n == name]
        if len(seen) != 1:
            return _problems([f"{name} got a context {len(seen)} times, expected once"])
        context = seen[0]
        problems = []
        if context.caller != SUITE_CALLER:
            problems.append(f"{name} saw caller {context.caller!r}, expected {SUITE_CALLER!r}")
        if context.tool_call_id != call_id:
            problems.append(
                f"{name} saw tool_call_id {context.tool_call_id!r}, expected {call_id!r}"
            )
        if not context.run_id:
            problems.append(f"{name} saw no run id")
        if values is not None and dict(context.values) != values:
            shown = sorted(context.values)
            problems.append(f"{name} saw the values {shown}, expected {sorted(values)}")
        return _problems(problems)

    return check


def _no_context(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The tool that declared no context got none."""
    if any(n == "plain" for n, _ in probe.contexts):
        return _problems(["plain declared no context but its handler got a ToolContext"])
    return []


def _approval_for_caller(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The pending approval the human saw names the caller (its preview's
    ``requested_by``), and the write ran for that caller."""
    problems = []
    previews = [p.preview for p in probe.pending if p.name == "transfer"]
    named = [p.get("requested_by") if isinstance(p, dict) else None for p in previews]
    if named != [SUITE_CALLER]:
        problems.append(
            f"the pending approvals named the callers {named}, expected [{SUITE_CALLER!r}]"
        )
    callers = [w.get("caller") for w in probe.writes.values()]
    if callers != [SUITE_CALLER]:
        problems.append(f"the writes ran for the callers {callers}, expected [{SUITE_CALLER!r}]")
    return _problems(problems)


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="tool_context",
        label="tool context",
        rule=(
            "the caller and application values reach tools and the approval step, only as declared"
        ),
        keep_it=(
            "Start every run with its caller and values (`Contract.start(caller=..., "
            "context=...)`, `RunInput.start`): a `needs_context=True` tool gets them in its "
            "`ToolContext` with its own `tool_call_id`, a write's preview, approval token "
            "and idempotent write act for that caller, a tool without `needs_context` gets "
            "no context; declare secret values in `secrets` so redaction keeps them out."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="tool_sees_the_caller",
            boundary="tool_context",
            description=(
                "a context-aware tool gets the run's caller, a run id and its own call's "
                "tool_call_id"
            ),
            call=tool_call("whoami", {"text": "me"}, id="call_who"),
            answer="you are the tester",
            result=("success", None),
            tools=tools_with(whoami_tool),
            extra=(check_context_of("whoami", "call_who"),),
        ),
        call_then_answer(
            name="approval_names_the_caller",
            boundary="tool_context",
            description=(
                "a write's pending approval (its preview) names the run's caller, and the "
                "approved write runs for that caller"
            ),
            call=tool_call("transfer", {"to": "bob", "amount": 10}, id="call_pay"),
            answer="sent",
            result=("success", None),
            tools=tools_with(transfer_tool),
            decisions=("approve",),
            requires=("write_tools",),
            extra=(_approval_for_caller, check_writes([10], previews=1, boundary="tool_context")),
        ),
        call_then_answer(
            name="undeclared_tool_gets_no_context",
            boundary="tool_context",
            description="a tool that declared no context gets none, only its arguments",
            call=tool_call("plain", {"text": "x"}),
            answer="done",
            result=("success", None),
            tools=tools_with(plain_tool),
            extra=(_no_context,),
        ),
        call_then_answer(
            name="run_values_reach_the_tool_only",
            boundary="tool_context",
            description=(
                "the run's application values reach a context-aware tool; a secret among "
                "them never reaches the trace or the model's tool message"
            ),
            call=tool_call("vault", {"text": "open"}, id="call_vault"),
            answer="connected",
            result=("success", None),
            tools=tools_with(vault_tool),
            context=_VALUES,
            extra=(
                check_context_of("vault", "call_vault", dict(_VALUES)),
                check_not_emitted([PLANTED_SECRET], "tool_context"),
            ),
        ),
    ),
)
"""The tool-context boundary: its row and its scenarios."""
