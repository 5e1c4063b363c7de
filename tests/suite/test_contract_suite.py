"""The user-facing suite (``ContractSuite``, ``CreateAgentContractSuite``), run the way a
user runs it: a throwaway project with a test module, executed by pytest (``pytester``).
"""

from __future__ import annotations

import textwrap

import pytest

from agent_contract.conformance import SCENARIOS
from agent_contract.conformance.suite import (
    STANDARD_TESTS,
    ContractSuite,
    capability_flag,
    is_declared_opt_out,
    scenarios_for_test,
)

OFFLINE_SUITE = """
from agent_contract.harnesses import offline_harness
from agent_contract.conformance.suite import ContractSuite


class TestMyLoop(ContractSuite):
    harness_name = "my-loop"

    def harness(self):
        return offline_harness
"""

# Standard tests without a scenario in this release report one skip each.
EMPTY_STANDARD_TESTS = sum(1 for name in STANDARD_TESTS if not scenarios_for_test(name))


# Plugins of other packages in this environment, unrelated to these tests; each would be
# imported afresh (and assertion-rewritten) in every in-process run.
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

# Scenarios that need write tools (approval): the create_agent suite runs them on the
# user's checkpointer, or an in-memory one it attaches when the graph has none.
WRITE_SCENARIOS = sum(1 for s in SCENARIOS if "write_tools" in s.requires)


def needing(*capabilities: str, boundary: str | None = None) -> int:
    """How many scenarios (of ``boundary``, if given) need one of ``capabilities``."""
    return sum(
        1
        for s in SCENARIOS
        if set(s.requires) & set(capabilities) and boundary in (None, s.boundary)
    )


FRAMEWORK = ("middleware", "graph_commands", "pauses", "threads")
OFFLINE_SKIPPED = needing(
    *FRAMEWORK, "crash_restart", "durable_store", "sub_agents", "streamed_replies"
)
"""Scenarios a plain ContractSuite skips: they need a framework's pieces, the
crash/restart hook, the checkpoint-integrity hook, the sub-agent hook or replies
streamed in pieces (flags off by default)."""
CREATE_AGENT_SKIPPED = needing("middleware", "sub_agents", "streamed_replies")
"""Scenarios the create_agent suite skips: middleware placed by the suite, the
sub-agent hook (the user's graph has no delegating tool), and replies streamed in
pieces (its scripted chat model replies whole)."""
RETRY_TIMEOUTS = needing(*FRAMEWORK, boundary="timeouts")
PLAIN_TIMEOUTS = sum(1 for s in SCENARIOS if s.boundary == "timeouts") - RETRY_TIMEOUTS
"""The timeout scenarios a plain ContractSuite runs (a sync and an async tool)."""


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    """Write ``source`` as ``test_user.py`` in a throwaway project and run pytest on it."""
    pytester.makepyfile(test_user=textwrap.dedent(source))
    return pytester.runpytest("-p", "no:cacheprovider", *OTHER_PLUGINS, "-rsx", *args)


def test_offline_subclass_passes(pytester: pytest.Pytester) -> None:
    result = run(pytester, OFFLINE_SUITE)
    result.assert_outcomes(
        passed=len(SCENARIOS) - OFFLINE_SKIPPED + 2,
        skipped=EMPTY_STANDARD_TESTS + OFFLINE_SKIPPED,
    )


@pytest.mark.children_run_plain
def test_offline_subclass_passes_under_xdist(pytester: pytest.Pytester) -> None:
    """A user's suite file under ``pytest -n 2`` (pytest-xdist, in a new process: the
    workers are processes of their own) has the same outcomes as in one process."""
    pytester.makepyfile(test_user=textwrap.dedent(OFFLINE_SUITE))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *OTHER_PLUGINS, "-rsx", "-n", "2", timeout=600
    )
    result.stdout.fnmatch_lines(["*2 workers*"])
    result.assert_outcomes(
        passed=len(SCENARIOS) - OFFLINE_SKIPPED + 2,
        skipped=EMPTY_STANDARD_TESTS + OFFLINE_SKIPPED,
    )


