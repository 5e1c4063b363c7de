"""``agent-contract check --agent module:factory`` and ``AgentContractSuite`` (issue 13,
items 2 and 3): the team's own agent (their tools, middleware, context_schema,
checkpointer, contract) under probes derived from their tools' JSON Schemas."""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_contract.app.cli import main
from agent_contract.conformance.agent import render_agent_text, run_agent_check
from agent_contract.conformance.agent_schema import invalid_arguments, sample_arguments
from agent_contract_langchain.agent_check.probes import agent_probes

ROOT = Path(__file__).resolve().parents[2]
SHOP = "tests.agents.shop:build_shop_agent"
SHOP_CONTRACT = "tests.agents.shop_with_contract:build_agent"
SHOP_TOOLS = ("lookup_order", "search_catalog", "add_to_cart", "place_order")
EFFECTS = "lookup_order=read,search_catalog=read,add_to_cart=read,place_order=write"

pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The team's module is found from the working directory, as in their CI."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SHOP_CHECKPOINTS", str(tmp_path / "checkpoints.sqlite"))


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def rows(text: str, column: str) -> dict[str, list[str]]:
    """The per-tool table of ``column`` in a report: tool -> cells."""
    lines = text.splitlines()
    start = lines.index(f"per tool on {column} (- = not probed):")
    found: dict[str, list[str]] = {}
    for line in lines[start + 3 :]:
        if not line or line.startswith(("  ", "per tool", "findings")):
            break
        tool, *cells = line.split()
        found[tool] = cells
    return found


_SHOP_REPORT: dict[str, tuple[int, str, str]] = {}


def shop_report() -> tuple[int, str, str]:
    if "text" not in _SHOP_REPORT:
        _SHOP_REPORT["text"] = cli("--agent", SHOP, "--effect", EFFECTS)
    return _SHOP_REPORT["text"]


def test_the_shop_as_written_goes_under_check_with_its_tools_by_name() -> None:
    code, out, err = shop_report()
    assert code == 5, out  # as built, the shop breaks boundaries: the exit says so
    assert out.startswith(f"agent: {SHOP}\n")
    assert (
        "its tools: lookup_order (read), search_catalog (read), add_to_cart (read), "
        "place_order (write)"
    ) in out
    header = "tool            valid_call  missing_required  wrong_type  extra_field  out_of_range"
    assert header in out
    with_contract = rows(out, "build_shop_agent + contract")
    assert list(with_contract) == list(SHOP_TOOLS)
    assert all(cell in ("holds", "-") for cells in with_contract.values() for cell in cells)
    assert with_contract["lookup_order"] == ["holds"] * 4 + ["-"] + ["holds"] * 5
    assert with_contract["search_catalog"] == ["holds"] * 7 + ["-"] * 3
    assert with_contract["place_order"] == ["holds"] * 4 + ["-"] * 6
    as_built = rows(out, "build_shop_agent (as built)")
    # As LangChain's docs teach it: pydantic refuses bad arguments (an unclassified error
    # to the model), an extra field is dropped and the tool runs, a write runs at once.
    assert as_built["place_order"][0] == "BROKEN"
    assert as_built["lookup_order"][6] == "BROKEN"  # secret_redacted: no redaction as built
    assert "extra_field[lookup_order]: tool messages [('success', None)]" in out
    assert "valid_call[place_order]: stop_reason 'answered', expected 'pending_approval'" in out
    assert "tool_error[lookup_order]: the run raised RuntimeError" in out
    assert "findings:\n  - no ContractMiddleware in the stack" in out
    assert "[1/" in err  # progress, piped
    assert "build_shop_agent (as built)" in err


@pytest.mark.parametrize("mode", ["ainvoke", "stream"])
def test_the_shop_under_the_contract_holds_on_every_path(mode: str) -> None:
    probes = agent_probes(SHOP, mode=mode, effects=dict(e.split("=") for e in EFFECTS.split(",")))  # type: ignore[misc]
    column = "build_shop_agent + contract"
    only = dataclasses.replace(probes, harnesses={column: probes.harnesses[column]})
    check = run_agent_check(only)
    assert check.broken_on(column) == [], render_agent_text(check)
    table = check.tool_table(column)
    assert set(table) == set(SHOP_TOOLS)
    assert table["lookup_order"]["slow_call"] == "holds"
    assert table["place_order"]["valid_call"] == "holds"


