"""``check --agent`` on the agent a team deploys (issue 22, items 3 and 4): a factory
that builds several agents (deepagents, langgraph-supervisor), a module-level compiled
graph (``module:graph``), every tool the model is offered (middleware tools included),
an allowlist's withdrawal and an async-only tool listed with the reason, and errors
blamed on the layer that raised."""

from __future__ import annotations

import dataclasses
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.cli import main
from agent_contract.conformance.agent import render_agent_text, run_agent_check
from agent_contract.testing import FakeModel
from agent_contract_langchain.agent_check.capture import GraphModule, capture_agents, load_factory
from agent_contract_langchain.agent_check.probes import agent_probes
from agent_contract_langchain.chat_model import ContractChatModel

ROOT = Path(__file__).resolve().parents[2]
DEEP = "tests.agents.deep:build_deep_agent"
DEEP_UNDER_CONTRACT = "tests.agents.deep:build_filesystem_agent_under_contract"
DEEP_GRAPH = "tests.agents.deep_graph:agent"
TEAM = "tests.agents.supervisor:build_team"
FS_TOOLS = ("ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep")
DEEP_EFFECTS = (
    "lookup_order=read,ls=read,read_file=read,glob=read,grep=read,"
    "write_file=write,edit_file=write,delete=write,task=write,write_todos=write"
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Pydantic serializer warnings:UserWarning", "ignore::DeprecationWarning"
)


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def cells_of(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["harness"], c["boundary"]): c["status"] for c in report["cells"]}


def model() -> ContractChatModel:
    return ContractChatModel(model=FakeModel(["unused"]))


def test_every_agent_a_deep_agent_builds_is_seen_and_the_returned_one_is_known() -> None:
    from tests.agents.deep import build_deep_agent

    built = capture_agents(build_deep_agent, model())
    # general-purpose and researcher are built twice (deepagents rebuilds them once the
    # main stack is known): each is one agent, its latest build.
    assert [p.key for p in built.agents] == ["general-purpose", "researcher", "#1"]
    assert built.outermost is built.agents[2]
    main_tools = [t.name for t in built.outermost.tools]
    assert main_tools[0] == "lookup_order"
    assert {*FS_TOOLS, "execute", "write_todos", "task"} <= set(main_tools)
    assert built.outermost.added_by["task"] == "SubAgentMiddleware"
    assert built.outermost.added_by["ls"] == "FilesystemMiddleware"
    assert built.outermost.added_by["write_todos"] == "TodoListMiddleware"
    assert "lookup_order" not in built.outermost.added_by


_DEEP: dict[str, tuple[int, str, str]] = {}


def deep_report() -> tuple[int, str, str]:
    if not _DEEP:
        _DEEP["json"] = cli(
            "--agent", DEEP, "--effect", DEEP_EFFECTS, "--format", "json", "--quiet"
        )
    return _DEEP["json"]


@pytest.mark.xdist_group("deep_report")  # deep_report() runs once per worker
def test_check_on_a_deep_agent_gives_a_verdict_per_agent_naming_every_tool() -> None:
    code, out, err = deep_report()
    assert code == 5, err  # as built, deepagents breaks the contract; the exit says so
    data = json.loads(out)
    agent = data["agent"]
    assert data["exit_code"] == 5
    assert agent["name"] == "main"
    probed = [t["name"] for t in agent["tools"]]
    assert probed == ["lookup_order", *FS_TOOLS, "task", "write_todos"]
    assert list(agent["not_probed"]) == ["execute"]  # FilesystemMiddleware withdraws it
    assert "never offered to the model" in agent["not_probed"]["execute"]
    assert agent["unchecked"] == []
    assert [a["name"] for a in agent["agents"]] == ["general-purpose", "researcher"]
    for child in agent["agents"]:
        assert [t["name"] for t in child["tools"]] == ["lookup_order", *FS_TOOLS]
        statuses = cells_of(child["report"])
        column = f"build_deep_agent.{child['name']} + contract"
        # On failure: each cell that does not hold, with its evidence.
        evidence = [
            (c["boundary"], c["status"], c["evidence"][:2])
            for c in child["report"]["cells"]
            if c["harness"] == column and c["status"] != "holds"
        ]
        assert {s for (h, _), s in statuses.items() if h == column} == {"holds"}, evidence
    statuses = cells_of(data)
    contract = {s for (h, _), s in statuses.items() if h == "build_deep_agent + contract"}
    assert contract == {"holds"}, statuses
    # Every tool has its own probes, the middleware's included (a read: valid_call
    # runs it once, bound to its id; tool_error and secret_redacted too).
    for tool in ("ls", "grep", "task", "write_todos"):
        assert f"valid_call[{tool}]" in agent["probes"]
    assert "tool_error[ls]" in agent["probes"]
    assert "tool_error[task]" not in agent["probes"]  # a write: it waits for approval


