"""Contract probes for a team's own ``create_agent`` (``agent-contract check --agent``).

The team names a factory, ``build_agent(model) -> CompiledStateGraph`` (or a
module-level compiled graph, ``module:graph``). :func:`agent_probes` calls it once per
probe with a scripted chat model while its ``create_agent`` call is intercepted
(:mod:`.capture`): everything the team passed is kept except that each tool is replaced
by a stub with the same name, description and argument schema, which records the call
and answers, raises or waits as the probe asks. The probes come from each offered
tool's model-visible JSON Schema, declared effect and the budget (the core's
:mod:`agent_contract.conformance.agent_scenarios`); each agent the factory builds is
probed on its own graph, in one column (the agent as built, under its own
``ContractMiddleware``) or two (as built, and with
``ContractMiddleware(contract).around(*their middleware)`` added).

The probes, the columns, the tools left out and why, several agents and the report:
``docs/AGENT_CHECK.md`` (their one description).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.conformance.agent import AgentProbes
from agent_contract.conformance.agent_factory import probe_context
from agent_contract.conformance.agent_scenarios import (
    OfferedTools,
    check_effects,
    probe_budget,
    probe_scenarios,
    tool_facts,
)
from agent_contract.conformance.evaluate import observe
from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import Harness, Observation, RunInput
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel
from agent_contract.tools import ToolSpec

from ..attribution import raising_layer
from ..chat_model import ContractChatModel
from ..controls.plain_create_agent import observed
from ..harness import Mode, run_async, run_graph
from ..messages import to_langchain_messages
from ..middleware import ContractMiddleware
from ..tools import _visible_schema
from .capture import (
    AgentParts,
    Built,
    capture_agent,
    capture_agents,
    is_compiled_graph,
    load_factory,
)

__all__ = [
    "AgentParts",
    "agent_probes",
    "capture_agent",
    "load_factory",
]


def _stub(tool: BaseTool, spec: ToolSpec) -> BaseTool:
    """``tool`` with its body replaced by ``spec``'s handler: same name, description and
    argument schema, so LangChain validates and injects exactly as for the team's tool."""
    visible = set((spec.parameters.get("properties") or {}).keys())
    schema = tool.args_schema if tool.args_schema is not None else tool.tool_call_schema

    def func(**arguments: Any) -> Any:
        shown = {k: v for k, v in arguments.items() if k in visible}
        if spec.needs_context:
            return spec.handler(None, **shown)
        return spec.handler(**shown)

    func.__signature__ = _signature_of(tool)  # type: ignore[attr-defined]
    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=schema,
        func=func,
        return_direct=tool.return_direct,
    )


def _signature_of(tool: BaseTool) -> inspect.Signature:
    """The team's function's signature (LangChain reads injected parameters from it)."""
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if func is not None:
        with contextlib.suppress(TypeError, ValueError):
            return inspect.signature(func)
    fields = getattr(tool.args_schema, "model_fields", None) or {}
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in fields])


# -- the harness of one column -----------------------------------------------------------


@dataclass
class _Column:
    name: str
    factory: Callable[[Any], Any]
    parts: AgentParts
    add_contract: bool
    mode: Mode
    outermost: bool = True
    """The agent is the graph the factory returns (it is run as returned); else the
    agent's own graph is run on its own."""


def _graph_of(built: Built, key: str, outermost: bool) -> Any:
    """The graph to drive for the agent ``key``: the returned one for the outermost."""
    return built.graph if outermost else built.agent(key).graph


def _with_stubs(
    arguments: dict[str, Any], stubs: Mapping[str, BaseTool]
) -> tuple[list[Any], list[Any]]:
    """``(tools, middleware)`` of ``arguments`` with each tool named in ``stubs`` replaced
    by its stub, a middleware's tools too (on a shallow copy of that middleware, so the
    team's instance is left as it was)."""
    tools = [
        t
        if isinstance(t, Mapping)
        else stubs.get(str(getattr(t, "name", None) or getattr(t, "__name__", "")), t)
        for t in arguments.get("tools") or ()
    ]
    middleware: list[Any] = []
    for layer in arguments.get("middleware") or ():
        own = getattr(layer, "tools", None)
        if own and any(isinstance(t, BaseTool) and t.name in stubs for t in own):
            layer = copy.copy(layer)
            layer.tools = [stubs.get(t.name, t) if isinstance(t, BaseTool) else t for t in own]
        middleware.append(layer)
    return tools, middleware


