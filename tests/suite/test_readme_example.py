"""The README's "Check your own agent" example runs, as written, in a throwaway project."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_contract.conformance import SCENARIOS
from agent_contract.conformance.suite import STANDARD_TESTS, scenarios_for_test

README = Path(__file__).resolve().parents[2] / "README.md"
OTHER_PLUGINS = tuple(
    arg
    for name in (
        "hypothesispytest",
        "langsmith_plugin",
        "anyio",
        # langchain-tests' dependencies (the peer suite in tests/peer)
        "asyncio",
        "benchmark",
        "codspeed",
        "recording",
        "socket",
        "syrupy",
    )
    for arg in ("-p", f"no:{name}")
)
IGNORE_UNDER_O = "ignore:assertions not in test modules:pytest.PytestConfigWarning"


def readme_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Check your own agent", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "README: no python example under 'Check your own agent'"
    return found.group(1)


def test_example_is_about_fifteen_lines() -> None:
    lines = [line for line in readme_example().splitlines() if line.strip()]
    assert len(lines) <= 20


def test_readme_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_my_agent=readme_example())
    result = pytester.runpytest(
        "-p", "no:cacheprovider", *OTHER_PLUGINS, "-W", "error", "-W", IGNORE_UNDER_O, "-rs"
    )
    empty = sum(1 for name in STANDARD_TESTS if not scenarios_for_test(name))
    # Every scenario runs, the write-approval ones included; those whose middleware the
    # suite would place in your stack are skipped (supports_middleware is off), and so are
    # the sub-agent ones (your graph has no delegating tool: supports_sub_agents is off)
    # and the streamed-arguments ones (the suite does not split your model's replies into
    # pieces: streamed_replies is not declared).
    not_declared = {"middleware", "sub_agents", "streamed_replies"}
    middleware = sum(1 for s in SCENARIOS if not_declared & set(s.requires))
    result.assert_outcomes(passed=len(SCENARIOS) - middleware + 2, skipped=empty + middleware)