@pytest.mark.xdist_group("deep_report")  # deep_report() runs once per worker
def test_a_tools_own_exception_is_the_tools_not_the_middleware_that_passed_it_on() -> None:
    _, out, _ = deep_report()
    data = json.loads(out)
    (cell,) = [
        c
        for c in data["cells"]
        if c["harness"] == "build_deep_agent (as built)" and c["boundary"] == "tool_errors"
    ]
    observed = " ".join(e["observed"] for e in cell["evidence"])
    assert "raised in your tool 'ls'" in observed, observed
    assert "FilesystemMiddleware" not in observed


def test_the_layer_that_raised_is_named(tmp_path: Path) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware.types import AgentMiddleware
    from langchain_core.tools import tool

    from agent_contract.testing import tool_call
    from agent_contract_langchain.attribution import raising_layer, raising_middleware

    @tool
    def explode(x: str) -> str:
        """Always fails."""
        raise ValueError("the tool's own failure")

    class PassesOn(AgentMiddleware):
        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

    class Raises(AgentMiddleware):
        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            handler(request)
            raise KeyError("the middleware's own failure")

    @tool
    def fine(x: str) -> str:
        """Works."""
        return "ok"

    def run(tool_: Any, layer: AgentMiddleware) -> BaseException:
        script = ContractChatModel(model=FakeModel([tool_call(tool_.name, {"x": "a"}), "done"]))
        graph = create_agent(script, tools=[tool_], middleware=[layer])
        with pytest.raises((ValueError, KeyError)) as caught:
            graph.invoke({"messages": [{"role": "user", "content": "go"}]})
        return caught.value

    by_tool = run(explode, PassesOn())
    assert raising_layer(by_tool) == ("tool", "explode")
    assert raising_middleware(by_tool) is None
    by_middleware = run(fine, Raises())
    assert raising_layer(by_middleware) == ("middleware", "Raises")
    assert raising_middleware(by_middleware) == "Raises"


def test_an_allowlist_that_withdraws_middleware_tools_is_a_finding() -> None:
    probes = agent_probes(DEEP_UNDER_CONTRACT)
    assert probes.tools == ("lookup_order",)
    withdrawn = {*FS_TOOLS, "execute", "write_todos"}
    assert set(probes.not_probed) == withdrawn
    assert all(
        "withdrawn from the model by the contract's allowlist" in r
        for r in probes.not_probed.values()
    )
    assert "(added by FilesystemMiddleware)" in probes.not_probed["ls"]
    (finding,) = [f for f in probes.findings if f.startswith("withdrawn")]
    assert "ls" in finding
    assert "write_todos" in finding
    check = run_agent_check(probes)
    assert check.exit_code == 0, render_agent_text(check)  # withdrawn is not unchecked
    text = render_agent_text(check)
    assert "not probed:\n  - ls: withdrawn from the model" in text


def test_check_on_a_supervisor_with_two_workers_probes_each_worker() -> None:
    code, out, err = cli("--agent", TEAM, "--effect", "add=read,lookup_order=read", "--quiet")
    assert code == 5, err  # the workers as built break the contract
    assert out.startswith(f"agent: {TEAM} / math\nits tools: add (read)\n")
    assert f"\nagent: {TEAM} / orders\nits tools: lookup_order (read)\n" in out
    assert "not probed:\n  - transfer_to_math: a tool of 'supervisor'" in out
    assert "\n  - transfer_to_orders: a tool of 'supervisor'" in out
    assert "built with create_react_agent: no middleware slot" in out
    assert "result over every agent (math, orders): broken or not checked (exit 5)" in out
    code, out, _ = cli(
        "--agent", TEAM, "--effect", "add=read,lookup_order=read", "--quiet", "--format", "json"
    )
    data = json.loads(out)
    assert cells_of(data)[("build_team.math + contract", "tool_errors")] == "holds"
    (orders,) = data["agent"]["agents"]
    statuses = cells_of(orders["report"])
    assert {s for (h, _), s in statuses.items() if h == "build_team.orders + contract"} == {"holds"}