def test_an_undeclared_effect_is_a_finding_and_treated_as_a_write() -> None:
    probes = agent_probes(SHOP)
    assert probes.undeclared == SHOP_TOOLS
    assert dict(probes.effects) == dict.fromkeys(SHOP_TOOLS, "undeclared")
    finding = [f for f in probes.findings if f.startswith("effect undeclared")]
    assert finding == [
        "effect undeclared (treated as write, so a call waits for approval): "
        + ", ".join(SHOP_TOOLS)
        + "; declare each with from_langchain_tool(tool, effect='read'|'write')"
    ]
    valid = next(s for s in probes.scenarios if s.name == "valid_call[lookup_order]")
    assert valid.stop_reason == "pending_approval"  # fail closed
    column = "build_shop_agent + contract"
    only = dataclasses.replace(
        probes,
        harnesses={column: probes.harnesses[column]},
        scenarios=(valid,),
    )
    assert run_agent_check(only).broken_on(column) == []


def test_the_documented_report_is_the_measured_one() -> None:
    code, out, _ = cli("--agent", SHOP_CONTRACT, "--quiet")
    assert code == 0, out
    doc = (ROOT / "docs" / "AGENT_CHECK.md").read_text(encoding="utf-8")
    block = doc.split("```text\n", 1)[1].split("```", 1)[0]
    assert block in out, out


def test_the_teams_own_contract_and_checkpointer_are_used(tmp_path: Path) -> None:
    code, out, _ = cli("--agent", SHOP_CONTRACT, "--format", "json", "--quiet")
    assert code == 0, out
    import json

    data = json.loads(out)
    assert [h["name"] for h in data["harnesses"]] == ["build_agent"]
    assert data["agent"]["tools"][3] == {"name": "place_order", "effect": "write"}
    assert data["agent"]["findings"] == []
    # Their budget (max_tool_calls=4, max_identical_calls=2) shaped the probes.
    budget = data["agent"]["probes"]["tool_call_budget[lookup_order]"]
    assert budget == {"tool": "lookup_order", "kind": "tool_call_budget"}
    probes = agent_probes(SHOP_CONTRACT)
    batch = next(s for s in probes.scenarios if s.name == "tool_call_budget[lookup_order]")
    assert len(batch.trajectory) == 5
    repeats = next(s for s in probes.scenarios if s.name == "repeated_calls[lookup_order]")
    assert len(repeats.trajectory) == 3
    # Their secrets are what a tool leaks in the redaction probe.
    leak = next(s for s in probes.scenarios if s.name == "secret_redacted[lookup_order]")
    assert leak.boundary == "trace_redaction"
    assert data["agent"]["probes"]["secret_redacted[lookup_order]"]["kind"] == "secret_redacted"
    # Their durable checkpointer holds the probes' threads.
    with sqlite3.connect(tmp_path / "checkpoints.sqlite") as db:
        threads = db.execute("select count(distinct thread_id) from checkpoints").fetchone()[0]
    assert threads >= 20


def buggy_agent(where: str) -> Any:
    from collections.abc import Callable

    from langchain.agents import create_agent
    from langchain.agents.middleware.types import AgentMiddleware
    from langchain_core.tools import tool

    from agent_contract import Contract
    from agent_contract_langchain import ContractMiddleware, from_langchain_tool

    class Audit(AgentMiddleware):
        @property
        def name(self) -> str:
            return "TeamAudit"

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            handler(request)
            raise KeyError("audit column missing")

    @tool
    def ping(host: str) -> str:
        """Ping a host."""
        return "pong"

    def factory(model: Any) -> Any:
        contract_mw = ContractMiddleware(Contract([from_langchain_tool(ping, effect="read")]))
        stack = [contract_mw, Audit(), contract_mw.inner()]
        if where == "outside":
            stack = [Audit(), contract_mw, contract_mw.inner()]
        return create_agent(model, tools=[ping], middleware=stack)

    return factory


@pytest.mark.parametrize(
    ("where", "observed"),
    [
        (
            "inside",
            "stop_reason \"middleware_stop (the middleware 'TeamAudit' raised KeyError; the "
            'model did not fail)"',
        ),
        ("outside", "the run raised KeyError (raised in your middleware 'TeamAudit')"),
    ],
)
def test_an_error_in_the_teams_middleware_is_reported_as_theirs(where: str, observed: str) -> None:
    probes = agent_probes(buggy_agent(where))
    valid = next(s for s in probes.scenarios if s.name == "valid_call[ping]")
    only = dataclasses.replace(probes, scenarios=(valid,))
    check = run_agent_check(only)
    (column,) = probes.harnesses
    broken = check.broken_on(column)
    assert broken
    assert observed in broken[0], broken
    assert "model_error" not in "".join(broken)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--effect", "lookup_order=maybe"], "--effect takes TOOL=read or TOOL=write"),
        (["--effect", "nope=read"], "not one of the agent's tools"),
        (["--harness", "offline"], "--agent or --harness, not both"),
    ],
)
def test_bad_agent_options_are_usage_errors(argv: list[str], message: str) -> None:
    code, _, err = cli("--agent", SHOP, *argv)
    assert code == 2
    assert message in err


