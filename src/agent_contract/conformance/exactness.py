"""Scenarios that pin the contract exactly, where a harness that is almost right passes
a looser test: tool names matched exactly, validation errors that name the JSON path and
the failed constraint, secrets in every spelling, history replayed with its tool turns,
writes whose acknowledgement is lost or whose process crashes, the run deadline, call
ids reused across turns, and exact counts of model calls and tool runs. Part of
:data:`~agent_contract.conformance.scenarios.SCENARIOS`.

Each one was written against a deliberately broken harness with that one defect (the
project's ``tests/mutants``), and catches it under the boundary named here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Final

from ..budget import Budget
from ..harnesses import Observation
from ..messages import Message, ToolCall
from ..testing import FakeModel, tool_call, tool_calls
from ..tools import ToolContext, ToolSpec
from .evaluate import Check, Problem, Scenario, check_model_calls, check_offered, check_writes
from .fixtures import PLANTED_SECRET, Probe, basic_tools, text_tool, tools_with, transfer_tool

__all__ = [
    "LOOK_ALIKE_NAMES",
    "SPELLED_SECRETS",
    "admin_echo_tool",
    "build_exactness_scenarios",
    "check_error_names",
    "check_history_sent",
    "check_spellings_hidden",
    "check_tool_runs",
    "flaky_ack_transfer_tool",
    "spelled_secrets_tool",
    "stall_tool",
]

LOOK_ALIKE_NAMES: Final[tuple[str, ...]] = ("Echo", "ECHO", "\u0435cho", "ech", "echo_v2")
"""Names a loose match would take for ``echo``: case, a Cyrillic small ie (U+0435) for the ``e``, a
prefix, and a name that starts with it."""

SPELLED_SECRETS: Final[tuple[str, ...]] = (
    'pa"ss\\w\u00f6rd-\u03a9-planted',
    "correct horse battery staple",
)
"""Secrets the run is handed that a naive redaction misses: one with a quote, a
backslash and non-ASCII characters (JSON escapes every one of them), and a passphrase
that does not look like a key."""


def _spellings(secret: str) -> list[str]:
    """Every way ``secret`` can be written in what a run emits: as it is, JSON-escaped
    with and without ASCII escapes, and escaped twice (JSON inside a JSON string)."""
    once = json.dumps(secret, ensure_ascii=False)[1:-1]
    ascii_once = json.dumps(secret)[1:-1]
    twice = json.dumps(once, ensure_ascii=False)[1:-1]
    ascii_twice = json.dumps(ascii_once)[1:-1]
    return list(dict.fromkeys([secret, once, ascii_once, twice, ascii_twice]))


def check_spellings_hidden(secrets: Sequence[str]) -> Check:
    """No spelling of any of ``secrets`` (see :func:`_spellings`) appears in what the
    run emitted (``trace_redaction``)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        found = [s for secret in secrets for s in _spellings(secret) if s in obs.emitted]
        if found:
            return [
                Problem(
                    boundary="trace_redaction",
                    message=f"a planted secret was emitted in these spellings: {found}",
                )
            ]
        return []

    return check


def check_error_names(*parts: str) -> Check:
    """The first tool message (an ``invalid_arguments`` error) names every one of
    ``parts`` (the JSON path and the failed constraint) (``argument_validation``)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        content = obs.tool_messages[0]["content"] if obs.tool_messages else ""
        try:
            message = str(json.loads(content).get("message", ""))
        except (ValueError, AttributeError):
            message = content
        missing = [p for p in parts if p not in message]
        if missing:
            return [
                Problem(
                    boundary="argument_validation",
                    message=f"the validation error does not name {missing}: {message!r}",
                )
            ]
        return []

    return check


def _view(message: Message) -> tuple[Any, ...]:
    calls = tuple(
        (c.id, c.name, json.dumps(c.arguments, sort_keys=True)) for c in message.tool_calls
    )
    return (message.role, message.content, calls, message.tool_call_id)


def check_history_sent(history: Sequence[Message], user: str) -> Check:
    """The model's first call got ``history`` then ``user``, tool calls and tool
    messages included, in order, with their ids (``history``)."""
    wanted = [_view(m) for m in history] + [("user", user, (), None)]

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if not model.calls:
            return [Problem(boundary="history", message="the model was never called")]
        sent = [_view(m) for m in model.calls[0]["messages"] if m.role != "system"]
        if sent != wanted:
            return [Problem(boundary="history", message=f"sent {sent}, expected {wanted}")]
        return []

    return check


def check_tool_runs(times: int, boundary: str) -> Check:
    """Tool handlers ran exactly ``times`` times in all (every tool, every attempt)."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        ran = len(probe.calls) + probe.write_calls
        if ran != times:
            return [Problem(boundary=boundary, message=f"tools ran {ran} times, expected {times}")]
        return []

    return check


