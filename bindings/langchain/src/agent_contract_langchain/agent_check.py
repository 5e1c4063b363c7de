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
import copy
import dataclasses
import importlib
import inspect
import os
import sys
import threading
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from jsonschema import Draft202012Validator
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as as_tool
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.budget import Budget
from agent_contract.conformance.agent import AgentProbes, ProbeInfo
from agent_contract.conformance.evaluate import (
    Problem,
    Scenario,
    check_hidden_text,
    check_ran,
    check_timeout,
    observe,
)
from agent_contract.conformance.fixtures import Probe
from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import Harness, Observation, RunInput
from agent_contract.model import Model
from agent_contract.runtime import RunResult
from agent_contract.testing import FakeModel, Reply, tool_call, tool_calls
from agent_contract.tools import ToolSpec

from .chat_model import ContractChatModel
from .harness import Mode, run_async, run_graph
from .messages import to_langchain_messages
from .middleware import ContractMiddleware, raising_middleware
from .tools import _visible_schema

__all__ = [
    "AgentParts",
    "agent_probes",
    "capture_agent",
    "load_factory",
    "sample_arguments",
]

SLOW_LIMIT_SECONDS: Final = 20.0
"""The slow-call probe runs only on a tool whose timeout is at most this (seconds): it
waits that long."""
PROBE_TIMEOUT_SECONDS: Final = 1.0
"""The timeout (seconds) of an adopted tool in the column that adds the contract."""
_ERROR_TEXT: Final = "database password hunter2 at db.internal:5432"
"""What the tool-error probe's stub raises: text that must never reach the model."""
_DEADLINE: Final = 60.0


# -- the factory and what it builds ------------------------------------------------------


