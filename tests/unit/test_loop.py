"""The offline loop end to end: answers, both built-in tools, history, failures, secrets."""

# Chinese prompts and answers use fullwidth punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from agent_contract.app.builtin_tools import calculator as calculator_module
from agent_contract.app.builtin_tools import calculator_tool, policy_lookup_tool
from agent_contract.budget import Budget
from agent_contract.errors import ScriptExhaustedError, UnauthorizedError
from agent_contract.loop import run
from agent_contract.messages import Completion, Message
from agent_contract.runtime import RunResult
from agent_contract.testing import DemoModel, FakeModel, tool_call, tool_calls
from agent_contract.tools import ToolSpec

SECRET = "sk-test-9f8e7d6c5b4a39281706"


def builtin_tools() -> list[ToolSpec]:
    return [calculator_tool(), policy_lookup_tool()]


def echo_tool(name: str = "echo", handler: Any = None, **schema: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="echo the text back",
        parameters={
            "type": "object",
            "properties": schema or {"text": {"type": "string"}},
        },
        handler=handler or (lambda **kw: {"echo": kw}),
    )


def tool_messages(result: RunResult) -> list[Message]:
    return [m for m in result.messages if m.role == "tool"]


# -- basic shapes ---------------------------------------------------------------------------


def test_direct_answer() -> None:
    model = FakeModel(["Paris."])
    result = run(model, [echo_tool()], "capital of France?")
    assert result.stop_reason == "answered"
    assert result.answered
    assert result.output == "Paris."
    assert result.tool_calls == ()
    assert result.trajectory() == []
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.harness == "offline"
    assert result.usage.model_steps == 1
    assert result.usage.tool_calls == 0


def test_single_tool_call() -> None:
    model = FakeModel([tool_call("echo", {"text": "hi"}), "It said hi."])
    result = run(model, [echo_tool()], "say hi")
    assert result.stop_reason == "answered"
    assert result.output == "It said hi."
    assert result.trajectory() == ["echo"]
    assert [(r.id, r.status) for r in result.tool_calls] == [("call_1_1", "success")]
    message = tool_messages(result)[0]
    assert (message.tool_call_id, message.name, message.status) == ("call_1_1", "echo", "success")
    assert json.loads(message.content) == {"echo": {"text": "hi"}}
    # the model saw the tool message on its second call
    assert model.calls[1]["messages"][-1] == message
    assert result.usage.tool_calls == 1


def test_no_tools_offers_none() -> None:
    model = FakeModel(["fine"])
    run(model, [], "hello")
    assert model.calls[0]["tools"] is None


def test_model_options_are_passed_through() -> None:
    model = FakeModel(["ok"])
    run(model, [echo_tool()], "x", max_output_tokens=77, temperature=0.3)
    assert (model.calls[0]["max_output_tokens"], model.calls[0]["temperature"]) == (77, 0.3)


# -- the demo model and the built-in tools ------------------------------------------------


def test_calculator_via_demo_model() -> None:
    result = run(DemoModel(), builtin_tools(), "calculate 12 * (3 + 2)")
    assert result.stop_reason == "answered"
    assert result.trajectory() == ["calculator"]
    assert result.tool_calls[0].status == "success"
    assert json.loads(tool_messages(result)[0].content) == {
        "expression": "12 * (3 + 2)",
        "result": 60,
    }
    assert result.output == "The result of 12 * (3 + 2) is 60."


def test_policy_lookup_via_demo_model() -> None:
    result = run(DemoModel(), builtin_tools(), "look up policy privacy")
    assert result.stop_reason == "answered"
    assert result.trajectory() == ["policy_lookup"]
    assert json.loads(tool_messages(result)[0].content)["source_id"] == "offline-policy:privacy:v1"
    assert result.output is not None
    assert "offline-policy:privacy:v1" in result.output


def test_explain_tool_calling_uses_no_tool() -> None:
    result = run(DemoModel(), builtin_tools(), "explain tool calling")
    assert result.stop_reason == "answered"
    assert result.tool_calls == ()
    assert result.output is not None
    assert "tool calling" in result.output


