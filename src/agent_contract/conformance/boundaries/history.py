"""The history boundary: earlier turns reach the model in order, and only as a
conversation a provider accepts (text turns, tool turns with their ids, histories a
provider would reject, the second turn of a checkpointed thread).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ...harnesses import Observation
from ...messages import Message
from ...testing import FakeModel, tool_call
from ..base import Boundary, BoundaryDefinition, Check, Problem, Scenario
from ..checks import check_model_calls, check_output
from ..fixtures import EARLIER_QUESTION, Probe, basic_tools, earlier_call, earlier_result

__all__ = ["DEFINITION", "check_history", "check_history_sent"]


def check_history(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    """The model's first call got the two earlier text turns, then the new question."""
    if not model.calls:
        return [Problem(boundary="history", message="the model was never called")]
    sent = [(m.role, m.content) for m in model.calls[0]["messages"] if m.role != "system"]
    wanted = [
        ("user", "what is 2+2?"),
        ("assistant", "4"),
        ("user", "and in words?"),
    ]
    if sent != wanted:
        return [Problem(boundary="history", message=f"sent {sent}, expected {wanted}")]
    return []


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


def _broken_history(name: str, description: str, history: tuple[Message, ...]) -> Scenario:
    """A scenario whose history breaks the history boundary: the run stops with
    ``invalid_history`` before the model is called."""
    return Scenario(
        name=name,
        boundary="history",
        description=description,
        script=("this answer must never be produced",),
        tools=basic_tools,
        history=history,
        stop_reason="invalid_history",
        results=tuple(("success", None) for m in history if m.role == "tool"),
        extra=(check_model_calls(0, "history"),),
    )


_TOOL_HISTORY: Final = (
    EARLIER_QUESTION,
    earlier_call("old_1"),
    earlier_result("old_1"),
    Message(role="assistant", content="it said a"),
)


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="history",
        label="history",
        rule=(
            "earlier turns reach the model in order, and only as a conversation a provider "
            "accepts: every tool message answers a call of the turn before it, every call "
            "is answered once, ids are unique"
        ),
        keep_it=(
            "Pass earlier turns as messages before the new user turn and hand the transcript "
            "to `RunState.check_before_model_call(messages)` before every model call, as "
            "late as possible (what the model really gets): an orphan tool result, an "
            "unanswered call or a reused id stops the run with `invalid_history`, and the "
            "model is not called."
        ),
    ),
    scenarios=(
        Scenario(
            name="history_replayed",
            boundary="history",
            description="earlier turns reach the model before the new one, in order",
            script=("four",),
            tools=basic_tools,
            user="and in words?",
            history=(
                Message(role="user", content="what is 2+2?"),
                Message(role="assistant", content="4"),
            ),
            stop_reason="answered",
            output_contains=("four",),
            extra=(check_history,),
        ),
        Scenario(
            name="history_with_tool_calls",
            boundary="history",
            description="a history with answered tool calls is replayed and the run goes on",
            script=(tool_call("echo", {"text": "b"}, id="call_new"), "done"),
            tools=basic_tools,
            history=(EARLIER_QUESTION, earlier_call("old_1"), earlier_result("old_1")),
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None), ("success", None)),
        ),
        _broken_history(
            "history_orphan_tool_result",
            "a tool message whose assistant turn is not there is never sent to the model",
            (EARLIER_QUESTION, earlier_result("old_1")),
        ),
        _broken_history(
            "history_unanswered_call",
            "an assistant turn whose call has no result is never sent to the model",
            (EARLIER_QUESTION, earlier_call("old_1"), Message(role="user", content="and now?")),
        ),
        _broken_history(
            "history_duplicate_ids",
            "two calls of one conversation sharing an id are never sent to the model",
            (
                EARLIER_QUESTION,
                earlier_call("old_1"),
                earlier_result("old_1"),
                earlier_call("old_1", "b"),
                earlier_result("old_1", "b"),
            ),
        ),
        Scenario(
            name="second_turn_on_a_thread",
            boundary="history",
            description="the second turn of a checkpointed thread whose first turn called a tool",
            script=(tool_call("echo", {"text": "first"}), "first answer", "second answer"),
            tools=basic_tools,
            user="and now?",
            extras={"earlier_turns": ("first question",)},
            requires=("threads",),
            stop_reason="answered",
            results=(("success", None),),  # the first turn's, in the thread's transcript
            extra=(check_output("second answer", "history"),),
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
    ),
)
"""The history boundary: its row and its scenarios."""
