"""``check --wire`` (issue 23): scenarios run through real provider clients over the
replay server, one column per harness x client.

A handful of scenarios per column (the whole suite runs in ``agent-contract check
--wire``), the forms a wire cannot carry, the request read back into the core's
messages, a client that is not installed, and a client that repairs cut arguments
(a mutant the columns must catch).
"""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest

from agent_contract.app.check_command import default_controls, wire_names
from agent_contract.app.cli import main
from agent_contract.conformance.check import run_check
from agent_contract.conformance.report import render_markdown, render_text
from agent_contract.conformance.scenarios import SCENARIOS
from agent_contract.conformance.wire import RecordedRequest, ReplayServer, _openai_chunks
from agent_contract.conformance.wire_check import (
    WireHarness,
    reply_no_form,
    request_messages,
    wire_harnesses,
)
from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import WireClient
from agent_contract.messages import Completion, ToolCall
from agent_contract.registry import harness_plugin

pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")

BY_NAME = {s.name: s for s in SCENARIOS}

# A handful per column: a call and its answer, parallel calls, malformed arguments, a
# lone surrogate in arguments (the next request must still encode), a refusal, history
# sent as it was, an approval pause and resume.
HANDFUL = (
    "single_tool_call",
    "parallel_calls_issue_order",
    "malformed_json_arguments",
    "lone_surrogate_arguments",
    "provider_refusal",
    "history_with_tool_calls",
    "write_approved",
)


def _scenarios(*names: str) -> list[Any]:
    return [BY_NAME[n] for n in names]


@pytest.mark.parametrize(
    "column",
    [
        "langchain@openai",
        "langchain@anthropic",
        "pydantic-ai@openai",
        "pydantic-ai@anthropic",
    ],
)
def test_a_handful_of_scenarios_hold_on_each_column(column: str) -> None:
    handful = list(HANDFUL)
    with wire_harnesses([column]) as columns:
        report = run_check([column], scenarios=_scenarios(*handful), harnesses=columns)
    run = report.harnesses[0]
    ran = {o.scenario.name for o in run.outcomes}
    problems = [(o.scenario.name, p.message) for o in run.outcomes for p in o.problems]
    assert problems == []
    if column.endswith("@anthropic"):
        # Anthropic's unstreamed tool_use input is always an object: no form there.
        assert [n for n, _ in run.no_form] == ["malformed_json_arguments"]
        cell = report.cell("response_shape", column)
        assert cell.status == "not_checked"
        assert cell.no_form
        assert cell.allowed
        assert "always a JSON object" in cell.evidence[0].observed
    else:
        assert run.no_form == ()
    assert ran == set(handful) - {n for n, _ in run.no_form}
    assert report.exit_code == 0


def test_a_row_holds_on_a_wire_where_only_some_scenarios_have_no_form() -> None:
    # response_shape on unstreamed Anthropic: the malformed arguments cannot be sent,
    # the empty reply can; the row holds on what was sent, marked with what was not.
    column = "langchain@anthropic"
    with wire_harnesses([column]) as columns:
        report = run_check(
            [column],
            scenarios=_scenarios("malformed_json_arguments", "empty_response"),
            harnesses=columns,
        )
    cell = report.cell("response_shape", column)
    assert (cell.status, cell.no_form) == ("holds", True)
    assert [e.scenario for e in cell.evidence] == ["empty_response", "malformed_json_arguments"]
    assert cell.evidence[1].observed.startswith("not run: no form on this wire: ")
    assert cell.to_dict()["no_form"] is True
    assert "holds (1 no form)" in render_text(report)
    assert "holds (1 scenario, 1 no form)" in render_markdown(report)
    assert report.exit_code == 0


def test_one_pydantic_ai_client_serves_a_run_and_its_resumes() -> None:
    # Two approval pauses in one scenario: the binding's sync runs share one loop per
    # thread, so the async client of the first run serves the resumes.
    column = "pydantic-ai@openai"
    with wire_harnesses([column]) as columns:
        report = run_check(
            [column],
            scenarios=_scenarios("write_approved", "write_budget_across_resumes"),
            harnesses=columns,
        )
    problems = [p.message for o in report.harnesses[0].outcomes for p in o.problems]
    assert problems == []


def test_the_requests_went_over_the_wire() -> None:
    with wire_harnesses(["langchain@openai"]) as columns:
        column = columns["langchain@openai"]
        run_check(["langchain@openai"], scenarios=_scenarios("single_tool_call"), harnesses=columns)
        requests = column.server().requests
    assert [r.wire for r in requests] == ["openai", "openai"]
    assert requests[1].body["messages"][-1]["role"] == "tool"
    assert requests[0].headers["authorization"].startswith("Bearer ")


