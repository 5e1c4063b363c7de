"""A timed-out thread-mode tool no longer holds the process at exit, on every harness.

Each case runs a child Python process whose tool sleeps far longer than anyone would wait
(600 s) under a 0.1 s timeout; the child prints the call's outcome and returns from its
script. The test asserts that the child exited on its own (exit code 0) and what it
reported; the subprocess timeout is only a guard against a hang (the test fails then),
not a measured bound. Before, the interpreter joined the pool's worker at exit and the
child would have lived until the tool returned.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HANG_GUARD_SECONDS = 120.0
"""Far above any normal exit; reaching it means the child hung (and fails the test)."""

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from agent_contract import Budget, ToolSpec, run
    from agent_contract.testing import FakeModel, tool_call

    def sleepy(text: str) -> str:
        time.sleep(600)  # far past the timeout: the thread is abandoned
        return "never"

    spec = ToolSpec(
        name="sleepy",
        description="Sleeps.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=sleepy,
        timeout_seconds=0.1,
    )
    model = FakeModel([tool_call("sleepy", {"text": "x"}), "gave up"])
    mode = sys.argv[1]
    if mode == "offline":
        result = run(model, [spec], "go", budget=Budget(deadline_seconds=60.0))
    else:
        from agent_contract_langchain import run_agent

        result = run_agent(model, [spec], "go", budget=Budget(deadline_seconds=60.0), mode=mode)
    record = result.tool_calls[0]
    print(json.dumps([result.stop_reason, record.error_kind, record.outcome]))
    """
)


@pytest.mark.parametrize("mode", ["offline", "invoke", "ainvoke", "stream"])
def test_the_process_exits_with_a_tool_thread_still_running(mode: str) -> None:
    flags = ["-O"] * sys.flags.optimize + [f"-W{w}" for w in sys.warnoptions]
    child = subprocess.run(
        [sys.executable, *flags, "-c", CHILD, mode],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout.strip().splitlines()[-1]) == ["answered", "timeout", "unknown"]
