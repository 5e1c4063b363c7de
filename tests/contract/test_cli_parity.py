"""`agent-contract run TEXT --harness offline|langchain` agree on every demo request."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_contract.app.demo import start_demo

REQUESTS = [
    "calculate 12 * (3 + 2)",
    "look up policy privacy",
    "explain tool calling",
    "calculate __import__('os').getcwd()",
    "calculate 2 ** 1000000",
    "计算 7 // 2",
    "查询政策 refunds",
    "look up policy ../etc/passwd",
    "look up policy astrology",
]


def summary(text: str, harness: str) -> tuple[object, ...]:
    result = start_demo(text, harness=harness).result
    calls = [(c.name, c.status, c.error_kind) for c in result.tool_calls]
    return result.stop_reason, result.output, calls


@pytest.mark.parametrize("text", REQUESTS)
def test_same_answer_on_both_harnesses(text: str) -> None:
    assert summary(text, "langchain") == summary(text, "offline")


def test_expected_demo_outcomes() -> None:
    assert summary("calculate 12 * (3 + 2)", "langchain")[1] == "The result of 12 * (3 + 2) is 60."
    assert "offline-policy:privacy:v1" in str(summary("look up policy privacy", "langchain")[1])
    assert summary("explain tool calling", "langchain")[2] == []
    for text in REQUESTS[3:5]:
        assert summary(text, "langchain")[2] == [("calculator", "error", "invalid_arguments")]


def test_cli_subprocess_langchain_json() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_contract.app.cli",
            "run",
            "calculate 12 * (3 + 2)",
            "--harness",
            "langchain",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, far above the expected time
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["harness"] == "langchain-invoke"
    assert data["stop_reason"] == "answered"
    assert data["tool_calls"] == [{"id": "call_1_1", "name": "calculator", "status": "success"}]
