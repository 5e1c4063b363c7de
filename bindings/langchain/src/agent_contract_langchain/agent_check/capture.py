"""Calling a team's agent factory and seeing what it passes to ``create_agent``.

:func:`capture_agent` calls ``factory(model)`` while ``create_agent`` (as
``langchain.agents`` exports it, as any loaded module imported it, and as a closure
the factory holds it) records its arguments and builds the graph from a rewrite of
them (the rebinding, the watchdog on the factory's call and the placeholder context are
the core's, :mod:`agent_contract.conformance.agent_factory`). Used by
:mod:`agent_contract_langchain.agent_check`.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
import threading
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool

from agent_contract.conformance import agent_factory
from agent_contract.conformance.agent_factory import bounded_call, rebound
from agent_contract.errors import ConfigurationError
from agent_contract.registry import import_attribute

from ..middleware import ContractMiddleware

__all__ = [
    "AgentParts",
    "Built",
    "GraphModule",
    "Rewrite",
    "capture_agent",
    "capture_agents",
    "is_compiled_graph",
    "load_factory",
]


def is_compiled_graph(value: Any) -> bool:
    """Whether ``value`` is a compiled LangGraph graph (a ``Pregel``: what
    ``create_agent``, ``StateGraph.compile()`` and ``create_deep_agent`` return)."""
    from langgraph.pregel import Pregel

    return isinstance(value, Pregel)


@dataclass(frozen=True)
class GraphModule:
    """A module-level compiled graph, ``module:attribute`` (what ``langgraph.json``
    names), as a factory: calling it with a chat model re-executes the module
    (``importlib.reload``) and returns the attribute it binds again. Under
    :func:`capture_agents` every ``create_agent`` call the module makes gets that chat
    model as its ``model`` (:attr:`swaps_model`), whatever model the module built: the
    check's one seam for a graph. The module's own model is constructed as the module
    constructs it, and never called (a provider's chat model needs only a placeholder
    key, e.g. ``ChatAnthropic(..., api_key="unused")`` or ``ANTHROPIC_API_KEY=unused``).
    """

    module: str
    """The module's import name."""
    attribute: str
    """The name the module binds the compiled graph to."""
    swaps_model = True
    """:func:`capture_agents` replaces ``create_agent``'s ``model`` with the check's."""

    def __call__(self, model: Any) -> Any:
        """Re-execute the module; return its graph (``model`` reaches it through the
        capture, see the class doc).

        Raises:
            ConfigurationError: the module no longer binds a compiled graph there.
        """
        module = importlib.reload(sys.modules[self.module])
        graph = getattr(module, self.attribute, None)
        if not is_compiled_graph(graph):
            raise ConfigurationError(
                f"{self.module}:{self.attribute} is no longer a compiled graph after the "
                "module was executed again"
            )
        return graph


