"""The probes of a team's agent, as contract scenarios: per tool, from its JSON Schema,
its declared effect and the budget (``check --agent``; see
:mod:`agent_contract.conformance.agent`).

A binding reads each of the agent's tools as a name, a description and the JSON Schema
its model sees, and hands them to :func:`tool_facts` with the agent's contract (if it
has one) and the effects the team declared; :func:`probe_scenarios` builds the probe
scenarios from those facts and :func:`probe_budget`. :class:`OfferedTools` is the model
of a first run that reads which tools the agent's model is offered. The binding keeps
what touches its framework: taking the agent apart, stubbing its tools, running it."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..budget import Budget
from ..errors import ConfigurationError
from ..harnesses import Observation
from ..messages import Completion, Message
from ..runtime import Contract
from ..testing import FakeModel, Reply, tool_call, tool_calls
from ..tools import ToolSpec
from .agent import ProbeInfo
from .agent_schema import invalid_arguments, sample_arguments
from .base import Problem, Scenario
from .boundaries.timeouts import check_timeout
from .boundaries.tool_errors import check_hidden_text
from .checks import check_not_emitted, check_ran
from .fixtures import PLANTED_PASSWORD, PLANTED_SECRET, Probe

__all__ = [
    "PROBE_TIMEOUT_SECONDS",
    "SLOW_LIMIT_SECONDS",
    "OfferedTools",
    "ToolFacts",
    "check_effects",
    "probe_budget",
    "probe_scenarios",
    "tool_facts",
]

SLOW_LIMIT_SECONDS: Final = 20.0
"""The slow-call probe runs only on a tool whose timeout is at most this (seconds): it
waits that long."""
PROBE_TIMEOUT_SECONDS: Final = 1.0
"""The timeout (seconds) of an adopted tool in the column that adds the contract."""
_ERROR_TEXT: Final = f"database password {PLANTED_PASSWORD} at db.internal:5432"
"""What the tool-error probe's stub raises: text that must never reach the model."""
_DEADLINE: Final = 60.0


@dataclass
class _Behaviour:
    """What a tool's stub does in one probe."""

    raises: bool = False
    wait_seconds: float = 0.0
    returns: str | None = None


def _recording_handler(name: str, behaviour: _Behaviour, probe: Probe) -> Callable[..., str]:
    """The stub's body in one probe: records the call on ``probe``, then answers, raises
    or waits as ``behaviour`` says."""
    release = threading.Event()

    def handler(*context: Any, **arguments: Any) -> str:
        probe.record(name, arguments)
        if behaviour.raises:
            raise RuntimeError(_ERROR_TEXT)
        if behaviour.wait_seconds:
            release.wait(behaviour.wait_seconds)
        if behaviour.returns is not None:
            return behaviour.returns
        return f"probe result of {name}"

    return handler


class _Specs:
    """The scenario ToolSpecs of one tool: validated once (a ToolSpec checks its JSON
    Schema when built, the costliest part of a probe's set-up), then copied per probe
    with that probe's recording handler (a plain function of ours, so the checks made
    on the first build hold for each copy)."""

    def __init__(self, fact: ToolFacts) -> None:
        opts: dict[str, Any] = {"timeout_seconds": fact.timeout}
        if fact.effect == "write":
            opts["effect"] = "write"
            opts["preview"] = lambda context, **arguments: {"would_call": arguments}
            opts["verify"] = lambda context, **arguments: None
        self.name = fact.name
        self.template = ToolSpec(
            name=fact.name,
            description=fact.description or fact.name,
            parameters=fact.parameters,
            handler=lambda *context, **arguments: None,
            **opts,
        )

    def for_probe(self, behaviour: _Behaviour, probe: Probe) -> ToolSpec:
        """The spec for one probe: the template with ``probe``'s recording handler."""
        spec = copy.copy(self.template)
        object.__setattr__(spec, "handler", _recording_handler(self.name, behaviour, probe))
        return spec


@dataclass(frozen=True)
class ToolFacts:
    """What the probes know of one of the agent's tools."""

    name: str
    description: str | None
    """The tool's description (None or "" for none: its name stands in)."""
    parameters: dict[str, Any]
    """The JSON Schema of the arguments its model sees (the contract's, when the
    contract registers the tool), as a :class:`~agent_contract.tools.ToolSpec` stores it."""
    effect: str
    """``read`` or ``write`` (an undeclared effect is taken as ``write``: fail closed)."""
    declared: bool
    """Whether the contract or the team declared the effect."""
    timeout: float
    """Seconds: the contract's timeout of the tool, else :data:`PROBE_TIMEOUT_SECONDS`."""
    valid: dict[str, Any] | None
    """Arguments that fit :attr:`parameters`, or None when none could be generated."""


