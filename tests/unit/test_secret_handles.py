"""Named secrets: a :class:`SecretHandle` shows a marker, never the value; a tool gets a
value only through its context, and only for a secret it declared; a write's preview
(the approval step) gets handles only; a restored run keeps the contract's secrets."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from agent_contract.approval import Approval
from agent_contract.errors import ConfigurationError
from agent_contract.loop import resume, run
from agent_contract.runtime import Contract, RunInput
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import SecretHandle, ToolContext, ToolSpec

KEY = "sk-unit-secret-0123456789abcdef"
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _tool(name: str, seen: list[Any], secrets: tuple[str, ...] = ()) -> ToolSpec:
    def handler(context: ToolContext, text: str) -> str:
        seen.append(context)
        try:
            return f"used {context.secret('api_key')}"
        except ConfigurationError as exc:
            seen.append(str(exc))
            return "refused"

    return ToolSpec(
        name=name,
        description="Uses a key.",
        parameters=TEXT,
        handler=handler,
        needs_context=True,
        secrets=secrets,
    )


def test_a_handle_shows_its_name_never_a_value() -> None:
    handle = SecretHandle("api_key")
    assert handle.name == "api_key"
    assert str(handle) == "<secret api_key>"
    assert repr(handle) == "SecretHandle('api_key')"
    assert json.dumps({"auth": handle}) == '{"auth": "<secret api_key>"}'
    for copied in (pickle.loads(pickle.dumps(handle)), copy.deepcopy(handle)):  # noqa: S301
        assert isinstance(copied, SecretHandle)
        assert copied.name == "api_key"


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, 3])
def test_a_bad_secret_name_is_refused(name: Any) -> None:
    with pytest.raises(ConfigurationError, match="secret name"):
        SecretHandle(name)
    with pytest.raises(ConfigurationError, match="secret name"):
        ToolSpec(
            name="t",
            description="d",
            parameters=TEXT,
            handler=lambda c, text: text,
            needs_context=True,
            secrets=(name,),
        )


def test_declared_secrets_need_a_context_and_a_sequence() -> None:
    with pytest.raises(ConfigurationError, match="needs_context"):
        ToolSpec(
            name="t", description="d", parameters=TEXT, handler=lambda text: text, secrets=("k",)
        )
    with pytest.raises(ConfigurationError, match="not one string"):
        ToolSpec(
            name="t",
            description="d",
            parameters=TEXT,
            handler=lambda c, text: text,
            needs_context=True,
            secrets="api_key",  # type: ignore[arg-type]
        )


def test_only_the_declaring_tool_gets_the_value_and_nothing_emits_it() -> None:
    seen: list[Any] = []
    tools = [_tool("keyed", seen, ("api_key",)), _tool("nosy", seen)]
    model = FakeModel(
        [
            tool_call("keyed", {"text": "a"}, id="c1"),
            tool_call("nosy", {"text": "b"}, id="c2"),
            "done",
        ]
    )
    result = run(model, tools, "go", secrets={"api_key": KEY})
    assert result.stop_reason == "answered"
    keyed, nosy, refusal = seen
    assert dict(keyed.secrets) == {"api_key": "<secret api_key>"}
    assert nosy.secrets == {}
    assert "'nosy'" in refusal
    assert "'api_key'" in refusal
    assert "did not declare" in refusal
    for context in (keyed, nosy):
        assert KEY not in repr(context)
        assert KEY not in repr(dict(context.values))
    contents = [str(m.content) for m in result.messages if m.role == "tool"]
    assert contents[1] == "refused"
    assert KEY not in contents[0]
    assert KEY not in result.trace.to_jsonl()


def test_a_run_without_the_secret_refuses_a_declared_read() -> None:
    seen: list[Any] = []
    model = FakeModel([tool_call("keyed", {"text": "a"}), "done"])
    run(model, [_tool("keyed", seen, ("api_key",))], "go")
    assert "started without it" in seen[1]


def _signed_write(seen: list[Any]) -> ToolSpec:
    writes: dict[str, Any] = {}

    def preview(context: ToolContext, text: str) -> dict[str, Any]:
        try:
            context.secret("api_key")
        except ConfigurationError as exc:
            seen.append(str(exc))
        return {"text": text, "signed_with": context.secrets["api_key"]}

    def handler(context: ToolContext, text: str) -> str:
        seen.append(context.secret("api_key"))
        writes[context.idempotency_key or ""] = text
        return "written"

    def verify(context: ToolContext, text: str) -> Any:
        return writes.get(context.idempotency_key or "")

    return ToolSpec(
        name="signed",
        description="A signed write.",
        parameters=TEXT,
        handler=handler,
        effect="write",
        preview=preview,
        verify=verify,
        secrets=("api_key",),
    )


def test_a_preview_gets_handles_only_and_a_restored_run_keeps_the_secrets() -> None:
    seen: list[Any] = []
    contract = Contract([_signed_write(seen)], secrets={"api_key": KEY})
    assert contract.named_secrets == {"api_key": KEY}
    model = FakeModel([tool_call("signed", {"text": "x"}, id="w1"), "done"])
    paused = run(model, contract, "write")
    (pending,) = paused.pending_approvals
    assert pending.preview == {"text": "x", "signed_with": "<secret api_key>"}
    assert KEY not in repr(pending)
    assert "handle only" in seen[0]
    assert "'signed'" in seen[0]
    assert paused.snapshot is not None
    assert KEY not in json.dumps(paused.snapshot)
    approve = Approval(tool_call_id="w1", decision="approve", token=pending.token)
    done = resume(model, contract, paused.snapshot, [approve])
    assert done.stop_reason == "answered"
    assert seen[1] == KEY


def test_run_input_of_keeps_a_mapping_and_redacts_its_values() -> None:
    options = RunInput.of("hi", secrets={"api_key": KEY})
    assert options.secrets == {"api_key": KEY}
    assert options.secret_values == (KEY,)
    assert KEY in options.contract([]).redaction.secrets
    assert RunInput.of("hi", secrets=[KEY]).secret_values == (KEY,)