def test_a_client_that_repairs_cut_arguments_is_caught() -> None:
    from langchain_openai import ChatOpenAI

    class RepairingChatOpenAI(ChatOpenAI):
        """Closes the JSON of unfinished argument text before the message is built."""

        def _create_chat_result(self, response: Any, generation_info: Any = None) -> Any:
            data = response if isinstance(response, dict) else response.model_dump()
            for choice in data.get("choices", []):
                for call in choice["message"].get("tool_calls") or []:
                    text = call["function"]["arguments"]
                    try:
                        json.loads(text)
                    except ValueError:
                        call["function"]["arguments"] = text + '"}'
            return super()._create_chat_result(data, generation_info)

    def build(base_url: str) -> Any:
        return RepairingChatOpenAI(
            model="replay-model", base_url=base_url, api_key="sk-x", max_retries=0
        )

    real = harness_plugin("langchain").wires[0]
    mutant = dataclasses.replace(real, client="RepairingChatOpenAI", build=build)
    column = WireHarness(harness_plugin("langchain"), mutant)
    try:
        report = run_check(
            [column.name],
            scenarios=_scenarios("malformed_json_arguments", "single_tool_call"),
            harnesses={column.name: column},
        )
    finally:
        column.close()
    cell = report.cell("response_shape", column.name)
    assert cell.status == "broken"
    assert "malformed_json_arguments" in {e.scenario for e in cell.evidence}
    assert report.cell("call_id_binding", column.name).status == "holds"
    assert report.exit_code == 5


def test_a_client_not_installed_leaves_its_cells_not_checked_naming_the_install() -> None:
    def build(base_url: str) -> Any:
        raise ImportError("No module named 'langchain_nothing'")

    missing = WireClient(
        wire="openai",
        client="ChatNothing",
        streamed=False,
        distribution="langchain-nothing",
        install="pip install langchain-nothing",
        build=build,
    )
    column = WireHarness(harness_plugin("langchain"), missing)
    report = run_check(
        [column.name], scenarios=_scenarios("single_tool_call"), harnesses={column.name: column}
    )
    cell = report.cell("call_id_binding", column.name)
    assert cell.status == "not_checked"
    assert not cell.allowed
    assert "pip install langchain-nothing" in cell.evidence[0].observed
    assert report.exit_code == 5


def test_every_binding_column_is_declared() -> None:
    with wire_harnesses() as columns:
        names = set(columns)
    for harness in ("langchain", "langchain-async", "langchain-stream"):
        assert {f"{harness}@openai", f"{harness}@anthropic"} <= names
    with (
        pytest.raises(ConfigurationError, match="no wire column"),
        wire_harnesses(["langchain@smoke-signals"]),
    ):
        pass
    with wire_harnesses(["langchain-async", "langchain@anthropic"]) as some:
        assert list(some) == [
            "langchain-async@openai",
            "langchain-async@anthropic",
            "langchain@anthropic",
        ]


def _call(arguments: Any, id: str | None = "c1") -> Completion:
    return Completion(
        tool_calls=(ToolCall(id=id, name="echo", arguments=arguments),), finish_reason="tool_calls"
    )


def test_what_has_no_form_on_a_wire() -> None:
    cut = _call('{"text": "10')
    assert reply_no_form(cut, "openai", streamed=False) is None
    assert "always a JSON object" in (reply_no_form(cut, "anthropic", streamed=False) or "")
    assert reply_no_form(cut, "anthropic", streamed=True) is None
    assert reply_no_form(_call(""), "anthropic", streamed=False) is None  # "" is {}
    assert "has an id" in (reply_no_form(_call({}, id=None), "anthropic", streamed=True) or "")
    filtered = Completion(text="Here is", finish_reason="content_filter")
    assert reply_no_form(filtered, "openai", streamed=False) is None
    assert "content_filter" in (reply_no_form(filtered, "anthropic", streamed=False) or "")
    refusal = Completion(text="No.", finish_reason="refusal")
    assert "refusal" in (reply_no_form(refusal, "openai", streamed=False) or "")
    assert reply_no_form(refusal, "anthropic", streamed=False) is None
    scripted_refusal = Completion(refusal="I can't.", finish_reason="stop")
    assert reply_no_form(scripted_refusal, "anthropic", streamed=False) is None
    max_tokens = Completion(text="The total is", finish_reason="max_tokens")
    assert reply_no_form(max_tokens, "openai", streamed=False) is None  # sent as length