def test_a_module_level_graph_is_probed_with_the_checks_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_anthropic import ChatAnthropic

    calls: list[int] = []

    def never(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise AssertionError("the module's own model was called")

    monkeypatch.setattr(ChatAnthropic, "_generate", never)
    monkeypatch.setattr(ChatAnthropic, "_agenerate", never)
    factory = load_factory(DEEP_GRAPH)
    assert isinstance(factory, GraphModule)
    ours = model()
    built = capture_agents(factory, ours)
    assert built.outermost is not None
    assert built.outermost.arguments["model"] is ours  # the seam: create_agent's model
    assert built.graph is sys.modules["tests.agents.deep_graph"].agent
    probes = agent_probes(DEEP_GRAPH, effects={"lookup_order": "read", "ls": "read"})
    assert probes.name == "main"
    assert {"lookup_order", "ls", "task"} <= set(probes.tools)
    column = "agent + contract"
    chosen = tuple(
        s for s in probes.scenarios if s.name in ("valid_call[lookup_order]", "tool_error[ls]")
    )
    only = dataclasses.replace(
        probes, scenarios=chosen, harnesses={column: probes.harnesses[column]}, agents=()
    )
    check = run_agent_check(only)
    assert check.broken_on(column) == [], render_agent_text(check)
    assert check.tool_table(column)["lookup_order"]["valid_call"] == "holds"
    assert calls == []


ASYNC_TEAM = '''
from langchain.agents import create_agent
from langchain_core.tools import StructuredTool, tool


async def _fetch(url: str) -> str:
    return "page"


fetch_page = StructuredTool.from_function(
    coroutine=_fetch, name="fetch_page", description="Fetch a page (async only, as MCP tools are)."
)


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    return "shipped"


def build(model):
    return create_agent(model, tools=[lookup, fetch_page])
'''


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_an_async_only_tool_is_not_checked_under_a_sync_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    (tmp_path / "async_team.py").write_text(ASYNC_TEAM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "async_team", raising=False)
    effects = {"lookup": "read", "fetch_page": "read"}
    probes = agent_probes("async_team:build", mode=mode, effects=effects)  # type: ignore[arg-type]
    assert probes.tools == ("lookup",)
    assert probes.unchecked == ("fetch_page",)
    assert f"cannot run under --mode {mode}" in probes.not_probed["fetch_page"]
    assert "--mode ainvoke" in probes.not_probed["fetch_page"]
    column = "build + contract"
    only = dataclasses.replace(probes, harnesses={column: probes.harnesses[column]})
    check = run_agent_check(only)
    assert check.broken_on(column) == []
    assert check.exit_code == 5  # not checked is never "holds"
    assert "  - fetch_page [NOT CHECKED]: async-only" in render_agent_text(check)


def test_an_async_only_tool_is_probed_under_ainvoke(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "async_team.py").write_text(ASYNC_TEAM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "async_team", raising=False)
    effects = {"lookup": "read", "fetch_page": "read"}
    probes = agent_probes("async_team:build", mode="ainvoke", effects=effects)
    assert probes.tools == ("lookup", "fetch_page")
    assert probes.unchecked == ()
    column = "build + contract"
    only = dataclasses.replace(
        probes,
        harnesses={column: probes.harnesses[column]},
        scenarios=tuple(s for s in probes.scenarios if s.name.endswith("[fetch_page]")),
    )
    check = run_agent_check(only)
    assert check.broken_on(column) == [], render_agent_text(check)
    assert check.exit_code == 0
    assert check.tool_table(column)["fetch_page"]["valid_call"] == "holds"


SUITE_FILE = """
from agent_contract_langchain.testing import AgentContractSuite


class TestTeam(AgentContractSuite):
    agent_factory = "tests.agents.supervisor:build_team"
    effects = {"add": "read", "lookup_order": "read"}


class TestTeamHalfDeclared(AgentContractSuite):
    agent_factory = "tests.agents.supervisor:build_team"
    effects = {"add": "read"}
"""


def test_the_pytest_suite_covers_every_agent_of_the_factory(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_team=SUITE_FILE)
    pytester.chdir()
    result = pytester.runpytest_inprocess(
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(pytester.path),
        "-W",
        "ignore::UserWarning",
        "-W",
        "ignore::DeprecationWarning",
        "-o",
        f"pythonpath={ROOT}",
    )
    # Both: the workers under the added contract hold; as built they have none.
    # The half-declared team: the second worker's lookup_order is undeclared.
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(["*effect undeclared (treated as write): lookup_order*"])


@pytest.mark.parametrize("mode", ["ainvoke", "stream"])
def test_a_deep_agents_middleware_tools_hold_under_the_contract_on_every_path(mode: str) -> None:
    effects = {"ls": "read", "write_file": "write", "lookup_order": "read"}
    probes = agent_probes(DEEP, mode=mode, effects=effects)  # type: ignore[arg-type]
    column = "build_deep_agent + contract"
    wanted = ("valid_call[ls]", "tool_error[ls]", "valid_call[write_file]", "valid_call[task]")
    only = dataclasses.replace(
        probes,
        harnesses={column: probes.harnesses[column]},
        scenarios=tuple(s for s in probes.scenarios if s.name in wanted),
        agents=(),
    )
    assert len(only.scenarios) == len(wanted)
    check = run_agent_check(only)
    assert check.broken_on(column) == [], render_agent_text(check)
    table = check.tool_table(column)
    assert table["ls"]["valid_call"] == "holds"
    assert table["write_file"]["valid_call"] == "holds"  # waits for approval, never runs