def test_ids_name_boundary_and_scenario(pytester: pytest.Pytester) -> None:
    result = run(pytester, OFFLINE_SUITE, "-v", "-k", "allowlist")
    result.stdout.fnmatch_lines(["*TestMyLoop::test_allowlist?unknown_tool? PASSED*"])


def test_silent_override_is_rejected(pytester: pytest.Pytester) -> None:
    source = (
        OFFLINE_SUITE
        + """
    def test_timeouts(self, scenario):
        pass  # "we do not do timeouts": a silent opt-out
"""
    )
    result = run(pytester, source, "-k", "timeouts or no_silent")
    result.assert_outcomes(passed=PLAIN_TIMEOUTS + RETRY_TIMEOUTS, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_no_silent_opt_outs*",
            "*standard tests overridden without @pytest.mark.xfail(reason=..., strict=True): "
            "test_timeouts*",
        ]
    )


@pytest.mark.parametrize(
    "marker",
    [
        pytest.param("@pytest.mark.xfail(strict=True)", id="no-reason"),
        pytest.param('@pytest.mark.xfail(reason="slow tools", strict=False)', id="not-strict"),
        pytest.param('@pytest.mark.xfail(reason="slow tools")', id="strict-unset"),
        pytest.param('@pytest.mark.skip(reason="slow tools")', id="skip"),
    ],
)
def test_other_markers_are_rejected(pytester: pytest.Pytester, marker: str) -> None:
    source = (
        "import pytest\n"
        + OFFLINE_SUITE
        + f"""
    {marker}
    def test_timeouts(self, scenario):
        super().test_timeouts(scenario)
"""
    )
    result = run(pytester, source, "-k", "no_silent")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*overridden without*test_timeouts*"])


def test_removed_standard_test_is_rejected(pytester: pytest.Pytester) -> None:
    source = OFFLINE_SUITE + "\n    test_allowlist = None\n"
    result = run(pytester, source, "-k", "no_silent")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*standard tests removed: test_allowlist*"])


XFAIL_OPT_OUT = """
import dataclasses

import pytest

from agent_contract.harnesses import offline_harness
from agent_contract.conformance.suite import ContractSuite


def no_timeouts(model, tools, options):
    # An agent whose tools have no effective time limit.
    tools = [dataclasses.replace(t, timeout_seconds=30.0) for t in tools]
    return offline_harness(model, tools, options)


class TestSlowAgent(ContractSuite):
    def harness(self):
        return no_timeouts

    @pytest.mark.xfail(reason="our tools have no time limits yet (TICKET-12)", strict=True)
    def test_timeouts(self, scenario):
        super().test_timeouts(scenario)
"""


def test_strict_xfail_with_reason_is_accepted(pytester: pytest.Pytester) -> None:
    result = run(pytester, XFAIL_OPT_OUT, "-k", "timeouts or no_silent")
    result.assert_outcomes(passed=1, xfailed=PLAIN_TIMEOUTS, skipped=RETRY_TIMEOUTS)
    result.stdout.fnmatch_lines(["*XFAIL*test_timeouts*TICKET-12*"])


def test_strict_xfail_fails_once_the_agent_passes(pytester: pytest.Pytester) -> None:
    source = XFAIL_OPT_OUT.replace("return no_timeouts", "return offline_harness")
    result = run(pytester, source, "-k", "timeouts")
    result.assert_outcomes(failed=PLAIN_TIMEOUTS, skipped=RETRY_TIMEOUTS)
    result.stdout.fnmatch_lines(["*XPASS(strict)*"])


def test_capability_flag_skips_what_needs_it(pytester: pytest.Pytester) -> None:
    source = OFFLINE_SUITE + "\n    supports_timeouts = False\n"
    result = run(pytester, source, "-k", "timeouts or capability")
    result.assert_outcomes(passed=1, skipped=PLAIN_TIMEOUTS + RETRY_TIMEOUTS)
    result.stdout.fnmatch_lines(
        ["*SKIPPED*supports_timeouts = False: scenario 'tool_timeout' needs 'timeouts'*"]
    )


def test_non_boolean_flag_is_rejected(pytester: pytest.Pytester) -> None:
    source = OFFLINE_SUITE + '\n    supports_timeouts = "no"\n'
    result = run(pytester, source, "-k", "capability")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*supports_timeouts must be True or False*"])


