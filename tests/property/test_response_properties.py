"""Response-validation properties: every model reply maps to exactly one of a final
answer, tool calls, or one or more structured contract violations; an invalid reply is
never an answer, on the core, the offline loop and the LangChain message mapping."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent_contract import Budget, Contract, ToolSpec, run
from agent_contract.messages import Completion, ToolCall
from agent_contract.runtime import Violation, validate_response
from agent_contract.testing import FakeModel
from agent_contract_langchain import run_agent
from agent_contract_langchain.chat_model import message_id_for
from agent_contract_langchain.messages import ai_message_to_completion, completion_to_ai_message

JSON_VALUES = st.recursive(
    st.one_of(
        st.sampled_from([None, True, False, 0, -1, 2**70, 1.5, -0.0, "", "x", "é 中"]),
        st.text(max_size=4),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=5,
)
"""JSON values (the validator cares about their shape, not their contents)."""

IDS = st.one_of(st.none(), st.just(""), st.sampled_from(["call_1", "call_2", "call_3", " "]))
"""Missing, empty, whitespace and colliding ids (three names for up to four calls)."""
NAMES = st.one_of(st.sampled_from(["", " ", "\t"]), st.sampled_from(["echo", "nope", "x-y_1"]))
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["text", "n", "extra"]), JSON_VALUES, max_size=3),
    st.lists(JSON_VALUES, max_size=3),
    JSON_VALUES.map(json.dumps),  # JSON text of any value: an object is accepted and parsed
    st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3).map(json.dumps),
    st.text(max_size=16),  # garbage
    st.sampled_from(["", "{", "{'a': 1}", "NaN", "[" * 5000, '{"a":' * 5000, "1" * 5000]),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
)
CALLS = st.builds(ToolCall, id=IDS, name=NAMES, arguments=ARGUMENTS)
TEXTS = st.one_of(st.just(""), st.sampled_from([" ", "\n\t ", "\u3000"]), st.text(max_size=12))
COMPLETIONS = st.builds(
    lambda text, calls: Completion(text=text, tool_calls=tuple(calls)),
    TEXTS,
    st.lists(CALLS, max_size=4),
)
SEEN_IDS = st.lists(st.sampled_from(["call_1", "call_9"]), max_size=2)


def expected_codes(
    completion: Completion, seen_ids: list[str], commentary: str = "keep"
) -> list[str]:
    """The response contract, restated independently (docs/CONTRACT.md, 'Response shape'): text
    beside tool calls is commentary, or a violation when the contract refuses it."""
    codes: list[str] = []
    has_text = completion.text.strip() != ""
    if has_text and completion.tool_calls and commentary == "refuse":
        codes.append("text_and_tool_calls")
    if not has_text and not completion.tool_calls:
        codes.append("empty_response")
    seen = set(seen_ids)
    for call in completion.tool_calls:
        if call.name.strip() == "":
            codes.append("empty_tool_name")
        if not call.id:
            codes.append("missing_call_id")
        elif call.id in seen:
            codes.append("duplicate_call_id")
        else:
            seen.add(call.id)
        arguments = call.arguments
        if isinstance(arguments, str) and not arguments.strip():
            arguments = {}  # no argument text is no arguments (every provider client)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                codes.append("unparseable_arguments")
                continue
        if not isinstance(arguments, dict):
            codes.append("arguments_not_object")
    return codes


def shape_of(calls: tuple[ToolCall, ...], violations: tuple[Violation, ...]) -> str:
    """Exactly one of the three outcomes, or ``ambiguous``."""
    outcomes = [
        name
        for name, holds in (
            ("final", not violations and not calls),
            ("tool_calls", not violations and len(calls) >= 1),
            ("invalid", len(violations) >= 1),
        )
        if holds
    ]
    return outcomes[0] if len(outcomes) == 1 else "ambiguous"


@given(completion=COMPLETIONS, seen_ids=SEEN_IDS, commentary=st.sampled_from(["keep", "refuse"]))
@example(
    completion=Completion(tool_calls=(ToolCall(id="a", name="echo", arguments="[" * 100_000),)),
    seen_ids=[],
    commentary="keep",
)
def test_every_reply_has_exactly_one_meaning(
    completion: Completion, seen_ids: list[str], commentary: Any
) -> None:
    calls, violations = validate_response(completion, seen_ids=seen_ids, commentary=commentary)
    shape = shape_of(calls, violations)
    assert shape != "ambiguous"
    assert [v.code for v in violations] == expected_codes(completion, seen_ids, commentary)
    for violation in violations:
        assert isinstance(violation, Violation)
        assert violation.message
        assert json.loads(json.dumps(violation.to_dict())) == violation.to_dict()
    # Calls come back in issue order with their ids and names; valid calls carry dicts.
    assert [(c.id, c.name) for c in calls] == [(c.id, c.name) for c in completion.tool_calls]
    if shape == "tool_calls":
        assert all(isinstance(c.arguments, dict) for c in calls)
        if commentary == "refuse":
            assert completion.text.strip() == ""
    if shape == "final":
        assert completion.text.strip() != ""


@given(completion=COMPLETIONS)
def test_run_state_never_answers_an_invalid_reply(completion: Completion) -> None:
    state = Contract().start(run_id="run-prop")
    assert state.check_before_model_call([]) is None
    decision = state.accept_response(completion)
    _, violations = validate_response(completion)
    if violations:
        assert decision.shape == "invalid"
        assert decision.text == ""
        assert decision.stop is not None
        assert decision.stop.reason == "invalid_response"
        assert [v.code for v in decision.violations] == [v.code for v in violations]
        # One bound refusal per distinct non-empty id, each of kind invalid_call.
        ids = list(dict.fromkeys(c.id for c in completion.tool_calls if c.id))
        assert [r.tool_call_id for r in decision.refusals] == ids
        assert all(r.error_kind == "invalid_call" and not r.ok for r in decision.refusals)
        events = state.view.trace.of_type("contract_violation")
        assert [e["code"] for e in events] == [v.code for v in violations]
    else:
        assert decision.shape in ("final", "tool_calls")
        assert (decision.shape == "final") == (not completion.tool_calls)
    # Judging a reply never records an answer by itself: only a driver's halt does.
    assert state.finish(messages=[]).output is None


def _echo_tool(ran: list[Any]) -> ToolSpec:
    def handler(**arguments: Any) -> str:
        ran.append(arguments)
        return "echoed"

    return ToolSpec(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "additionalProperties": True},
        handler=handler,
    )


@settings(max_examples=settings.default.max_examples // 2)
@given(completion=COMPLETIONS)
def test_offline_loop_never_answers_an_invalid_reply(completion: Completion) -> None:
    ran: list[Any] = []
    contract = Contract([_echo_tool(ran)], budget=Budget(max_identical_calls=4))
    result = run(FakeModel([completion, "done"]), contract, "hi")
    calls, violations = validate_response(completion)
    shape = shape_of(calls, violations)
    if shape == "invalid":
        assert result.stop_reason == "invalid_response"
        assert result.output is None
        assert ran == []
    elif shape == "final":
        assert result.stop_reason == "answered"
        assert result.output == contract.redaction.redact(completion.text)
    else:
        assert result.stop_reason == "answered"
        assert result.output == "done"
        # Each call answered once, bound to its id, in issue order.
        answered = [m.tool_call_id for m in result.messages if m.role == "tool"]
        assert answered == [c.id for c in completion.tool_calls]
        assert len(ran) == sum(1 for c in calls if c.name == "echo")
    assert (result.output is not None) == (shape != "invalid")


@given(completion=COMPLETIONS)
@example(completion=Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=math.inf),)))
@example(completion=Completion(tool_calls=(ToolCall(id=None, name="", arguments=math.nan),)))
def test_langchain_mapping_keeps_the_verdict(completion: Completion) -> None:
    """Completion -> AIMessage -> Completion keeps every call and every violation."""
    message = completion_to_ai_message(completion, message_id=message_id_for(1, completion))
    back = ai_message_to_completion(message)
    assert back.text == completion.text
    assert [(c.id, c.name) for c in back.tool_calls] == [
        (c.id, c.name) for c in completion.tool_calls
    ]
    before = [v.code for v in validate_response(completion)[1]]
    after = [v.code for v in validate_response(back)[1]]
    assert after == before


@settings(max_examples=max(3, settings.default.max_examples // 20))
@given(completion=COMPLETIONS)
@example(completion=Completion(tool_calls=(ToolCall(id="a", name="echo", arguments=math.inf),)))
# a schema without "properties" (BaseTool.args raised KeyError in the tool hook)
@example(completion=Completion(tool_calls=(ToolCall(id="call_1", name="echo", arguments={}),)))
def test_langchain_harness_reaches_the_offline_verdict(completion: Completion) -> None:
    """The same reply ends the same way on create_agent + the contract middleware."""

    def outcome(harness: Any) -> tuple[str, str | None, list[str | None]]:
        ran: list[Any] = []
        contract = Contract([_echo_tool(ran)], budget=Budget(max_identical_calls=4))
        result = harness(FakeModel([completion, "done"]), contract, "hi")
        return result.stop_reason, result.output, [r.error_kind for r in result.tool_calls]

    assert outcome(run_agent) == outcome(run)
