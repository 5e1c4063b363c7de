"""FakeModel: loud when dry, records what it was sent, deterministic ids, stateless resume."""

from __future__ import annotations

import pytest

from agent_contract.budget import Budget
from agent_contract.errors import ConfigurationError, ScriptExhaustedError
from agent_contract.loop import run
from agent_contract.messages import Completion, Message, TokenUsage, ToolCall
from agent_contract.model import Model
from agent_contract.testing import AUTO_ID, FakeModel, estimate_tokens, tool_call, tool_calls
from agent_contract.tools import ToolSpec

USER = [Message(role="user", content="hi")]


def echo() -> ToolSpec:
    return ToolSpec(
        name="echo",
        description="echo",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=lambda **kw: kw,
    )


def test_is_a_model() -> None:
    assert isinstance(FakeModel(["x"]), Model)


def test_replies_in_order() -> None:
    model = FakeModel(["one", Completion(text="two")])
    assert model.complete(USER).text == "one"
    assert model.remaining == 1
    assert model.complete(USER).text == "two"
    assert model.remaining == 0


@pytest.mark.parametrize("length", [0, 1, 3], ids=lambda n: f"script-of-{n}")
def test_loud_when_dry_and_never_wraps_around(length: int) -> None:
    model = FakeModel([f"reply {i}" for i in range(length)])
    for i in range(length):
        assert model.complete(USER).text == f"reply {i}"
    for extra in (1, 2):
        with pytest.raises(ScriptExhaustedError) as info:
            model.complete(USER)
        error = info.value
        assert error.call_number == length + extra
        assert error.script_length == length
        assert f"on call {length + extra}" in str(error)
        assert f"script has {length}" in str(error)


def test_script_exhausted_is_an_assertion_error() -> None:
    # so a plain test runner reports it as a failed expectation
    with pytest.raises(AssertionError):
        FakeModel([]).complete(USER)


def test_a_dry_model_is_never_an_empty_answer() -> None:
    model = FakeModel(["only"])
    model.complete(USER)
    with pytest.raises(ScriptExhaustedError):
        model.complete(USER)  # raised instead of returning Completion(text="")


def test_dry_model_in_a_run_raises_instead_of_stopping() -> None:
    model = FakeModel([tool_call("echo", {"text": "a"})])
    with pytest.raises(ScriptExhaustedError, match="call 2"):
        run(model, [echo()], "go", budget=Budget(max_model_steps=5))


def test_records_every_call() -> None:
    tools = [echo().definition()]
    model = FakeModel(["a", "b"])
    model.complete(USER, tools, max_output_tokens=64, temperature=0.5)
    model.complete([*USER, Message(role="assistant", content="a")])
    assert len(model.calls) == 2
    first, second = model.calls
    assert first == {
        "messages": USER,
        "tools": tools,
        "max_output_tokens": 64,
        "temperature": 0.5,
    }
    assert second["tools"] is None
    assert [m.content for m in second["messages"]] == ["hi", "a"]


def test_recorded_calls_are_copies() -> None:
    messages = list(USER)
    tools = [echo().definition()]
    model = FakeModel(["a"])
    model.complete(messages, tools)
    messages.append(Message(role="assistant", content="later"))
    tools[0]["function"]["name"] = "renamed"
    tools.append({"type": "function"})
    assert model.calls[0]["messages"] == USER
    assert model.calls[0]["tools"] == [echo().definition()]


def test_dry_calls_are_recorded_too() -> None:
    model = FakeModel([])
    with pytest.raises(ScriptExhaustedError):
        model.complete(USER)
    assert len(model.calls) == 1


def test_last_messages() -> None:
    model = FakeModel(["a", "b"])
    model.complete(USER)
    second = [*USER, Message(role="assistant", content="a"), Message(role="user", content="more")]
    model.complete(second)
    assert model.last_messages() == second


def test_last_messages_raises_when_never_called() -> None:
    with pytest.raises(AssertionError, match="never called"):
        FakeModel(["a"]).last_messages()


def test_callable_replies_read_the_transcript() -> None:
    def reply(messages: list[Message]) -> str:
        return f"you said {messages[-1].content!r} after {len(messages) - 1} messages"

    model = FakeModel([reply])
    assert model.complete(USER).text == "you said 'hi' after 0 messages"


def test_callable_can_return_a_completion_with_auto_ids() -> None:
    model = FakeModel([lambda messages: tool_call("echo", {"text": messages[-1].content})])
    completion = model.complete(USER)
    assert completion.tool_calls == (
        ToolCall(id="call_1_1", name="echo", arguments={"text": "hi"}),
    )


def test_callable_returning_junk_is_a_configuration_error() -> None:
    model = FakeModel([lambda messages: 42])  # type: ignore[list-item, return-value]
    with pytest.raises(ConfigurationError, match="returned int"):
        model.complete(USER)


@pytest.mark.parametrize("reply", [42, None, b"bytes"], ids=["int", "none", "bytes"])
def test_script_items_are_checked(reply: object) -> None:
    with pytest.raises(ConfigurationError, match="not a scripted reply"):
        FakeModel([reply])  # type: ignore[list-item]


