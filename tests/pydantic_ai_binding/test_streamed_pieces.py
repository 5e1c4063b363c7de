"""contract_model(chunk_chars=..., interleave_calls=...): the scripted PydanticAI model
streams a reply's text and argument text in pieces that join to exactly what it sent."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)

from agent_contract.messages import Completion, ToolCall
from agent_contract.testing import FakeModel
from agent_contract_pydantic_ai.model import contract_model


def _events(chunk_chars: int | None, interleave: bool) -> list[Any]:
    fake = FakeModel(
        [
            Completion(
                text="on it",
                tool_calls=(
                    ToolCall(id="c1", name="echo", arguments={"text": "first call"}),
                    ToolCall(id="c2", name="echo", arguments={"text": "second"}),
                ),
                finish_reason="tool_calls",
            ),
            "done",
        ]
    )
    ran: list[str] = []
    agent = Agent(
        contract_model(fake, chunk_chars=chunk_chars, interleave_calls=interleave),
    )

    @agent.tool_plain
    def echo(text: str) -> str:
        ran.append(text)
        return text

    async def collect() -> list[Any]:
        async with agent.run_stream_events("go") as stream:
            return [e async for e in stream]

    events = asyncio.run(collect())
    # PydanticAI runs the two calls concurrently (sync tools on worker threads), so the
    # order they ran in is not fixed; each ran exactly once.
    assert sorted(ran) == ["first call", "second"]
    return events


def _pieces(events: list[Any]) -> tuple[list[str], list[tuple[int, str]]]:
    text: list[str] = []
    calls: list[tuple[int, str]] = []
    for event in events:
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            text.append(event.part.content)
        elif isinstance(event, PartStartEvent) and isinstance(event.part, ToolCallPart):
            calls.append((event.index, str(event.part.args or "")))
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            text.append(event.delta.content_delta)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, ToolCallPartDelta):
            calls.append((event.index, str(event.delta.args_delta or "")))
    return text, calls


def test_pieces_by_turns_join_to_each_calls_text() -> None:
    text, calls = _pieces(_events(3, True))
    assert "".join(text) == "on itdone"
    assert all(len(piece) <= 3 for piece in text)
    assert all(len(piece) <= 3 for _, piece in calls)
    parts = sorted({index for index, _ in calls})
    joined = ["".join(p for i, p in calls if i == index) for index in parts]
    assert joined == ['{"text": "first call"}', '{"text": "second"}']
    order = [index for index, _ in calls]
    assert order[:4] == [parts[0], parts[1], parts[0], parts[1]]  # by turns
