"""The OpenAI-compatible Chat Completions model, against the kit's replay server.

Outcomes only: the waits between attempts go to an injected ``sleep`` that records
them, never to the clock.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_contract import exitcodes, run
from agent_contract.app.builtin_tools import calculator_tool
from agent_contract.conformance.wire import Cut, Fault, ReplayServer
from agent_contract.errors import ConfigurationError, ModelHTTPError
from agent_contract.http_model import LOCAL_PLACEHOLDER_KEY, OpenAICompatibleModel
from agent_contract.messages import Completion, Message, TokenUsage, ToolCall
from agent_contract.tools import ToolSpec

ANSWER = Completion(text="5", usage=TokenUsage(input_tokens=12, output_tokens=1))
CALL = Completion(
    tool_calls=(ToolCall(id="c1", name="calculator", arguments={"expression": "2 + 3"}),),
    finish_reason="tool_calls",
)
USER = [Message(role="user", content="calculate 2 + 3")]


def counting_calculator() -> tuple[ToolSpec, list[dict[str, Any]]]:
    """A calculator tool that records each time it really runs."""
    runs: list[dict[str, Any]] = []

    def calculate(expression: str) -> str:
        runs.append({"expression": expression})
        return str(eval(expression, {"__builtins__": {}}))  # noqa: S307 - a test's fixed input

    spec = ToolSpec(
        name="calculator",
        description="Evaluate arithmetic.",
        parameters={
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
        handler=calculate,
    )
    return spec, runs


def model_for(server: ReplayServer, **options: Any) -> tuple[OpenAICompatibleModel, list[float]]:
    """The model pointed at ``server``, and the waits it asked for."""
    waits: list[float] = []
    options.setdefault("timeout", 10.0)
    model = OpenAICompatibleModel(
        "replay-model",
        base_url=server.openai_base_url,
        sleep=waits.append,
        jitter=lambda: 0.5,
        **options,
    )
    return model, waits


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_reply_maps_to_a_completion(stream: bool) -> None:
    with ReplayServer([CALL, ANSWER], ids="provider") as server:
        model, _ = model_for(server, stream=stream)
        first = model.complete(USER, tools=[calculator_tool().definition()])
        second = model.complete(USER)
    (call,) = first.tool_calls
    assert call.id == server.wire_id("c1", "openai")
    assert call.id.startswith("call_")
    assert call.name == "calculator"
    assert call.arguments == '{"expression": "2 + 3"}'  # the raw text, judged by the contract
    assert first.finish_reason == "tool_calls"
    assert second.text == "5"
    assert second.finish_reason == "stop"
    assert second.usage == TokenUsage(input_tokens=12, output_tokens=1)
    sent = server.requests[0].body
    assert sent["model"] == "replay-model"
    assert sent["messages"][0]["content"] == "calculate 2 + 3"
    assert sent["tools"][0]["function"]["name"] == "calculator"
    assert server.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"
    assert server.requests[0].stream is stream


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_cut_arguments_stay_raw_and_are_refused(stream: bool) -> None:
    cut = Completion(
        tool_calls=(ToolCall(id="c1", name="calculator", arguments='{"expression": "2 +'),),
        finish_reason="length",
    )
    with ReplayServer([cut]) as server:
        model, _ = model_for(server, stream=stream)
        tool, runs = counting_calculator()
        result = run(model, [tool], "calculate 2 + 3")
    # the reply says it was cut by the output limit: its call never runs
    assert result.stop_reason == "truncated_response"
    assert runs == []


def test_finish_reason_is_passed_through_untouched() -> None:
    with ReplayServer([Completion(text="half an ans", finish_reason="length")]) as server:
        model, _ = model_for(server, stream=True)
        assert model.complete(USER).finish_reason == "length"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_refusal_from_the_wire_stops_the_run_refused(stream: bool) -> None:
    """OpenAI's ``message.refusal`` (streamed as ``delta.refusal`` pieces) reaches the
    contract: the run stops ``refused`` with the text, never ``answered`` or
    ``invalid_response``, and no tool runs."""
    spec, runs = counting_calculator()
    refusal = Completion(refusal="I can't help with that request.", finish_reason="stop")
    with ReplayServer([refusal, refusal]) as server:
        model, _ = model_for(server, stream=stream)
        assert model.complete(USER).refusal == "I can't help with that request."
        result = run(model, [spec], "calculate 2 + 3")
    assert result.stop_reason == "refused"
    assert "I can't help with that request." in result.stop_detail
    assert exitcodes.EXIT_CODES["refused"] == exitcodes.EXIT_REFUSED
    assert runs == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("finish_reason", "stop"),
    [("length", "truncated_response"), ("content_filter", "content_filtered")],
)
def test_an_unfinished_text_reply_from_the_wire_is_never_the_answer(
    finish_reason: str, stop: str, stream: bool
) -> None:
    """A text cut by the length limit, or filtered, as the server sends it (JSON or SSE):
    the run stops with its own stop reason, never ``answered`` with the partial text,
    and no tool runs."""
    spec, runs = counting_calculator()
    cut = Completion(text="The result of 2 + 3 is", finish_reason=finish_reason)
    with ReplayServer([cut, cut]) as server:
        model, _ = model_for(server, stream=stream)
        assert model.complete(USER).finish_reason == finish_reason
        result = run(model, [spec], "calculate 2 + 3")
    assert result.stop_reason == stop
    assert result.output != "The result of 2 + 3 is"
    assert runs == []


def test_a_400_names_its_kind_status_and_attempts() -> None:
    with ReplayServer([Fault(status=400)]) as server:
        model, _ = model_for(server)
        result = run(model, [calculator_tool()], "calculate 2 + 3")
    assert result.stop_detail == (
        "the model raised ModelHTTPError (refused_request, HTTP 400, 1 attempt)"
    )


def test_429_with_retry_after_waits_as_asked_then_succeeds() -> None:
    with ReplayServer([Fault(status=429, retry_after=7), ANSWER]) as server:
        model, waits = model_for(server)
        assert model.complete(USER).text == "5"
    assert waits == [7.0]
    assert model.attempts == 2
    assert len(server.requests) == 2


def test_500_then_success_waits_with_full_jitter() -> None:
    with ReplayServer([Fault(status=500), Fault(status=503), ANSWER]) as server:
        model, waits = model_for(server, backoff=1.0)
        assert model.complete(USER).text == "5"
    assert waits == [0.5, 1.0]  # jitter 0.5 of the ceilings 1 s, 2 s
    assert model.attempts == 3


def test_retries_are_bounded() -> None:
    with ReplayServer([Fault(status=500)] * 5) as server:
        model, waits = model_for(server, max_retries=2)
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "server_error"
    assert raised.value.status == 500
    assert raised.value.attempts == 3
    assert len(server.requests) == 3
    assert len(waits) == 2


def test_a_retry_after_over_the_cap_is_not_waited_for() -> None:
    with ReplayServer([Fault(status=429, retry_after=3600), ANSWER]) as server:
        model, waits = model_for(server, max_backoff=30.0)
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "rate_limited"
    assert waits == []
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_4xx_is_raised_at_once(status: int) -> None:
    with ReplayServer([Fault(status=status, message="bad field"), ANSWER]) as server:
        model, waits = model_for(server)
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "refused_request"
    assert raised.value.status == status
    assert "bad field" in str(raised.value)
    assert waits == []
    assert len(server.requests) == 1


def test_a_400_stops_the_run_model_error() -> None:
    with ReplayServer([Fault(status=400)]) as server:
        model, _ = model_for(server)
        result = run(model, [calculator_tool()], "calculate 2 + 3")
    assert result.stop_reason == "model_error"
    assert "ModelHTTPError" in result.stop_detail


def test_timeout_is_a_classified_failure() -> None:
    slow = Fault(status=200, delay=5.0, then=ANSWER)
    with ReplayServer([slow]) as server:
        model, _ = model_for(server, timeout=0.2, max_retries=0)
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "timeout"
    assert raised.value.status is None


def test_timeout_then_success_is_retried() -> None:
    slow = Fault(status=200, delay=5.0, then=ANSWER)
    with ReplayServer([slow, ANSWER]) as server:
        model, waits = model_for(server, timeout=0.2, max_retries=1)
        assert model.complete(USER).text == "5"
    assert len(waits) == 1
    assert model.attempts == 2


def test_a_cut_stream_is_a_connection_failure_and_retried() -> None:
    with ReplayServer([Cut(reply=ANSWER, events=1), ANSWER]) as server:
        model, waits = model_for(server, stream=True, max_retries=1)
        assert model.complete(USER).text == "5"
    assert len(waits) == 1


def test_a_cut_stream_without_retries_raises() -> None:
    with ReplayServer([Cut(reply=CALL, events=2)]) as server:
        model, _ = model_for(server, stream=True, max_retries=0)
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "connection"


def test_an_empty_key_is_refused_up_front() -> None:
    with pytest.raises(ConfigurationError, match="api_key"):
        OpenAICompatibleModel("m", base_url="http://127.0.0.1:1/v1", api_key="")
    with pytest.raises(ConfigurationError, match="api_key"):
        OpenAICompatibleModel("m", base_url="http://127.0.0.1:1/v1", api_key="  ")


def test_the_key_comes_from_the_argument_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAICompatibleModel("m", base_url="https://models.example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with ReplayServer([ANSWER, ANSWER]) as server:
        from_env = OpenAICompatibleModel("m", base_url=server.openai_base_url)
        from_env.complete(USER)
        given = OpenAICompatibleModel("m", base_url=server.openai_base_url, api_key="sk-given")
        given.complete(USER)
    keys = [r.headers["authorization"] for r in server.requests]
    assert keys == ["Bearer sk-from-env", "Bearer sk-given"]


def test_the_placeholder_is_for_local_servers_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    OpenAICompatibleModel("m", base_url="http://localhost:8000/v1")
    with pytest.raises(ConfigurationError):
        OpenAICompatibleModel("m", base_url="http://10.0.0.5:8000/v1")


def test_history_goes_out_in_the_wire_shape() -> None:
    with ReplayServer([CALL, ANSWER]) as server:
        model, _ = model_for(server)
        tool, runs = counting_calculator()
        result = run(model, [tool], "calculate 2 + 3")
    assert result.stop_reason == "answered"
    assert result.output == "5"
    assert runs == [{"expression": "2 + 3"}]
    sent = server.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "c1"
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"expression": "2 + 3"}
    assert sent[2]["tool_call_id"] == "c1"


def test_a_wrong_path_is_a_refused_request() -> None:
    with ReplayServer([ANSWER]) as server:
        model = OpenAICompatibleModel(
            "m", base_url=server.url + "/nowhere", timeout=10.0, max_retries=0
        )
        with pytest.raises(ModelHTTPError) as raised:
            model.complete(USER)
    assert raised.value.kind == "refused_request"
    assert raised.value.status == 404


def cli(*argv: str) -> tuple[int, str, str]:
    """``agent-contract ARGV``: the exit code, stdout, stderr."""
    from agent_contract.app import cli as command

    out, err = io.StringIO(), io.StringIO()
    code = command.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_cli_runs_the_demo_agent_on_an_openai_compatible_server(
    stream: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ReplayServer([CALL, ANSWER], ids="provider") as server:
        argv = ["run", "calculate 2 + 3", "--model", "openai-compatible", "--json"]
        argv += ["--base-url", server.openai_base_url, *(["--stream"] if stream else [])]
        code, out, err = cli(*argv)
    assert code == 0, err
    report = json.loads(out)
    assert report["stop_reason"] == "answered"
    assert report["output"] == "5"
    first, second = (r.body for r in server.requests)
    assert first["messages"][-1] == {"role": "user", "content": "calculate 2 + 3"}
    assert "calculator" in {t["function"]["name"] for t in first["tools"]}
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == server.wire_id("c1", "openai")
    assert json.loads(tool_message["content"])["result"] == 5  # the real calculator ran


def test_cli_model_error_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path / "data"))
    with ReplayServer([Fault(status=400)]) as server:
        code, _, _ = cli(
            "run",
            "calculate 2 + 3",
            "--model",
            "openai-compatible",
            "--base-url",
            server.openai_base_url,
        )
    assert code == exitcodes.EXIT_MODEL_ERROR


def test_cli_server_flags_need_the_openai_compatible_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path / "data"))
    code, _, err = cli("run", "calculate 2 + 3", "--base-url", "http://127.0.0.1:9/v1")
    assert code == exitcodes.EXIT_USAGE
    assert "--model openai-compatible" in err


def test_cli_refuses_a_remote_server_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _, err = cli(
        "run",
        "calculate 2 + 3",
        "--model",
        "openai-compatible",
        "--base-url",
        "https://models.example.com/v1",
    )
    assert code == exitcodes.EXIT_USAGE
    assert "OPENAI_API_KEY" in err