def check_effects(effects: Mapping[str, str], names: set[str]) -> None:
    """Check the effects a team declared (``check --effect NAME=read``), by tool name,
    against ``names``, the tools of every agent the factory built.

    Raises:
        ConfigurationError: an effect other than ``read`` or ``write``, or one for a tool
            no agent has.
    """
    for name, effect in effects.items():
        if effect not in ("read", "write"):
            raise ConfigurationError(f"effect of {name!r} must be read or write, got {effect!r}")
        if name not in names:
            raise ConfigurationError(
                f"--effect names {name!r}, which is not one of the agent's tools: "
                + ", ".join(sorted(names))
            )


def probe_budget(contract: Contract | None) -> Budget:
    """The budget the probes run under: the agent's own contract's, else the default
    one with a 60-second deadline."""
    if contract is not None:
        return contract.budget
    return Budget(deadline_seconds=_DEADLINE)


def tool_facts(
    tools: Iterable[tuple[str, str | None, dict[str, Any]]],
    contract: Contract | None,
    effects: Mapping[str, str],
) -> list[ToolFacts]:
    """The facts of each tool, ``(name, description, the JSON Schema its model sees)``
    in the agent's order: its effect and timeout from ``contract``'s registry when it
    registers the tool (and that spec's schema), else the effect ``effects`` declares
    for it, else ``write`` (undeclared).

    Raises:
        ConfigurationError: a schema that is not a valid Draft 2020-12 object schema.
    """
    found: list[ToolFacts] = []
    for name, description, schema in tools:
        parameters = schema
        spec = contract.registry.get(name) if contract is not None else None
        effect: str
        if spec is not None:
            effect, declared, timeout = spec.effect, True, spec.timeout_seconds
            parameters = dict(spec.parameters)
        elif name in effects:
            effect, declared, timeout = effects[name], True, PROBE_TIMEOUT_SECONDS
        else:
            effect, declared, timeout = "write", False, PROBE_TIMEOUT_SECONDS
        probe_spec = ToolSpec(
            name=name,
            description=description or name,
            parameters=parameters,
            handler=lambda **a: None,
        )
        found.append(
            ToolFacts(
                name=name,
                description=description,
                parameters=dict(probe_spec.parameters),
                effect=effect,
                declared=declared,
                timeout=timeout,
                valid=sample_arguments(probe_spec.parameters),
            )
        )
    return found


def _tools_builder(
    templates: Sequence[_Specs], behaviours: Mapping[str, _Behaviour]
) -> Callable[[Probe], list[ToolSpec]]:
    def build(probe: Probe) -> list[ToolSpec]:
        return [
            template.for_probe(behaviours.get(template.name, _Behaviour()), probe)
            for template in templates
        ]

    return build