def test_auto_ids_are_deterministic_per_step() -> None:
    model = FakeModel(
        [
            tool_calls(("echo", {"text": "a"}), ("echo", {"text": "b"})),
            tool_call("echo", {"text": "c"}),
            "done",
        ]
    )
    result = run(model, [echo()], "go")
    ids = [r.id for r in result.tool_calls]
    assert ids == ["call_1_1", "call_1_2", "call_2_1"]
    again = FakeModel(
        [
            tool_calls(("echo", {"text": "a"}), ("echo", {"text": "b"})),
            tool_call("echo", {"text": "c"}),
            "done",
        ]
    )
    assert [r.id for r in run(again, [echo()], "go").tool_calls] == ids


def test_scripted_completion_is_not_mutated_by_id_assignment() -> None:
    scripted = tool_call("echo", {"text": "a"})
    FakeModel([scripted]).complete(USER)
    assert scripted.tool_calls[0].id == AUTO_ID


def test_explicit_ids_are_kept() -> None:
    model = FakeModel([tool_call("echo", {}, id="my-id")])
    assert model.complete(USER).tool_calls[0].id == "my-id"


def test_explicit_none_id_is_a_missing_id() -> None:
    model = FakeModel([tool_call("echo", {"text": "a"}, id=None), "never"])
    completion = FakeModel([tool_call("echo", {}, id=None)]).complete(USER)
    assert completion.tool_calls[0].id is None
    result = run(model, [echo()], "go")
    assert result.stop_reason == "invalid_response"
    assert "has no id" in result.stop_detail


def test_tool_calls_helper_shapes() -> None:
    completion = tool_calls(ToolCall(id="x", name="a"), ("b", {"k": 1}), ("c", {}, "explicit"))
    assert [(c.id, c.name) for c in completion.tool_calls] == [
        ("x", "a"),
        (AUTO_ID, "b"),
        ("explicit", "c"),
    ]
    assert completion.finish_reason == "tool_calls"
    with pytest.raises(ConfigurationError, match="not a tool call"):
        tool_calls(("only-name",))  # type: ignore[arg-type]


def test_tool_call_can_script_malformed_arguments() -> None:
    assert tool_call("echo", "{not json").tool_calls[0].arguments == "{not json"
    assert tool_call("echo", [1]).tool_calls[0].arguments == [1]
    assert tool_call("echo").tool_calls[0].arguments == {}


def test_usage_is_estimated_unless_scripted() -> None:
    model = FakeModel(
        ["four", Completion(text="x", usage=TokenUsage(input_tokens=7, output_tokens=3))]
    )
    messages = [Message(role="user", content="x" * 40)]
    estimated = model.complete(messages).usage
    assert estimated == TokenUsage(input_tokens=10, output_tokens=1)
    assert model.complete(messages).usage == TokenUsage(input_tokens=7, output_tokens=3)
    assert estimate_tokens("") == 1


# -- stateless mode -------------------------------------------------------------------------


def test_stateless_picks_the_step_from_the_transcript() -> None:
    model = FakeModel(["first", "second", "third"], stateless=True)
    transcript = list(USER)
    assert model.complete(transcript).text == "first"
    assert model.complete(transcript).text == "first"  # same transcript, same step
    transcript += [Message(role="assistant", content="first"), Message(role="user", content="?")]
    assert model.complete(transcript).text == "second"


def test_stateless_is_loud_past_the_script() -> None:
    model = FakeModel(["only"], stateless=True)
    transcript = [*USER, Message(role="assistant", content="only"), *USER]
    with pytest.raises(ScriptExhaustedError):
        model.complete(transcript)


def script() -> list[str | Completion]:
    return [tool_call("echo", {"text": "step one"}), "finished after the tool"]


def test_stateless_resume_in_a_new_instance() -> None:
    # The first "process" stops after one step (its budget ran out)...
    first = run(
        FakeModel(script(), stateless=True), [echo()], "go", budget=Budget(max_model_steps=1)
    )
    assert first.stop_reason == "max_model_steps"
    assert [m.role for m in first.messages] == ["user", "assistant", "tool"]

    # ...and a fresh model in another "process" continues from the saved transcript.
    resumed = FakeModel(script(), stateless=True)
    completion = resumed.complete(list(first.messages))
    assert completion.text == "finished after the tool"


def test_stateless_resume_via_history_and_step_numbered_ids() -> None:
    first = run(
        FakeModel(script(), stateless=True), [echo()], "go", budget=Budget(max_model_steps=1)
    )
    fresh = FakeModel(
        [tool_call("echo", {"text": "a"}), tool_call("echo", {"text": "b"}), "end"], stateless=True
    )
    # the saved transcript holds one assistant turn, so the fresh model is at step 2
    result = run(fresh, [echo()], "continue", history=first.messages)
    assert [r.id for r in result.tool_calls] == ["call_2_1"]
    assert result.output == "end"


def test_counter_mode_ignores_the_transcript() -> None:
    model = FakeModel(["first", "second"])
    long_transcript = [*USER, Message(role="assistant", content="x"), *USER]
    assert model.complete(long_transcript).text == "first"
