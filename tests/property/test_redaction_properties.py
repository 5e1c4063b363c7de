"""Redaction properties: a planted secret never survives into the trace, error messages,
tool messages, the run report or CLI output, in any encoding a run could give it
(as is, JSON-escaped, ``repr``-escaped, ``ascii``-escaped, or one inside another).

The secret is planted in tool arguments, a tool result, a tool's exception text (also
``KeyError(secret)``, whose text is the secret's ``repr``), a ToolError's public
message, an argument the schema refuses (validation messages quote the value), an
argument dict the tool mutates, the user message and the model's answer. Runs go
through the offline loop, the LangChain harness (few examples: each run costs
10-30 ms) and the CLI.
"""

from __future__ import annotations

import copy
import io
import json
import string
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_contract import Contract, Message, NotFoundError, RunResult, ToolSpec, run
from agent_contract.app.cli import main as cli_main
from agent_contract.messages import Completion, ToolCall
from agent_contract.testing import FakeModel
from agent_contract_langchain import build_agent
from agent_contract_langchain.messages import from_langchain_messages, to_langchain_messages
from agent_contract_langchain.run_config import contract_config

# -- the secret and the ways a run could encode it ------------------------------------------

SECRET_ALPHABET = (
    string.ascii_letters + string.digits + "'\"\\-_.:/+=!?@#$%^&*(){}<>,;~`|" + "éßñüøΩж中文字😀"
)
"""No whitespace (the demo model strips it) and no ``[``/``]`` (``[REDACTED]`` could
otherwise complete a partial secret next to it)."""

SECRETS = st.text(alphabet=SECRET_ALPHABET, min_size=6, max_size=24).map(lambda t: "Zq" + t)
"""Secrets of 8+ characters; the ``Zq`` prefix appears in no fixed text of a run, so a
match is always a leak, never a coincidence."""

_ENCODERS: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    lambda s: repr(s + '"')[1:-2],  # repr in single quotes (a ' inside is escaped)
    lambda s: repr(s + "'")[1:-2],  # repr in double quotes, when the text has ' only
    lambda s: ascii(s + '"')[1:-2],
    lambda s: ascii(s + "'")[1:-2],
)


def encodings(secret: str) -> set[str]:
    """The secret as it would appear in text after up to two encodings."""
    once = {encode(secret) for encode in _ENCODERS}
    return once | {encode(form) for form in once for encode in _ENCODERS}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        try:
            inner = json.loads(value)
        except (ValueError, RecursionError):
            return
        if not isinstance(inner, int | float | bool) and inner is not None:
            yield from _strings(inner)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(str(key))
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def assert_no_leak(secret: str, where: str, *texts: Any) -> None:
    """No encoding of ``secret`` in any of ``texts``, nor in any string inside them
    (JSON text is decoded and searched too, at every level)."""
    forms = encodings(secret)
    for text in texts:
        for piece in _strings(text):
            for form in forms:
                assert form not in piece, f"secret leaked into {where} as {form!r}: {piece!r}"


# -- the tools, each planting the secret somewhere ----------------------------------------

_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def planting_tools(secret: str, seen: dict[str, Any]) -> list[ToolSpec]:
    def echo(text: str) -> str:
        return f"echo: {text}"

    def credentials(text: str) -> dict[str, Any]:
        return {"user": text, "token": secret, "nested": [secret, {"k": f"x{secret}x"}]}

    def explode(text: str) -> str:
        raise RuntimeError(f"db password is {secret}; traceback follows")

    def missing_key(text: str) -> str:
        raise KeyError(secret)  # str(KeyError(s)) == repr(s)

    def classified(text: str) -> str:
        raise NotFoundError(f"no record for {secret}")

    def short(text: str) -> str:
        return text

    def mutate(text: str, meta: dict[str, Any]) -> dict[str, Any]:
        seen["meta"] = meta
        meta["tags"].append("mutated")
        meta["injected"] = secret
        meta.pop("keep", None)
        return meta

    def spec(name: str, handler: Callable[..., Any], parameters: Any = _TEXT) -> ToolSpec:
        return ToolSpec(name=name, description=name, parameters=parameters, handler=handler)

    return [
        spec("echo", echo),
        spec("credentials", credentials),
        spec("explode", explode),
        spec("missing_key", missing_key),
        spec("classified", classified),
        spec(
            "short",
            short,
            {
                "type": "object",
                "properties": {"text": {"type": "string", "maxLength": 3}},
                "required": ["text"],
            },
        ),
        spec(
            "mutate",
            mutate,
            {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "meta": {
                        "type": "object",
                        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                        "additionalProperties": True,
                    },
                },
                "required": ["text", "meta"],
            },
        ),
    ]


def script(secret: str) -> tuple[list[Completion | str], dict[str, Any]]:
    """One batch planting the secret in every tool, then an answer that quotes it."""
    mutate_args = {
        "text": secret,
        "meta": {"tags": [secret, "a"], "keep": f"{secret}!", "n": 1},
    }
    calls = (
        ToolCall(id="c1", name="echo", arguments={"text": f"my key is {secret}"}),
        ToolCall(id="c2", name="credentials", arguments={"text": "me"}),
        ToolCall(id="c3", name="explode", arguments={"text": "x"}),
        ToolCall(id="c4", name="missing_key", arguments={"text": "x"}),
        ToolCall(id="c5", name="classified", arguments={"text": "x"}),
        ToolCall(id="c6", name="short", arguments={"text": secret}),
        ToolCall(id="c7", name="mutate", arguments=mutate_args),
    )
    replies: list[Completion | str] = [
        Completion(tool_calls=calls, finish_reason="tool_calls"),
        f"All done; the key was {secret}.",
    ]
    return replies, mutate_args


