"""``agent-contract check --agent module:factory``: contract probes for a team's own agent.

A binding builds an :class:`AgentProbes` from the team's factory (the LangChain binding:
:mod:`agent_contract_langchain.agent_check`): the team's tools by name with their
declared effects, scenarios derived from the tools' JSON Schemas (one :class:`ProbeInfo`
each: which tool, which kind of probe), the harness of each column (the agent as built,
and, when it has no contract of its own, the agent with the contract added) and
findings (a tool whose effect nobody declared, a tool the contract does not register,
...), and the tools it did not probe, each with the reason. A factory that builds several
agents (a deepagents agent and its sub-agents, a supervisor's workers) gives one
:class:`AgentProbes` per agent: the outermost one (the agent the factory returns), whose
:attr:`AgentProbes.agents` are the others, each probed on its own.
:func:`run_agent_check` runs them with :func:`~agent_contract.conformance.check.
run_check`, and :func:`render_agent_text` prints, per agent, the boundary table, then a
table per column with one row per tool and one column per probe kind, then the tools
not probed and the findings.

Bindings register the builder under the entry-point group :data:`AGENT_GROUP`
(``agent_contract.agents``): ``name = "module:function"``, ``function(spec, mode=...)
-> AgentProbes``. The core names no framework.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from ..errors import ConfigurationError, DependencyMissingError
from ..harnesses import Harness
from ..trace import TraceSink
from .base import Scenario
from .check import CheckReport, Finished, Progress, run_check
from .fixtures import hide_planted
from .report import render_text

__all__ = [
    "AGENT_GROUP",
    "PROBE_KINDS",
    "AgentCheck",
    "AgentProbes",
    "ProbeInfo",
    "agent_builder",
    "render_agent_text",
    "run_agent_check",
]

AGENT_GROUP: Final = "agent_contract.agents"
"""Entry-point group of agent-probe builders, by framework name."""

PROBE_KINDS: Final = (
    "valid_call",
    "missing_required",
    "wrong_type",
    "extra_field",
    "out_of_range",
    "tool_error",
    "secret_redacted",
    "repeated_calls",
    "tool_call_budget",
    "slow_call",
)
"""The per-tool probe kinds, in column order (``unknown_tool`` and ``secret_in_arguments``
concern no tool)."""


@dataclass(frozen=True, kw_only=True)
class ProbeInfo:
    """Which tool a probe scenario exercises ("" for none) and its kind."""

    tool: str
    kind: str


@dataclass(frozen=True, kw_only=True)
class AgentProbes:
    """What a binding derived from a team's agent (see the module doc)."""

    agent: str
    """The factory, as named (``module:factory``)."""
    tools: tuple[str, ...]
    """The team's tools, by name, in their order."""
    effects: Mapping[str, str]
    """Per tool: ``read``, ``write`` or ``undeclared``."""
    scenarios: tuple[Scenario, ...]
    probes: Mapping[str, ProbeInfo]
    """Per scenario name."""
    harnesses: Mapping[str, Harness]
    """The columns, by name, in order; each a checked harness."""
    findings: tuple[str, ...] = ()
    """What the report lists besides the cells (an undeclared effect, a tool the
    contract does not register, ...)."""
    under_contract: tuple[str, ...] = ()
    """The columns that run the agent under a contract (its own, or one the probes
    added); the others run it as built without one."""
    undeclared: tuple[str, ...] = ()
    """Tools whose effect nobody declared."""
    name: str = ""
    """Which of the factory's agents these probes are of ("" for the factory's only
    agent; its key, e.g. the ``name`` it was built with, for one of several)."""
    not_probed: Mapping[str, str] = field(default_factory=dict)
    """Tools the agent has (its own, a middleware's, a foreign supervisor's) that no
    probe exercises, by name, each with the reason (withdrawn from the model by an
    allowlist, unable to run in the mode checked, provider-side, ...)."""
    unchecked: tuple[str, ...] = ()
    """Of :attr:`not_probed`, the tools the model is offered that cannot run in the mode
    checked (an async-only tool under ``invoke``): not checked, so the check fails
    (exit 5), as a not-checked cell does."""
    agents: tuple[AgentProbes, ...] = ()
    """The other agents the factory built (sub-agents, workers), each probed on its own."""


@dataclass(frozen=True, kw_only=True)
class AgentCheck:
    """The probes and the report they gave."""

    probes: AgentProbes
    report: CheckReport
    agents: tuple[AgentCheck, ...] = ()
    """The checks of :attr:`AgentProbes.agents`, in order."""

    def every_agent(self) -> list[AgentCheck]:
        """This check and the checks of every other agent its factory built, depth first
        (the outermost agent first)."""
        return [self, *(a for child in self.agents for a in child.every_agent())]

    @property
    def exit_code(self) -> int:
        """5 when a boundary broke (or was not checked) on a column of any agent, or a
        tool the model is offered could not be checked in the mode (see
        :attr:`AgentProbes.unchecked`); else the reports' code (0)."""
        codes = [self.report.exit_code, *(a.exit_code for a in self.agents)]
        if self.probes.unchecked:
            codes.append(5)
        return max(codes)

    def broken_on(self, harness: str) -> list[str]:
        """``"boundary: scenario: what was observed"`` for each broken cell's evidence on
        column ``harness``."""
        return [
            f"{c.boundary}: {e.scenario}: {e.observed}"
            for c in self.report.cells
            if c.harness == harness and c.status in ("broken", "crashed")
            for e in c.evidence
        ]

    def tool_table(self, harness: str) -> dict[str, dict[str, str]]:
        """Per tool, per probe kind: ``holds``, ``BROKEN`` (with the first problem) or
        absent (not probed), on column ``harness``."""
        table: dict[str, dict[str, str]] = {name: {} for name in self.probes.tools}
        run = next(h for h in self.report.harnesses if h.name == harness)
        for outcome in run.outcomes:
            info = self.probes.probes.get(outcome.scenario.name)
            if info is None or info.tool not in table:
                continue
            if outcome.problems:
                own = [p for p in outcome.problems if p.boundary == outcome.scenario.boundary]
                first = (own or list(outcome.problems))[0]
                verdict = f"BROKEN: {hide_planted(first.message)}"
            else:
                verdict = "holds"
            table[info.tool][info.kind] = verdict
        for name in run.skipped:
            info = self.probes.probes.get(name)
            if info is not None and info.tool in table:
                table[info.tool][info.kind] = "not checked"
        return table