def _plain_observation(name: str, turns: int, final: Mapping[str, Any]) -> Observation:
    """What a column without the contract showed (the control's reading,
    :func:`~agent_contract_langchain.controls.plain_create_agent.observed`); a run paused
    on an interrupt has no answer (what it emitted is kept)."""
    seen = observed(name, turns, list(final.get("messages", ())))
    if final.get("__interrupt__"):
        return dataclasses.replace(seen, stop_reason="interrupted", output=None)
    return seen


def _crashed(name: str, exc: BaseException) -> Observation:
    layer = raising_layer(exc)
    crash = Observation.crashed(name, exc)
    if layer is None:
        return crash
    kind, where = layer
    return dataclasses.replace(
        crash, stop_reason=f"{crash.stop_reason} (raised in your {kind} {where!r})"
    )


def _column_harness(column: _Column) -> Harness:
    key = column.parts.key

    def run(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult | Observation:
        specs = {s.name: s for s in tools}
        stubs = {t.name: _stub(t, specs[t.name]) for t in column.parts.tools if t.name in specs}
        added: list[ContractMiddleware] = []

        def rewrite(agent: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if agent != key:
                return arguments
            arguments["tools"], middleware = _with_stubs(arguments, stubs)
            if column.add_contract and not any(
                isinstance(m, ContractMiddleware) for m in middleware
            ):
                contract_mw = ContractMiddleware(options.contract(tools))
                added.append(contract_mw)
                middleware = contract_mw.around(*middleware)
                if arguments.get("checkpointer") is None:
                    arguments["checkpointer"] = InMemorySaver()  # write approvals pause on it
            arguments["middleware"] = middleware
            return arguments

        built = capture_agents(column.factory, ContractChatModel(model=model), rewrite)
        parts = built.agent(key)
        graph = _graph_of(built, key, column.outermost)
        ours = added[-1] if added else parts.contract_middleware
        context = probe_context(parts.context_schema)
        turns = options.turns()
        system = parts.arguments.get("system_prompt")
        system_text = system if isinstance(system, str) else None
        if ours is None:
            return _run_plain(graph, column, turns, context)
        state = options.start(ours.contract)
        config = {"configurable": {"thread_id": state.view.run_id}}
        try:
            result = run_graph(
                graph,
                state,
                turns,
                mode=column.mode,
                config=config,
                system=system_text,
                graph_context=context,
            )
        except Exception as exc:  # noqa: BLE001 - a crash is an observation
            return _crashed(column.name, exc)
        if result.stop_reason == "middleware_stop" and "raised" in result.stop_detail:
            # The team's middleware failed: the report names it (the detail says which).
            seen = observe(result)
            return dataclasses.replace(seen, stop_reason=f"middleware_stop ({result.stop_detail})")
        return result

    run.capabilities = ("timeouts", "write_tools")  # type: ignore[attr-defined]
    return run


def _offered_tools(
    factory: Callable[[Any], Any], parts: AgentParts, outermost: bool
) -> tuple[list[str] | None, str]:
    """The names of the tools the agent's model is offered on its first call (one run of
    the agent as built, its model answering at once), or ``(None, why)`` when that run
    failed."""
    recorder = OfferedTools()
    try:
        built = capture_agents(factory, ContractChatModel(model=recorder))
        own = built.agent(parts.key)
        graph = _graph_of(built, parts.key, outermost)
        context = probe_context(own.context_schema)
        turns = [Message(role="user", content="Which tools do you have?")]
        contract_mw = own.contract_middleware
        if contract_mw is None:
            payload = {"messages": to_langchain_messages(turns)}
            config = {"configurable": {"thread_id": f"offered-{id(recorder)}"}}
            graph.invoke(payload, config=config, context=context)
        else:
            state = contract_mw.contract.start()
            config = {"configurable": {"thread_id": state.view.run_id}}
            run_graph(graph, state, turns, config=config, graph_context=context)
    except Exception as exc:  # noqa: BLE001 - reported as a finding
        return None, f"{type(exc).__name__}"
    return recorder.names, ""


def _async_only(tool: BaseTool) -> bool:
    """A tool with a coroutine and no sync body (``StructuredTool(coroutine=...)``: every
    MCP tool of langchain-mcp-adapters): it raises NotImplementedError when run sync."""
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


def _run_plain(graph: Any, column: _Column, turns: Sequence[Any], context: Any) -> Observation:
    payload = {"messages": to_langchain_messages(turns)}
    config = {"configurable": {"thread_id": f"probe-{id(payload)}"}, "recursion_limit": 40}
    try:
        if column.mode == "ainvoke":
            final = run_async(graph.ainvoke(payload, config=config, context=context))
        elif column.mode == "stream":
            final = {}
            for chunk in graph.stream(
                payload, config=config, context=context, stream_mode="values"
            ):
                final = chunk
            snapshot = graph.get_state(config) if graph.checkpointer is not None else None
            if snapshot is not None and snapshot.interrupts:
                final = {**final, "__interrupt__": snapshot.interrupts}
        else:
            final = graph.invoke(payload, config=config, context=context)
    except Exception as exc:  # noqa: BLE001 - a crash is an observation
        return _crashed(column.name, exc)
    return _plain_observation(column.name, len(turns), final)


def agent_probes(
    spec: str | Callable[[Any], Any],
    *,
    mode: Mode = "invoke",
    effects: Mapping[str, str] | None = None,
) -> AgentProbes:
    """The probes for the agents the factory ``spec`` (``module:factory``, or
    ``module:graph`` for a module-level compiled graph) builds, and the harness of each
    column (see the module doc): the outermost agent's, with every other agent's in
    :attr:`~agent_contract.conformance.agent.AgentProbes.agents`.

    Args:
        spec: ``module:factory`` or ``module:graph``.
        mode: how each column drives the graph: ``invoke``, ``ainvoke`` or ``stream``.
        effects: declared effects by tool name (``"read"`` or ``"write"``) for a stack
            without a ContractMiddleware (``check --effect NAME=read``); with one, the
            contract's tool specs declare them and this is refused.

    Raises:
        ConfigurationError: the factory cannot be loaded, raises, or calls no
            ``create_agent``; an effect other than read/write, or for a tool no agent
            has; effects given for an agent with its own contract.
    """
    factory = load_factory(spec)
    built = capture_agents(factory, ContractChatModel(model=FakeModel(["unused"])))
    if not isinstance(spec, str):
        spec = f"{getattr(spec, '__module__', '?')}:{getattr(spec, '__qualname__', '?')}"
    label = spec.rpartition(":")[2]
    effects = dict(effects or {})
    check_effects(effects, {t.name for part in built.agents for t in part.tools})
    ordered = [built.outermost] if built.outermost is not None else []
    ordered += [p for p in built.agents if p is not built.outermost]
    several = len(ordered) > 1 or built.outermost is None
    per_agent = [
        _probes_of(
            factory,
            part,
            spec=spec,
            label=label if part is built.outermost else f"{label}.{part.key}",
            name=_display_name(part, part is built.outermost) if several else "",
            outermost=part is built.outermost,
            mode=mode,
            effects=effects,
        )
        for part in ordered
    ]
    top = per_agent[0]
    tree: list[str] = []
    not_probed = dict(top.not_probed)
    if several:
        tree.append(
            f"the factory built {len(ordered)} agents with create_agent ("
            + ", ".join(_display_name(p, p is built.outermost) for p in ordered)
            + "); each is probed on its own graph, under its own contract (the probes do "
            "not run a sub-agent through its parent's delegation)"
        )
    if built.outermost is None:
        foreign = _foreign_tools(built)
        kind = type(built.graph).__name__
        tree.append(
            f"the graph the factory returns ({kind}) is not one of its create_agent agents "
            "(e.g. langgraph-supervisor's supervisor, built with create_react_agent: no "
            "middleware slot); it is not probed, the agents it runs are, one by one"
        )
        for tool, owner in sorted(foreign.items()):  # a supervisor's are from a set
            not_probed.setdefault(
                tool,
                f"a tool of {owner!r}, an agent of the returned graph not built with "
                "create_agent (no middleware slot, so no contract can hold it there)",
            )
    return dataclasses.replace(
        top,
        findings=(*tree, *top.findings),
        not_probed=not_probed,
        agents=tuple(per_agent[1:]),
    )


def _display_name(part: AgentParts, outermost: bool) -> str:
    """How the report names one of several agents: its ``name``, else its key (the
    returned agent: ``main``)."""
    if part.arguments.get("name") or not outermost:
        return part.key
    return "main"


def _foreign_tools(built: Built) -> dict[str, str]:
    """The tools of the tool nodes inside the returned graph that belong to no
    ``create_agent`` agent of the factory's (a supervisor's handoff tools), each with
    the name of the graph that holds it."""
    ours = {id(p.graph) for p in built.agents}
    found: dict[str, str] = {}

    def visit(graph: Any, depth: int) -> None:
        if depth > 3 or id(graph) in ours:
            return
        for node in getattr(graph, "nodes", {}).values():
            bound = getattr(node, "bound", None)
            by_name = getattr(bound, "tools_by_name", None)
            if isinstance(by_name, Mapping):
                for tool in by_name:
                    found.setdefault(str(tool), str(getattr(graph, "name", None) or "?"))
            elif is_compiled_graph(bound):
                visit(bound, depth + 1)

    visit(built.graph, 0)
    return found


def _probes_of(
    factory: Callable[[Any], Any],
    parts: AgentParts,
    *,
    spec: str,
    label: str,
    name: str,
    outermost: bool,
    mode: Mode,
    effects: Mapping[str, str],
) -> AgentProbes:
    """The probes of one agent of the factory's (``parts``), see :func:`agent_probes`."""
    own = parts.contract_middleware
    mine = {t.name for t in parts.tools}
    if own is not None and any(n in mine for n in effects):
        raise ConfigurationError(
            "the agent has its own ContractMiddleware: its tool specs declare the effects"
        )
    offered, failure = _offered_tools(factory, parts, outermost)
    findings: list[str] = []
    not_probed: dict[str, str] = {}
    unchecked: list[str] = []
    withdrawn: list[str] = []
    for tool in parts.tools:
        layer = parts.added_by.get(tool.name)
        origin = f" (added by {layer})" if layer else ""
        if offered is not None and tool.name not in offered:
            if own is not None and tool.name not in own.contract.registry:
                not_probed[tool.name] = (
                    f"withdrawn from the model by the contract's allowlist{origin}: not "
                    "registered with your ContractMiddleware"
                )
                withdrawn.append(tool.name)
            elif own is not None and not own.contract.is_allowed(tool.name):
                agent = own.contract.agent or name or parts.key
                not_probed[tool.name] = (
                    f"withdrawn from the model by the allowlist of the Contract of agent {agent!r}"
                    f"{origin} (allowlist: {sorted(own.contract.allowlist or ())}): "
                    "registered but not allowlisted; add it to that allowlist (e.g. "
                    "contract.child(name, tools=..., allowlist=[...])) to offer it"
                )
            else:
                not_probed[tool.name] = (
                    f"in the agent's tool node{origin} but never offered to the model (a "
                    "middleware withdraws it)"
                )
        elif _async_only(tool) and mode != "ainvoke":
            not_probed[tool.name] = (
                f"async-only{origin} (no sync body): it cannot run under --mode {mode}; "
                "check it with --mode ainvoke"
            )
            unchecked.append(tool.name)
    if offered is None:
        findings.append(
            f"the tools offered to the model could not be read (a first run raised "
            f"{failure}): every tool of the agent's tool node is probed"
        )
    if withdrawn:
        findings.append(
            "withdrawn from the model by the contract's allowlist (registered tools only): "
            + ", ".join(withdrawn)
            + "; register each with from_langchain_tool(tool, effect=...) to offer it"
        )
    probed = dataclasses.replace(parts, tools=[t for t in parts.tools if t.name not in not_probed])
    contract = own.contract if own is not None else None
    facts = tool_facts(
        [(t.name, t.description, _visible_schema(t)) for t in probed.tools],
        contract,
        {k: v for k, v in effects.items() if k in mine},
    )
    budget = probe_budget(contract)
    secrets = own.contract.redaction.secrets if own is not None else ()
    scenarios, info = probe_scenarios(facts, budget, secrets)
    undeclared = [f.name for f in facts if not f.declared]
    if own is None:
        findings.append(
            "no ContractMiddleware in the stack: the column "
            f"'{label} + contract' adds ContractMiddleware(contract).around(*your middleware)"
        )
    if undeclared:
        findings.append(
            "effect undeclared (treated as write, so a call waits for approval): "
            + ", ".join(undeclared)
            + "; declare each with from_langchain_tool(tool, effect='read'|'write')"
        )
    for fact in facts:
        if fact.valid is None:
            findings.append(
                f"{fact.name}: no valid arguments could be generated from its schema "
                "(a pattern or format); its valid-call and invalid-argument probes are left out"
            )
    for provider in parts.provider_tools:
        not_probed.setdefault(provider, "provider-side tool (runs at the model provider)")
    columns = [
        _Column(
            f"{label} (as built)" if own is None else label,
            factory,
            parts,
            False,
            mode,
            outermost,
        )
    ]
    if own is None:
        columns.append(_Column(f"{label} + contract", factory, parts, True, mode, outermost))
    return AgentProbes(
        agent=spec,
        name=name,
        tools=tuple(f.name for f in facts),
        effects={f.name: (f.effect if f.declared else "undeclared") for f in facts},
        scenarios=tuple(scenarios),
        probes=info,
        harnesses={c.name: _column_harness(c) for c in columns},
        findings=tuple(findings),
        under_contract=tuple(c.name for c in columns if c.add_contract or own is not None),
        undeclared=tuple(undeclared),
        not_probed=not_probed,
        unchecked=tuple(unchecked),
    )