def load_factory(spec: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The team's factory named ``module:attribute``, imported with the working directory
    first on ``sys.path`` (a callable is returned as it is).

    Raises:
        ConfigurationError: not ``module:attribute``, not importable, not callable.
    """
    if callable(spec):
        return spec
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ConfigurationError(f"--agent takes module:factory, got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot load the agent factory {spec!r}: {exc}") from exc
    if not callable(target):
        raise ConfigurationError(f"the agent factory {spec!r} is not callable")
    return typing.cast(Callable[[Any], Any], target)


@dataclass
class AgentParts:
    """What the team's factory passed to ``create_agent`` (arguments by name)."""

    arguments: dict[str, Any]
    """Every argument of the call, by parameter name (``model``, ``tools``, ...)."""
    tools: list[BaseTool] = field(default_factory=list)
    """The team's tools as LangChain tools (a plain function is converted as
    ``create_agent`` converts it); provider-side tool dicts are left out."""
    provider_tools: list[str] = field(default_factory=list)
    """Names of provider-side tools (dicts): not probed."""

    @property
    def middleware(self) -> list[Any]:
        """The team's middleware, in their order."""
        return list(self.arguments.get("middleware") or ())

    @property
    def contract_middleware(self) -> ContractMiddleware | None:
        """The team's own ContractMiddleware, if their stack has one."""
        found = [m for m in self.middleware if isinstance(m, ContractMiddleware)]
        return found[0] if found else None

    @property
    def context_schema(self) -> Any:
        """Their ``context_schema`` (or None)."""
        return self.arguments.get("context_schema")


def _as_tools(tools: Sequence[Any]) -> tuple[list[BaseTool], list[str]]:
    converted: list[BaseTool] = []
    provider: list[str] = []
    for item in tools:
        if isinstance(item, BaseTool):
            converted.append(item)
        elif isinstance(item, Mapping):
            provider.append(str(item.get("name") or item.get("type") or "?"))
        elif callable(item):
            converted.append(as_tool(item))
    return converted, provider


@contextlib.contextmanager
def _intercepted(
    factory: Any, rewrite: Callable[[dict[str, Any]], dict[str, Any]]
) -> Iterator[list[AgentParts]]:
    """While open, ``create_agent`` (as ``langchain.agents`` exports it, as the factory's
    module imported it, and as a closure the factory is holds it) records its arguments and builds the graph from
    ``rewrite(arguments)``."""
    import langchain.agents as agents_module
    import langchain.agents.factory as factory_module

    original = factory_module.create_agent
    signature = inspect.signature(original)
    seen: list[AgentParts] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        arguments = dict(bound.arguments)
        tools, provider = _as_tools(list(arguments.get("tools") or ()))
        seen.append(AgentParts(arguments=dict(arguments), tools=tools, provider_tools=provider))
        return original(**rewrite(dict(arguments)))

    homes: list[tuple[Any, str]] = [
        (agents_module, "create_agent"),
        (factory_module, "create_agent"),
    ]
    globals_ = getattr(factory, "__globals__", None)
    if isinstance(globals_, dict):
        for key, value in globals_.items():
            if value is original or value is agents_module.create_agent:
                homes.append((globals_, key))
    for index, cell in enumerate(getattr(factory, "__closure__", None) or ()):
        with contextlib.suppress(ValueError):  # an empty cell
            if cell.cell_contents is original or cell.cell_contents is agents_module.create_agent:
                homes.append((cell, str(index)))
    saved = [(home, key, _get(home, key)) for home, key in homes]
    try:
        for home, key in homes:
            _set(home, key, recording)
        yield seen
    finally:
        for home, key, value in reversed(saved):
            _set(home, key, value)


def _get(home: Any, key: str) -> Any:
    if isinstance(home, types.CellType):
        return home.cell_contents
    return home[key] if isinstance(home, dict) else getattr(home, key)


def _set(home: Any, key: str, value: Any) -> None:
    if isinstance(home, types.CellType):
        home.cell_contents = value
    elif isinstance(home, dict):
        home[key] = value
    else:
        setattr(home, key, value)


_LOCK = threading.Lock()
"""One factory call at a time (the interception is process-wide)."""


def capture_agent(
    factory: Callable[[Any], Any],
    model: Any,
    rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[Any, AgentParts]:
    """Call ``factory(model)`` and return ``(graph, parts)``.

    Raises:
        ConfigurationError: the factory raised, or did not call ``create_agent`` exactly
            once.
    """
    with _LOCK, _intercepted(factory, rewrite or (lambda a: a)) as seen:
        try:
            graph = factory(model)
        except ConfigurationError:
            raise
        except Exception as exc:
            raise ConfigurationError(
                f"the agent factory raised {type(exc).__name__}: {exc}"
            ) from exc
    if len(seen) != 1:
        raise ConfigurationError(
            f"the agent factory called create_agent {len(seen)} times; it must build one "
            "agent with langchain.agents.create_agent from the model it is given"
        )
    return graph, seen[0]


# -- arguments from a schema -------------------------------------------------------------


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return _resolve(target, root)
    return schema


def _sample(schema: Any, root: Mapping[str, Any]) -> Any:
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return "probe"
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or () if _resolve(o, root).get("type") != "null"]
        if options:
            return _sample(options[0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer" or kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = low + 1 if "exclusiveMinimum" in schema else max(low, 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if high is not None and value > high:
            value = low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [_sample(schema.get("items", {}), root) for _ in range(count)]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            name: _sample(properties.get(name, {}), root) for name in schema.get("required") or ()
        }
    text = "probe"
    low = int(schema.get("minLength", 0))
    return (text * (low // len(text) + 1))[: max(low, min(len(text), schema.get("maxLength", 5)))]


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments for ``schema`` (its required properties, each the simplest value that
    fits: an enum's first, a bound, ``"probe"``), or None when the result does not
    validate (a pattern, a format, a rule the generator does not know)."""
    value = _sample(schema, schema)
    if not isinstance(value, dict):
        return None
    return value if not list(Draft202012Validator(schema).iter_errors(value)) else None


_WRONG: Final[dict[str, Any]] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": "not a list",
    "object": "not an object",
}


def _invalid(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Argument sets that violate ``schema``, by probe kind (each checked to fail)."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [r for r in schema.get("required") or () if r in arguments]
    found: dict[str, dict[str, Any]] = {}
    if required:
        found["missing_required"] = {k: v for k, v in arguments.items() if k != required[0]}
    order = [*required, *(p for p in properties if p not in required)]
    for name in order:
        prop = _resolve(properties.get(name, {}), schema)
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if isinstance(kind, str) and kind in _WRONG and "wrong_type" not in found:
            found["wrong_type"] = {**arguments, name: _WRONG[kind]}
        bad = _out_of_range(prop) if isinstance(prop, Mapping) else None
        if bad is not None and "out_of_range" not in found:
            found["out_of_range"] = {**arguments, name: bad[0]}
    if schema.get("additionalProperties") is not True:
        found["extra_field"] = {**arguments, "unexpected_argument": "probe"}
    validator = Draft202012Validator(
        {**schema, "additionalProperties": schema.get("additionalProperties", False)}
    )
    return {k: v for k, v in found.items() if list(validator.iter_errors(v))}


def _out_of_range(prop: Mapping[str, Any]) -> tuple[Any] | None:
    if "minimum" in prop:
        return (prop["minimum"] - 1,)
    if "exclusiveMinimum" in prop:
        return (prop["exclusiveMinimum"],)
    if "maximum" in prop:
        return (prop["maximum"] + 1,)
    if "exclusiveMaximum" in prop:
        return (prop["exclusiveMaximum"],)
    if prop.get("minLength", 0) > 0:
        return ("x" * (int(prop["minLength"]) - 1),)
    if "maxLength" in prop:
        return ("x" * (int(prop["maxLength"]) + 1),)
    if prop.get("enum"):
        return ("not-one-of-the-enum",)
    if prop.get("minItems", 0) > 0:
        return ([],)
    return None


# -- stubs: the team's tool, its body replaced -------------------------------------------


@dataclass
class _Behaviour:
    """What a tool's stub does in one probe."""

    raises: bool = False
    wait_seconds: float = 0.0


def _recording_spec(
    tool: BaseTool, parameters: dict[str, Any], behaviour: _Behaviour, probe: Probe, **opts: Any
) -> ToolSpec:
    """The scenario's ToolSpec for ``tool``: records on ``probe``, then answers, raises or
    waits."""
    name = tool.name
    release = threading.Event()

    def handler(*context: Any, **arguments: Any) -> str:
        probe.record(name, arguments)
        if behaviour.raises:
            raise RuntimeError(_ERROR_TEXT)
        if behaviour.wait_seconds:
            release.wait(behaviour.wait_seconds)
        return f"probe result of {name}"

    return ToolSpec(
        name=name,
        description=tool.description or name,
        parameters=parameters,
        handler=handler,
        **opts,
    )


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


# -- the context the graph runs with -----------------------------------------------------

_PLACEHOLDERS: Final[dict[Any, Any]] = {str: "probe", int: 0, float: 0.0, bool: False}


def probe_context(schema: Any) -> Any:
    """A value of the team's ``context_schema`` for the probes: defaults where it has
    them, else a placeholder per field type (``"probe"``, 0, False, None). None when there
    is no schema or it cannot be built."""
    if schema is None:
        return None
    with contextlib.suppress(Exception):
        return schema()
    fields: dict[str, Any] = {}
    hints: dict[str, Any] = {}
    with contextlib.suppress(Exception):
        hints = typing.get_type_hints(schema)
    if dataclasses.is_dataclass(schema):
        names = [f.name for f in dataclasses.fields(schema) if f.init]
    elif hasattr(schema, "model_fields"):
        names = list(schema.model_fields)
    else:
        names = list(hints)
    for name in names:
        fields[name] = _PLACEHOLDERS.get(hints.get(name), None)
    with contextlib.suppress(Exception):
        return schema(**fields)
    return dict(fields)


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
        contract = ours.contract
        state = contract.start(caller=options.caller)
        config = {"configurable": {"thread_id": state.run_id}}
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


# -- the probes --------------------------------------------------------------------------


@dataclass(frozen=True)
class _ToolFacts:
    tool: BaseTool
    parameters: dict[str, Any]
    effect: str
    declared: bool
    timeout: float
    valid: dict[str, Any] | None


def _budget_of(parts: AgentParts) -> Budget:
    own = parts.contract_middleware
    if own is not None:
        return own.contract.budget
    return Budget(deadline_seconds=_DEADLINE)


def _facts(parts: AgentParts, effects: Mapping[str, str]) -> list[_ToolFacts]:
    own = parts.contract_middleware
    found: list[_ToolFacts] = []
    for tool in parts.tools:
        parameters = _visible_schema(tool)
        spec = own.contract.registry.get(tool.name) if own is not None else None
        effect: str
        if spec is not None:
            effect, declared, timeout = spec.effect, True, spec.timeout_seconds
            parameters = dict(spec.parameters)
        elif tool.name in effects:
            effect, declared, timeout = effects[tool.name], True, PROBE_TIMEOUT_SECONDS
        else:
            effect, declared, timeout = "write", False, PROBE_TIMEOUT_SECONDS
        probe_spec = ToolSpec(
            name=tool.name,
            description=tool.description or tool.name,
            parameters=parameters,
            handler=lambda **a: None,
        )
        found.append(
            _ToolFacts(
                tool=tool,
                parameters=dict(probe_spec.parameters),
                effect=effect,
                declared=declared,
                timeout=timeout,
                valid=sample_arguments(probe_spec.parameters),
            )
        )
    return found


def _tools_builder(
    facts: Sequence[_ToolFacts], behaviours: Mapping[str, _Behaviour]
) -> Callable[[Probe], list[ToolSpec]]:
    def build(probe: Probe) -> list[ToolSpec]:
        specs = []
        for fact in facts:
            opts: dict[str, Any] = {"timeout_seconds": fact.timeout}
            if fact.effect == "write":
                opts["effect"] = "write"
                opts["preview"] = lambda context, **arguments: {"would_call": arguments}
                opts["verify"] = lambda context, **arguments: None
            behaviour = behaviours.get(fact.tool.name, _Behaviour())
            specs.append(_recording_spec(fact.tool, fact.parameters, behaviour, probe, **opts))
        return specs

    return build


def _scenarios(
    facts: Sequence[_ToolFacts], budget: Budget
) -> tuple[list[Scenario], dict[str, ProbeInfo]]:
    scenarios: list[Scenario] = []
    info: dict[str, ProbeInfo] = {}
    plain = _tools_builder(facts, {})

    def add(scenario: Scenario, tool: str, kind: str) -> None:
        scenarios.append(scenario)
        info[scenario.name] = ProbeInfo(tool=tool, kind=kind)

    for fact in facts:
        name = fact.tool.name
        if fact.valid is None:
            continue
        if fact.effect == "write":
            add(
                Scenario(
                    name=f"valid_call[{name}]",
                    boundary="write_approval",
                    description=f"a valid call of the write tool {name} waits for approval",
                    script=(tool_call(name, fact.valid, id="probe_1"), "done"),
                    tools=plain,
                    budget=budget,
                    stop_reason="pending_approval",
                    trajectory=(),
                    must_not_run=(name,),
                ),
                name,
                "valid_call",
            )
        else:
            add(
                Scenario(
                    name=f"valid_call[{name}]",
                    boundary="call_id_binding",
                    description=f"a valid call of {name} runs once, bound to its id",
                    script=(tool_call(name, fact.valid, id="probe_1"), "done"),
                    tools=plain,
                    budget=budget,
                    stop_reason="answered",
                    trajectory=(name,),
                    results=(("success", None),),
                    extra=(check_ran(name, 1, "call_id_binding"),),
                ),
                name,
                "valid_call",
            )
        for kind, arguments in _invalid(fact.parameters, fact.valid).items():
            add(
                Scenario(
                    name=f"{kind}[{name}]",
                    boundary="argument_validation",
                    description=f"{name} with arguments the schema refuses ({kind})",
                    script=(tool_call(name, arguments, id="probe_1"), "done"),
                    tools=plain,
                    budget=budget,
                    stop_reason="answered",
                    trajectory=(name,),
                    results=(("error", "invalid_arguments"),),
                    must_not_run=(name,),
                ),
                name,
                kind,
            )
        if fact.effect == "read":
            add(
                Scenario(
                    name=f"tool_error[{name}]",
                    boundary="tool_errors",
                    description=f"{name} raises: classified, its text never shown",
                    script=(tool_call(name, fact.valid, id="probe_1"), "done"),
                    tools=_tools_builder(facts, {name: _Behaviour(raises=True)}),
                    budget=budget,
                    stop_reason="answered",
                    trajectory=(name,),
                    results=(("error", "tool_error"),),
                    extra=(check_hidden_text, _text_hidden),
                ),
                name,
                "tool_error",
            )
    add(
        Scenario(
            name="unknown_tool",
            boundary="allowlist",
            description="a call to a tool nobody registered",
            script=(tool_call("no_such_tool", {}, id="probe_1"), "done"),
            tools=plain,
            budget=budget,
            stop_reason="answered",
            trajectory=("no_such_tool",),
            results=(("error", "unknown_tool"),),
        ),
        "",
        "unknown_tool",
    )
    reads = [f for f in facts if f.effect == "read" and f.valid is not None]
    if reads:
        first = reads[0]
        name, valid = first.tool.name, first.valid or {}
        repeats = budget.max_identical_calls + 1
        if repeats <= min(budget.max_tool_calls, budget.max_model_steps):
            script: list[Reply] = [
                tool_call(name, valid, id=f"probe_{i}") for i in range(1, repeats + 1)
            ]
            add(
                Scenario(
                    name=f"repeated_calls[{name}]",
                    boundary="repeated_calls",
                    description=f"the same call of {name} {repeats} times",
                    script=(*script, "done"),
                    tools=plain,
                    budget=budget,
                    stop_reason="repeated_call",
                    trajectory=(name,) * repeats,
                    results=(
                        *((("success", None),) * (repeats - 1)),
                        ("error", "repeated_call"),
                    ),
                    extra=(check_ran(name, repeats - 1, "repeated_calls"),),
                ),
                name,
                "repeated_calls",
            )
        batch = budget.max_tool_calls + 1
        if batch <= 64:
            add(
                Scenario(
                    name=f"tool_call_budget[{name}]",
                    boundary="tool_call_budget",
                    description=f"one batch of {batch} calls of {name} (budget "
                    f"{budget.max_tool_calls}) is refused whole",
                    script=(
                        tool_calls(*((name, valid, f"probe_{i}") for i in range(1, batch + 1))),
                        "done",
                    ),
                    tools=plain,
                    budget=budget,
                    stop_reason="max_tool_calls",
                    trajectory=(name,) * batch,
                    results=(("error", "budget_exceeded"),) * batch,
                    must_not_run=(name,),
                ),
                name,
                "tool_call_budget",
            )
        slow = min(reads, key=lambda f: f.timeout)
        if slow.timeout <= SLOW_LIMIT_SECONDS:
            add(
                Scenario(
                    name=f"slow_call[{slow.tool.name}]",
                    boundary="timeouts",
                    description=f"{slow.tool.name} outlasts its timeout ({slow.timeout:g} s)",
                    script=(tool_call(slow.tool.name, slow.valid or {}, id="probe_1"), "done"),
                    tools=_tools_builder(
                        facts, {slow.tool.name: _Behaviour(wait_seconds=slow.timeout + 1.0)}
                    ),
                    budget=budget,
                    stop_reason="answered",
                    trajectory=(slow.tool.name,),
                    results=(("error", "timeout"),),
                    extra=(check_timeout,),
                    requires=("timeouts",),
                ),
                slow.tool.name,
                "slow_call",
            )
    return scenarios, info


def _text_hidden(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    if "hunter2" in obs.emitted:
        return [Problem(boundary="tool_errors", message="the tool's exception text was shown")]
    return []


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
    facts = _facts(parts, effects)
    budget = _budget_of(parts)
    scenarios, info = _scenarios(facts, budget)
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
