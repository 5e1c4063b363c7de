"""The ``agent-contract`` command line: demo requests, output modes, exit codes, secrets."""

# Chinese prompts and answers use fullwidth punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_contract import exitcodes
from agent_contract.app import cli, selftest
from agent_contract.errors import STOP_REASONS
from agent_contract.messages import Message
from agent_contract.testing import FakeModel, tool_call

CALC = "calculate 12 * (3 + 2)"
CALC_TOOL_CONTENT = '{"expression": "12 * (3 + 2)", "result": 60}'


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the demo's data folder (order and run stores) out of the home directory."""
    folder = tmp_path / "agent-contract-data"
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(folder))
    return folder


def patch_everywhere(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Replace ``name`` in every agent_contract module that imported it (cli, demo, ...)."""
    patched = []
    for module_name, module in list(sys.modules.items()):
        if (
            module_name.startswith("agent_contract.")
            and module_name != "agent_contract.testing"
            and module_name != "agent_contract.loop"
            and hasattr(module, name)
        ):
            monkeypatch.setattr(module, name, value)
            patched.append(module_name)
    assert patched, f"no module uses {name}"


def invoke(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def python_flags() -> list[str]:
    """Run children the way this test run was started (-O, -W error)."""
    flags = ["-O"] * sys.flags.optimize
    flags += [f"-W{option}" for option in sys.warnoptions]
    return flags


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8"}


def run_module(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *python_flags(), "-m", "agent_contract.app.cli", *argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,  # a hang guard, far above the expected time
        check=False,
        env=child_env(),
    )


# -- the demo requests --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        pytest.param(
            CALC,
            [
                "answer: The result of 12 * (3 + 2) is 60.",
                "tools called: calculator [call_1_1] success",
                "stop reason: answered",
                "harness: offline",
            ],
            id="calculator",
        ),
        pytest.param(
            "look up policy privacy",
            ["tools called: policy_lookup [call_1_1] success", "stop reason: answered"],
            id="policy",
        ),
        pytest.param(
            "explain tool calling",
            ["tools called: none", "stop reason: answered"],
            id="direct-answer",
        ),
        pytest.param(
            "calculate __import__('os').getcwd()",
            [
                "answer: The calculator tool could not complete the request (invalid_arguments):"
                " function calls are not allowed",
                "tools called: calculator [call_1_1] error (invalid_arguments)",
            ],
            id="function-call-rejected",
        ),
        pytest.param(
            "calculate 2 ** 1000000",
            ["tools called: calculator [call_1_1] error (invalid_arguments)"],
            id="exponentiation-rejected",
        ),
        pytest.param(
            "计算 12 * (3 + 2)",
            ["answer: 12 * (3 + 2) 的计算结果是 60。"],
            id="chinese-calculator",
        ),
    ],
)
def test_demo_requests(text: str, lines: list[str]) -> None:
    code, out, err = invoke("run", text)
    assert code == 0
    assert err == ""
    for line in lines:
        assert line in out.splitlines()


def test_policy_answer_cites_its_source() -> None:
    code, out, _ = invoke("run", "look up policy privacy")
    assert code == 0
    assert "(source: offline-policy:privacy:v1)" in out


def test_json_output() -> None:
    code, out, _ = invoke("run", CALC, "--json")
    assert code == 0
    data = json.loads(out)
    assert {"stop_reason", "output", "tool_calls"} <= set(data)
    assert data["stop_reason"] == "answered"
    assert data["output"] == "The result of 12 * (3 + 2) is 60."
    assert data["tool_calls"] == [{"id": "call_1_1", "name": "calculator", "status": "success"}]
    assert "messages" not in data


def test_json_output_carries_error_kind() -> None:
    code, out, _ = invoke("run", "calculate 2 ** 1000000", "--json")
    assert code == 0
    call = json.loads(out)["tool_calls"][0]
    assert (call["id"], call["name"], call["status"]) == ("call_1_1", "calculator", "error")
    assert call["error_kind"] == "invalid_arguments"


def test_json_keeps_non_ascii_literal() -> None:
    _, out, _ = invoke("run", "计算 1 + 2", "--json")
    assert "计算结果" in out
    assert json.loads(out)["output"] == "1 + 2 的计算结果是 3。"


def test_trace_prints_parseable_jsonl() -> None:
    code, out, _ = invoke("run", CALC, "--json", "--trace")
    assert code == 0
    lines = out.splitlines()
    summary, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert summary["stop_reason"] == "answered"
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "run_started"
    assert all(e["time"].endswith("Z") and e["offset_seconds"] >= 0 for e in events)
    assert {k: v for k, v in events[-1].items() if k not in ("time", "offset_seconds")} == {
        "seq": len(events) - 1,
        "type": "stop",
        "reason": "answered",
        "detail": "",
    }
    assert [e["type"] for e in events if e["type"].startswith("tool")] == [
        "tool_call",
        "tool_result",
    ]


def test_trace_after_the_human_summary() -> None:
    code, out, _ = invoke("run", "explain tool calling", "--trace")
    assert code == 0
    assert out.startswith("answer: ")
    events = jsonl(out)
    assert events
    assert events[-1]["type"] == "stop"


@pytest.mark.parametrize(
    "extra",
    [pytest.param((), id="summary"), pytest.param(("--json",), id="json")],
)
def test_raw_messages_are_not_printed_by_default(extra: tuple[str, ...]) -> None:
    code, out, err = invoke("run", CALC, *extra)
    assert code == 0
    for raw in (
        CALC_TOOL_CONTENT,  # the tool message content
        '"role"',
        "role",
        "tool_call_id",
        '"content"',
        CALC,  # the user message itself
    ):
        assert raw not in out, raw
        assert raw not in err, raw


def test_system_text_is_never_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    system = "SYSTEM-PROMPT-do-not-print"

    def with_system(model: Any, tools: Any, text: str, **kwargs: Any) -> Any:
        from agent_contract.loop import run

        return run(model, tools, text, system=system, **kwargs)

    patch_everywhere(monkeypatch, "run_offline", with_system)
    for extra in ((), ("--json",)):
        code, out, _ = invoke("run", CALC, *extra)
        assert code == 0
        assert "60" in out
        assert system not in out


# -- budgets and exit codes -----------------------------------------------------------------


def test_exit_codes_cover_every_stop_reason() -> None:
    assert set(exitcodes.EXIT_CODES) == set(STOP_REASONS)
    assert exitcodes.EXIT_CODES["answered"] == 0
    budget = {
        "max_model_steps",
        "max_tool_calls",
        "repeated_call",
        "deadline",
        "max_trace_bytes",
        "max_history_messages",
        "max_history_chars",
    }
    assert {exitcodes.EXIT_CODES[r] for r in budget} == {exitcodes.EXIT_BUDGET}
    named = {
        name: value
        for name, value in vars(exitcodes).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    assert {"EXIT_OK", "EXIT_USAGE", "EXIT_BUDGET", "EXIT_CONTRACT_VIOLATION"} <= set(named)
    assert len(set(named.values())) == len(named)  # every documented code is distinct


def test_max_steps_flag_stops_the_demo_with_exit_3() -> None:
    # The demo needs two steps for a calculation; one is not enough.
    code, out, _ = invoke("run", CALC, "--max-steps", "1", "--json")
    assert code == exitcodes.EXIT_BUDGET == 3
    data = json.loads(out)
    assert data["stop_reason"] == "max_model_steps"
    assert data["output"] is None
    assert data["tool_calls"] == [{"id": "call_1_1", "name": "calculator", "status": "success"}]


def test_budget_stop_summary_says_there_is_no_answer() -> None:
    code, out, _ = invoke("run", CALC, "--max-steps", "1")
    assert code == 3
    assert "answer: (none: the run stopped without an answer)" in out
    assert "stop reason: max_model_steps (max_model_steps of 1 reached" in out


def looping_model(same_arguments: bool) -> FakeModel:
    """A model that asks for the calculator every step and never answers."""

    def again(messages: list[Message]) -> Any:
        step = sum(1 for m in messages if m.role == "assistant") + 1
        expression = "1 + 1" if same_arguments else f"{step} + 1"
        return tool_call("calculator", {"expression": expression})

    return FakeModel([again] * 20)


@pytest.mark.parametrize(
    ("flags", "same_arguments", "reason"),
    [
        pytest.param(("--max-tool-calls", "2"), False, "max_tool_calls", id="max-tool-calls"),
        pytest.param(("--max-repeats", "1"), True, "repeated_call", id="max-repeats"),
        pytest.param(("--max-steps", "3"), False, "max_model_steps", id="max-steps"),
    ],
)
def test_budget_flags_reach_the_run(
    monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], same_arguments: bool, reason: str
) -> None:
    model = looping_model(same_arguments)
    patch_everywhere(monkeypatch, "DemoModel", lambda: model)
    code, out, _ = invoke("run", "loop forever", "--json", *flags)
    assert code == 3
    data = json.loads(out)
    assert data["stop_reason"] == reason
    assert data["output"] is None


def test_default_repeat_budget_stops_a_looping_model(monkeypatch: pytest.MonkeyPatch) -> None:
    model = looping_model(same_arguments=True)
    patch_everywhere(monkeypatch, "DemoModel", lambda: model)
    code, out, _ = invoke("run", "loop", "--json")
    assert code == 3
    data = json.loads(out)
    assert data["stop_reason"] == "repeated_call"
    assert [c["status"] for c in data["tool_calls"]] == ["success", "success", "error"]
    assert len(model.calls) == 3


def test_contract_violation_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_everywhere(monkeypatch, "DemoModel", lambda: FakeModel([""]))
    code, out, _ = invoke("run", "x", "--json")
    assert code == exitcodes.EXIT_CONTRACT_VIOLATION == 5
    assert json.loads(out)["stop_reason"] == "invalid_response"


def test_model_error_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(messages: list[Message]) -> str:
        raise TimeoutError("provider secret detail")

    patch_everywhere(monkeypatch, "DemoModel", lambda: FakeModel([broken]))
    code, out, _ = invoke("run", "x")
    assert code == exitcodes.EXIT_MODEL_ERROR == 6
    assert "stop reason: model_error (the model raised TimeoutError)" in out
    assert "provider secret detail" not in out


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([], id="no-command"),
        pytest.param(["bogus"], id="unknown-command"),
        pytest.param(["run"], id="missing-text"),
        pytest.param(["run", "x", "--max-steps", "0"], id="zero-steps"),
        pytest.param(["run", "x", "--max-tool-calls", "-1"], id="negative-tool-calls"),
        pytest.param(["run", "x", "--max-repeats", "two"], id="non-numeric"),
        pytest.param(["run", "x", "--harness", "cloud"], id="unknown-harness"),
        pytest.param(["run", "x", "--unknown-flag"], id="unknown-flag"),
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    code, out, err = invoke(*argv)
    assert code == exitcodes.EXIT_USAGE == 2
    assert out == ""
    assert "usage:" in err  # argparse's message goes to the (redacting) err stream


APPROVE = ("approve", "run-000000000000", "--decision", "approve")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param([*APPROVE, "--as", ""], "--as is empty", id="as-empty"),
        pytest.param([*APPROVE, "--as", "  "], "--as is empty", id="as-blank"),
        pytest.param([*APPROVE, "--as", "a\nb"], "--as holds control characters", id="as-nl"),
        pytest.param(
            [*APPROVE, "--as", "\x1b[31mroot"], "--as holds control characters", id="as-ansi"
        ),
        pytest.param([*APPROVE, "--as", "x" * 100_000], "--as is too long", id="as-long"),
        pytest.param(
            ["approve", "r" * 100_000, "--decision", "approve"],
            "the run id is too long",
            id="run-id-long",
        ),
        pytest.param(["resume", "run-1\nx"], "the run id holds control", id="run-id-newline"),
        pytest.param(
            ["run", "x", "--secret", "abcd\udcff"], "--secret is not valid UTF-8", id="secret"
        ),
        pytest.param([*APPROVE, "--decided-by", "\udcff"], "--as is not valid UTF-8", id="as-utf8"),
    ],
)
def test_bad_names_and_ids_are_usage_errors_naming_the_option(
    argv: list[str], message: str, data_dir: Path
) -> None:
    """Newcomer findings 14-16: checked before anything runs, named as typed, with the
    command's own usage line, and a long value is never echoed whole."""
    code, out, err = invoke(*argv)
    assert code == exitcodes.EXIT_USAGE, err
    assert out == ""
    assert message in err
    assert f"agent-contract {argv[0]}: error:" in err
    assert "thread_id" not in err
    assert "decided_by" not in err
    assert "x" * 1000 not in err
    assert "r" * 1000 not in err
    assert not data_dir.exists()


def test_edit_arguments_that_are_not_json_say_so() -> None:
    code, out, err = invoke(
        "approve", "run-000000000000", "--decision", "edit", "--arguments", "{bad"
    )
    assert code == exitcodes.EXIT_USAGE
    assert out == ""
    assert "--arguments is not valid JSON" in err


def test_an_unknown_run_id_is_exit_8_naming_it() -> None:
    assert invoke("run", "calculate 1+1")[0] == 0  # the data folder exists
    code, out, err = invoke("approve", "run-000000000000", "--decision", "approve")
    assert code == exitcodes.EXIT_APPROVAL_REFUSED
    assert out == ""
    assert "no paused run 'run-000000000000'" in err


def test_too_short_secret_is_a_usage_error_and_not_echoed() -> None:
    code, out, err = invoke("run", "calculate 1 + 1", "--secret", "xyz")
    assert code == 2
    assert out == ""
    assert "ConfigurationError" in err
    assert "xyz" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = invoke("--version")
    assert code == 0
    assert capsys.readouterr().out.startswith("agent-contract ")


# -- secrets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "secret", "echoed_in_answer"),
    [
        pytest.param(
            "look up policy s3cret-token-xyz", "s3cret-token-xyz", True, id="echoed-by-error"
        ),
        pytest.param("calculate 123456789 + 1", "123456789", True, id="echoed-by-result"),
        pytest.param(
            "calculate sk-live-abcdefghijklmnop",
            "sk-live-abcdefghijklmnop",
            False,  # the calculator's error does not quote it; the trace's arguments do
            id="in-arguments",
        ),
    ],
)
@pytest.mark.parametrize(
    "mode",
    [
        pytest.param((), id="summary"),
        pytest.param(("--json",), id="json"),
        pytest.param(("--trace",), id="trace"),
        pytest.param(("--json", "--trace"), id="json-trace"),
    ],
)
def test_secret_is_never_printed(
    request_text: str, secret: str, echoed_in_answer: bool, mode: tuple[str, ...]
) -> None:
    code, out, err = invoke("run", request_text, "--secret", secret, *mode)
    assert code == 0
    assert secret not in out
    assert secret not in err
    if echoed_in_answer or "--trace" in mode:
        assert "[REDACTED]" in out  # it was there, and was replaced