spelled_secrets_tool: Final = text_tool(
    "vault",
    "Returns stored credentials.",
    lambda text: {
        "password": SPELLED_SECRETS[0],
        "note": f"the passphrase is {SPELLED_SECRETS[1]}",
        "nested": json.dumps({"secret": SPELLED_SECRETS[0], "key": PLANTED_SECRET}),
    },
)
"""``vault(text)``: returns :data:`SPELLED_SECRETS`, one of them inside a JSON text."""


def admin_echo_tool(probe: Probe) -> ToolSpec:
    """``echo_admin(text)``: registered, never allowlisted (its name starts with
    ``echo``)."""
    return text_tool("echo_admin", "Echo, with admin rights.", lambda text: f"admin: {text}")(probe)


def stall_tool(probe: Probe) -> ToolSpec:
    """``stall(text)``: takes 2 s (its own timeout is 5 s): only the run deadline stops
    it earlier."""

    def handler(text: str) -> str:
        time.sleep(2.0)
        probe.late_writes.append(text)
        return f"stalled: {text}"

    return ToolSpec(
        name="stall",
        description="A tool that takes its time.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=handler,
        timeout_seconds=5.0,
    )


def flaky_ack_transfer_tool(probe: Probe) -> ToolSpec:
    """:func:`~agent_contract.conformance.fixtures.transfer_tool` whose first write
    lands and then loses its acknowledgement (the handler raises ``ConnectionError``
    after storing the write under its idempotency key)."""
    spec = transfer_tool(probe)
    write = spec.handler

    def handler(context: ToolContext, to: str, amount: int) -> dict[str, Any]:
        result = write(context, to=to, amount=amount)
        if probe.write_calls == 1:
            raise ConnectionError("connection reset before the acknowledgement arrived")
        return dict(result)

    return ToolSpec(
        name=spec.name,
        description=spec.description,
        parameters=spec.parameters,
        handler=handler,
        effect="write",
        preview=spec.preview,
        verify=spec.verify,
    )


_OLD_CALL: Final = Message(
    role="assistant",
    tool_calls=(ToolCall(id="old_1", name="echo", arguments={"text": "a"}),),
)
_OLD_RESULT: Final = Message(
    role="tool", content="echo: a", tool_call_id="old_1", name="echo", status="success"
)
_TOOL_HISTORY: Final = (
    Message(role="user", content="echo a"),
    _OLD_CALL,
    _OLD_RESULT,
    Message(role="assistant", content="it said a"),
)


