"""The stream driver's check that every produced tool call came through the messages
stream (``driving._check_streamed_calls``): by call id, else by its message."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk

from agent_contract.errors import ConfigurationError
from agent_contract_langchain.driving import _check_streamed_calls


def _call(call_id: str) -> dict[str, object]:
    return {"name": "echo", "args": {"text": "a"}, "id": call_id, "type": "tool_call"}


def _chunk(message_id: str, *ids: str) -> AIMessageChunk:
    return AIMessageChunk(
        content="",
        id=message_id,
        tool_call_chunks=[
            {
                "name": "echo",
                "args": '{"text": "a"}',
                "id": i,
                "index": n,
                "type": "tool_call_chunk",
            }
            for n, i in enumerate(ids)
        ],
    )


def test_calls_that_streamed_pass() -> None:
    produced = [AIMessage(content="", id="m1", tool_calls=[_call("a"), _call("b")])]
    _check_streamed_calls([_chunk("m1", "a", "b")], produced)


def test_an_id_changed_in_place_after_it_streamed_is_left_to_the_gate() -> None:
    produced = [AIMessage(content="", id="m1", tool_calls=[_call("elsewhere"), _call("b")])]
    _check_streamed_calls([_chunk("m1", "a", "b")], produced)


def test_a_message_that_never_streamed_loses_its_calls() -> None:
    produced = [AIMessage(content="", id="m2", tool_calls=[_call("c")])]
    with pytest.raises(ConfigurationError, match=r"\['c'\]"):
        _check_streamed_calls([_chunk("m1", "a")], produced)


def test_a_call_added_to_a_streamed_message_is_lost() -> None:
    produced = [AIMessage(content="", id="m1", tool_calls=[_call("a"), _call("added")])]
    with pytest.raises(ConfigurationError, match=r"\['added'\]"):
        _check_streamed_calls([_chunk("m1", "a")], produced)