# -- self-test ------------------------------------------------------------------------------


def test_self_test_passes() -> None:
    code, out, _ = invoke("self-test")
    assert code == 0
    lines = out.splitlines()
    checks = lines[:-1]
    assert checks
    assert all(line.startswith("PASS ") for line in checks)
    assert lines[-1] == f"{len(checks)} passed, 0 failed"
    assert "PASS calculator call returns 60" in lines
    assert "PASS policy lookup cites offline-policy:privacy:v1" in lines


def test_self_test_reports_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> str | None:
        raise RuntimeError("internal detail")

    monkeypatch.setattr(
        selftest,
        "self_test_checks",
        lambda: [("fine", lambda: None), ("wrong", lambda: "expected 1, got 2"), ("raises", boom)],
    )
    code, out, _ = invoke("self-test")
    assert code == exitcodes.EXIT_FAILURE == 1
    assert out.splitlines() == [
        "PASS fine",
        "FAIL wrong: expected 1, got 2",
        "FAIL raises: raised RuntimeError",
        "1 passed, 2 failed",
    ]


# -- lcel -----------------------------------------------------------------------------------


def test_lcel_with_langchain_installed() -> None:
    pytest.importorskip("langchain_core")
    code, out, err = invoke("lcel", "  hello   agent  ")
    assert code == 0, err
    assert json.loads(out) == {"text": "hello agent", "chars": 11, "words": 2}