@pytest.mark.parametrize(
    ("request_text", "message"),
    [
        pytest.param(
            "calculate __import__('os').getcwd()",
            "function calls are not allowed",
            id="function-call",
        ),
        pytest.param("calculate 2 ** 1000000", "exponentiation is not allowed", id="power"),
        pytest.param("calculate ().__class__", "attribute access is not allowed", id="dunder"),
    ],
)
def test_dangerous_calculations_execute_nothing(
    monkeypatch: pytest.MonkeyPatch, request_text: str, message: str
) -> None:
    getcwd_calls: list[int] = []
    real_getcwd = os.getcwd

    def spy_getcwd() -> str:
        getcwd_calls.append(1)
        return real_getcwd()

    evaluated: list[Any] = []
    real_evaluate_node = calculator_module._evaluate_node

    def spy_evaluate(node: Any) -> Any:
        evaluated.append(node)
        return real_evaluate_node(node)

    monkeypatch.setattr(os, "getcwd", spy_getcwd)
    monkeypatch.setattr(calculator_module, "_evaluate_node", spy_evaluate)

    result = run(DemoModel(), builtin_tools(), request_text)

    assert getcwd_calls == []
    assert evaluated == []  # rejected while checking the tree, before any arithmetic
    assert [r.error_kind for r in result.tool_calls] == ["invalid_arguments"]
    body = json.loads(tool_messages(result)[0].content)
    assert body == {
        "error": "invalid_arguments",
        "message": message,
        "outcome": "failed",
        "side_effects_possible": False,
    }
    assert result.stop_reason == "answered"  # the model reports the error plainly
    assert result.output is not None
    assert "invalid_arguments" in result.output


def test_unknown_policy_topic_is_not_found() -> None:
    result = run(DemoModel(), builtin_tools(), "look up policy vacation")
    assert [r.error_kind for r in result.tool_calls] == ["not_found"]
    assert result.output is not None
    assert "not_found" in result.output


def test_chinese_calculation() -> None:
    result = run(DemoModel(), builtin_tools(), "计算 12 * (3 + 2)")
    assert result.trajectory() == ["calculator"]
    assert result.output == "12 * (3 + 2) 的计算结果是 60。"


def test_chinese_policy_lookup() -> None:
    result = run(DemoModel(), builtin_tools(), "查询政策 privacy")
    assert result.trajectory() == ["policy_lookup"]
    assert result.output is not None
    assert "来源：offline-policy:privacy:v1" in result.output


def test_chinese_direct_answer() -> None:
    result = run(DemoModel(), builtin_tools(), "什么是工具调用？")
    assert result.tool_calls == ()
    assert result.output is not None
    assert "演示模型" in result.output


def test_demo_model_only_calls_offered_tools() -> None:
    result = run(DemoModel(), builtin_tools(), "calculate 1 + 1", allowlist=["policy_lookup"])
    assert result.tool_calls == ()
    assert result.stop_reason == "answered"


# -- what the model is sent -----------------------------------------------------------------


def test_system_first_then_history_in_order_then_the_new_turn() -> None:
    history = [
        Message(role="user", content="first question"),
        Message(role="assistant", content="first answer"),
        Message(role="user", content="second question"),
        Message(role="assistant", content="second answer"),
    ]
    model = FakeModel(["third answer"])
    result = run(model, [echo_tool()], "third question", history=history, system="be brief")
    sent = model.calls[0]["messages"]
    assert [(m.role, m.content) for m in sent] == [
        ("system", "be brief"),
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "second answer"),
        ("user", "third question"),
    ]
    assert list(result.messages[:6]) == sent
    assert result.messages[-1] == Message(role="assistant", content="third answer")


def test_history_is_replayed_on_every_step() -> None:
    history = [Message(role="user", content="old"), Message(role="assistant", content="older")]
    model = FakeModel([tool_call("echo", {"text": "x"}), "done"])
    run(model, [echo_tool()], "new", history=history)
    second = model.calls[1]["messages"]
    assert [m.content for m in second[:3]] == ["old", "older", "new"]
    assert [m.role for m in second[3:]] == ["assistant", "tool"]


def test_offered_tool_schemas_are_recorded() -> None:
    tools = builtin_tools()
    model = FakeModel(["ok"])
    run(model, tools, "hi")
    offered = model.calls[0]["tools"]
    assert offered == [t.definition() for t in tools]
    assert [t["function"]["name"] for t in offered] == ["calculator", "policy_lookup"]
    assert offered[0]["function"]["parameters"]["additionalProperties"] is False


# -- failures -------------------------------------------------------------------------------


def test_model_raising_stops_with_model_error_naming_only_the_type() -> None:
    def broken(messages: list[Message]) -> Completion:
        raise ConnectionError(f"upstream said {SECRET}")

    result = run(FakeModel([broken]), [echo_tool()], "hi")
    assert result.stop_reason == "model_error"
    assert result.output is None
    assert result.stop_detail == "the model raised ConnectionError"
    assert SECRET not in result.trace.to_jsonl()
    assert "upstream" not in result.trace.to_jsonl()


def test_model_returning_a_non_completion_is_a_model_error() -> None:
    class Sloppy:
        def complete(
            self,
            messages: Any,
            tools: Any = None,
            max_output_tokens: int = 512,
            temperature: float = 0.0,
        ) -> Any:
            return "just a string"

    result = run(Sloppy(), [echo_tool()], "hi")  # type: ignore[arg-type]
    assert result.stop_reason == "model_error"
    assert result.stop_detail == "the model raised ModelError"