def test_broken_harness_fails_with_boundary_and_evidence(pytester: pytest.Pytester) -> None:
    source = """
from agent_contract.harnesses import offline_harness
from agent_contract.conformance.suite import ContractSuite


def everything_allowed(model, tools, options):
    import dataclasses
    return offline_harness(model, tools, dataclasses.replace(options, allowlist=None))


class TestLeaky(ContractSuite):
    def harness(self):
        return everything_allowed
"""
    result = run(pytester, source, "-k", "allowlist")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*scenario 'outside_allowlist'*broke on harness 'user'*",
            "*?allowlist? tool messages*",
        ]
    )


def test_missing_harness_hook_is_an_error(pytester: pytest.Pytester) -> None:
    source = """
from agent_contract.conformance.suite import ContractSuite


class TestNothing(ContractSuite):
    pass
"""
    result = run(pytester, source, "-k", "direct_answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NotImplementedError: TestNothing must define harness*"])


CREATE_AGENT_SUITE = """
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.tools import tool

from agent_contract_langchain.testing import CreateAgentContractSuite


@tool
def lookup_order(order_id: str) -> str:
    \"\"\"Look up an order by id.\"\"\"
    return f"order {order_id}: shipped"


class Counting(AgentMiddleware):
    def wrap_model_call(self, request, handler):
        return handler(request)

    async def awrap_model_call(self, request, handler):
        return await handler(request)


class TestMyAgent(CreateAgentContractSuite):
    def build_agent(self, chat_model, tools, middleware):
        return create_agent(
            chat_model,
            tools=[*tools, lookup_order],
            system_prompt="You are the shop's support agent.",
            middleware=[middleware[0], Counting(), middleware[-1]],
        )
"""


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream"])
def test_create_agent_subclass_passes(pytester: pytest.Pytester, mode: str) -> None:
    source = CREATE_AGENT_SUITE + f'\n    mode = "{mode}"\n'
    result = run(pytester, source)
    result.assert_outcomes(
        passed=len(SCENARIOS) - CREATE_AGENT_SKIPPED + 2,
        skipped=EMPTY_STANDARD_TESTS + CREATE_AGENT_SKIPPED,
    )
    assert WRITE_SCENARIOS > 0, "the approval scenarios must run on users' create_agent too"


def test_create_agent_subclass_can_turn_write_tools_off(pytester: pytest.Pytester) -> None:
    source = CREATE_AGENT_SUITE + "\n    has_write_tools = False\n"
    result = run(pytester, source)
    result.assert_outcomes(
        passed=len(SCENARIOS) - WRITE_SCENARIOS - CREATE_AGENT_SKIPPED + 2,
        skipped=EMPTY_STANDARD_TESTS + WRITE_SCENARIOS + CREATE_AGENT_SKIPPED,
    )
    result.stdout.fnmatch_lines(["*SKIPPED*has_write_tools = False*"])


def test_create_agent_without_contract_middleware_is_diagnosed(pytester: pytest.Pytester) -> None:
    source = CREATE_AGENT_SUITE.replace(
        "middleware=[middleware[0], Counting(), middleware[-1]]", "middleware=[]"
    )
    result = run(pytester, source, "-k", "direct_answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*never ran the ContractMiddleware it was given*"])


def test_create_agent_hook_is_required(pytester: pytest.Pytester) -> None:
    source = """
from agent_contract_langchain.testing import CreateAgentContractSuite


class TestNoHook(CreateAgentContractSuite):
    pass
"""
    result = run(pytester, source, "-k", "direct_answer")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TestNoHook must define build_agent*"])


