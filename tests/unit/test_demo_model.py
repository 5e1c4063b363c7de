"""DemoModel: the deterministic stand-in for a real model used by the demo CLI."""

# Chinese prompts and answers use fullwidth punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_contract.app.builtin_tools import calculator_tool, policy_lookup_tool
from agent_contract.messages import Message, ToolCall
from agent_contract.model import Model
from agent_contract.results import error_content
from agent_contract.testing import DemoModel

TOOLS = [calculator_tool().definition(), policy_lookup_tool().definition()]


def ask(text: str, tools: list[dict[str, Any]] | None = TOOLS) -> Any:
    return DemoModel().complete([Message(role="user", content=text)], tools)


def tool_message(content: Any, *, name: str = "calculator", status: str = "success") -> Message:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return Message(role="tool", content=text, tool_call_id="call_1_1", name=name, status=status)  # type: ignore[arg-type]


def after(request: str, *results: Message) -> str:
    calls = tuple(ToolCall(id=m.tool_call_id, name=m.name or "", arguments={}) for m in results)
    messages = [
        Message(role="user", content=request),
        Message(role="assistant", tool_calls=calls),
        *results,
    ]
    return DemoModel().complete(messages, TOOLS).text


def test_is_a_model() -> None:
    assert isinstance(DemoModel(), Model)


@pytest.mark.parametrize(
    ("text", "tool", "arguments"),
    [
        pytest.param(
            "calculate 12 * (3 + 2)", "calculator", {"expression": "12 * (3 + 2)"}, id="calculate"
        ),
        pytest.param("Calculate: 7 / 2", "calculator", {"expression": "7 / 2"}, id="colon-case"),
        pytest.param("  calculate   1+1  ", "calculator", {"expression": "1+1"}, id="spaces"),
        pytest.param(
            "计算 12 * (3 + 2)",
            "calculator",
            {"expression": "12 * (3 + 2)"},
            id="chinese-calculate",
        ),
        pytest.param("计算：1 + 2", "calculator", {"expression": "1 + 2"}, id="chinese-colon"),
        pytest.param("look up policy privacy", "policy_lookup", {"topic": "privacy"}, id="policy"),
        pytest.param(
            "Look up policy refunds", "policy_lookup", {"topic": "refunds"}, id="policy-case"
        ),
        pytest.param(
            "查询政策 security", "policy_lookup", {"topic": "security"}, id="chinese-policy"
        ),
        pytest.param(
            "calculate __import__('os').getcwd()",
            "calculator",
            {"expression": "__import__('os').getcwd()"},
            id="dangerous-is-passed-on",
        ),
    ],
)
def test_requests_become_one_tool_call(text: str, tool: str, arguments: dict[str, str]) -> None:
    completion = ask(text)
    assert completion.text == ""
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == (ToolCall(id="call_1_1", name=tool, arguments=arguments),)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("explain tool calling", id="explain"),
        pytest.param("what is 2 + 2?", id="no-keyword"),
        pytest.param("please calculate 1 + 1", id="keyword-not-first"),
        pytest.param("", id="empty"),
    ],
)
def test_anything_else_is_a_direct_answer(text: str) -> None:
    completion = ask(text)
    assert completion.tool_calls == ()
    assert completion.text.startswith("(demo model)")


def test_chinese_direct_answer() -> None:
    assert ask("解释一下工具调用").text.startswith("（演示模型）")


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        pytest.param("calculate 1 + 1", None, id="no-tools"),
        pytest.param("calculate 1 + 1", [policy_lookup_tool().definition()], id="not-offered"),
        pytest.param(
            "look up policy privacy", [calculator_tool().definition()], id="policy-not-offered"
        ),
    ],
)
def test_only_offered_tools_are_called(text: str, tools: list[dict[str, Any]] | None) -> None:
    completion = ask(text, tools)
    assert completion.tool_calls == ()
    assert completion.text


def test_call_id_follows_the_step() -> None:
    messages = [
        Message(role="user", content="hello"),
        Message(role="assistant", content="hi"),
        Message(role="user", content="calculate 2 + 2"),
    ]
    completion = DemoModel().complete(messages, TOOLS)
    assert completion.tool_calls[0].id == "call_2_1"


def test_answer_cites_a_calculator_result() -> None:
    text = after(
        "calculate 12 * (3 + 2)", tool_message({"expression": "12 * (3 + 2)", "result": 60})
    )
    assert text == "The result of 12 * (3 + 2) is 60."


def test_answer_cites_a_policy_and_its_source() -> None:
    policy = {
        "topic": "privacy",
        "title": "Privacy policy",
        "text": "We collect little.",
        "source_id": "offline-policy:privacy:v1",
    }
    text = after("look up policy privacy", tool_message(policy, name="policy_lookup"))
    assert text == (
        "Policy 'Privacy policy': We collect little. (source: offline-policy:privacy:v1)"
    )


def test_answer_reports_a_tool_error_plainly() -> None:
    error = error_content(
        "not_found", "unknown policy topic 'x'", outcome="failed", side_effects_possible=False
    )
    text = after("look up policy x", tool_message(error, name="policy_lookup", status="error"))
    assert text == (
        "The policy_lookup tool could not complete the request (not_found): "
        "unknown policy topic 'x'"
    )


def test_chinese_answers() -> None:
    calc = after("计算 1 + 2", tool_message({"expression": "1 + 2", "result": 3}))
    assert calc == "1 + 2 的计算结果是 3。"
    error = error_content("invalid_arguments", "bad", outcome="failed", side_effects_possible=False)
    failed = after("计算 1 +", tool_message(error, status="error"))
    assert failed == "工具 calculator 未能完成请求（invalid_arguments）：bad"


def test_plain_text_tool_result() -> None:
    assert after("calculate 1", tool_message("just text")) == (
        "The calculator tool returned: just text"
    )


def test_several_tool_results_are_all_described_in_order() -> None:
    first = tool_message({"expression": "1+1", "result": 2})
    second = Message(
        role="tool",
        content=json.dumps({"expression": "2+2", "result": 4}),
        tool_call_id="call_1_2",
        name="calculator",
        status="success",
    )
    assert after("calculate 1+1", first, second) == (
        "The result of 1+1 is 2. The result of 2+2 is 4."
    )


def test_is_deterministic() -> None:
    messages = [Message(role="user", content="calculate 3 * 3")]
    assert DemoModel().complete(messages, TOOLS) == DemoModel().complete(messages, TOOLS)