def test_a_factory_that_builds_no_agent_is_refused() -> None:
    code, _, err = cli("--agent", "json:dumps")
    assert code == 2
    assert "the agent factory" in err


def test_arguments_come_from_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 2, "maxLength": 40},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "where": {"$ref": "#/$defs/Place"},
        },
        "required": ["query", "kind", "tags", "where"],
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            }
        },
    }
    valid = sample_arguments(schema)
    assert valid == {"query": "probe", "kind": "a", "tags": ["probe"], "where": {"city": "probe"}}
    bad = invalid_arguments(schema, valid)
    assert bad == {
        "missing_required": {"kind": "a", "tags": ["probe"], "where": {"city": "probe"}},
        "wrong_type": {**valid, "query": 12345},
        "out_of_range": {**valid, "query": "x"},
        "extra_field": {**valid, "unexpected_argument": "probe"},
    }
    assert (
        sample_arguments(
            {
                "type": "object",
                "properties": {"x": {"type": "string", "pattern": "^[0-9]+$"}},
                "required": ["x"],
            }
        )
        is None
    )


PYTEST_FILE = """
from agent_contract_langchain.testing import AgentContractSuite


class TestShopUnderItsContract(AgentContractSuite):
    agent_factory = "tests.agents.shop_with_contract:build_agent"


class TestShopAsWritten(AgentContractSuite):
    agent_factory = "tests.agents.shop:build_shop_agent"
    effects = {EFFECTS!r}
"""


def test_the_pytest_suite_runs_the_same_probes(pytester: pytest.Pytester) -> None:
    effects = dict(e.split("=") for e in EFFECTS.split(","))  # type: ignore[misc]
    pytester.makepyfile(test_agent=PYTEST_FILE.replace("{EFFECTS!r}", repr(effects)))
    pytester.chdir()
    result = pytester.runpytest_inprocess(
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(pytester.path),
        "-W",
        "ignore::UserWarning",
        "-o",
        f"pythonpath={ROOT}",
        # the project's own setting (pyproject's), else pytest-asyncio warns in
        # pytest_configure, and the outer run's warning filters make that an error
        "-o",
        "asyncio_default_fixture_loop_scope=function",
    )
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*TestShopAsWritten.test_agent_as_built_keeps_the_contract*",
            "your agent has no ContractMiddleware; as built:",
            "agent: tests.agents.shop:build_shop_agent",
        ]
    )


def test_a_factory_that_builds_through_a_helper_module_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common layout: ``team/agent.py``'s factory calls ``team/graph.py``'s helper, which
    imported ``create_agent``; the helper's call is the one intercepted."""
    package = tmp_path / "team_layout"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "graph.py").write_text(
        "from langchain.agents import create_agent\n"
        "from langchain_core.tools import tool\n\n\n"
        "@tool\n"
        "def lookup_order(order_id: str) -> str:\n"
        '    """Look up an order."""\n'
        '    return "shipped"\n\n\n'
        "def make(model):\n"
        "    return create_agent(model, tools=[lookup_order])\n",
        encoding="utf-8",
    )
    (package / "agent.py").write_text(
        "from .graph import make\n\n\ndef build_agent(model):\n    return make(model)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = cli(
        "--agent", "team_layout.agent:build_agent", "--effect", "lookup_order=read"
    )
    assert code == 5, err  # the plain agent breaks the contract; the probes ran
    assert "lookup_order" in out
    assert "called create_agent" not in err


