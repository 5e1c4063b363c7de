"""One canonical serialization per call: the call's canonical text is computed once and
shared (the repeated-call key, the rewritten-arguments check, the approval token)."""

from __future__ import annotations

from unittest import mock

from agent_contract import canonical
from agent_contract.messages import ToolCall
from agent_contract.runtime.attempts import _same
from agent_contract.runtime.planning import call_key


def test_canonical_arguments_computed_once_per_call() -> None:
    call = ToolCall(id="c1", name="echo", arguments={"b": [1, 2], "a": "x"})
    with mock.patch.object(canonical, "rfc8785", wraps=canonical.rfc8785) as spy:
        first = call.canonical_arguments
        again = call.canonical_arguments
        key = call_key(call.name, call.arguments, canonical=first)
    assert first == again == '{"a":"x","b":[1,2]}'
    assert spy.dumps.call_count == 1
    assert key == call_key(call.name, {"a": "x", "b": [1, 2]})


def test_same_is_canonical_equality() -> None:
    call = ToolCall(id="c1", name="echo", arguments={"n": 1, "flag": True, "s": "x"})
    assert _same({"s": "x", "flag": True, "n": 1}, call)  # key order does not matter
    assert _same({"n": 1.0, "flag": True, "s": "x"}, call)  # one JSON number
    assert not _same({"n": True, "flag": True, "s": "x"}, call)  # true is not 1
    assert not _same({"n": 1, "flag": 1, "s": "x"}, call)
    assert not _same({"n": 1, "flag": True}, call)
    assert not _same({"n": 1, "flag": True, "s": "y"}, call)


def test_same_on_values_nested_past_the_recursion_limit() -> None:
    deep: list[object] = []
    for _ in range(5_000):
        deep = [deep]
    call = ToolCall(id="c1", name="echo", arguments={"v": deep})
    assert _same({"v": deep}, call)