def load_factory(spec: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The team's factory named ``module:attribute``, imported with the working directory
    first on ``sys.path`` (a callable is returned as it is). An attribute that is a
    compiled graph (``module:graph``) is returned as a :class:`GraphModule`.

    Raises:
        ConfigurationError: not ``module:attribute``, not importable, neither callable
            nor a compiled graph.
    """
    if callable(spec):
        return spec
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ConfigurationError(f"--agent takes module:factory or module:graph, got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    target = import_attribute(module_name, attribute, f"the agent factory {spec!r}")
    if is_compiled_graph(target):
        return GraphModule(module_name, attribute)
    if not callable(target):
        raise ConfigurationError(
            f"the agent factory {spec!r} is neither callable nor a compiled graph"
        )
    return typing.cast(Callable[[Any], Any], target)


@dataclass
class AgentParts:
    """What the team's factory passed to one ``create_agent`` call (arguments by name),
    and what that call returned."""

    arguments: dict[str, Any]
    """Every argument of the call, by parameter name (``model``, ``tools``, ...)."""
    tools: list[BaseTool] = field(default_factory=list)
    """Every tool of the agent's tool node as LangChain tools, in create_agent's order
    for the model: the ``tools`` argument's (a plain function converted as
    ``create_agent`` converts it), then those the middleware adds (deepagents'
    filesystem tools, ``write_todos``, ``task``). Provider-side tool dicts are left out."""
    provider_tools: list[str] = field(default_factory=list)
    """Names of provider-side tools (dicts): not probed."""
    key: str = ""
    """Which agent of the factory's this is: its ``name`` argument, else ``#n`` (the
    n-th nameless ``create_agent`` call, from 1). The same in every call of the factory."""
    graph: Any = None
    """The compiled graph the call returned."""
    added_by: dict[str, str] = field(default_factory=dict)
    """Tool name -> the name of the middleware that adds it (a tool of the ``tools``
    argument is absent)."""

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


@dataclass
class Built:
    """What one call of the factory built: the graph it returned and every agent it
    built with ``create_agent``."""

    graph: Any
    """What the factory returned."""
    agents: list[AgentParts]
    """Each agent once, in the order of their first ``create_agent`` call; an agent
    built again under the same key (deepagents rebuilds its sub-agents once the main
    stack is known) is its latest build, which is the one that runs."""
    outermost: AgentParts | None
    """The agent the returned graph is (the same graph, or a ``with_config`` copy of
    it), or None when the factory returned a graph of its own (a langgraph-supervisor
    workflow, whose supervisor is built with ``create_react_agent``)."""

    def agent(self, key: str) -> AgentParts:
        """The agent built under ``key``.

        Raises:
            ConfigurationError: the factory built no such agent this time.
        """
        for part in self.agents:
            if part.key == key:
                return part
        raise ConfigurationError(
            f"the agent factory built no agent {key!r} this time (it built "
            + ", ".join(p.key for p in self.agents)
            + "); check --agent needs a factory that builds the same agents on every call"
        )


def _is_same_graph(built: Any, returned: Any) -> bool:
    """Whether ``returned`` is ``built`` or a copy of it (``with_config`` copies a
    compiled graph with the same builder)."""
    if built is returned:
        return True
    builder = getattr(built, "builder", None)
    return builder is not None and getattr(returned, "builder", None) is builder


def _middleware_tools(middleware: Sequence[Any]) -> tuple[list[BaseTool], dict[str, str]]:
    """The tools each middleware adds (its ``tools``), and which middleware adds each."""
    found: list[BaseTool] = []
    added_by: dict[str, str] = {}
    for layer in middleware:
        for item in getattr(layer, "tools", None) or ():
            if isinstance(item, BaseTool):
                found.append(item)
                added_by.setdefault(item.name, str(getattr(layer, "name", type(layer).__name__)))
    return found, added_by


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


Rewrite = Callable[[str, dict[str, Any]], dict[str, Any]]
"""``rewrite(key, arguments)``: the arguments one ``create_agent`` call builds from (the
agent's :attr:`AgentParts.key` and the arguments as the factory passed them)."""


@contextlib.contextmanager
def _intercepted(factory: Any, rewrite: Rewrite, model: Any) -> Iterator[list[AgentParts]]:
    """While open, ``create_agent`` (as ``langchain.agents`` exports it, as any loaded
    module imported it, the factory's included, and as a closure the factory holds it)
    records the arguments of each call and builds its graph from ``rewrite(key,
    arguments)``; for a :class:`GraphModule` its ``model`` is ``model`` first."""
    import langchain.agents as agents_module
    import langchain.agents.factory as factory_module

    original = factory_module.create_agent
    signature = inspect.signature(original)
    seen: list[AgentParts] = []
    swaps = bool(getattr(factory, "swaps_model", False))

    def recording(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        arguments = dict(bound.arguments)
        if swaps:
            arguments["model"] = model
        tools, provider = _as_tools(list(arguments.get("tools") or ()))
        added, added_by = _middleware_tools(list(arguments.get("middleware") or ()))
        name = arguments.get("name")
        nameless = sum(1 for p in seen if not p.arguments.get("name"))
        key = str(name) if name else f"#{nameless + 1}"
        part = AgentParts(
            arguments=dict(arguments),
            tools=[*tools, *(t for t in added if t.name not in {x.name for x in tools})],
            provider_tools=provider,
            key=key,
            added_by=added_by,
        )
        seen.append(part)
        part.graph = original(**rewrite(key, dict(arguments)))
        return part.graph

    # Every loaded module that bound the name (``from langchain.agents import
    # create_agent``), not only the factory's own: a factory often calls a helper of
    # another module of the team's that builds the agent.
    homes = [(agents_module, "create_agent"), (factory_module, "create_agent")]
    targets = (original, agents_module.create_agent)
    try:
        with rebound(targets, recording, homes=homes, factory=factory):
            yield seen
    finally:
        if isinstance(factory, GraphModule):  # the module, executed again, bound ours
            namespace = vars(sys.modules[factory.module])
            for key, value in list(namespace.items()):
                if value is recording:
                    namespace[key] = original


_LOCK = threading.Lock()
"""One factory call at a time (the interception is process-wide)."""


def capture_agents(
    factory: Callable[[Any], Any], model: Any, rewrite: Rewrite | None = None
) -> Built:
    """Call ``factory(model)`` and return what it built (see :class:`Built`).

    Raises:
        ConfigurationError: the factory raised, called ``sys.exit``, did not return
            within :data:`~agent_contract.conformance.agent_factory.FACTORY_TIMEOUT_SECONDS`,
            or called no ``create_agent``.
    """
    with _LOCK, _intercepted(factory, rewrite or (lambda key, a: a), model) as seen:
        try:
            graph = bounded_call(factory, model, agent_factory.FACTORY_TIMEOUT_SECONDS)
        except ConfigurationError:
            raise
        except SystemExit as exc:  # a factory must return or raise, never end the process
            raise ConfigurationError(
                f"the agent factory called sys.exit({exc.code!r}); it must return the agent "
                "or raise"
            ) from None
        except Exception as exc:
            hint = (
                ""
                if seen
                else " before calling create_agent (check --agent probes agents built with "
                "langchain.agents.create_agent from the chat model it is given)"
            )
            raise ConfigurationError(
                f"the agent factory raised {type(exc).__name__}: {exc}{hint}"
            ) from exc
    if not seen:
        raise ConfigurationError(
            "the agent factory called create_agent 0 times; check --agent probes the agents "
            "it builds with langchain.agents.create_agent from the model it is given (a "
            "create_agent reached another way, e.g. through a wrapper of your own that "
            "holds it under another name or an attribute of an object, is not seen: "
            "call it as imported from langchain.agents)"
        )
    latest: dict[str, AgentParts] = {}
    order: list[str] = []
    for part in seen:
        if part.key not in latest:
            order.append(part.key)
        latest[part.key] = part
    agents = [latest[key] for key in order]
    outermost = next((p for p in reversed(seen) if _is_same_graph(p.graph, graph)), None)
    if outermost is not None:
        outermost = latest[outermost.key]
    return Built(graph=graph, agents=agents, outermost=outermost)


def capture_agent(
    factory: Callable[[Any], Any],
    model: Any,
    rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[Any, AgentParts]:
    """``(graph, parts)`` of the agent ``factory(model)`` returns (its outermost agent,
    else the first it built): :func:`capture_agents` for a factory of one agent, with
    ``rewrite(arguments)`` applied to every ``create_agent`` call.

    Raises:
        ConfigurationError: as :func:`capture_agents`.
    """
    built = capture_agents(factory, model, None if rewrite is None else (lambda key, a: rewrite(a)))
    return built.graph, built.outermost or built.agents[0]