def test_a_factory_of_another_framework_is_told_what_check_agent_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A factory that builds a PydanticAI ``Agent`` from the chat model fails before any
    ``create_agent`` call: exit 2, and the error says what ``--agent`` probes."""
    (tmp_path / "pai_factory.py").write_text(
        "from pydantic_ai import Agent\n\n\ndef build(model):\n    return Agent(model)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = cli("--agent", "pai_factory:build")
    assert code == 2
    assert "probes agents built with langchain.agents.create_agent" in err


# -- the team's module misbehaving (newcomer findings 4, 8, 11, 12) -------------------------------

TEAM_MODULE = '''
import sys
import time

from langchain.agents import create_agent
from langchain_core.tools import tool

print("importing the team's module")


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    return "shipped"


def build(model):
    print("building the agent")
    return create_agent(model, tools=[lookup])


def no_tools(model):
    return create_agent(model, tools=[])


def hangs(model):
    time.sleep(60)


class Terminated(BaseException):
    signum = 15  # what a SIGTERM handler raises


def swallows_then_terminated(model):
    try:
        time.sleep(60)
    except BaseException:  # swallows the watchdog's SIGINT
        pass
    raise Terminated()


def exits(model):
    sys.exit(3)


def says_bye(model):
    raise SystemExit("bye")
'''


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``team_agents`` (the module above) and ``team_broken`` (a syntax error on line 2)
    importable from ``tmp_path``; returns the folder."""
    (tmp_path / "team_agents.py").write_text(TEAM_MODULE, encoding="utf-8")
    (tmp_path / "team_broken.py").write_text("x = 1\ndef build(:\n    pass\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("team_agents", "team_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return str(tmp_path)


@pytest.mark.parametrize("option", ["--agent", "--harness"])
def test_a_syntax_error_in_the_teams_module_names_the_file_and_line(team: str, option: str) -> None:
    code, out, err = cli(option, "team_broken:build", "--quiet")
    assert code == 2, err
    assert out == ""
    assert "SyntaxError in " in err
    assert "team_broken.py, line 2" in err
    assert "Traceback" not in err
    assert "internal error" not in err


def test_what_the_factory_prints_never_corrupts_the_json_report(team: str) -> None:
    code, out, err = cli(
        "--agent", "team_agents:build", "--effect", "lookup=read", "--format", "json", "--quiet"
    )
    assert code in (0, 5), err
    document = json.loads(out)  # stdout is the report alone
    assert document["agent"]["factory"] == "team_agents:build"
    assert "building the agent" in err  # the factory's output went to stderr
    assert "importing the team's module" in err


@pytest.mark.parametrize(
    ("factory", "called"), [("exits", "sys.exit(3)"), ("says_bye", "sys.exit('bye')")]
)
def test_a_factory_that_exits_is_a_configuration_error(
    team: str, factory: str, called: str
) -> None:
    code, out, err = cli("--agent", f"team_agents:{factory}", "--quiet")
    assert code == 2, err
    assert out == ""
    assert f"the agent factory called {called}" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--effect", "lookup=read"],
        ["--mode", "stream"],
        ["--agent-framework", "langchain"],
    ],
    ids=["effect", "mode", "agent-framework"],
)
def test_agent_options_without_agent_are_usage_errors(argv: list[str]) -> None:
    code, out, err = cli("--harness", "offline", "--quiet", *argv)
    assert code == 2, err
    assert out == ""
    assert f"{argv[0]} goes with --agent only" in err


def test_an_agent_with_no_tools_is_probed_without_tools(team: str) -> None:
    """Newcomer finding 18: with no tool to probe, the allowlist (a call it does not
    offer), redaction (a secret in that call's arguments) and the call-ID binding (checked
    in every run) are still measured; nothing is left not checked."""
    code, out, _err = cli("--agent", "team_agents:no_tools", "--format", "json", "--quiet")
    document = json.loads(out)
    cells = {(c["harness"], c["boundary"]): c["status"] for c in document["cells"]}
    contract = {b: s for (h, b), s in cells.items() if h.endswith("+ contract")}
    assert contract == {
        "allowlist": "holds",
        "trace_redaction": "holds",
        "call_id_binding": "holds",
    }, cells
    as_built = {b: s for (h, b), s in cells.items() if not h.endswith("+ contract")}
    assert set(as_built.values()) == {"broken"}
    assert code == 5  # the agent as built has no contract
    assert "sk-planted" not in out
    code, text, _ = cli("--agent", "team_agents:no_tools", "--quiet")
    assert "per tool: the agent offers no tools" in text
    assert "not checked" not in text


def test_a_factory_that_hangs_is_a_configuration_error(
    team: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newcomer finding 11: a factory that never returns ends check --agent with a named
    error (exit 2), not with no output."""
    monkeypatch.setattr("agent_contract.conformance.agent_factory.FACTORY_TIMEOUT_SECONDS", 0.3)
    code, out, err = cli("--agent", "team_agents:hangs", "--quiet")
    assert code == 2, err
    assert out == ""
    assert "the agent factory did not return within 0.3 s" in err
    assert "Traceback" not in err
    code, _, err = cli("--agent", "team_agents:build", "--effect", "lookup=read", "--quiet")
    assert code in (0, 5), err  # a factory that returns is not affected


def test_a_signal_after_the_factory_timeout_is_not_called_the_timeout(
    team: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newcomer trial: a factory that swallowed the watchdog's SIGINT and is then ended by
    another signal (SIGTERM from CI's timeout) ends as that signal, not as the timeout."""
    from agent_contract_langchain.agent_check.capture import capture_agent

    monkeypatch.setattr("agent_contract.conformance.agent_factory.FACTORY_TIMEOUT_SECONDS", 0.3)
    import team_agents  # type: ignore[import-not-found]

    with pytest.raises(team_agents.Terminated):
        capture_agent(team_agents.swallows_then_terminated, object())