def probe_scenarios(
    facts: Sequence[ToolFacts], budget: Budget, secrets: Sequence[str] = ()
) -> tuple[list[Scenario], dict[str, ProbeInfo]]:
    """The probe scenarios (``valid_call``, the invalid-argument kinds, ``tool_error``,
    ``secret_redacted`` per tool; ``unknown_tool``; ``repeated_calls``,
    ``tool_call_budget`` and ``slow_call`` on a read tool) and, per scenario name, its
    tool and kind (:class:`~agent_contract.conformance.agent.ProbeInfo`). ``secrets``: the values a read tool's result
    carries in the ``secret_redacted`` probe (the team's contract's, else the suite's
    planted secret)."""
    scenarios: list[Scenario] = []
    info: dict[str, ProbeInfo] = {}
    templates = [_Specs(fact) for fact in facts]
    plain = _tools_builder(templates, {})

    def add(scenario: Scenario, tool: str, kind: str) -> None:
        scenarios.append(scenario)
        info[scenario.name] = ProbeInfo(tool=tool, kind=kind)

    for fact in facts:
        name = fact.name
        if fact.valid is None:
            continue
        one = _one_call_of(name, budget)
        if fact.effect == "write":
            add(
                one(
                    f"valid_call[{name}]",
                    fact.valid,
                    boundary="write_approval",
                    description=f"a valid call of the write tool {name} waits for approval",
                    tools=plain,
                    stop_reason="pending_approval",
                    trajectory=(),
                    must_not_run=(name,),
                ),
                name,
                "valid_call",
            )
        else:
            add(
                one(
                    f"valid_call[{name}]",
                    fact.valid,
                    boundary="call_id_binding",
                    description=f"a valid call of {name} runs once, bound to its id",
                    tools=plain,
                    results=(("success", None),),
                    extra=(check_ran(name, 1, "call_id_binding"),),
                ),
                name,
                "valid_call",
            )
        for kind, arguments in invalid_arguments(fact.parameters, fact.valid).items():
            add(
                one(
                    f"{kind}[{name}]",
                    arguments,
                    boundary="argument_validation",
                    description=f"{name} with arguments the schema refuses ({kind})",
                    tools=plain,
                    results=(("error", "invalid_arguments"),),
                    must_not_run=(name,),
                ),
                name,
                kind,
            )
        if fact.effect == "read":
            leak = "status ok; credentials: " + ", ".join(secrets or (PLANTED_SECRET,))
            add(
                one(
                    f"secret_redacted[{name}]",
                    fact.valid,
                    boundary="trace_redaction",
                    description=f"{name} returns a secret: redacted wherever the run shows it",
                    tools=_tools_builder(templates, {name: _Behaviour(returns=leak)}),
                    results=(("success", None),),
                    extra=(check_not_emitted(tuple(secrets), "trace_redaction"),),
                ),
                name,
                "secret_redacted",
            )
            add(
                one(
                    f"tool_error[{name}]",
                    fact.valid,
                    boundary="tool_errors",
                    description=f"{name} raises: classified, its text never shown",
                    tools=_tools_builder(templates, {name: _Behaviour(raises=True)}),
                    results=(("error", "tool_error"),),
                    extra=(check_hidden_text, _text_hidden),
                ),
                name,
                "tool_error",
            )
    unknown = _one_call_of("no_such_tool", budget)
    add(
        unknown(
            "unknown_tool",
            {},
            boundary="allowlist",
            description="a call to a tool nobody registered",
            tools=plain,
            results=(("error", "unknown_tool"),),
        ),
        "",
        "unknown_tool",
    )
    reads = [f for f in facts if f.effect == "read" and f.valid is not None]
    if not reads:  # no tool result can carry the secret: a call's arguments do
        planted = secrets[0] if secrets else PLANTED_SECRET
        add(
            unknown(
                "secret_in_arguments",
                {"api_key": planted},
                boundary="trace_redaction",
                description="a call's arguments carry a secret: redacted wherever the run shows it",
                tools=plain,
                results=(("error", "unknown_tool"),),
                extra=(check_not_emitted((planted,), "trace_redaction"),),
            ),
            "",
            "secret_in_arguments",
        )
    if reads:
        first = reads[0]
        name, valid = first.name, first.valid or {}
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
                _one_call_of(slow.name, budget)(
                    f"slow_call[{slow.name}]",
                    slow.valid or {},
                    boundary="timeouts",
                    description=f"{slow.name} outlasts its timeout ({slow.timeout:g} s)",
                    tools=_tools_builder(
                        templates, {slow.name: _Behaviour(wait_seconds=slow.timeout + 1.0)}
                    ),
                    results=(("error", "timeout"),),
                    extra=(check_timeout,),
                    requires=("timeouts",),
                ),
                slow.name,
                "slow_call",
            )
    return scenarios, info


def _one_call_of(tool: str, budget: Budget) -> Callable[..., Scenario]:
    """A builder of probes that make one call of ``tool`` (id ``probe_1``), then answer
    ``done``: ``build(name, arguments, **fields)`` gives the Scenario, its stop
    ``answered`` and trajectory ``(tool,)`` unless ``fields`` say otherwise."""

    def build(name: str, arguments: Any, **fields: Any) -> Scenario:
        fields.setdefault("stop_reason", "answered")
        fields.setdefault("trajectory", (tool,))
        script = (tool_call(tool, arguments, id="probe_1"), "done")
        return Scenario(name=name, script=script, budget=budget, **fields)

    return build


def _text_hidden(obs: Observation, model: FakeModel, probe: Probe) -> list[Problem]:
    if PLANTED_PASSWORD in obs.emitted:
        return [Problem(boundary="tool_errors", message="the tool's exception text was shown")]
    return []


class OfferedTools:
    """A model that answers every call ``done`` and keeps the names of the tools its
    first call offered (the tool definitions the model is given): a first run of an
    agent with it reads which tools the agent's model is offered."""

    def __init__(self) -> None:
        self.names: list[str] | None = None
        """The offered tools' names; None until the first call."""

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        max_output_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Completion:
        """Record the offered tools' names (first call only); answer ``done``."""
        if self.names is None:
            self.names = [_definition_name(d) for d in tools or ()]
        return Completion(text="done")


def _definition_name(definition: Mapping[str, Any]) -> str:
    function = definition.get("function")
    if isinstance(function, Mapping) and "name" in function:
        return str(function["name"])
    return str(definition.get("name", "?"))
