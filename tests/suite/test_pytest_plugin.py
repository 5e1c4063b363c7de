"""The ``agent_contract`` pytest plugin: registered by entry point, light, warning-free."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import pytest

from agent_contract.conformance import SCENARIOS

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

# pytest's own warning under ``python -O`` (the plugin adds none).
IGNORE_UNDER_O = "ignore:assertions not in test modules:pytest.PytestConfigWarning"


def test_entry_point_names_the_plugin_module() -> None:
    found = [e for e in entry_points(group="pytest11") if e.name == "agent_contract"]
    assert [e.value for e in found] == ["agent_contract.conformance.plugin"]


def test_importing_the_core_or_the_plugin_pulls_in_no_framework() -> None:
    code = (
        "import sys, agent_contract; assert 'pytest' not in sys.modules, 'pytest';"
        "import agent_contract.conformance.plugin;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langchain', 'langchain_core',"
        " 'langgraph', 'agent_contract_langchain')]; assert not bad, bad"
    )
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_fixtures_in_a_users_project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixtures=textwrap.dedent(
            """
            from agent_contract.harnesses import offline_harness

            def test_scenarios(contract_scenarios):
                assert len(contract_scenarios) == {count}

            def test_fake_model(fake_model):
                model = fake_model(["hello"])
                assert model.complete([]).text == "hello"

            def test_harness_and_runner(contract_harness, run_contract_scenario,
                                        contract_scenarios):
                outcome = run_contract_scenario(
                    contract_scenarios[0], contract_harness("offline"), "mine"
                )
                assert outcome.holds and outcome.harness == "mine"
                assert contract_harness("offline") is offline_harness
            """
        ).format(count=len(SCENARIOS))
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", *OTHER_PLUGINS, "-W", "error", "-W", IGNORE_UNDER_O
    )
    result.assert_outcomes(passed=3)


def test_fake_model_left_with_unused_replies_fails_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fixtures="""
        def test_ends_early(fake_model):
            fake_model(["one", "two"]).complete([])
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", *OTHER_PLUGINS)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*scripted with 2 replies was called 1 time(s)*"])