EXPECTED_KINDS = [None, None, "tool_error", "tool_error", "not_found", "invalid_arguments", None]


def check_result(
    secret: str,
    contract: Contract,
    result: RunResult,
    mutate_args: dict[str, Any],
    snapshot: dict[str, Any],
    seen: dict[str, Any],
) -> None:
    assert result.stop_reason == "answered"
    assert [r.error_kind for r in result.tool_calls] == EXPECTED_KINDS
    tool_contents = [m.content for m in result.messages if m.role == "tool"]
    assert len(tool_contents) == 7
    assert_no_leak(secret, "the trace JSONL", *result.trace.to_jsonl().splitlines())
    assert_no_leak(secret, "the trace events", result.trace.events)
    assert_no_leak(secret, "tool messages", *tool_contents)
    assert_no_leak(secret, "the answer", result.output, result.stop_detail)
    assert_no_leak(
        secret,
        "the run report",
        json.dumps(result.to_dict(), ensure_ascii=False),
        json.dumps(result.to_dict()),
        [record.arguments for record in result.tool_calls],
    )
    # The tool got its own copy; what the model sent is untouched, and the trace (and
    # the report) record the validated arguments, not the handler's mutations.
    assert mutate_args == snapshot
    assert seen["meta"] is not mutate_args["meta"]
    expected = contract.redaction.redact_value(snapshot)
    traced = [e for e in result.trace.of_type("tool_call") if e["name"] == "mutate"]
    assert [e["arguments"] for e in traced] == [expected]
    assert result.tool_calls[6].arguments == expected
    assert "mutated" not in json.dumps(traced)


def build(secret: str, expose: bool) -> tuple[Contract, FakeModel, dict[str, Any], dict[str, Any]]:
    seen: dict[str, Any] = {}
    contract = Contract(
        planting_tools(secret, seen), secrets=[secret], expose_exception_text=expose
    )
    replies, mutate_args = script(secret)
    return contract, FakeModel(replies), mutate_args, seen


# -- properties ----------------------------------------------------------------------------


@settings(max_examples=settings.default.max_examples // 4)
@given(secret=SECRETS, expose=st.booleans())
@example(secret="Zq'ab\"cd\\ée", expose=True)
@example(secret="Zq''''''", expose=True)
def test_offline_run_never_leaks_a_secret(secret: str, expose: bool) -> None:
    contract, model, mutate_args, seen = build(secret, expose)
    snapshot = copy.deepcopy(mutate_args)
    result = run(model, contract, f"please use {secret}")
    check_result(secret, contract, result, mutate_args, snapshot, seen)
    if expose:  # the exception text reached the model, with the secret cut out
        explode = next(m.content for m in result.messages if m.tool_call_id == "c3")
        assert "db password is [REDACTED]" in json.loads(explode)["message"]


@settings(max_examples=max(3, settings.default.max_examples // 20))
@given(secret=SECRETS, expose=st.booleans())
@example(secret="Zq'ab\"cd\\ée", expose=True)
def test_langchain_run_never_leaks_a_secret(secret: str, expose: bool) -> None:
    contract, model, mutate_args, seen = build(secret, expose)
    snapshot = copy.deepcopy(mutate_args)
    graph = build_agent(model, contract)
    state = contract.start()
    user = Message(role="user", content=f"please use {secret}")
    final = graph.invoke({"messages": to_langchain_messages([user])}, contract_config(state))
    result = state.finish(  # the stop the middleware halted with
        messages=from_langchain_messages(final["messages"]), harness="langchain-invoke"
    )
    check_result(secret, contract, result, mutate_args, snapshot, seen)
    # LangChain's own ToolMessages: content and the application-only artifact.
    tool_messages = [m for m in final["messages"] if m.type == "tool"]
    assert_no_leak(secret, "LangChain ToolMessage contents", *(m.content for m in tool_messages))
    assert_no_leak(
        secret,
        "LangChain ToolMessage artifacts",
        *(json.dumps(m.artifact, ensure_ascii=False, default=repr) for m in tool_messages),
    )
    # The AIMessage in the graph state still carries the model's arguments unmutated.
    ai_calls = [c for m in final["messages"] if m.type == "ai" for c in m.tool_calls]
    assert next(c["args"] for c in ai_calls if c["name"] == "mutate") == snapshot


@settings(max_examples=settings.default.max_examples // 4)
@given(secret=SECRETS, pad=st.sampled_from([0, 250]), flags=st.sampled_from(["--json", ""]))
@example(secret="Zq'ab\"cd\\ée", pad=250, flags="")
def test_cli_output_never_leaks_a_secret(secret: str, pad: int, flags: str) -> None:
    """``calculate <secret>``: the expression is refused (and, padded past 200
    characters, quoted by the schema's error message); the trace holds the argument."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", f"calculate {secret}{'1' * pad}", f"--secret={secret}", "--trace"]
    code = cli_main([*argv, flags] if flags else argv, out=out, err=err)
    assert code == 0, err.getvalue()
    printed = out.getvalue()
    assert "[REDACTED]" in printed
    assert_no_leak(secret, "CLI output", *printed.splitlines(), err.getvalue())


def test_the_leak_check_sees_every_encoding() -> None:
    """A check of the check: each encoding, also nested in JSON text, is caught."""
    secret = "Zq'ab\"cd\\é"
    for form in encodings(secret):
        for text in (form, json.dumps({"message": f"x {form} y"})):
            try:
                assert_no_leak(secret, "test", text)
            except AssertionError:
                continue
            raise AssertionError(f"missed {form!r}")
