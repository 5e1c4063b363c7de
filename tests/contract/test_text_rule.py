"""The text rule on every harness: arbitrary Python strings (lone surrogates included) in
arguments, results, secrets, history and the answer never crash a run, arguments holding a
lone surrogate are refused before anything runs, and everything else is escaped by the one
escape (``agent_contract.text``), with the escape recorded in the trace."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_contract import Budget, ToolSpec
from agent_contract.conformance import observe
from agent_contract.harnesses import RunInput
from agent_contract.messages import Message
from agent_contract.registry import load_harness
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, tool_call
from agent_contract.text import count_surrogates, escape_surrogates, has_surrogates
from agent_contract.trace import REDACTED, RedactionPolicy

SURROGATES = "\ud800\udbff\udc00\udcff\udfff"
TEXT = st.lists(st.one_of(st.sampled_from(SURROGATES), st.text(max_size=4)), max_size=5).map(
    "".join
)
"""Arbitrary text, with lone surrogates in most examples (plain ``st.text()`` almost never
draws one)."""
SECRET = st.lists(
    st.one_of(st.sampled_from(SURROGATES), st.text(st.characters(exclude_characters="[]"))),
    min_size=1,
    max_size=4,
).map(lambda parts: "S3cr3t-" + "".join(parts) + "!")
"""A secret: a fixed head (so it is not a word the trace itself uses) and an arbitrary tail
without ``[`` or ``]`` (a secret inside the replacement text would be found in it)."""
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _run(
    harness: str, argument: str, result: str, secret: str, history: str, answer: str
) -> tuple[RunResult, list[str]]:
    seen: list[str] = []

    def handler(path: str) -> str:
        seen.append(path)
        return f"{result} {secret}"

    spec = ToolSpec(name="read_file", description="Read a file.", parameters=PATH, handler=handler)
    outcome = load_harness(harness)(
        FakeModel([tool_call("read_file", {"path": argument}, id="call_1"), f"done {answer}"]),
        [spec],
        RunInput(
            user=f"go {history}",
            budget=Budget(deadline_seconds=30.0),
            history=(
                Message(role="user", content=f"{history} {secret}"),
                Message(role="assistant", content="noted"),
            ),
            secrets=(secret,),
        ),
    )
    assert isinstance(outcome, RunResult)
    return outcome, seen


@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(argument=TEXT, result=TEXT, secret=SECRET, history=TEXT, answer=TEXT)
def test_any_text_anywhere_never_crashes_a_run(
    harness_name: str, argument: str, result: str, secret: str, history: str, answer: str
) -> None:
    run, seen = _run(harness_name, argument, result, secret, history, answer)
    policy = RedactionPolicy(secrets=(secret,))
    assert run.stop_reason == "answered"
    assert run.output == policy.redact(escape_surrogates(f"done {answer}"))
    (message,) = [m for m in run.messages if m.role == "tool"]
    if has_surrogates(argument):
        # Refused before anything ran, naming the JSON path.
        assert seen == []
        assert (run.tool_calls[0].status, run.tool_calls[0].error_kind) == (
            "error",
            "invalid_arguments",
        )
        assert "$.path: text holds a lone surrogate" in json.loads(message.content)["message"]
    else:
        assert seen == [argument]
        assert message.content == policy.redact(escape_surrogates(f"{result} {secret}"))
        escaped = count_surrogates(f"{result} {secret}")
        (event,) = run.trace.of_type("tool_result")
        assert event.get("escaped_chars", 0) == escaped
    (stop,) = run.trace.of_type("stop")
    assert stop.get("escaped_chars", 0) == count_surrogates(f"done {answer}")
    # Everything the run emits is valid UTF-8, and the secret is nowhere in it.
    obs = observe(run)
    emitted = "\n".join(
        [
            obs.emitted,
            json.dumps(run.to_dict(), ensure_ascii=False),
            *(json.dumps(m.to_dict(), ensure_ascii=False) for m in run.messages),
        ]
    )
    emitted.encode("utf-8")
    assert secret not in obs.emitted
    assert escape_surrogates(secret) not in obs.emitted


def test_the_escape_is_the_backslash_form() -> None:
    assert escape_surrogates("report-\udcff.txt") == "report-\\udcff.txt"
    assert escape_surrogates("report-\udcff.txt") == "report-\udcff.txt".encode(
        "utf-8", "backslashreplace"
    ).decode("utf-8")
    assert escape_surrogates("plain") == "plain"


def test_a_secret_with_a_surrogate_is_redacted_in_both_forms() -> None:
    policy = RedactionPolicy(secrets=("key-\ud800-value",))
    assert policy.redact("a key-\ud800-value b") == f"a {REDACTED} b"
    assert policy.redact("a key-\\ud800-value b") == f"a {REDACTED} b"
    assert policy.redact(json.dumps("key-\\ud800-value")) == f'"{REDACTED}"'


def _fsdecoded_result_run(harness: str) -> RunResult:
    name = os.fsdecode(b"report-\xff.txt")
    spec = ToolSpec(
        name="list_files",
        description="List files.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: {"files": [name]},
    )
    result = load_harness(harness)(
        FakeModel([tool_call("list_files", {}, id="call_ls"), "listed"]),
        [spec],
        RunInput(user="ls", budget=Budget(deadline_seconds=30.0)),
    )
    assert isinstance(result, RunResult)
    return result


def test_a_json_result_parses_back_to_the_escaped_text(harness_name: str) -> None:
    result = _fsdecoded_result_run(harness_name)
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert json.loads(message.content) == {"files": ["report-\\udcff.txt"]}
    assert result.trace.of_type("tool_result")[0]["escaped_chars"] == 1


def test_history_escapes_are_counted_and_survive_translation() -> None:
    message = Message(role="user", content="a\udcffb")
    assert message.content == "a\\udcffb"
    assert message.escaped_chars == 1
    assert Message.from_dict(message.to_dict()).escaped_chars == 1
    call = Message(
        role="assistant",
        tool_calls=(tool_call("x", {"k\ud800": ["\udfff"]}, id="c\udc00").tool_calls[0],),
    )
    assert call.escaped_chars == 3
    assert call.tool_calls[0].id == "c\\udc00"
    assert call.tool_calls[0].arguments == {"k\\ud800": ["\\udfff"]}


def test_arguments_rule_names_the_path() -> None:
    spec = ToolSpec(
        name="t",
        description="T.",
        parameters={"type": "object"},
        handler=lambda **kwargs: None,
    )
    cases: dict[str, Any] = {
        "$.a[1]: text holds a lone surrogate (U+D800)": {"a": ["ok", "\ud800"]},
        "$['two words']: text holds": {"two words": "\udfff"},
        "$: the key 'k\\\\udcff' holds a lone surrogate": {"k\udcff": 1},
        "$.n: nan is not a JSON number": {"n": float("nan")},
        "$.s: a value of type set is not JSON data": {"s": {1}},
    }
    for expected, arguments in cases.items():
        problem = spec.validate(arguments)
        assert problem is not None, expected
        assert problem.startswith(expected), (expected, problem)