def test_model_error_after_a_tool_call_keeps_the_ledger() -> None:
    def broken(messages: list[Message]) -> Completion:
        raise RuntimeError("down")

    result = run(FakeModel([tool_call("echo", {"text": "a"}), broken]), [echo_tool()], "hi")
    assert result.stop_reason == "model_error"
    assert [r.status for r in result.tool_calls] == ["success"]
    assert len(tool_messages(result)) == 1


def test_script_exhausted_propagates() -> None:
    model = FakeModel([tool_call("echo", {"text": "a"})])
    with pytest.raises(ScriptExhaustedError, match="call 2"):
        run(model, [echo_tool()], "hi")


def test_empty_text_is_never_an_answer() -> None:
    result = run(FakeModel([""]), [echo_tool()], "hi")
    assert result.stop_reason == "invalid_response"
    assert result.output is None


def test_budget_stop_is_never_an_answer() -> None:
    model = FakeModel([tool_calls(("echo", {"text": str(i)})) for i in range(3)])
    result = run(model, [echo_tool()], "loop", budget=Budget(max_model_steps=3))
    assert result.stop_reason == "max_model_steps"
    assert result.output is None
    assert result.trace.records[-1].type == "stop"
    assert dict(result.trace.records[-1].fields) == {
        "reason": "max_model_steps",
        "detail": "max_model_steps of 3 reached (3 steps taken, one more needed)",
    }


# -- secrets --------------------------------------------------------------------------------

SECRETS = [
    pytest.param(SECRET, id="api-key"),
    pytest.param('pa"ss\\word-42', id="json-special-chars"),
    pytest.param("密钥-abcd-1234", id="non-ascii"),
]


def leaks(result: RunResult, secret: str) -> list[str]:
    escaped = json.dumps(secret)[1:-1]
    escaped_ascii = json.dumps(secret, ensure_ascii=True)[1:-1]
    places = {
        "trace": result.trace.to_jsonl(),
        "tool messages": "\n".join(m.content for m in tool_messages(result)),
        "to_dict": json.dumps(result.to_dict(), ensure_ascii=False),
        "to_dict ascii": json.dumps(result.to_dict()),
        "output": result.output or "",
        "stop detail": result.stop_detail,
        "records": repr([r.arguments for r in result.tool_calls]),
    }
    return [
        name
        for name, text in places.items()
        if secret in text or escaped in text or escaped_ascii in text
    ]


@pytest.mark.parametrize("secret", SECRETS)
def test_planted_secret_never_leaks(secret: str) -> None:
    def vault(key: str) -> dict[str, str]:
        return {"value": f"the key is {key}", "echo": secret}

    def explode(key: str) -> None:
        raise RuntimeError(f"could not use {secret}")

    def refuse(key: str) -> None:
        raise UnauthorizedError(f"credential {secret} was rejected")

    schema = {"key": {"type": "string"}}
    tools = [
        echo_tool("vault", vault, **schema),
        echo_tool("explode", explode, **schema),
        echo_tool("refuse", refuse, **schema),
        echo_tool("strict", None, key={"type": "string", "maxLength": 3}),
    ]

    def final(messages: list[Message]) -> str:
        seen = " | ".join(m.content for m in messages if m.role == "tool")
        return f"I used {secret}; tools said: {seen}"

    model = FakeModel(
        [
            tool_calls(
                ("vault", {"key": secret}),
                ("explode", {"key": secret}),
                ("refuse", {"key": secret}),
                ("strict", {"key": secret}),  # invalid: the error message quotes the value
            ),
            final,
        ]
    )
    result = run(model, tools, f"use {secret}", secrets=[secret])
    assert result.stop_reason == "answered"
    assert [r.error_kind for r in result.tool_calls] == [
        None,
        "tool_error",
        "unauthorized",
        "invalid_arguments",
    ]
    assert leaks(result, secret) == []
    assert "[REDACTED]" in (result.output or "")
    assert "[REDACTED]" in tool_messages(result)[0].content


def test_numeric_secret_in_integer_arguments_never_leaks() -> None:
    secret = "98765432"
    tool = echo_tool("account", lambda number: {"number": number}, number={"type": "integer"})
    model = FakeModel([tool_call("account", {"number": int(secret)}), "done"])
    result = run(model, [tool], "look it up", secrets=[secret])
    assert result.stop_reason == "answered"
    assert leaks(result, secret) == []


def test_secret_in_demo_calculation_never_leaks() -> None:
    secret = "123456789"
    result = run(DemoModel(), builtin_tools(), f"calculate {secret} + 1", secrets=[secret])
    assert result.output == "The result of [REDACTED] + 1 is 123456790."
    assert leaks(result, secret) == []


def test_secret_shaped_text_is_redacted_without_being_declared() -> None:
    model = FakeModel([tool_call("echo", {"text": SECRET}), f"the key was {SECRET}"])
    result = run(model, [echo_tool()], "hi")
    assert leaks(result, SECRET) == []
