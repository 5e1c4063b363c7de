"""The tool-context boundary: what the runtime, never the model, tells a tool reaches it
only as declared. A context-aware tool (``needs_context=True``) gets the run's caller,
the run's application values and its own call's ``tool_call_id``; a write's approval
step (its preview, the pending approval the human sees, the write itself) acts for the
run's caller; a tool that declared no context gets none; and a secret handed in the
run's values (and declared a secret) reaches the tool but never the trace or the tool
message the model reads.

Application values travel as they are in :attr:`~agent_contract.tools.ToolContext.values`,
and what keeps a secret among them out of the trace and the model's view is the run's
redaction (``RunInput.secrets``). A *named* secret
(``RunInput.secrets`` as a mapping ``name -> value``) is handed out by the core only to
a tool that declared it (``ToolSpec(secrets=(name,))``, ``context.secret(name)``); every
other tool, and a write's preview (the approval step), sees at most its
:class:`~agent_contract.tools.SecretHandle`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from ...errors import ConfigurationError
from ...harnesses import Observation
from ...testing import FakeModel, tool_call
from ...tools import SecretHandle, ToolContext, ToolSpec
from ..base import SUITE_CALLER, Boundary, BoundaryDefinition, Problem, call_then_answer
from ..checks import check_not_emitted, check_writes
from ..fixtures import (
    PLANTED_SECRET,
    TEXT_SCHEMA,
    Probe,
    tools_with,
    transfer_tool,
)

__all__ = [
    "DEFINITION",
    "check_context_of",
    "keyed_tool",
    "nosy_tool",
    "plain_tool",
    "signed_transfer_tool",
    "vault_tool",
    "whoami_tool",
]

_NAMED: Final = {"api_key": PLANTED_SECRET}
"""The named secrets the secret scenarios hand to the run."""

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


def _read_secret(probe: Probe, where: str, context: ToolContext) -> str | None:
    """Ask ``context`` for the secret ``api_key`` and note the outcome on the probe
    (``probe.secret_reads``); the value, or ``None`` when refused."""
    try:
        value = context.secret("api_key")
    except ConfigurationError as exc:
        with probe.lock:
            probe.secret_reads.append((where, str(exc)))
        return None
    with probe.lock:
        probe.secret_reads.append((where, "value" if value == PLANTED_SECRET else "other value"))
    return value


def keyed_tool(probe: Probe) -> ToolSpec:
    """``keyed(text)``: a tool that declared the secret ``api_key``; it reads the value
    through its context and, carelessly, returns it (redaction must keep it out)."""

    probe.counted.add("keyed")

    def handler(context: ToolContext, text: str) -> str:
        probe.record("keyed", {"text": text}, context)
        return f"signed {text} with {_read_secret(probe, 'keyed', context)}"

    return ToolSpec(
        name="keyed",
        description="Sign a text with the run's API key.",
        parameters=TEXT_SCHEMA,
        handler=handler,
        needs_context=True,
        secrets=("api_key",),
    )


def nosy_tool(probe: Probe) -> ToolSpec:
    """``nosy(text)``: a context-aware tool that declared no secret and asks for
    ``api_key`` anyway (it must be refused, and find the value nowhere in its context)."""

    probe.counted.add("nosy")

    def handler(context: ToolContext, text: str) -> str:
        probe.record("nosy", {"text": text}, context)
        got = _read_secret(probe, "nosy", context)
        return "got a key" if got is not None else "no key for me"

    return ToolSpec(
        name="nosy",
        description="Try to read a secret it never declared.",
        parameters=TEXT_SCHEMA,
        handler=handler,
        needs_context=True,
    )


def signed_transfer_tool(probe: Probe) -> ToolSpec:
    """``signed_transfer(to, amount)``: a write tool that declared ``api_key``; its
    preview shows the key's handle (``signed_with``) and asks for the value (which a preview
    must be refused); the approved write reads the value."""

    def preview(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.previews += 1
        _read_secret(probe, "signed_transfer:preview", context)
        auth = context.secrets.get("api_key")
        return {"would_send": amount, "to": to, "requested_by": context.caller, "signed_with": auth}

    def handler(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        probe.write_calls += 1
        _read_secret(probe, "signed_transfer", context)
        key = context.idempotency_key or ""
        with probe.lock:
            probe.writes.setdefault(key, {"to": to, "amount": amount, "caller": context.caller})
        return {"sent": amount, "to": to}

    return replace(
        transfer_tool(probe),
        name="signed_transfer",
        description="Send credits, signed with the run's API key (a write).",
        handler=handler,
        preview=preview,
        secrets=("api_key",),
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


def _value_in(context: ToolContext) -> list[str]:
    """Where the planted secret's value shows in ``context`` outside :meth:`secret`:
    its repr, its plain values, its handles."""
    places = []
    if PLANTED_SECRET in repr(context):
        places.append("its repr")
    if PLANTED_SECRET in repr(dict(context.values)):
        places.append("its values")
    if PLANTED_SECRET in repr(dict(context.secrets)):
        places.append("its secret handles")
    return places


def _check_secret_reads(expected: dict[str, str]) -> Any:
    """The suite tools' ``context.secret("api_key")`` outcomes are ``expected``
    (``where -> "value"``, or ``where -> "refused"``: a refusal whose message names the
    tool and the secret), and no context shows the value outside ``secret()``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        problems = []
        reads = dict(probe.secret_reads)
        for where, want in expected.items():
            got = reads.get(where)
            tool = where.split(":")[0]
            if want == "value" and got != "value":
                problems.append(f"{where} asked for its declared secret and got: {got!r}")
            elif want == "refused" and (got in (None, "value", "other value")):
                problems.append(f"{where} asked for the secret api_key and got: {got!r}")
            elif want == "refused" and not (tool in str(got) and "api_key" in str(got)):
                problems.append(f"{where}'s refusal does not name the tool and the secret: {got}")
        for name, context in probe.contexts:
            places = _value_in(context)
            if places:
                problems.append(f"{name}'s context shows the secret's value in {places}")
        return _problems(problems)

    return check