def test_requests_are_read_back_into_the_core_messages() -> None:
    openai = RecordedRequest(
        wire="openai",
        path="/v1/chat/completions",
        headers={},
        body={
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "echo", "arguments": '{"text": "x"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": '{"error": "tool_error"}'},
            ],
            "tools": [{"type": "function", "function": {"name": "echo", "parameters": {}}}],
            "max_tokens": 64,
        },
    )
    messages, tools, limit, _ = request_messages(openai)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2].tool_calls[0].arguments == {"text": "x"}
    assert (messages[3].tool_call_id, messages[3].name, messages[3].status) == (
        "c1",
        "echo",
        "error",
    )
    assert tools is not None
    assert tools[0]["function"]["name"] == "echo"
    assert limit == 64
    anthropic = RecordedRequest(
        wire="anthropic",
        path="/v1/messages",
        headers={},
        body={
            "system": "be brief",
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "echo", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
                },
            ],
            "tools": [{"name": "echo", "description": "d", "input_schema": {"type": "object"}}],
            "max_tokens": 100,
        },
    )
    messages, tools, limit, _ = request_messages(anthropic)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert (messages[3].tool_call_id, messages[3].status) == ("t1", "success")
    assert tools == [
        {
            "type": "function",
            "function": {"name": "echo", "description": "d", "parameters": {"type": "object"}},
        }
    ]


def _check_cli(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    """``agent-contract check ARGV`` over a few scenarios; ``(exit code, stdout)``."""
    import functools
    import io

    from agent_contract.app import check_command
    from agent_contract.app.cli import main

    names = ("single_tool_call", "finished_tool_call_runs", "provider_refusal")
    few = functools.partial(run_check, scenarios=_scenarios(*names))
    monkeypatch.setattr(check_command, "run_check", few)
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--quiet", *argv], out=out, err=err)
    return code, out.getvalue()


def test_check_wire_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    code, text = _check_cli(monkeypatch, "--wire", "langchain-stream")
    assert code == 0, text
    header = next(line for line in text.splitlines() if line.startswith("boundary"))
    assert header.split()[2:] == ["langchain-stream@openai", "langchain-stream@anthropic"]
    assert "langchain-stream@openai: declares provider_refusal not expressible" in text
    code, document = _check_cli(monkeypatch, "--wire=langchain-async@anthropic", "--format", "json")
    data = json.loads(document)
    assert code == 0
    (column,) = data["harnesses"]
    assert column["name"] == "langchain-async@anthropic"
    assert data["controls_not_run"] == default_controls()  # named, not silently dropped
    assert column["wire"] == {
        "harness": "langchain-async",
        "wire": "anthropic",
        "client": "ChatAnthropic",
        "streamed": False,
        "distribution": "langchain-anthropic",
        "no_form": {},
        "unavailable": None,
    }
    code, text = _check_cli(monkeypatch, "--harness", "offline")
    assert "@" not in text


@pytest.mark.parametrize("value", ["", " ", "openai,,anthropic", "openai,"])
def test_an_empty_wire_name_is_a_usage_error_not_every_column(value: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--quiet", f"--wire={value}"], out=out, err=err) == 2
    assert "empty name" in err.getvalue()
    assert wire_names(["*"]) == []
    assert wire_names(["openai", "langchain@anthropic,openai"]) == ["openai", "langchain@anthropic"]


STREAMED_ROW = [s for s in SCENARIOS if s.boundary == "streamed_arguments"]


@pytest.mark.parametrize(
    ("column", "unformed"),
    [
        ("langchain-stream@openai", []),
        ("pydantic-ai-stream@anthropic", ["streamed_calls_interleaved"]),
        ("langchain@openai", [s.name for s in STREAMED_ROW]),
    ],
)
def test_the_streamed_arguments_row_runs_where_the_client_streams(
    column: str, unformed: list[str]
) -> None:
    # Pieces of 1-3 characters and interleaved calls reach a streaming client; an
    # unstreamed one has no form for them, and Anthropic's stream none for interleaving.
    with wire_harnesses([column]) as columns:
        report = run_check([column], scenarios=STREAMED_ROW, harnesses=columns)
    run = report.harnesses[0]
    assert [(o.scenario.name, p.message) for o in run.outcomes for p in o.problems] == []
    assert [n for n, _ in run.no_form] == unformed
    assert len(run.outcomes) == len(STREAMED_ROW) - len(unformed)
    assert report.exit_code == 0


def test_a_stream_is_cut_in_the_pieces_a_scenario_names() -> None:
    server = ReplayServer([])
    try:
        server.chunk_chars, server.interleave = 2, True
        reply = Completion(
            tool_calls=(
                ToolCall(id="a", name="echo", arguments={"text": "x"}),
                ToolCall(id="b", name="echo", arguments={"text": "y"}),
            ),
            finish_reason="tool_calls",
        )
        deltas = [
            c["choices"][0]["delta"]["tool_calls"][0]
            for c in _openai_chunks(server, reply, include_usage=False)
            if c["choices"] and c["choices"][0]["delta"].get("tool_calls")
        ]
    finally:
        server.close()
    assert [d["index"] for d in deltas[:4]] == [0, 1, 0, 1]
    joined = [
        "".join(d["function"]["arguments"] for d in deltas if d["index"] == i) for i in (0, 1)
    ]
    assert joined == ['{"text": "x"}', '{"text": "y"}']