DURABLE_SUITE = """
import sqlite3
from pathlib import Path

from langchain.agents import create_agent
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract_langchain.durable import sqlite_checkpointer
from agent_contract_langchain.testing import CreateAgentContractSuite

FOLDER = Path(__file__).parent / "data"
FOLDER.mkdir(mode=0o700, exist_ok=True)
if "{saver}" == "sealed":
    OPENED = sqlite_checkpointer(FOLDER / "checkpoints.sqlite3")  # the project's own
    SAVER = OPENED.__enter__()
else:
    SAVER = SqliteSaver(sqlite3.connect(FOLDER / "checkpoints.sqlite3", check_same_thread=False))


class TestDurableAgent(CreateAgentContractSuite):
    mode = "{mode}"

    def build_agent(self, chat_model, tools, middleware):
        return create_agent(
            chat_model,
            tools=list(tools),
            middleware=[middleware[0], middleware[-1]],
            checkpointer=SAVER,  # every build compiles the same durable saver
        )
"""

PAUSING = sum(
    1
    for s in SCENARIOS
    if set(s.requires) & {"write_tools", "pauses"} and "middleware" not in s.requires
)
"""Scenarios that leave an interrupt on their thread (a write waiting, a pausing tool)."""


@pytest.mark.parametrize(("mode", "saver"), [("invoke", "sqlite"), ("stream", "sealed")])
def test_create_agent_runs_on_the_teams_durable_checkpointer(
    pytester: pytest.Pytester, mode: str, saver: str
) -> None:
    """A graph compiled with a SQLite checkpointer (LangGraph's ``SqliteSaver``, or the
    project's sealed one) runs the whole suite green on it, crash/restart and threads
    included: the file holds one thread per scenario run afterwards, the write
    approvals' interrupts among them, so the suite used it instead of a saver of its
    own."""
    import re
    import sqlite3

    result = run(pytester, DURABLE_SUITE.format(mode=mode, saver=saver))
    result.assert_outcomes(
        passed=len(SCENARIOS) - CREATE_AGENT_SKIPPED + 2,
        skipped=EMPTY_STANDARD_TESTS + CREATE_AGENT_SKIPPED,
    )
    db = sqlite3.connect(pytester.path / "data" / "checkpoints.sqlite3")
    try:
        threads = [row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        paused = db.execute(
            "SELECT COUNT(DISTINCT thread_id) FROM writes WHERE channel = '__interrupt__'"
        ).fetchone()[0]
    finally:
        db.close()
    assert len(threads) == len(SCENARIOS) - CREATE_AGENT_SKIPPED
    assert all(re.fullmatch(r"run-[0-9a-f]{12}", thread) for thread in threads)
    assert paused == PAUSING


def test_a_restart_needs_the_same_checkpointer(pytester: pytest.Pytester) -> None:
    """A ``build_agent`` that compiles a new in-memory saver each time loses the paused
    thread when a crash scenario restarts in a fresh graph: diagnosed, not a crash."""
    source = """
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract_langchain.testing import CreateAgentContractSuite


class TestForgetful(CreateAgentContractSuite):
    def build_agent(self, chat_model, tools, middleware):
        return create_agent(
            chat_model, tools=list(tools), middleware=list(middleware),
            checkpointer=InMemorySaver(),
        )
"""
    result = run(pytester, source, "-k", "write_approved or write_crash_after_write")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*restart after a crash cannot resume the paused run*compile the same checkpointer*"]
    )


ENDPOINT_SUITE = (
    CREATE_AGENT_SUITE
    + """

from agent_contract.approval import Approval
from agent_contract_langchain.resuming import resume_graph


class TestShopEndpoint(TestMyAgent):
    drops_edits = False

    def approval_endpoint(self, graph, contract, snapshot, pending, decisions, *, checkpoint=None):
        # the team's endpoint: a reviewer's decision in, the resumed run out
        approvals = []
        for request in pending:
            decision = decisions.get(request.tool_call_id)
            if decision is None:
                continue
            token = decision["agent_contract"]["token"]
            kind = decision["type"]
            if kind == "edit" and self.drops_edits:
                kind = "approve"
            arguments = decision["edited_action"]["args"] if kind == "edit" else None
            approvals.append(Approval(
                tool_call_id=request.tool_call_id, decision=kind, token=token,
                arguments=arguments, reason=decision.get("message", ""),
            ))
        return resume_graph(
            graph, contract, snapshot, approvals, mode=self.mode, checkpoint=checkpoint
        )


class TestEditDroppingEndpoint(TestShopEndpoint):
    drops_edits = True
"""
)


