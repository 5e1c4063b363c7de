"""Contract probes for a team's own ``create_agent`` (``agent-contract check --agent``).

The team names a **factory**: their own code that builds their agent from a chat model,

.. code-block:: python

    def build_agent(model: BaseChatModel) -> CompiledStateGraph:
        return create_agent(model, tools=[...], middleware=[...], context_schema=...,
                            checkpointer=...)

(one positional argument, the chat model; it returns the compiled graph and calls
``langchain.agents.create_agent`` once). ``agent-contract check --agent
module:build_agent`` imports it from the working directory and calls it once per probe
with a scripted chat model. While it runs, its ``create_agent`` call is intercepted:
everything the team passed is kept (their middleware, in their order; their
``context_schema``, ``checkpointer``, ``store``, ``system_prompt``, ``response_format``;
their :class:`~agent_contract_langchain.middleware.ContractMiddleware` and its contract:
secrets, budget, redaction, tool specs), except that each tool is replaced by a **stub
with the same name, description and argument schema** (LangChain's own validation and
injection of ``ToolRuntime``, ``InjectedToolCallId``, ``InjectedState``, ``InjectedStore``
included): the stub records the call and answers, raises or waits as the probe asks. The
tools' bodies never run (a check must not place orders); what they do is the team's to
test.

Probes derived from each tool's model-visible JSON Schema (``tool.tool_call_schema``):

- ``valid_call[tool]``: arguments generated from the schema; a read tool's call is bound
  to its id, a write tool's call waits for approval and does not run;
- ``missing_required[tool]``, ``wrong_type[tool]``, ``extra_field[tool]``,
  ``out_of_range[tool]`` (where the schema has a bound, a length, an enum): refused as
  ``invalid_arguments`` before the tool runs;
- ``tool_error[tool]``: the stub raises; the error is classified, its text hidden;
- ``secret_redacted[tool]``: the stub returns the contract's secrets (the team's, else a
  planted one); none reaches the model, the trace or the report;
- ``unknown_tool``: a call to a tool nobody registered;
- ``repeated_calls[tool]``: the same call ``max_identical_calls + 1`` times;
- ``tool_call_budget[tool]``: one batch of ``max_tool_calls + 1`` calls;
- ``slow_call[tool]``: the stub outlasts the tool's timeout (the read tool with the
  shortest one, when it is 20 s or less).

Columns: with a ContractMiddleware in the team's stack, one column, the agent as built.
Without one, two: the agent as built, and the same agent with
``ContractMiddleware(contract).around(*their middleware)`` added, its contract adopting
their tools with :func:`~agent_contract_langchain.tools.from_langchain_tool`; a tool whose
effect nobody declared is treated as a write there (fail closed) and listed as a finding.
An exception raised in the team's own middleware is reported as theirs, by name.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.conformance.agent import AgentProbes
from agent_contract.conformance.evaluate import (
    observe,
)
from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import Harness, Observation, RunInput
from agent_contract.model import Model
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel
from agent_contract.tools import ToolSpec

from ..attribution import raising_middleware
from ..chat_model import ContractChatModel
from ..harness import Mode, run_async, run_graph
from ..messages import to_langchain_messages
from ..middleware import ContractMiddleware
from .capture import AgentParts, capture_agent, load_factory, probe_context
from .scenarios import budget_of, probe_scenarios, tool_facts
from .schema import sample_arguments

__all__ = [
    "AgentParts",
    "agent_probes",
    "capture_agent",
    "load_factory",
    "sample_arguments",
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


def _plain_observation(name: str, turns: int, final: Mapping[str, Any]) -> Observation:
    messages: list[BaseMessage] = list(final.get("messages", ()))
    trajectory: list[str] = []
    issued: list[str | None] = []
    for position, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if position >= turns:
                    trajectory.append(call["name"])
                issued.append(call["id"])
    tool_messages = tuple(
        {
            "id": m.tool_call_id,
            "name": m.name,
            "status": m.status,
            "error_kind": "unclassified" if m.status == "error" else None,
            "side_effects_possible": False,
            "content": str(m.content),
        }
        for m in messages
        if isinstance(m, ToolMessage)
    )
    last = messages[-1] if messages else None
    output = str(last.content) if isinstance(last, AIMessage) else None
    stop = "interrupted" if final.get("__interrupt__") else "answered"
    return Observation(
        harness=name,
        stop_reason=stop,
        output=output if stop == "answered" else None,
        trajectory=tuple(trajectory),
        tool_messages=tool_messages,
        trace_types=(),
        emitted="\n".join([*(str(m["content"]) for m in tool_messages), output or ""]),
        issued_ids=tuple(issued),
    )


def _crashed(name: str, exc: BaseException) -> Observation:
    where = raising_middleware(exc)
    crash = Observation.crashed(name, exc)
    if where is None:
        return crash
    return dataclasses.replace(
        crash, stop_reason=f"{crash.stop_reason} (raised in your middleware {where!r})"
    )


def _column_harness(column: _Column) -> Harness:
    def run(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult | Observation:
        specs = {s.name: s for s in tools}
        stubs = [_stub(t, specs[t.name]) if t.name in specs else t for t in column.parts.tools]
        added: list[ContractMiddleware] = []

        def rewrite(arguments: dict[str, Any]) -> dict[str, Any]:
            arguments["tools"] = [
                *stubs,
                *(t for t in arguments.get("tools") or () if isinstance(t, Mapping)),
            ]
            middleware = list(arguments.get("middleware") or ())
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

        graph, parts = capture_agent(column.factory, ContractChatModel(model=model), rewrite)
        ours = added[0] if added else parts.contract_middleware
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
    """The probes for the agent the factory ``spec`` (``module:factory``) builds, and the
    harness of each column (see the module doc).

    Args:
        spec: ``module:factory``.
        mode: how each column drives the graph: ``invoke``, ``ainvoke`` or ``stream``.
        effects: declared effects by tool name (``"read"`` or ``"write"``) for a stack
            without a ContractMiddleware (``check --effect NAME=read``); with one, the
            contract's tool specs declare them and this is refused.

    Raises:
        ConfigurationError: the factory cannot be loaded, raises, or does not build one
            ``create_agent``; an effect other than read/write, or for a tool the agent
            does not have; effects given for a stack with its own contract.
    """
    factory = load_factory(spec)
    _, parts = capture_agent(factory, ContractChatModel(model=FakeModel(["unused"])))
    if not isinstance(spec, str):
        spec = f"{getattr(spec, '__module__', '?')}:{getattr(spec, '__qualname__', '?')}"
    label = spec.rpartition(":")[2]
    effects = dict(effects or {})
    names = {t.name for t in parts.tools}
    for name, effect in effects.items():
        if effect not in ("read", "write"):
            raise ConfigurationError(f"effect of {name!r} must be read or write, got {effect!r}")
        if name not in names:
            raise ConfigurationError(
                f"--effect names {name!r}, which is not one of the agent's tools: "
                + ", ".join(sorted(names))
            )
    if effects and parts.contract_middleware is not None:
        raise ConfigurationError(
            "the agent has its own ContractMiddleware: its tool specs declare the effects"
        )
    facts = tool_facts(parts, effects)
    budget = budget_of(parts)
    own_contract = parts.contract_middleware
    secrets = own_contract.contract.redaction.secrets if own_contract is not None else ()
    scenarios, info = probe_scenarios(facts, budget, secrets)
    own = parts.contract_middleware
    findings: list[str] = []
    undeclared = [f.tool.name for f in facts if not f.declared]
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
    if own is not None:
        offered = [f.tool.name for f in facts]
        unregistered = [n for n in offered if n not in own.contract.registry]
        if unregistered:
            findings.append(
                "given to create_agent but not registered with the contract (never offered "
                "nor run): " + ", ".join(unregistered)
            )
    for fact in facts:
        if fact.valid is None:
            findings.append(
                f"{fact.tool.name}: no valid arguments could be generated from its schema "
                "(a pattern or format); its valid-call and invalid-argument probes are left out"
            )
    for name in parts.provider_tools:
        findings.append(f"provider-side tool {name!r} is not probed")
    columns = [
        _Column(f"{label} (as built)" if own is None else label, factory, parts, False, mode)
    ]
    if own is None:
        columns.append(_Column(f"{label} + contract", factory, parts, True, mode))
    return AgentProbes(
        agent=spec,
        tools=tuple(f.tool.name for f in facts),
        effects={f.tool.name: (f.effect if f.declared else "undeclared") for f in facts},
        scenarios=tuple(scenarios),
        probes=info,
        harnesses={c.name: _column_harness(c) for c in columns},
        findings=tuple(findings),
        under_contract=tuple(c.name for c in columns if c.add_contract or own is not None),
        undeclared=tuple(undeclared),
    )
