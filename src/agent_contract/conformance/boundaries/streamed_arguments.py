"""The streamed-argument-integrity boundary (capability ``streamed_replies``): a tool
call whose arguments reach the client as a stream of pieces runs only with exactly the
text those pieces join to, and only when it is whole.

Each scenario's reply is streamed in pieces it names (the ``stream`` extras of
:mod:`agent_contract.conformance.wire_check`): a column whose client reads a stream
(``check --wire``'s streamed columns) is sent the pieces; a column whose client does not
stream reports the scenario ``no form``. In process, the streaming columns
(``langchain-stream``, ``pydantic-ai-stream``) declare ``streamed_replies``: their scripted
model streams in the same pieces (:mod:`agent_contract.streaming`); a harness that does
not declare it leaves the row ``not checked (not declared)``. What each observes:

- ``streamed_call_cut_mid_json``: a call cut inside its JSON by the output limit
  (finish reason ``length``) never runs: the run stops ``truncated_response``, the call
  answered ``invalid_call`` (nothing repaired the cut text);
- ``streamed_malformed_json``: argument pieces that join to text that is not JSON are a
  contract violation: ``invalid_response``, nothing runs;
- ``streamed_arguments_in_small_pieces``: valid arguments streamed one character at a
  time (escapes, quotes, accents and an emoji split across pieces) run once, with
  exactly the joined value;
- ``streamed_calls_interleaved``: two calls whose pieces arrive by turns (OpenAI's
  chunks carry each call's index) each run once with their own arguments, in order
  (Anthropic's stream sends one block at a time: no form there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...harnesses import Observation
from ...messages import Completion, ToolCall
from ...testing import FakeModel, tool_call
from ..base import (
    Boundary,
    BoundaryDefinition,
    Check,
    Problem,
    Scenario,
    call_then_answer,
    reply_never_runs,
)
from ..checks import check_contents, check_model_calls, check_ran
from ..fixtures import Probe, basic_tools

__all__ = ["DEFINITION", "check_received"]

_BOUNDARY: Final = "streamed_arguments"
_NEEDS: Final = ("streamed_replies",)
_TRICKY: Final = 'a "quoted" caf\u00e9 \\ back\\slash, a tab\there, a line\nend \u2713 \U0001f600'
"""A text whose JSON has escapes, quotes, accents and an emoji to split across pieces."""


def check_received(name: str, texts: Sequence[str]) -> Check:
    """Tool ``name`` got exactly ``texts`` as its ``text`` argument, one run each
    (nothing lost, repaired or mixed up on the way from the pieces). The order the
    handlers ran in is not compared: a framework may run a reply's calls concurrently
    (LangGraph's tool node does); the tool messages' order is the call-ID binding row's."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        got = [str(args.get("text")) for n, args in probe.calls if n == name]
        if sorted(got) == sorted(texts):
            return []
        return [
            Problem(
                boundary=_BOUNDARY,
                message=f"{name} ran with {[t[:60] for t in got]!r}; expected exactly "
                f"{[t[:60] for t in texts]!r} (the streamed pieces joined)",
            )
        ]

    return check


def _refused(name: str, description: str, reply: Completion, stop_reason: str) -> Scenario:
    """A streamed reply that must never run: the run stops ``stop_reason`` after one
    model call, the call answered ``invalid_call``."""
    return reply_never_runs(
        name=name,
        boundary=_BOUNDARY,
        description=description,
        reply=reply,
        stop_reason=stop_reason,
        requires=_NEEDS,
        extras={"stream": ("pieces:3",)},
        extra=(check_ran("echo", 0, _BOUNDARY),),
    )


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id=_BOUNDARY,
        label="streamed arguments",
        rule="a streamed tool call runs only whole, with exactly the text its pieces join to",
        keep_it=(
            "Join a streamed call's argument pieces by the call's index and hand the "
            "joined text to `RunState.accept_response` as it is: never close cut JSON, "
            "repair malformed text or run a call from a reply the output limit cut."
        ),
    ),
    scenarios=(
        _refused(
            "streamed_call_cut_mid_json",
            "a call whose streamed arguments the output limit cut inside their JSON "
            "(finish reason length) never runs: truncated_response, nothing repaired",
            Completion(
                tool_calls=(ToolCall(id="call_cut", name="echo", arguments='{"text": "a long te'),),
                finish_reason="length",
            ),
            "truncated_response",
        ),
        _refused(
            "streamed_malformed_json",
            "streamed argument pieces that join to text that is not JSON are a contract "
            "violation: invalid_response, nothing runs",
            Completion(
                tool_calls=(ToolCall(id="call_bad", name="echo", arguments='{"text": "hi",, }'),),
                finish_reason="tool_calls",
            ),
            "invalid_response",
        ),
        call_then_answer(
            name="streamed_arguments_in_small_pieces",
            boundary=_BOUNDARY,
            description="valid arguments streamed one character at a time (escapes, quotes, "
            "accents, an emoji) run once, with exactly the joined value",
            call=tool_call("echo", {"text": _TRICKY}, id="call_small"),
            answer="done",
            result=("success", None),
            tools=basic_tools,
            requires=_NEEDS,
            extras={"stream": ("pieces:1",)},
            extra=(check_received("echo", [_TRICKY]), check_model_calls(2, _BOUNDARY)),
        ),
        Scenario(
            name="streamed_calls_interleaved",
            boundary=_BOUNDARY,
            description="two calls whose streamed pieces arrive by turns each run once, "
            "with their own arguments, in order",
            script=(
                Completion(
                    tool_calls=(
                        ToolCall(id="call_a", name="echo", arguments={"text": "first call"}),
                        ToolCall(id="call_b", name="echo", arguments={"text": "second call"}),
                    ),
                    finish_reason="tool_calls",
                ),
                "done",
            ),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("echo", "echo"),
            results=(("success", None), ("success", None)),
            requires=_NEEDS,
            extras={"stream": ("pieces:2", "interleaved")},
            extra=(
                check_received("echo", ["first call", "second call"]),
                check_contents(["echo: first call", "echo: second call"], _BOUNDARY),
                check_model_calls(2, _BOUNDARY),
            ),
        ),
    ),
)
"""The streamed arguments boundary: its row and its scenarios."""