def agent_builder(framework: str | None = None) -> tuple[str, Callable[..., AgentProbes]]:
    """``(name, builder)`` of the registered agent-probe builder for ``framework`` (the
    first registered one when None).

    Raises:
        DependencyMissingError: no binding registers one.
        ConfigurationError: no builder of that name.
    """
    entries = list(importlib.metadata.entry_points(group=AGENT_GROUP))
    if not entries:
        raise DependencyMissingError(
            "a binding", "check --agent needs a binding that probes agents (none installed)"
        )
    entries.sort(key=lambda ep: ep.name)
    chosen = (
        entries[0]
        if framework is None
        else next((ep for ep in entries if ep.name == framework), None)
    )
    if chosen is None:
        names = ", ".join(ep.name for ep in entries)
        raise ConfigurationError(f"no agent probes for {framework!r}; registered: {names}")
    return chosen.name, chosen.load()


def run_agent_check(
    probes: AgentProbes,
    *,
    progress: Progress | None = None,
    finished: Finished | None = None,
    trace_sink: TraceSink | None = None,
) -> AgentCheck:
    """Run every probe on every column of ``probes``, then of each of its
    :attr:`~AgentProbes.agents`; ``trace_sink`` receives every event of every probe's
    runs (``check --agent ... --otel``; None: no sink)."""
    report = run_check(
        list(probes.harnesses),
        scenarios=probes.scenarios,
        progress=progress,
        finished=finished,
        harnesses=probes.harnesses,
        reference=None,  # the probes' expectations are their own (no offline twin)
        trace_sink=trace_sink,
    )
    children = tuple(
        run_agent_check(child, progress=progress, finished=finished, trace_sink=trace_sink)
        for child in probes.agents
    )
    return AgentCheck(probes=probes, report=report, agents=children)


def _short(text: str, width: int = 110) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 3] + "..."


def render_agent_text(check: AgentCheck) -> str:
    """The boundary table (as ``check`` prints it), then per column a tool x probe table,
    then each broken probe's first problem, then the tools not probed and the findings;
    then the same for each other agent the factory built. Ends with a newline."""
    text = _render_one(check)
    for child in check.agents:
        text += "\n" + _render_one(child)
    if check.agents:
        verdict = (
            "holds" if check.exit_code == 0 else f"broken or not checked (exit {check.exit_code})"
        )
        names = ", ".join(a.probes.name or a.probes.agent for a in (check, *check.agents))
        text += f"\nresult over every agent ({names}): {verdict}\n"
    return text


def _render_one(check: AgentCheck) -> str:
    probes = check.probes
    lines = [f"agent: {probes.agent}"]
    if probes.name:
        lines[0] += f" / {probes.name}"
    effects = ", ".join(f"{n} ({probes.effects.get(n, '?')})" for n in probes.tools)
    lines.append(f"its tools: {effects or 'none'}")
    lines.append("")
    lines.append(render_text(check.report).rstrip("\n"))
    kinds = [k for k in PROBE_KINDS if any(i.kind == k for i in probes.probes.values())]
    short = {"holds": "holds", "not checked": "n/c"}
    if not probes.tools:
        lines += [
            "",
            "per tool: the agent offers no tools (only calls it does not offer are probed)",
        ]
    for run in check.report.harnesses if probes.tools else ():
        table = check.tool_table(run.name)
        header = ["tool", *kinds]
        rows = [header]
        for tool in probes.tools:
            cells = table.get(tool, {})
            rows.append(
                [
                    tool,
                    *(short.get(cells[k], "BROKEN") if k in cells else "-" for k in kinds),
                ]
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines += ["", f"per tool on {run.name} (- = not probed):"]
        for index, row in enumerate(rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if index == 0:
                lines.append("  ".join("-" * w for w in widths))
        broken = [
            (tool, kind, verdict)
            for tool in probes.tools
            for kind, verdict in table.get(tool, {}).items()
            if verdict.startswith("BROKEN")
        ]
        for tool, kind, verdict in broken:
            lines.append(f"  {kind}[{tool}]: {_short(verdict[len('BROKEN: ') :])}")
    if probes.not_probed:
        lines += ["", "not probed:"]
        for tool, reason in probes.not_probed.items():
            mark = " [NOT CHECKED]" if tool in probes.unchecked else ""
            lines.append(f"  - {tool}{mark}: {reason}")
        if probes.unchecked:
            lines.append(
                f"  so not checked: {', '.join(probes.unchecked)}; the check fails (exit 5) "
                "as for a not-checked cell"
            )
    if probes.findings:
        lines += ["", "findings:"]
        lines += [f"  - {f}" for f in probes.findings]
    return "\n".join(lines) + "\n"
