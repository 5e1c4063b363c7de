"""One contract over a tree of agents, on the real packages: a deepagents ``task``
sub-agent and an agent wrapped as a tool, each wired the documented way
(docs/MULTI_AGENT.md), driven with invoke, ainvoke and stream.

Every test counts what the tools really ran (``RUNS``) and reads the one trace: a
child's events carry ``scope = {"agent", "call_path"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain_core.tools import BaseTool, StructuredTool, tool
from langgraph.prebuilt import create_react_agent
from langgraph_supervisor import create_supervisor

from agent_contract import Budget, Contract
from agent_contract.errors import ConfigurationError
from agent_contract.messages import Message
from agent_contract.runtime import ChildScopeRefused, RunResult, RunState
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract_langchain import ContractMiddleware, from_langchain_tool, graph_tool, run_graph
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.run_config import ChildOutsideContract

MODES = ("invoke", "ainvoke", "stream")
RUNS: dict[str, int] = {}


SECRET = "sk-TOPSECRET-4242"
"""A secret of the run (``secrets=``): ``search("vault")`` returns it."""


@tool
def search(q: str) -> str:
    """Search the archive."""
    RUNS["search"] = RUNS.get("search", 0) + 1
    return f"the key is {SECRET}" if q == "vault" else f"result {q}"


@tool
def wipe(q: str) -> str:
    """Wipe the archive (never allowlisted for the researcher)."""
    RUNS["wipe"] = RUNS.get("wipe", 0) + 1
    return "wiped"


@pytest.fixture(autouse=True)
def _reset_runs() -> None:
    RUNS.clear()


def chat(script: Sequence[Any]) -> tuple[ContractChatModel, FakeModel]:
    fake = FakeModel(list(script))
    return ContractChatModel(model=fake), fake


@dataclass
class Tree:
    """A parent agent with one child, both under one contract."""

    graph: Any
    contract: Contract
    parent: FakeModel
    child: FakeModel | None = None

    def run(self, mode: str) -> tuple[RunResult, RunState]:
        state = self.contract.start()
        result = run_graph(self.graph, state, [Message(role="user", content="go")], mode=mode)  # type: ignore[arg-type]
        return result, state


def _child_contract(contract: Contract) -> Contract:
    return contract.child(
        "researcher",
        tools=[
            from_langchain_tool(search, effect="read"),
            from_langchain_tool(wipe, effect="read"),
        ],
        allowlist=["search"],
    )


ChildOf = Callable[[Contract], Contract]
"""Builds the child agent's contract from the run's (the documented way: ``_child_contract``)."""


def deep_tree(
    parent: Sequence[Any],
    child: Sequence[Any],
    budget: Budget,
    child_of: ChildOf = _child_contract,
    secrets: Sequence[str] = (),
    extra_tools: Sequence[Any] = (),
) -> Tree:
    """deepagents: the sub-agent spec's ``middleware`` carries the child's contract."""
    # The parent's contract registers deepagents' ``task`` tool (taken from a graph
    # built without the contract: the tool object deepagents makes).
    probe = create_deep_agent(chat([])[0], tools=[], subagents=[_spec(chat([])[0], [])])
    task_tool = graph_tool(probe, "task")
    contract = Contract(
        [from_langchain_tool(task_tool, effect="read"), *extra_tools],
        budget=budget,
        secrets=secrets,
    )
    child_model, child_fake = chat(child)
    parent_model, parent_fake = chat(parent)
    graph = create_deep_agent(
        parent_model,
        tools=[],
        middleware=ContractMiddleware(contract).around(),
        subagents=[
            _spec(child_model, ContractMiddleware(child_of(contract)).around())  # the step
        ],
    )
    return Tree(graph, contract, parent_fake, child_fake)


def _spec(model: Any, middleware: list[Any]) -> Any:
    return {
        "name": "researcher",
        "description": "Researches a question.",
        "system_prompt": "You research.",
        "tools": [search, wipe],
        "model": model,
        "middleware": middleware,
    }


def tool_tree(
    parent: Sequence[Any],
    child: Sequence[Any],
    budget: Budget,
    child_of: ChildOf = _child_contract,
    secrets: Sequence[str] = (),
    extra_tools: Sequence[Any] = (),
    gate_only: bool = False,
) -> Tree:
    """An agent wrapped as a tool: the inner create_agent carries the child's contract
    (``gate_only``: its gate alone, without the outer hook)."""
    holder: dict[str, Any] = {}

    def ask(question: str) -> str:
        out = holder["researcher"].invoke({"messages": [{"role": "user", "content": question}]})
        return str(out["messages"][-1].content)

    async def aask(question: str) -> str:
        agent = holder["researcher"]
        out = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
        return str(out["messages"][-1].content)

    ask_tool = StructuredTool.from_function(
        func=ask, coroutine=aask, name="ask_researcher", description="Ask the researcher."
    )
    contract = Contract(
        [from_langchain_tool(ask_tool, effect="read"), *extra_tools],
        budget=budget,
        secrets=secrets,
    )
    child_model, child_fake = chat(child)
    child_middleware = ContractMiddleware(child_of(contract))
    holder["researcher"] = create_agent(
        child_model,
        tools=[search, wipe],
        middleware=[child_middleware.inner()] if gate_only else child_middleware.around(),
        name="researcher",
    )
    parent_model, parent_fake = chat(parent)
    graph = create_agent(
        parent_model, tools=[ask_tool], middleware=ContractMiddleware(contract).around()
    )
    return Tree(graph, contract, parent_fake, child_fake)


def _delegate(shape: str, question: str) -> Any:
    if shape == "deepagents":
        return tool_call("task", {"description": question, "subagent_type": "researcher"})
    return tool_call("ask_researcher", {"question": question})


BUILDERS: dict[str, Callable[..., Tree]] = {
    "deepagents": deep_tree,
    "agent-as-tool": tool_tree,
}
SHAPES = tuple(BUILDERS)


def scoped(state: RunState, agent: str | None = None) -> list[dict[str, Any]]:
    events = state.view.trace.events
    if agent is None:
        return [e for e in events if "scope" not in e]
    return [e for e in events if e.get("scope", {}).get("agent") == agent]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_child_past_the_runs_budget_ends_the_run(shape: str, mode: str) -> None:
    """The child's tool calls are the run's: task (1) + two searches (3) spend
    max_tool_calls=3, the child's third search ends the WHOLE run with
    ``max_tool_calls``; the parent's model is never called again."""
    searches = [tool_call("search", {"q": q}) for q in "abc"]
    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"], [*searches, "found"], Budget(max_tool_calls=3)
    )
    result, _state = tree.run(mode)
    assert result.stop_reason == "max_tool_calls"
    assert result.output is None
    assert RUNS == {"search": 2}
    assert len(tree.parent.calls) == 1  # the parent never read the child's stop as data
    assert result.usage.tool_calls == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_childs_call_outside_its_allowlist_never_runs(shape: str, mode: str) -> None:
    """``wipe`` is registered for the researcher but not allowlisted: refused, not run."""
    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"],
        [tool_call("wipe", {"q": "all"}), "could not"],
        Budget(),
    )
    result, state = tree.run(mode)
    assert result.stop_reason == "answered"
    assert RUNS == {}
    refused = [e for e in scoped(state, "researcher") if e["type"] == "tool_call"]
    assert [(e["name"], e["decision"], e["error_kind"]) for e in refused] == [
        ("wipe", "refused", "not_allowed")
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_two_delegations_in_one_run_both_work_and_the_trace_is_a_tree(
    shape: str, mode: str
) -> None:
    """Each delegation is a fresh child scope; the run's counters hold every agent's
    steps; the trace shows each child's events under the parent's call id."""
    tree = BUILDERS[shape](
        [_delegate(shape, "first"), _delegate(shape, "second"), "done"],
        [tool_call("search", {"q": "a"}), "found a", tool_call("search", {"q": "b"}), "found b"],
        Budget(),
    )
    result, state = tree.run(mode)
    assert result.stop_reason == "answered"
    assert result.output == "done"
    assert RUNS == {"search": 2}
    assert result.usage.model_steps == 7  # 3 parent steps + 2 x 2 child steps
    assert result.usage.tool_calls == 4  # 2 delegations + 2 searches
    top = scoped(state)
    parent_calls = [e["id"] for e in top if e["type"] == "tool_call"]
    assert len(parent_calls) == 2
    children = [e for e in scoped(state, "researcher") if e["type"] == "child_started"]
    assert [e["scope"]["call_path"] for e in children] == [[parent_calls[0]], [parent_calls[1]]]
    for call_id, view in zip(parent_calls, state.view.children(), strict=True):
        assert view.scope is not None
        assert view.scope.call_path == (call_id,)
        assert view.scope.agent == "researcher"
    searched = [e for e in scoped(state, "researcher") if e["type"] == "tool_result"]
    assert [e["scope"]["call_path"][0] for e in searched] == parent_calls


@pytest.mark.parametrize("mode", MODES)
def test_a_sub_agent_without_the_contract_is_refused(mode: str) -> None:
    """deepagents' built-in ``general-purpose`` sub-agent has no contract middleware:
    the run refuses it before its model is called, naming the agent and the fix."""
    tree = deep_tree(
        [tool_call("task", {"description": "q", "subagent_type": "general-purpose"}), "done"],
        [],
        Budget(),
    )
    with pytest.raises(ChildOutsideContract, match=r"'general-purpose'.*ContractMiddleware"):
        tree.run(mode)
    assert len(tree.parent.calls) == 1  # its model (the parent's) was never called for it


@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("factory", ["create_react_agent", "create_agent"])
def test_an_agent_as_tool_without_the_contract_is_refused(factory: str, mode: str) -> None:
    """A create_react_agent (no middleware slot), or a create_agent given no contract
    middleware, run inside a contract run's tool call: refused, its model never called."""
    inner_model, inner_fake = chat([tool_call("search", {"q": "a"}), "found"])
    build = create_react_agent if factory == "create_react_agent" else create_agent
    plain = build(inner_model, tools=[search], name="plain_worker")

    def ask(question: str) -> str:
        out = plain.invoke({"messages": [{"role": "user", "content": question}]})
        return str(out["messages"][-1].content)

    async def aask(question: str) -> str:
        out = await plain.ainvoke({"messages": [{"role": "user", "content": question}]})
        return str(out["messages"][-1].content)

    ask_tool: BaseTool = StructuredTool.from_function(
        func=ask, coroutine=aask, name="ask_plain", description="Ask."
    )
    contract = Contract([from_langchain_tool(ask_tool, effect="read")])
    parent_model, _ = chat([tool_call("ask_plain", {"question": "q"}), "done"])
    graph = create_agent(
        parent_model, tools=[ask_tool], middleware=ContractMiddleware(contract).around()
    )
    # create_agent's graphs carry their name; create_react_agent's do not (its node is named)
    named = "'plain_worker'" if factory == "create_agent" else "unnamed. agent at tools:"
    with pytest.raises(ChildOutsideContract, match=named):
        Tree(graph, contract, inner_fake).run(mode)
    assert inner_fake.calls == []
    assert RUNS == {}


def test_a_contract_built_twice_is_named() -> None:
    """Item 9: the middleware holds one Contract, the run was started with an equal
    one built again: the message says to build it once."""
    ask_tool = StructuredTool.from_function(func=lambda q: q, name="echo", description="Echo.")

    def build() -> Contract:
        return Contract([from_langchain_tool(ask_tool, effect="read")])

    parent_model, _ = chat(["done"])
    graph = create_agent(
        parent_model, tools=[ask_tool], middleware=ContractMiddleware(build()).around()
    )
    with pytest.raises(Exception, match="build the Contract once") as caught:
        run_graph(graph, build().start(), [Message(role="user", content="go")])
    assert "parent agent" not in str(caught.value)


@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
@pytest.mark.parametrize("mode", MODES)
def test_a_langgraph_supervisor_is_refused_before_its_model_runs(mode: str) -> None:
    """langgraph-supervisor builds its supervisor with create_react_agent (no middleware
    slot): a contract run refuses it, naming it and the fix, before any model call; its
    workers (create_agent under child contracts) never run."""
    contract = Contract([from_langchain_tool(search, effect="read")])
    worker_fakes = []
    workers = []
    for name in ("w1", "w2"):
        model, fake = chat([tool_call("search", {"q": name}), f"{name} done"])
        worker_fakes.append(fake)
        middleware = ContractMiddleware(contract.child(name)).around()
        workers.append(create_agent(model, tools=[search], middleware=middleware, name=name))
    supervisor_model, supervisor_fake = chat([tool_call("transfer_to_w1", {}), "done"])
    graph = create_supervisor(workers, model=supervisor_model).compile()
    with pytest.raises(ChildOutsideContract, match=r"'supervisor'.*workers are agents wrapped"):
        Tree(graph, contract, supervisor_fake).run(mode)
    assert supervisor_fake.calls == []
    assert [fake.calls for fake in worker_fakes] == [[], []]
    assert RUNS == {}


def supervisor_tree(
    researcher: Sequence[Any], writer: Sequence[Any], supervisor: Sequence[Any], budget: Budget
) -> tuple[Tree, list[FakeModel]]:
    """The supervisor shape under the contract: a create_agent supervisor, two workers
    (create_agent, each under its own child contract) wrapped as tools."""
    holder: dict[str, Any] = {}
    worker_tools: list[BaseTool] = []
    for name in ("researcher", "writer"):

        def ask(question: str, _name: str = name) -> str:
            out = holder[_name].invoke({"messages": [{"role": "user", "content": question}]})
            return str(out["messages"][-1].content)

        async def aask(question: str, _name: str = name) -> str:
            out = await holder[_name].ainvoke({"messages": [{"role": "user", "content": question}]})
            return str(out["messages"][-1].content)

        worker_tools.append(
            StructuredTool.from_function(
                func=ask, coroutine=aask, name=f"ask_{name}", description=f"Ask the {name}."
            )
        )
    contract = Contract(
        [from_langchain_tool(t, effect="read") for t in worker_tools], budget=budget
    )
    fakes = []
    for name, script, allowed in (
        ("researcher", researcher, ["search"]),
        ("writer", writer, []),
    ):
        model, fake = chat(script)
        fakes.append(fake)
        child = contract.child(
            name,
            tools=[
                from_langchain_tool(search, effect="read"),
                from_langchain_tool(wipe, effect="read"),
            ],
            allowlist=allowed,
        )
        holder[name] = create_agent(
            model, tools=[search, wipe], middleware=ContractMiddleware(child).around(), name=name
        )
    model, fake = chat(supervisor)
    graph = create_agent(
        model, tools=worker_tools, middleware=ContractMiddleware(contract).around()
    )
    return Tree(graph, contract, fake), fakes


@pytest.mark.parametrize("mode", MODES)
def test_a_supervisor_with_two_workers_under_one_contract(mode: str) -> None:
    """Both workers are delegated to in one run; the writer's ``wipe`` (outside its
    allowlist) never runs; the trace holds both workers under their handoff calls."""
    tree, _ = supervisor_tree(
        [tool_call("search", {"q": "a"}), "found a"],
        [tool_call("wipe", {"q": "all"}), "written"],
        [
            tool_call("ask_researcher", {"question": "q"}),
            tool_call("ask_writer", {"question": "w"}),
            "done",
        ],
        Budget(),
    )
    result, state = tree.run(mode)
    assert result.stop_reason == "answered"
    assert result.output == "done"
    assert RUNS == {"search": 1}
    handoffs = [e["id"] for e in scoped(state) if e["type"] == "tool_call"]
    views = state.view.children()
    assert [(v.scope.agent, v.scope.call_path) for v in views if v.scope] == [
        ("researcher", (handoffs[0],)),
        ("writer", (handoffs[1],)),
    ]
    refused = [e for e in scoped(state, "writer") if e["type"] == "tool_call"]
    assert [(e["name"], e["decision"]) for e in refused] == [("wipe", "refused")]


@pytest.mark.parametrize("mode", MODES)
def test_a_supervisors_worker_past_the_budget_ends_the_run(mode: str) -> None:
    """max_model_steps=3: the supervisor's step and the researcher's two; the
    researcher's third step ends the whole run with ``max_model_steps``; the writer is
    never reached."""
    tree, (researcher, writer) = supervisor_tree(
        [tool_call("search", {"q": "a"}), tool_call("search", {"q": "b"}), "found"],
        ["written"],
        [
            tool_call("ask_researcher", {"question": "q"}),
            tool_call("ask_writer", {"question": "w"}),
            "done",
        ],
        Budget(max_model_steps=3),
    )
    result, _state = tree.run(mode)
    assert result.stop_reason == "max_model_steps"
    assert RUNS == {"search": 2}
    assert len(tree.parent.calls) == 1
    assert len(researcher.calls) == 2
    assert writer.calls == []


@pytest.mark.parametrize("mode", MODES)
def test_the_parents_own_contract_on_a_sub_agent_is_a_child_scope_too(mode: str) -> None:
    """The issue's crash (``tool_call_id ... is already answered``): the sub-agent given
    the parent's own Contract now runs as a child scope of the run under it, any number
    of times."""
    probe = create_deep_agent(chat([])[0], tools=[], subagents=[_spec(chat([])[0], [])])
    task_tool = graph_tool(probe, "task")
    contract = Contract(
        [from_langchain_tool(t, effect="read") for t in (task_tool, search)],
        budget=Budget(max_tool_calls=4),
    )
    child_model, _ = chat(
        [tool_call("search", {"q": "a"}), "found a", tool_call("search", {"q": "b"}), "b"]
    )
    parent_model, parent_fake = chat(
        [
            tool_call("task", {"description": "1", "subagent_type": "researcher"}),
            tool_call("task", {"description": "2", "subagent_type": "researcher"}),
            "done",
        ]
    )
    graph = create_deep_agent(
        parent_model,
        tools=[],
        middleware=ContractMiddleware(contract).around(),
        subagents=[_spec(child_model, ContractMiddleware(contract).around())],
    )
    result, state = Tree(graph, contract, parent_fake).run(mode)
    assert (result.stop_reason, result.output) == ("answered", "done")
    assert RUNS == {"search": 2}
    assert result.usage.tool_calls == 4
    assert [v.scope.agent for v in state.view.children() if v.scope] == ["researcher"] * 2


@pytest.mark.parametrize("mode", MODES)
def test_parallel_delegations_and_a_grandchild(mode: str) -> None:
    """Two delegations in one batch are two scopes; a child that delegates again opens a
    grandchild scope whose ``call_path`` names both calls; budgets stay the run's."""
    holder: dict[str, Any] = {}

    def make_tool(name: str) -> BaseTool:
        def ask(question: str) -> str:
            out = holder[name].invoke({"messages": [{"role": "user", "content": question}]})
            return str(out["messages"][-1].content)

        async def aask(question: str) -> str:
            out = await holder[name].ainvoke({"messages": [{"role": "user", "content": question}]})
            return str(out["messages"][-1].content)

        return StructuredTool.from_function(
            func=ask, coroutine=aask, name=f"ask_{name}", description=f"Ask {name}."
        )

    ask_lead, ask_helper, ask_other = make_tool("lead"), make_tool("helper"), make_tool("other")
    contract = Contract([from_langchain_tool(t, effect="read") for t in (ask_lead, ask_other)])
    lead = contract.child("lead", tools=[from_langchain_tool(ask_helper, effect="read")])
    helper = lead.child("helper", tools=[from_langchain_tool(search, effect="read")])
    other = contract.child("other", tools=[from_langchain_tool(search, effect="read")])
    scripts = {
        "lead": [tool_call("ask_helper", {"question": "h"}), "lead done"],
        "helper": [tool_call("search", {"q": "deep"}), "helper done"],
        "other": [tool_call("search", {"q": "side"}), "other done"],
    }
    for name, child, tools in (
        ("lead", lead, [ask_helper]),
        ("helper", helper, [search]),
        ("other", other, [search]),
    ):
        model, _ = chat(scripts[name])
        holder[name] = create_agent(
            model, tools=tools, middleware=ContractMiddleware(child).around(), name=name
        )
    parent_model, parent_fake = chat(
        [
            tool_calls(
                ("ask_lead", {"question": "l"}, "p1"), ("ask_other", {"question": "o"}, "p2")
            ),
            "done",
        ]
    )
    graph = create_agent(
        parent_model, tools=[ask_lead, ask_other], middleware=ContractMiddleware(contract).around()
    )
    result, state = Tree(graph, contract, parent_fake).run(mode)
    assert (result.stop_reason, result.output) == ("answered", "done")
    assert RUNS == {"search": 2}
    assert result.usage.model_steps == 8  # 2 parent + 2 lead + 2 helper + 2 other
    paths = {
        e["scope"]["agent"]: e["scope"]["call_path"]
        for e in state.view.trace.events
        if e["type"] == "child_started"
    }
    assert paths["lead"] == ["p1"]
    assert paths["other"] == ["p2"]
    assert paths["helper"][0] == "p1"
    assert len(paths["helper"]) == 2
    (lead_view,) = [v for v in state.view.children() if v.scope and v.scope.agent == "lead"]
    assert [v.scope.agent for v in lead_view.children() if v.scope] == ["helper"]


@pytest.mark.parametrize("mode", MODES)
def test_a_model_the_tool_itself_calls_is_the_tools_own(mode: str) -> None:
    """A tool that calls a chat model directly (no agent, no nested graph) is not a
    child agent: it runs, and its model call is the tool's business."""
    summarizer, summarizer_fake = chat(["short"])

    def summarize(text: str) -> str:
        RUNS["summarize"] = RUNS.get("summarize", 0) + 1
        return str(summarizer.invoke(text).content)

    async def asummarize(text: str) -> str:
        RUNS["summarize"] = RUNS.get("summarize", 0) + 1
        return str((await summarizer.ainvoke(text)).content)

    summarize_tool = StructuredTool.from_function(
        func=summarize, coroutine=asummarize, name="summarize", description="Summarize."
    )
    contract = Contract([from_langchain_tool(summarize_tool, effect="read")])
    parent_model, parent_fake = chat([tool_call("summarize", {"text": "long"}), "done"])
    graph = create_agent(
        parent_model, tools=[summarize_tool], middleware=ContractMiddleware(contract).around()
    )
    result, _state = Tree(graph, contract, parent_fake).run(mode)
    assert (result.stop_reason, result.output) == ("answered", "done")
    assert RUNS == {"summarize": 1}
    assert len(summarizer_fake.calls) == 1


def _free_standing(budget: Budget | None) -> ChildOf:
    """A child Contract built apart from the run's (``None``: with the run's budget)."""

    def build(run_contract: Contract) -> Contract:
        tools = [from_langchain_tool(t, effect="read") for t in (search, wipe)]
        return Contract(tools, budget=budget or run_contract.budget, allowlist=["search"])

    return build


def _child_of_another(run_contract: Contract) -> Contract:
    stranger = Contract(
        [from_langchain_tool(search, effect="read")], budget=Budget(max_tool_calls=99)
    )
    return _child_contract(stranger)


WRONG_CHILDREN: dict[str, tuple[ChildOf, str]] = {
    "free-standing-same-budget": (_free_standing(None), "a Contract of its own"),
    "free-standing-own-budget": (_free_standing(Budget(max_tool_calls=99)), "of its own"),
    "child-of-another-contract": (_child_of_another, "a child Contract of another"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("wrong", WRONG_CHILDREN)
def test_a_child_contract_not_made_from_the_runs_is_refused_and_halts_the_run(
    wrong: str, shape: str, mode: str
) -> None:
    """A child's Contract must be made by ``contract.child(...)`` from the run's: a
    free-standing one (even with the same budget: the run's secrets would reach the
    child's model unredacted) or a child of another Contract is refused before the
    child's model runs; the refusal propagates out of the run (never a tool failure
    the parent's model reads) and the run halts with ``middleware_stop``."""
    child_of, why = WRONG_CHILDREN[wrong]
    tree = BUILDERS[shape](
        [_delegate(shape, "find the key"), "done"],
        [tool_call("search", {"q": "vault"}), "found"],
        Budget(max_tool_calls=8),
        child_of=child_of,
        secrets=[SECRET],
    )
    state = tree.contract.start()
    with pytest.raises(ChildScopeRefused, match=rf"'researcher'.*{why}.*contract\.child\(name"):
        run_graph(tree.graph, state, [Message(role="user", content="go")], mode=mode)  # type: ignore[arg-type]
    assert tree.child is not None
    assert tree.child.calls == []  # the child's model never ran (never read the secret)
    assert RUNS == {}
    assert len(tree.parent.calls) == 1  # the parent's model never read the refusal as data
    stop = state.check_before_model_call([Message(role="user", content="again")])
    assert stop is not None
    assert stop.reason == "middleware_stop"
    assert "researcher" in (stop.detail or "")
    assert state.view.children() == ()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_runs_secret_is_redacted_for_a_child_made_from_its_contract(
    shape: str, mode: str
) -> None:
    """The documented child (``contract.child``) takes the run's redaction: the secret
    its tool returns reaches its model redacted (a free-standing Contract would not
    know the secret: refused above)."""
    tree = BUILDERS[shape](
        [_delegate(shape, "find the key"), "done"],
        [tool_call("search", {"q": "vault"}), "found"],
        Budget(),
        secrets=[SECRET],
    )
    result, _state = tree.run(mode)
    assert result.stop_reason == "answered"
    assert RUNS == {"search": 1}
    assert tree.child is not None
    assert len(tree.child.calls) == 2
    assert "the key is" in repr(tree.child.calls[1])
    assert SECRET not in repr(tree.child.calls)
    assert SECRET not in repr(tree.parent.calls)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_parents_own_contract_without_the_childs_tools_is_refused(
    shape: str, mode: str
) -> None:
    """The parent's Contract (registering only the delegation tool) given to the child:
    the child's model is offered its tools, none registered: refused at its first model
    call, naming the fix, before the model runs (not every call refused as unknown
    while the run 'answers')."""
    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"],
        [tool_call("search", {"q": "a"}), "found"],
        Budget(),
        child_of=lambda contract: contract,
    )
    with pytest.raises(
        ChildScopeRefused,
        match=r"'researcher'.*offered the tools.*'search'.*registers none.*contract\.child\(name",
    ):
        tree.run(mode)
    assert tree.child is not None
    assert tree.child.calls == []
    assert RUNS == {}
    assert len(tree.parent.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_child_whose_parent_runs_without_the_contract_is_named(mode: str) -> None:
    """The child has ContractMiddleware(contract.child(...)) but the parent agent has no
    contract middleware: the message says that (not "build the Contract once")."""
    probe = create_deep_agent(chat([])[0], tools=[], subagents=[_spec(chat([])[0], [])])
    task_tool = graph_tool(probe, "task")
    contract = Contract([from_langchain_tool(task_tool, effect="read")])
    child_model, child_fake = chat([tool_call("search", {"q": "a"}), "found"])
    parent_model, _ = chat(
        [tool_call("task", {"description": "q", "subagent_type": "researcher"}), "done"]
    )
    graph = create_deep_agent(
        parent_model,
        tools=[],
        subagents=[_spec(child_model, ContractMiddleware(_child_contract(contract)).around())],
    )
    with pytest.raises(
        ConfigurationError,
        match=r"child agent 'researcher' found no run of its parent agent.*"
        r"ContractMiddleware\(contract\)",
    ) as caught:
        run_graph(graph, contract.start(), [Message(role="user", content="go")], mode=mode)  # type: ignore[arg-type]
    assert "build the Contract once" not in str(caught.value)
    assert child_fake.calls == []
    assert RUNS == {}


def _parallel_delegations(shape: str) -> Any:
    if shape == "deepagents":
        args = [{"description": q, "subagent_type": "researcher"} for q in "ab"]
        return tool_calls(("task", args[0], "p1"), ("task", args[1], "p2"))
    return tool_calls(
        ("ask_researcher", {"question": "a"}, "p1"), ("ask_researcher", {"question": "b"}, "p2")
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_parallel_delegations_past_the_budget_leave_a_result_for_every_admitted_call(
    shape: str, mode: str
) -> None:
    """Two delegations in one batch, the children searching until the run's budget
    ends the run: a child halted by its sibling's stop had a call admitted whose batch
    was never closed (no ``tool_result`` event, under invoke and stream, depending on
    the threads' order). Every admitted call now leaves its result event, whose outcome
    agrees with what really ran. Repeated: the interleaving varies from run to run."""
    for _ in range(5):
        RUNS.clear()
        searches = [tool_call("search", {"q": str(k)}) for k in range(6)]
        tree = BUILDERS[shape](
            [_parallel_delegations(shape), "done"],
            [*searches, "found", "found"],
            Budget(max_tool_calls=4),
        )
        result, state = tree.run(mode)
        assert result.stop_reason == "max_tool_calls"
        events = state.view.trace.events

        def where(event: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            return str(event["id"]), tuple((event.get("scope") or {}).get("call_path", ()))

        admitted = [where(e) for e in events if e["type"] == "tool_call" and e["decision"] == "run"]
        results = {where(e): e for e in events if e["type"] == "tool_result"}
        assert [a for a in admitted if a not in results] == []
        succeeded = [
            e for e in results.values() if e["name"] == "search" and e["outcome"] == "succeeded"
        ]
        assert len(succeeded) == RUNS.get("search", 0)
        assert len(tree.parent.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_configuration_error_inside_a_delegation_goes_out_of_the_run(mode: str) -> None:
    """A tool that builds its child agent per call, with a child Contract that is
    misconfigured (an allowlist naming a tool it does not register): the
    ConfigurationError goes out of the run, never ``tool 'ask_researcher' failed
    (ConfigurationError)`` for the parent's model to read (and then answer)."""
    holder: dict[str, Contract] = {}

    def ask(question: str) -> str:
        holder["contract"].child("researcher", tools=[], allowlist=["search"])
        return "unreachable"

    async def aask(question: str) -> str:
        return ask(question)

    ask_tool = StructuredTool.from_function(
        func=ask, coroutine=aask, name="ask_researcher", description="Ask the researcher."
    )
    contract = holder["contract"] = Contract([from_langchain_tool(ask_tool, effect="read")])
    parent_model, parent_fake = chat([_delegate("agent-as-tool", "q"), "done"])
    graph = create_agent(
        parent_model, tools=[ask_tool], middleware=ContractMiddleware(contract).around()
    )
    with pytest.raises(ConfigurationError, match="allowlist names unregistered tools"):
        Tree(graph, contract, parent_fake).run(mode)
    assert len(parent_fake.calls) == 1  # the parent's model never read it as a tool error


def _delegation_name(shape: str) -> str:
    return "task" if shape == "deepagents" else "ask_researcher"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_delegating_call_a_childs_stop_ended_is_not_a_success(shape: str, mode: str) -> None:
    """The child's third search ends the run with ``max_tool_calls``: the parent's
    delegating call (``task``, an agent-as-tool) did not complete. It is recorded as
    an ``interrupted`` error with an unknown outcome naming the child and its stop,
    in the result and in the trace alike (it used to be ``success``)."""
    searches = [tool_call("search", {"q": q}) for q in "abc"]
    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"], [*searches, "found"], Budget(max_tool_calls=3)
    )
    result, state = tree.run(mode)
    assert result.stop_reason == "max_tool_calls"
    assert RUNS == {"search": 2}
    (delegation,) = result.own_tool_calls()
    assert delegation.name == _delegation_name(shape)
    assert (
        delegation.status,
        delegation.error_kind,
        delegation.outcome,
        delegation.side_effects_possible,
    ) == ("error", "interrupted", "unknown", True)
    (event,) = [e for e in scoped(state) if e["type"] == "tool_result"]
    assert (event["status"], event["error_kind"], event["outcome"]) == (
        "error",
        "interrupted",
        "unknown",
    )
    assert "child agent 'researcher'" in event["preview"]
    assert "max_tool_calls" in event["preview"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_results_tool_calls_are_the_whole_trees(shape: str, mode: str) -> None:
    """``RunResult.tool_calls`` holds what ``max_tool_calls`` charged: every agent's
    calls, in tree order (each delegation followed by its child's calls), each child
    call with its ``scope``; ``own_tool_calls``/``trajectory`` are the top agent's;
    ``to_dict`` (the CLI's JSON) carries the scope."""
    tree = BUILDERS[shape](
        [_delegate(shape, "first"), _delegate(shape, "second"), "done"],
        [tool_call("search", {"q": "a"}), "found a", tool_call("search", {"q": "b"}), "found b"],
        Budget(),
    )
    result, state = tree.run(mode)
    assert result.stop_reason == "answered"
    delegation = _delegation_name(shape)
    parent_calls = [e["id"] for e in scoped(state) if e["type"] == "tool_call"]
    assert [
        (c.name, c.status, c.scope.agent if c.scope else None, c.scope.call_path if c.scope else ())
        for c in result.tool_calls
    ] == [
        (delegation, "success", None, ()),
        ("search", "success", "researcher", (parent_calls[0],)),
        (delegation, "success", None, ()),
        ("search", "success", "researcher", (parent_calls[1],)),
    ]
    assert len(result.tool_calls) == result.usage.tool_calls == 4
    assert result.trajectory() == [delegation, delegation]
    assert [c.name for c in result.own_tool_calls()] == [delegation, delegation]
    dumped = result.to_dict()["tool_calls"]
    assert "scope" not in dumped[0]
    assert dumped[1]["scope"] == {"agent": "researcher", "call_path": [parent_calls[0]]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_child_reusing_its_parents_call_id_is_kept_apart(shape: str, mode: str) -> None:
    """The parent's delegation and the child's first search are both ``call_1``: the
    ledgers are per scope (each id bound to its own call's result), the trace keeps the
    two apart by ``scope``, and each model reads its own call's result."""
    if shape == "deepagents":
        delegate = tool_call(
            "task", {"description": "q", "subagent_type": "researcher"}, id="call_1"
        )
    else:
        delegate = tool_call("ask_researcher", {"question": "q"}, id="call_1")
    tree = BUILDERS[shape](
        [delegate, "done"],
        [
            tool_call("search", {"q": "a"}, id="call_1"),
            tool_call("search", {"q": "b"}, id="call_2"),
            "found it",
        ],
        Budget(),
    )
    result, state = tree.run(mode)
    assert (result.stop_reason, result.output) == ("answered", "done")
    assert RUNS == {"search": 2}
    parent_result = state.view.result_for("call_1")
    assert parent_result is not None
    assert (parent_result.name, parent_result.status) == (_delegation_name(shape), "success")
    (child,) = state.view.children()
    child_result = child.result_for("call_1")
    assert child_result is not None
    assert (child_result.name, child_result.content) == ("search", "result a")
    results = [e for e in state.view.trace.events if e["type"] == "tool_result"]
    by_scope = [
        (e["id"], e["name"], tuple(e.get("scope", {}).get("call_path", ()))) for e in results
    ]
    assert by_scope == [
        ("call_1", "search", ("call_1",)),
        ("call_2", "search", ("call_1",)),
        ("call_1", _delegation_name(shape), ()),
    ]
    # each model read its own call_1's result
    assert tree.child is not None
    child_seen = [m for m in tree.child.calls[1]["messages"] if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in child_seen] == [("call_1", "result a")]
    parent_seen = [m for m in tree.parent.calls[1]["messages"] if m.role == "tool"]
    assert [(m.tool_call_id, "found it" in str(m.content)) for m in parent_seen] == [
        ("call_1", True)
    ]
    assert [(c.id, c.scope is not None) for c in result.tool_calls] == [
        ("call_1", False),
        ("call_1", True),
        ("call_2", True),
    ]


def _write(tool_: BaseTool) -> Any:
    return from_langchain_tool(
        tool_,
        effect="write",
        preview=lambda context, q: {"would_wipe": q},
        verify=lambda context, q: None,
    )


def test_a_child_contract_allowing_a_write_fails_when_built() -> None:
    """A sub-agent's write would wait for approval, a pause a child scope cannot take:
    ``contract.child`` refuses it at build time, naming the agent, the tool and the fix
    (today's alternative: the run ended ``middleware_stop``/``invalid_response`` with
    the write and the delegation as ``tool_error``)."""
    contract = Contract([from_langchain_tool(search, effect="read")])
    with pytest.raises(
        ConfigurationError,
        match=r"child agent 'researcher'.*write tools \['wipe'\].*allowlist.*top agent",
    ):
        contract.child(
            "researcher",
            tools=[from_langchain_tool(search, effect="read"), _write(wipe)],
        )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_runs_own_contract_with_a_write_on_a_child_is_refused_at_its_start(
    shape: str, mode: str
) -> None:
    """The run's own Contract (it allowlists the write ``wipe``) given to the child: the
    child scope is refused when it opens, before its model runs; the error leaves the
    run (never a tool failure the parent reads); the write never runs."""

    def own(contract: Contract) -> Contract:
        return contract

    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"],
        [tool_call("wipe", {"q": "all"}), "wiped"],
        Budget(),
        child_of=own,
        extra_tools=[from_langchain_tool(search, effect="read"), _write(wipe)],
    )
    with pytest.raises(ChildScopeRefused, match=r"'researcher'.*write tools \['wipe'\]"):
        tree.run(mode)
    assert tree.child is not None
    assert tree.child.calls == []
    assert RUNS == {}
    assert len(tree.parent.calls) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_child_offer_is_checked_once_per_model_call(
    shape: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outer hook checks a model call's tool offer against the child's contract;
    the gate of the same call does not check it again: one check per model call."""
    from agent_contract_langchain import gate
    from agent_contract_langchain._driver import prepare

    checks: list[str] = []
    original = prepare.check_child_offer

    def counted(where: str) -> Callable[..., None]:
        def check(state: RunState, contract: Contract, tools: Any) -> None:
            checks.append(where)
            original(state, contract, tools)

        return check

    monkeypatch.setattr(prepare, "check_child_offer", counted("outer"))
    monkeypatch.setattr(gate, "check_child_offer", counted("gate"))
    tree = BUILDERS[shape](
        [_delegate(shape, "q"), "done"],
        [tool_call("search", {"q": "a"}), "found"],
        Budget(),
    )
    result, _state = tree.run(mode)
    assert result.stop_reason == "answered"
    assert tree.child is not None
    model_calls = len(tree.parent.calls) + len(tree.child.calls)
    assert model_calls == 4
    assert checks == ["outer"] * model_calls


@pytest.mark.parametrize("mode", MODES)
def test_a_gate_alone_still_refuses_a_child_offered_tools_its_contract_lacks(mode: str) -> None:
    """A child agent whose stack has the gate only (no outer hook) under the parent's
    Contract (it registers none of the child's tools): the gate refuses it before its
    model runs."""
    tree = tool_tree(
        [_delegate("agent-as-tool", "q"), "done"],
        [tool_call("search", {"q": "a"}), "found"],
        Budget(),
        child_of=lambda contract: contract,
        gate_only=True,
    )
    with pytest.raises(ChildScopeRefused, match=r"'researcher'.*registers none"):
        tree.run(mode)
    assert tree.child is not None
    assert tree.child.calls == []
    assert RUNS == {}


def test_graph_tool_takes_deepagents_task_tool_and_names_what_is_missing() -> None:
    """``graph_tool``/``graph_tools``: the tools of a compiled create_agent graph's tool
    node, middleware tools included; a missing name, a graph without a tool node and
    something that is not a graph are each a ConfigurationError saying so."""
    from agent_contract_langchain import graph_tools

    probe = create_deep_agent(chat([])[0], tools=[search], subagents=[_spec(chat([])[0], [])])
    tools = graph_tools(probe)
    assert {"task", "ls", "write_file", "search"} <= set(tools)
    task = graph_tool(probe, "task")
    assert isinstance(task, BaseTool)
    assert task is tools["task"]
    assert task is graph_tool(probe, "task")  # the same object the graph runs
    with pytest.raises(ConfigurationError, match=r"no tool 'nope'; it has \[.*'task'"):
        graph_tool(probe, "nope")
    bare = create_agent(chat([])[0], tools=[])
    with pytest.raises(ConfigurationError, match="has no tool node"):
        graph_tools(bare)
    with pytest.raises(ConfigurationError, match="needs a compiled graph"):
        graph_tool(object(), "task")
    plain = create_agent(chat([])[0], tools=[search, wipe])
    assert list(graph_tools(plain)) == ["search", "wipe"]