def test_create_agent_approvals_go_through_the_teams_endpoint(pytester: pytest.Pytester) -> None:
    """Every scenario with write approvals routes the reviewer's decisions through the
    overridden ``approval_endpoint`` (crash restarts included): a correct endpoint holds
    on each; one that turns an edit into a plain approval breaks ``write_edited``,
    under approval for writes."""
    writes = [s.name for s in SCENARIOS if "write_tools" in s.requires]
    selected = f"Endpoint and ({' or '.join(writes)})"
    result = run(pytester, ENDPOINT_SUITE, "-k", selected)
    result.assert_outcomes(passed=2 * len(writes) - 1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*TestEditDroppingEndpoint*write_edited*",
            "*[[]write_approval[]] writes applied [[]10[]], expected [[]5[]]*",
        ]
    )
    assert "TestShopEndpoint::test_write_approval[write_edited] FAILED" not in result.stdout.str()


# -- the pieces, directly ----------------------------------------------------------------


def test_every_boundary_scenario_lands_in_exactly_one_standard_test() -> None:
    placed = [s.name for name in STANDARD_TESTS for s in scenarios_for_test(name)]
    assert sorted(placed) == sorted(s.name for s in SCENARIOS)


def test_standard_tests_exist_with_failure_hints() -> None:
    for name in [*STANDARD_TESTS, "test_no_silent_opt_outs", "test_capability_flags_are_declared"]:
        doc = getattr(ContractSuite, name).__doc__ or ""
        assert "If this fails:" in doc, name
        last_paragraph = doc.strip().split("\n\n")[-1]
        assert last_paragraph.strip().startswith("If this fails:"), name


def test_capability_flag_lookup() -> None:
    class Suite:
        has_write_tools = False
        supports_timeouts = True

    assert capability_flag(Suite, "write_tools") == ("has_write_tools", False)
    assert capability_flag(Suite, "timeouts") == ("supports_timeouts", True)
    assert capability_flag(Suite, "teleportation") is None


def test_every_required_capability_has_a_flag_on_the_base_class() -> None:
    for capability in {c for s in SCENARIOS for c in s.requires}:
        assert capability_flag(ContractSuite, capability) is not None, capability


def test_declared_opt_out_needs_reason_and_strict() -> None:
    @pytest.mark.xfail(reason="why", strict=True)
    def good() -> None: ...

    @pytest.mark.xfail(reason="  ", strict=True)
    def blank() -> None: ...

    @pytest.mark.xfail(reason="why")
    def lax() -> None: ...

    assert is_declared_opt_out(good)
    assert not is_declared_opt_out(blank)
    assert not is_declared_opt_out(lax)
    assert not is_declared_opt_out(lambda: None)


def test_a_boundary_without_its_own_test_lands_in_the_catch_all() -> None:
    from dataclasses import replace

    future = replace(SCENARIOS[0], name="quantum_case", boundary="quantum_entanglement")
    pool = (*SCENARIOS, future)
    assert scenarios_for_test("test_other_boundaries", pool) == (future,)
    assert future not in scenarios_for_test("test_response_shape", pool)


def test_every_known_boundary_has_a_standard_test() -> None:
    from agent_contract.conformance import BOUNDARIES

    assert {f"test_{b.id}" for b in BOUNDARIES} <= set(STANDARD_TESTS)
    assert all(callable(getattr(ContractSuite, name)) for name in STANDARD_TESTS)


def test_a_harness_that_differs_from_the_reference_fails(pytester: pytest.Pytester) -> None:
    """The pytest suite compares each run with the offline reference, as ``check`` does:
    a trace without its tool-result events fails, although every expectation holds."""
    source = """
from dataclasses import replace

from agent_contract.conformance.evaluate import observe
from agent_contract.conformance.suite import ContractSuite
from agent_contract.harnesses import offline_harness


def traceless(model, tools, options):
    seen = observe(offline_harness(model, tools, options))
    return replace(seen, trace_types=tuple(t for t in seen.trace_types if t != "tool_result"))


class TestTraceless(ContractSuite):
    def harness(self):
        return traceless
"""
    result = run(pytester, source, "-k", "single_tool_call")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*?trace_redaction? trace events differ from the offline*"])
