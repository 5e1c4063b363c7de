"""The finish-reasons boundary: only a reply the model finished counts. A reply cut by
the output limit (finish reason ``length``, Anthropic's ``max_tokens``), cut by the
provider's content filter or refused (a refusal text, the stop reason ``refusal``) is
never the answer and runs none of its calls, even when a cut call's arguments parse; its
stop says which (``truncated_response``, ``content_filtered``, ``refused``).
"""

from __future__ import annotations

from typing import Any, Final

from ...harnesses import Observation
from ...messages import Completion, ToolCall
from ...testing import FakeModel
from ..base import (
    Boundary,
    BoundaryDefinition,
    Check,
    Problem,
    Scenario,
    call_then_answer,
    reply_never_runs,
)
from ..fixtures import PLANTED_SECRET, Probe, basic_tools
from .response_shape import check_tool_runs

__all__ = ["DEFINITION"]


def _emitted(text: str, boundary: str) -> Check:
    """What the run emitted (trace, summary, tool messages) holds ``text``."""

    def check(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
        if text not in obs.emitted:
            return [Problem(boundary=boundary, message=f"the run did not report {text!r}")]
        return []

    return check


def _unfinished(
    name: str, description: str, reply: Completion, stop_reason: str, **fields: Any
) -> Scenario:
    """A scenario whose only reply the model did not finish (its finish reason)."""
    return reply_never_runs(
        name=name,
        boundary="finish_reasons",
        description=description,
        reply=reply,
        stop_reason=stop_reason,
        **fields,
    )


_UNFINISHED: Final = (
    _unfinished(
        "tool_call_cut_by_length",
        "a tool call in a reply cut by the output limit (finish reason length) never "
        "runs, even when its arguments parse: truncated_response",
        Completion(
            tool_calls=(ToolCall(id="call_cut", name="echo", arguments='{"text": "10'),),
            finish_reason="length",
        ),
        "truncated_response",
        extra=(check_tool_runs(0, "finish_reasons"),),
    ),
    _unfinished(
        "parsed_tool_call_cut_by_max_tokens",
        "a call whose cut arguments still parse as an object (Anthropic's max_tokens) "
        "does not run: truncated_response",
        Completion(
            tool_calls=(ToolCall(id="toolu_cut", name="echo", arguments={"text": "10"}),),
            finish_reason="max_tokens",
        ),
        "truncated_response",
        extra=(check_tool_runs(0, "finish_reasons"),),
    ),
    _unfinished(
        "text_cut_by_length",
        "a text reply cut by the output limit is never the answer: truncated_response",
        Completion(text="The total is 1", finish_reason="length"),
        "truncated_response",
    ),
    _unfinished(
        "content_filtered_reply",
        "a reply the provider's content filter cut is never the answer: content_filtered",
        Completion(text="Here is how to", finish_reason="content_filter"),
        "content_filtered",
    ),
    _unfinished(
        "provider_refusal",
        "a provider's refusal is its own stop, refused, not a contract violation; its "
        "text is reported, redacted",
        Completion(
            text="", refusal=f"I can't help with that ({PLANTED_SECRET}).", finish_reason="stop"
        ),
        "refused",
        extra=(_emitted("the model refused: I can't help with that", "finish_reasons"),),
    ),
    _unfinished(
        "refusal_stop_reason_with_calls",
        "a reply with the stop reason refusal (Anthropic) runs none of its calls: refused",
        Completion(
            text="I won't do that.",
            tool_calls=(ToolCall(id="toolu_ref", name="echo", arguments={"text": "x"}),),
            finish_reason="refusal",
        ),
        "refused",
        extra=(check_tool_runs(0, "finish_reasons"),),
    ),
)
"""Replies the model did not finish."""


DEFINITION: Final = BoundaryDefinition(
    boundary=Boundary(
        id="finish_reasons",
        label="finish reasons",
        rule="only a reply the model finished counts: a cut, filtered or refused reply is "
        "never an answer and runs no call",
        keep_it=(
            "Pass the provider's finish reason and refusal in the `Completion` "
            "(`finish_reason`, `refusal`) before `RunState.accept_response` judges it: a "
            "reply cut by the output limit, filtered or refused is never an answer and runs "
            "no call (`truncated_response`, `content_filtered`, `refused`)."
        ),
    ),
    scenarios=(
        call_then_answer(
            name="finished_tool_call_runs",
            boundary="finish_reasons",
            description="a call in a reply the model finished (finish reason tool_calls) "
            "runs as any call does: the finish reason refuses only what was cut",
            call=Completion(
                tool_calls=(ToolCall(id="call_done", name="echo", arguments={"text": "10"}),),
                finish_reason="tool_calls",
            ),
            answer="echoed 10",
            result=("success", None),
            tools=basic_tools,
            output_contains=("echoed 10",),
            extra=(check_tool_runs(1, "finish_reasons"),),
        ),
        *_UNFINISHED,
    ),
)
"""The finish reasons boundary: its row and its scenarios."""