def build_exactness_scenarios() -> list[Scenario]:
    """The scenarios of this module, in a stable order."""
    send = {"to": "bob", "amount": 10}
    return [
        Scenario(
            name="look_alike_tool_names",
            boundary="allowlist",
            description=(
                "names that differ from an allowed tool in case, by a look-alike letter, or "
                "by a prefix are unknown tools: nothing runs"
            ),
            script=(
                tool_calls(
                    *((n, {"text": "hi"}, f"call_{i}") for i, n in enumerate(LOOK_ALIKE_NAMES))
                ),
                "none of those exist",
            ),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=LOOK_ALIKE_NAMES,
            results=(("error", "unknown_tool"),) * len(LOOK_ALIKE_NAMES),
            must_not_run=("echo",),
            model_calls=2,
        ),
        Scenario(
            name="allowlist_prefix",
            boundary="allowlist",
            description=(
                "a registered tool whose name only starts with an allowlisted one is neither "
                "offered nor run"
            ),
            script=(tool_call("echo_admin", {"text": "root"}), "not allowed"),
            tools=tools_with(admin_echo_tool),
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("echo_admin",),
            results=(("error", "not_allowed"),),
            must_not_run=("echo_admin",),
            extra=(check_offered({"echo"}),),
        ),
        Scenario(
            name="validation_error_names_path_and_constraint",
            boundary="argument_validation",
            description=(
                "an invalid argument is refused with a message naming its JSON path and the "
                "constraint it failed"
            ),
            script=(tool_call("forecast", {"city": "Oslo", "days": 30}), "bad arguments"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("forecast",),
            extra=(check_error_names("$.days", "maximum"),),
        ),
        Scenario(
            name="validation_error_names_missing_field",
            boundary="argument_validation",
            description="a missing field is refused with a message naming the field and 'required'",
            script=(tool_call("forecast", {"city": "Oslo"}), "bad arguments"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "invalid_arguments"),),
            must_not_run=("forecast",),
            extra=(check_error_names("days", "required"),),
        ),
        Scenario(
            name="secrets_in_every_spelling",
            boundary="trace_redaction",
            description=(
                "secrets with a quote, a backslash and non-ASCII characters, or shaped like "
                "a passphrase, are redacted in every spelling: in results (also JSON inside "
                "JSON), in refused calls' arguments, and in the answer"
            ),
            script=(
                tool_calls(
                    ("vault", {"text": "all"}, "call_vault"),
                    ("forecast", {"city": SPELLED_SECRETS[0], "days": 99}, "call_invalid"),
                    ("nope", {"text": SPELLED_SECRETS[1]}, "call_unknown"),
                ),
                f"stored: {SPELLED_SECRETS[0]} / {SPELLED_SECRETS[1]}",
            ),
            tools=lambda probe: [*basic_tools(probe), spelled_secrets_tool(probe)],
            secrets=SPELLED_SECRETS,
            stop_reason="answered",
            trajectory=("vault", "forecast", "nope"),
            results=(
                ("success", None),
                ("error", "invalid_arguments"),
                ("error", "unknown_tool"),
            ),
            must_not_run=("forecast",),
            extra=(check_spellings_hidden((*SPELLED_SECRETS, PLANTED_SECRET)),),
        ),
        Scenario(
            name="refused_call_arguments_redacted",
            boundary="trace_redaction",
            description=(
                "a refused call (not allowed) carrying the planted secret in its arguments "
                "never echoes it back"
            ),
            script=(
                tool_call("forecast", {"city": PLANTED_SECRET, "days": 2}, id="call_refused"),
                "refused",
            ),
            tools=basic_tools,
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "not_allowed"),),
            must_not_run=("forecast",),
            extra=(check_spellings_hidden((PLANTED_SECRET,)),),
        ),
        Scenario(
            name="history_tool_turns_replayed",
            boundary="history",
            description=(
                "earlier turns reach the model whole: the assistant's tool call and its tool "
                "message, with their ids, not only the text turns"
            ),
            script=("nothing new",),
            tools=basic_tools,
            history=_TOOL_HISTORY,
            user="and again?",
            stop_reason="answered",
            results=(("success", None),),
            model_calls=1,
            extra=(check_history_sent(_TOOL_HISTORY, "and again?"),),
        ),
        Scenario(
            name="call_id_reused_in_a_later_turn",
            boundary="response_shape",
            description=(
                "a call reusing the id of a call from an earlier turn of the same run is a "
                "contract violation: it does not run"
            ),
            script=(
                tool_call("echo", {"text": "a"}, id="call_same"),
                tool_call("echo", {"text": "b"}, id="call_same"),
                "this answer must never be produced",
            ),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo", "echo"),
            results=(("success", None),),
            model_calls=2,
            extra=(check_tool_runs(1, "response_shape"),),
        ),
        Scenario(
            name="run_deadline",
            boundary="deadline",
            description=(
                "the run deadline cuts a slow tool short (timeout, outcome unknown) and stops "
                "the run with 'deadline' before the model is called again"
            ),
            script=(tool_call("stall", {"text": "wait"}), "this answer must never be produced"),
            tools=tools_with(stall_tool),
            budget=Budget(deadline_seconds=0.8),
            stop_reason="deadline",
            trajectory=("stall",),
            results=(("error", "timeout"),),
            model_calls=1,
        ),
        Scenario(
            name="write_acknowledgement_lost",
            boundary="write_approval",
            description=(
                "a write that landed but lost its acknowledgement is read back by its "
                "idempotency key and reported applied, not repeated"
            ),
            script=(tool_call("transfer", send), "sent"),
            tools=tools_with(flaky_ack_transfer_tool),
            decisions=("approve",),
            stop_reason="answered",
            trajectory=("transfer",),
            results=(("success", None),),
            requires=("write_tools",),
            extra=(check_writes([10], previews=1),),
        ),
        *(
            Scenario(
                name=f"write_crash_{point}",
                boundary="write_approval",
                description=description,
                script=(tool_call("transfer", send), "sent"),
                tools=tools_with(transfer_tool),
                decisions=("approve",),
                crash_at=point,
                stop_reason="answered",
                trajectory=("transfer",),
                results=(("success", None),),
                requires=("write_tools", "crash_restart"),
                extra=(check_writes([10], previews=1), check_model_calls(2, "write_approval")),
            )
            for point, description in (
                (
                    "after_write",
                    "the process crashes between a write and its acknowledgement; a fresh "
                    "instance resumes with the same idempotency key, verifies, and does not "
                    "write again",
                ),
                (
                    "after_approval",
                    "the process crashes after the decision is stored, before the write; a "
                    "fresh instance carries out the stored decision once",
                ),
            )
        ),
    ]