def test_lcel_without_langchain_core_is_dependency_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "agent_contract_langchain.lcel", raising=False)
    monkeypatch.setitem(sys.modules, "langchain_core.runnables", None)
    code, out, err = invoke("lcel", "hello")
    assert code == exitcodes.EXIT_DEPENDENCY_MISSING == 4
    assert out == ""
    assert err.startswith("dependency_missing: langchain-core is not installed")


# -- through a real process -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        pytest.param(CALC, "is 60.", id="calculator"),
        pytest.param("look up policy privacy", "offline-policy:privacy:v1", id="policy"),
        pytest.param("explain tool calling", "tools called: none", id="direct-answer"),
        pytest.param("查询政策 privacy", "来源：offline-policy:privacy:v1", id="chinese-policy"),
    ],
)
def test_subprocess_demo_requests(text: str, needle: str) -> None:
    proc = run_module("run", text)
    assert proc.returncode == 0, proc.stderr
    assert needle in proc.stdout
    assert proc.stderr == ""
    assert "role" not in proc.stdout


def test_subprocess_json_and_trace() -> None:
    proc = run_module("run", CALC, "--json", "--trace")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert json.loads(lines[0])["tool_calls"][0]["name"] == "calculator"
    assert all(isinstance(json.loads(line), dict) for line in lines[1:])


def test_subprocess_budget_and_usage_exit_codes() -> None:
    assert run_module("run", CALC, "--max-steps", "1").returncode == 3
    usage = run_module("run")
    assert usage.returncode == 2
    assert "usage:" in usage.stderr


def test_console_script_self_test() -> None:
    script = Path(sys.executable).with_name("agent-contract")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    proc = subprocess.run(
        [str(script), "self-test"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,  # a hang guard, far above the expected time
        check=False,
        env=child_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASS ") >= 5
    assert "FAIL" not in proc.stdout