def _check_handles(name: str, declared: tuple[str, ...]) -> Any:
    """The tool ``name``'s context carries a :class:`SecretHandle` for each of
    ``declared`` and no other."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        for n, context in probe.contexts:
            handles = dict(context.secrets) if n == name else None
            if handles is None:
                continue
            kinds = all(isinstance(h, SecretHandle) for h in handles.values())
            if sorted(handles) != sorted(declared) or not kinds:
                return _problems(
                    [f"{name}'s context carries the secret handles {handles}, expected {declared}"]
                )
        return []

    return check


def _approval_sees_handles(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The pending approval of ``signed_transfer`` shows the key's handle, never its
    value (in its preview or anywhere else the human sees)."""
    seen = [p for p in probe.pending if p.name == "signed_transfer"]
    if len(seen) != 1:
        return _problems([f"{len(seen)} pending approvals of signed_transfer, expected 1"])
    pending = seen[0]
    problems = []
    if PLANTED_SECRET in repr(pending):
        problems.append("the pending approval shows the secret's value")
    preview = pending.preview if isinstance(pending.preview, dict) else {}
    if preview.get("signed_with") != "<secret api_key>":
        problems.append(
            f"the preview's signed_with is {preview.get('signed_with')!r}, expected the handle"
        )
    return _problems(problems)


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="tool_context",
        label="tool context",
        rule=(
            "the caller, application values and named secrets reach tools and the approval "
            "step, only as declared (secrets: to declaring tools, as handles elsewhere)"
        ),
        keep_it=(
            "Start every run with its caller and values (`Contract.start(caller=..., "
            "context=...)`, `RunInput.start`): a `needs_context=True` tool gets them in its "
            "`ToolContext` with its own `tool_call_id`, a write's preview, approval token "
            "and idempotent write act for that caller, a tool without `needs_context` gets "
            "no context; name secrets (`RunInput(secrets={name: value})`) and declare "
            "them per tool (`ToolSpec(secrets=(name,))`, `context.secret(name)`): other "
            "tools and the approval step see only a handle."
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
        call_then_answer(
            name="declared_secret_reaches_the_tool",
            boundary="tool_context",
            description=(
                "a tool that declared the run's named secret gets its value from its "
                "context (and a handle beside it); the value never reaches the trace, the "
                "tool message or the output"
            ),
            call=tool_call("keyed", {"text": "doc"}, id="call_keyed"),
            answer="signed",
            result=("success", None),
            tools=tools_with(keyed_tool),
            named_secrets=_NAMED,
            extra=(
                check_context_of("keyed", "call_keyed", {}),
                _check_handles("keyed", ("api_key",)),
                _check_secret_reads({"keyed": "value"}),
                check_not_emitted([PLANTED_SECRET], "tool_context"),
            ),
        ),
        call_then_answer(
            name="undeclared_tool_gets_no_secret",
            boundary="tool_context",
            description=(
                "a context-aware tool that declared no secret is refused the run's named "
                "secret (the refusal names the tool and the secret) and finds its value "
                "nowhere in its context"
            ),
            call=tool_call("nosy", {"text": "peek"}, id="call_nosy"),
            answer="nothing",
            result=("success", None),
            tools=tools_with(nosy_tool),
            named_secrets=_NAMED,
            extra=(
                check_context_of("nosy", "call_nosy", {}),
                _check_handles("nosy", ()),
                _check_secret_reads({"nosy": "refused"}),
                check_not_emitted([PLANTED_SECRET], "tool_context"),
            ),
        ),
        call_then_answer(
            name="approval_sees_secret_handles",
            boundary="tool_context",
            description=(
                "a write that declared a secret: its preview gets the handle and is "
                "refused the value, the pending approval shows the handle, never the "
                "value; the approved write gets the value"
            ),
            call=tool_call("signed_transfer", {"to": "bob", "amount": 5}, id="call_sign"),
            answer="sent",
            result=("success", None),
            tools=tools_with(signed_transfer_tool),
            named_secrets=_NAMED,
            decisions=("approve",),
            requires=("write_tools",),
            extra=(
                _approval_sees_handles,
                _check_secret_reads(
                    {"signed_transfer:preview": "refused", "signed_transfer": "value"}
                ),
                check_writes([5], previews=1, boundary="tool_context"),
                check_not_emitted([PLANTED_SECRET], "tool_context"),
            ),
        ),
    ),
)
"""The tool-context boundary: its row and its scenarios."""
