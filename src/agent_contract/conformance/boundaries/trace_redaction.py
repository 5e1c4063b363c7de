"""The trace-redaction boundary: every run leaves a trace, and planted secrets appear
nowhere (secrets a tool returns, values under secret keys, secrets in every spelling,
refused calls' arguments), checked in every scenario's run (:func:`check_trace`),
whatever the scenario's own boundary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ...harnesses import Observation
from ...testing import FakeModel, tool_call, tool_calls
from ...tools import ToolSpec
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario, call_then_answer
from ..checks import check_not_emitted
from ..fixtures import PLANTED_SECRET, Probe, basic_tools, required_object, text_tool, tools_with

__all__ = [
    "DEFINITION",
    "KEYED_SECRETS",
    "SPELLED_SECRETS",
    "check_model_results_hidden",
    "check_spellings_hidden",
    "check_trace",
    "credentials_tool",
    "leaked",
    "login_tool",
    "spelled_secrets_tool",
]

credentials_tool: Final = text_tool(
    "credentials", "Returns credentials.", lambda text: {"user": text, "token": PLANTED_SECRET}
)
"""``credentials(text)``: returns a dict holding the planted secret."""

KEYED_SECRETS: Final = {
    "argument": "hunter2-planted",
    "result": "t0k3n-planted",
    "bearer": "Zq9",
    "error": 271828182845,
    "answer": "K3y-planted",
}
"""Values planted under secret keys (``password``, ``token``, ``api_key``) and after
``Bearer``, with no ``secrets=`` given: the default redaction must hide every one."""


def login_tool(probe: Probe) -> ToolSpec:
    """``login(user, password)``: returns a session whose token is planted, and an
    authorization header with a short bearer token."""

    def handler(user: str, password: str) -> dict[str, Any]:
        probe.record("login", {"user": user, "password": password})
        return {
            "user": user,
            "session": {"token": KEYED_SECRETS["result"]},
            "header": f"Authorization: Bearer {KEYED_SECRETS['bearer']}",
        }

    return ToolSpec(
        name="login",
        description="Log a user in.",
        parameters=required_object({"user": {"type": "string"}, "password": {"type": "string"}}),
        handler=handler,
    )


SPELLED_SECRETS: Final[tuple[str, ...]] = (
    'pa"ss\\w\u00f6rd-\u03a9-planted',
    "correct horse battery staple",
)
"""Secrets the run is handed that a naive redaction misses: one with a quote, a
backslash and non-ASCII characters (JSON escapes every one of them), and a passphrase
that does not look like a key."""

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


def check_model_results_hidden(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """No tool message the model was sent holds the planted secret (a refused call's
    arguments are not echoed back to the model, whatever the run emitted)."""
    sent = [
        m.content
        for call in model.calls
        for m in call["messages"]
        if m.role == "tool" and PLANTED_SECRET in str(m.content)
    ]
    if not sent:
        return []
    return [
        Problem(
            boundary="trace_redaction",
            message=f"the model was sent the planted secret in a tool message: {sent[0][:120]!r}",
        )
    ]


def leaked(scenario: Scenario, emitted: str) -> bool:
    """True when the planted secret or one of ``scenario.secrets`` appears in
    ``emitted``."""
    return any(secret in emitted for secret in (PLANTED_SECRET, *scenario.secrets))


def check_trace(
    scenario: Scenario, obs: Observation, model: FakeModel, probe: Probe
) -> list[Problem]:
    """In every run: a complete trace (``run_started`` first, ``stop`` last) recording
    each model call (earlier turns of a thread called the model too), and no planted
    secret in what the run emitted. The trace is the tree's: a child agent's model calls
    (``probe.child_model``) are in it too."""
    problems: list[Problem] = []
    calls = len(model.calls) + (len(probe.child_model.calls) if probe.child_model else 0)
    if not obs.trace_types or obs.trace_types[0] != "run_started" or obs.trace_types[-1] != "stop":
        message = f"no complete trace (events: {list(obs.trace_types)[:3]}...)"
        problems.append(Problem(boundary="trace_redaction", message=message))
    elif (
        obs.trace_types.count("model_call") != calls
        and "earlier_turns" not in scenario.extras  # earlier runs called the model too
    ):
        message = (
            f"the trace records {obs.trace_types.count('model_call')} model calls, the model "
            f"was called {calls} times"
        )
        problems.append(Problem(boundary="trace_redaction", message=message))
    if leaked(scenario, obs.emitted):
        message = "a planted secret appears in what the run emitted"
        problems.append(Problem(boundary="trace_redaction", message=message))
    return problems


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="trace_redaction",
        label="trace redaction",
        rule="every run leaves a trace, and planted secrets appear nowhere",
        keep_it=(
            "`Contract(..., secrets=[...])` and one `RunState` per run: its result carries "
            "an append-only, redacted trace (`Contract(trace_sink=...)` exports it), and "
            "secrets in tool results are redacted before the model sees them."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="secret_in_result",
            boundary="trace_redaction",
            description="a secret a tool returns is redacted before the model or trace sees it",
            call=tool_call("credentials", {"text": "alice"}),
            answer="got them",
            result=("success", None),
            tools=tools_with(credentials_tool),
        ),
        Scenario(
            name="secret_keys_redacted",
            boundary="trace_redaction",
            description=(
                "values under password/token/api_key and a short bearer token are redacted "
                "in arguments, results, errors and the answer without being declared"
            ),
            script=(
                tool_calls(
                    ("login", {"user": "bob", "password": KEYED_SECRETS["argument"]}, "call_ok"),
                    ("login", {"user": "bob", "password": KEYED_SECRETS["error"]}, "call_bad"),
                ),
                f"done; api_key: {KEYED_SECRETS['answer']}",
            ),
            tools=tools_with(login_tool),
            stop_reason="answered",
            trajectory=("login", "login"),
            results=(("success", None), ("error", "invalid_arguments")),
            output_contains=("api_key: [REDACTED]",),
            extra=(check_not_emitted(list(KEYED_SECRETS.values()), "trace_redaction"),),
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
        call_then_answer(
            name="refused_call_arguments_redacted",
            boundary="trace_redaction",
            description=(
                "a refused call (not allowed) carrying the planted secret in its arguments "
                "never echoes it back"
            ),
            call=tool_call("forecast", {"city": PLANTED_SECRET, "days": 2}, id="call_refused"),
            answer="refused",
            result=("error", "not_allowed"),
            tools=basic_tools,
            allowlist=("echo",),
            must_not_run=("forecast",),
            extra=(check_spellings_hidden((PLANTED_SECRET,)), check_model_results_hidden),
        ),
    ),
    every_run=(check_trace,),
)
"""The trace redaction boundary: its row and its scenarios, and the check it makes in every run."""
