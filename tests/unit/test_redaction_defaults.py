"""Default redaction: secret keys (any depth, any text form) and bearer tokens of any
length, with planted values in every position a run emits: arguments, results, errors,
history (the stored snapshot), the trace and the CLI's output."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from agent_contract import Budget, ToolSpec, run
from agent_contract.app import cli
from agent_contract.messages import Message
from agent_contract.testing import FakeModel, tool_call
from agent_contract.trace import DEFAULT_SECRET_KEYS, REDACTED, RedactionPolicy

POLICY = RedactionPolicy()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"password": "hunter2"}', '{"password": "[REDACTED]"}'),
        ('{"Password" : "a \\"quoted\\" one", "b": 1}', '{"Password" : "[REDACTED]", "b": 1}'),
        ("{'api_key': 'abc123'}", "{'api_key': '[REDACTED]'}"),
        ('{"pin": 1, "token": 98765}', '{"pin": 1, "token": "[REDACTED]"}'),
        ('{"secret": null, "token": true}', '{"secret": null, "token": true}'),
        ("db_password=hunter2&page=2", "db_password=[REDACTED]"),  # to the next whitespace
        ("PASSWD: s3cr3t next", "PASSWD: [REDACTED] next"),
        ('aws_secret_access_key = "AbC/12+x"', 'aws_secret_access_key = "[REDACTED]"'),
        ("X-Api-Key: k3y", "X-Api-Key: [REDACTED]"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"),
        ("authorization: bearer abc", "authorization: bearer [REDACTED]"),
        ("curl -H 'Bearer x'", "curl -H '[REDACTED]'"),
        ("Bearer a", REDACTED),
        ("bearer 1a", REDACTED),
        ("$.password: 'hunter2' is not of type", "$.password: '[REDACTED]' is not of type"),
        ("client-secret=abc", "client-secret=[REDACTED]"),
    ],
)
def test_secret_keys_and_bearer_tokens_in_text(text: str, expected: str) -> None:
    assert POLICY.redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=100",
        "tokens: 5",
        "token_count=3",
        "passwordless=yes",
        "the bearer of good news",
        "keyboard: qwerty",
        "",
    ],
)
def test_ordinary_text_survives(text: str) -> None:
    assert POLICY.redact(text) == text


def test_values_under_secret_keys_at_any_depth() -> None:
    value = {
        "a": {
            "Password": "x",
            "API-KEY": 5,
            "token": {"v": "nested"},
            "secret": None,
            "list": [{"refresh_token": "z"}],
        }
    }
    assert POLICY.redact_value(value) == {
        "a": {
            "Password": REDACTED,
            "API-KEY": REDACTED,
            "token": REDACTED,
            "secret": None,
            "list": [{"refresh_token": REDACTED}],
        }
    }


def test_the_rule_can_be_turned_off_or_changed() -> None:
    assert RedactionPolicy(secret_keys=()).redact("password=x") == "password=x"
    custom = RedactionPolicy(secret_keys=("pin",))
    assert custom.redact("pin=1234 password=x") == f"pin={REDACTED} password=x"
    assert custom.with_secrets(["abcd"]).secret_keys == ("pin",)
    assert "password" in DEFAULT_SECRET_KEYS


def _echo_args() -> ToolSpec:
    return ToolSpec(
        name="connect",
        description="Connect.",
        parameters={
            "type": "object",
            "properties": {"host": {"type": "string"}, "password": {"type": "string"}},
            "required": ["host", "password"],
        },
        handler=lambda host, password: {"host": host, "session": {"token": "tok-planted-5"}},
    )


def test_planted_values_in_every_position_of_a_run() -> None:
    """Arguments (trace and records), results, an error quoting an argument, the
    answer, and the history stored with a paused run."""
    script: list[Any] = [
        tool_call("connect", {"host": "db", "password": "arg-planted-1"}, id="c1"),
        tool_call("connect", {"host": "db", "password": 31415926535}, id="c2"),
        "connected; authorization: Bearer ans-planted-3",
    ]
    result = run(
        FakeModel(script),
        [_echo_args()],
        "connect",
        history=[Message(role="user", content="my api_key: hist-planted-4")],
        budget=Budget(deadline_seconds=30.0),
    )
    emitted = "\n".join(
        [
            result.trace.to_jsonl(),
            *(m.content for m in result.messages if m.role == "tool"),
            result.output or "",
            json.dumps(result.to_dict()),
            json.dumps([r.to_state() for r in result.tool_calls]),
        ]
    )
    for planted in ("arg-planted-1", "tok-planted-5", "31415926535", "ans-planted-3"):
        assert planted not in emitted, planted
    assert result.output == "connected; authorization: Bearer [REDACTED]"


def test_history_in_a_stored_snapshot_is_redacted() -> None:
    def preview(context: Any, amount: int) -> dict[str, int]:
        return {"amount": amount}

    write = ToolSpec(
        name="pay",
        description="Pay.",
        parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
        handler=lambda context, amount: {"paid": amount},
        effect="write",
        preview=preview,
        verify=lambda context, amount: None,
    )
    result = run(
        FakeModel([tool_call("pay", {"amount": 5})]),
        [write],
        "pay",
        history=[Message(role="user", content="password=hist-planted-6, Bearer Hq7")],
        budget=Budget(deadline_seconds=30.0),
    )
    assert result.stop_reason == "pending_approval"
    stored = json.dumps(result.snapshot)
    assert "hist-planted-6" not in stored
    assert "Hq7" not in stored


@pytest.mark.parametrize(
    "request_text",
    [
        "look up policy password=cli-planted-7",
        "look up policy Bearer Q8z",
        "look up policy api_key: cli-planted-9",
    ],
)
@pytest.mark.parametrize("mode", [(), ("--json",), ("--trace",)], ids=["summary", "json", "trace"])
def test_cli_output_hides_planted_key_values(
    request_text: str, mode: tuple[str, ...], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["run", request_text, *mode], out=out, err=err)
    assert code == 0
    planted = request_text.rsplit(" ", 1)[-1]
    assert planted not in out.getvalue()
    assert planted not in err.getvalue()


SECRET = "Planted-Secret-77"


def _forms(secret: str) -> dict[str, str]:
    import base64

    raw = secret.encode()
    return {
        "upper": secret.upper(),
        "lower": secret.lower(),
        "base64": base64.b64encode(raw).decode(),
        "base64 unpadded": base64.b64encode(raw).decode().rstrip("="),
        "base64 url-safe": base64.urlsafe_b64encode(raw).decode(),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
    }


@pytest.mark.parametrize("form", sorted(_forms(SECRET)))
def test_a_secret_is_redacted_in_its_common_encodings(form: str) -> None:
    # A tool that prints a secret upper-cased, base64-encoded or as hex (a debugging
    # dump, an Authorization header built by hand) must not show it to the model, the
    # trace or the caller.
    text = _forms(SECRET)[form]
    model = FakeModel([tool_call("dump", {}, id="c1"), f"done {text}"])
    result = run(
        model,
        [
            ToolSpec(
                name="dump",
                description="Dump.",
                parameters={"type": "object", "properties": {}},
                handler=lambda: f"value={text}!",
            )
        ],
        "dump",
        secrets=[SECRET],
        budget=Budget(deadline_seconds=30.0),
    )
    seen = [m.content or "" for call in model.calls for m in call["messages"]]
    emitted = "\n".join([result.trace.to_jsonl(), json.dumps(result.to_dict()), *seen])
    assert text not in emitted
    assert result.output == f"done {REDACTED}"
    assert any(f"value={REDACTED}!" in s for s in seen)


def test_an_encoding_of_a_longer_text_is_not_claimed() -> None:
    # What the docs say is not covered: the secret inside a longer encoded text.
    import base64

    inside = base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert RedactionPolicy(secrets=(SECRET,)).redact(inside) == inside
    assert RedactionPolicy(secrets=(SECRET,)).redact("ordinary words") == "ordinary words"
