"""``docs/MIGRATION.md``: the checklist for moving a tool-calling loop to LangChain's
``create_agent``, generated from measured ``check`` results.

Per boundary (:data:`agent_contract.conformance.BOUNDARIES`): what a plain
``create_agent`` does (measured on the control harness, :data:`CONTROL_HARNESS`), the
configuration of this package that keeps it (:data:`KEEP_IT`, LangChain's terms, keyed by
boundary id), and whether it holds with it (measured on :data:`CONTRACT_HARNESS`).

Regenerate the document with::

    uv run python -m agent_contract_langchain.migration > docs/MIGRATION.md
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from agent_contract.conformance import CheckReport, boundary, boundary_label, run_check
from agent_contract.exitcodes import EXIT_OK, EXIT_USAGE

from .plugin import LANGCHAIN, PLAIN_CREATE_AGENT, STACK

__all__ = [
    "CONTRACT_HARNESS",
    "CONTROL_HARNESS",
    "KEEP_IT",
    "MIGRATION_COMMAND",
    "keep_it",
    "main",
    "render_migration",
]

CONTROL_HARNESS: Final = PLAIN_CREATE_AGENT.name
"""The negative control: a bare ``create_agent``, expected to break."""
CONTRACT_HARNESS: Final = LANGCHAIN.name
"""The harness the checklist shows as the configuration that keeps each boundary."""

KEEP_IT: Final[dict[str, str]] = {
    "response_shape": (
        "Put `ContractMiddleware(contract)` first in `create_agent(middleware=[...])` and "
        "its gate `.inner()` last (`middleware=contract_mw.around(*yours)`): its "
        "`wrap_model_call` judges every reply (a final text or tool calls, never both or "
        "neither; ids present and unique; arguments a JSON object) and stops the run with "
        "`invalid_response` instead of ending it as an answer."
    ),
    "allowlist": (
        "`Contract(tools, allowlist=[...])`: only registered, allowlisted tools are offered "
        "to the model and run; a call to any other tool gets `unknown_tool` or `not_allowed`. "
        "Hiding tools in `wrap_model_call` alone is not an allowlist."
    ),
    "argument_validation": (
        "Declare each tool as a `ToolSpec(parameters=<JSON Schema>)` in the `Contract` and "
        "give `create_agent` `to_langchain_tools(contract.registry)`: arguments are validated "
        "(Draft 2020-12, closed objects) before the handler runs, and failures are "
        "`invalid_arguments` naming the JSON path."
    ),
    "call_id_binding": (
        "Holds by itself. Keep it: add no `after_model` hook that injects `ToolMessage`s "
        "(they land before ToolNode's); `ContractMiddleware` answers refused calls in place."
    ),
    "tool_errors": (
        "Run tools through `ContractMiddleware` (`wrap_tool_call` hands them to the "
        "contract's executor): exceptions become `tool_error`, or the kind of a raised "
        "`UnauthorizedError` / `NotFoundError` / `TransientError`; exception text stays out "
        "of the transcript unless `Contract(expose_exception_text=True)`."
    ),
    "model_step_budget": (
        "`Budget(max_model_steps=N)` in the `Contract`. Not `recursion_limit` (it counts "
        "graph steps and changed between releases) and not `ModelCallLimitMiddleware` "
        "(`exit_behavior='end'` ends with an ordinary AIMessage that looks like an answer)."
    ),
    "tool_call_budget": (
        "`Budget(max_tool_calls=N)`: a batch that would cross it is refused whole, before any "
        "of it runs. `ToolCallLimitMiddleware` counts differently and resets on every "
        "`invoke`, including every resume."
    ),
    "repeated_calls": (
        "`Budget(max_identical_calls=N)`: the same tool with the same canonical arguments "
        "(key order ignored) beyond N is refused with `repeated_call`."
    ),
    "deadline": (
        "`Budget(deadline_seconds=S)` in the `Contract`: a call in flight gets at most the "
        "time left (then `timeout`, outcome unknown) and the run stops with `deadline` "
        "before the next model call. Not a timeout around `invoke` (it leaves the tool "
        "thread running and the run unrecorded) and not `max_execution_time` (gone with "
        "`AgentExecutor`)."
    ),
    "timeouts": (
        "`ToolSpec(timeout_seconds=...)`: each call runs on the contract's executor, and a "
        "call past its limit reports `timeout` with `outcome: unknown` and "
        "`side_effects_possible: true` while the run goes on."
    ),
    "result_size": (
        "`ToolSpec(max_result_chars=..., on_oversize='truncate' | 'error')`: oversized "
        "results are cut with an explicit marker, or refused as `result_too_large`."
    ),
    "serialization": (
        "The contract's one serializer (applied by `ContractMiddleware` to the raw value "
        "`to_langchain_tools` carries): JSON with non-ASCII kept; a value that is not JSON "
        "is a `tool_error`, never its `str()`."
    ),
    "history": (
        "Holds by itself. Keep it: pass earlier turns as messages, and put any "
        "summarizing or trimming middleware after `ContractMiddleware`."
    ),
    "trace_redaction": (
        "`Contract(..., secrets=[...])` and a `RunState` per run (`run_graph` / `run_agent` "
        "return a `RunResult` with its append-only, redacted trace); secrets in tool results "
        "are redacted before the model sees them."
    ),
    "write_approval": (
        "`ToolSpec(effect='write', preview=..., verify=...)`, a LangGraph checkpointer, and "
        "`resume_agent(...)` with the human's `Approval`s: writes wait for a decision bound "
        "to the exact call and apply once."
    ),
}
"""Per boundary: the configuration of this package that keeps it on ``create_agent``."""


def keep_it(boundary_id: str) -> str:
    """What keeps ``boundary_id`` on ``create_agent``: :data:`KEEP_IT`'s advice, else the
    boundary's framework-neutral advice, else a pointer to its rule."""
    if boundary_id in KEEP_IT:
        return KEEP_IT[boundary_id]
    try:
        return boundary(boundary_id).keep_it
    except KeyError:
        return "see the boundary rule."


MIGRATION_COMMAND: Final = "uv run python -m agent_contract_langchain.migration > docs/MIGRATION.md"
"""The command that regenerates ``docs/MIGRATION.md``."""


def _rule(boundary_id: str) -> str:
    try:
        return boundary(boundary_id).rule
    except KeyError:
        return ""


def render_migration(report: CheckReport) -> str:
    """``docs/MIGRATION.md``: per boundary, what a plain ``create_agent`` does (measured on
    :data:`CONTROL_HARNESS`), the configuration that keeps it (:data:`KEEP_IT`), and
    whether it holds with that configuration (measured on :data:`CONTRACT_HARNESS`).

    Raises:
        KeyError: ``report`` lacks the control or the contract harness.
    """
    control = {c.boundary: c for c in report.cells if c.harness == CONTROL_HARNESS}
    kept = {c.boundary: c for c in report.cells if c.harness == CONTRACT_HARNESS}
    if not control or not kept:
        raise KeyError(f"the report needs harnesses {CONTROL_HARNESS!r} and {CONTRACT_HARNESS!r}")
    versions = report.versions
    stack = ", ".join(f"{k} {versions.get(k)}" for k in STACK)
    broken_by_default = [b for b in report.rows if control[b].status in ("broken", "crashed")]
    lines = [
        "# Migrating a tool-calling loop to `create_agent`: the checklist",
        "",
        "<!-- Generated by agent_contract_langchain.migration from measured check",
        f"     results; do not edit by hand. Regenerate: {MIGRATION_COMMAND} -->",
        "",
        "For teams moving a hand-rolled loop or `create_react_agent` to LangChain's "
        "`create_agent`. Each section is one boundary of the contract: what a plain "
        "`create_agent` does with it by default, the configuration in this package that keeps "
        "it, and whether it then holds. Both are measured, not claimed: the plain column is "
        f"`agent-contract check --harness {CONTROL_HARNESS}` (stock `StructuredTool`s over the "
        "same handlers, the JSON Schema as a dict `args_schema`, no middleware), the kept "
        f"column is `agent-contract check --harness {CONTRACT_HARNESS}` (`create_agent` with "
        f"`ContractMiddleware`), on {stack} (as locked in `uv.lock`).",
        "",
        "Reading the evidence: each line is a scenario of `agent_contract.conformance` and "
        "the first expectation it broke. `crashed:<Exception>` means `invoke` raised; "
        "`crashed:ScriptExhaustedError` means the agent asked the scripted model for more "
        "turns than the script holds: it carried on where the contract stops the run.",
        "",
        "Coming from `AgentExecutor` or `create_react_agent`: their parameters "
        "(`max_iterations`, `handle_parsing_errors`, `prompt`, `post_model_hook`, ...) are "
        "mapped to `create_agent` and the contract in [PARAMETER_MAP.md](PARAMETER_MAP.md), "
        "each row measured on both sides.",
        "",
        "## The steps",
        "",
        "- [ ] Declare every tool as a `ToolSpec` (name, description, JSON Schema, handler, "
        "`timeout_seconds`, `max_result_chars`; `effect='write'` with `preview`/`verify` for "
        "writes) and put them in one `Contract(tools, budget=Budget(...), allowlist=[...], "
        "secrets=[...])`.",
        "- [ ] Build the agent with `create_agent(ContractChatModel(model=...) or your chat "
        "model, tools=to_langchain_tools(contract.registry), middleware=ContractMiddleware("
        "contract).around(*yours))`, i.e. the contract first and its gate last (or "
        "`agent_contract_langchain.build_agent`).",
        "- [ ] Run it with `run_graph(graph, contract.start(), messages)` (or `run_agent`), "
        "which passes the run in `config=contract_config(state)` (your `context=` stays "
        "yours), sets the recursion limit from the budget, and returns a `RunResult` with the "
        "stop reason and the redacted trace; treat only `answered` as an answer.",
        "- [ ] Run the suite against your own configuration: subclass "
        "`agent_contract_langchain.testing.CreateAgentContractSuite` (see the README), or "
        "`agent-contract check --harness yourmodule:factory`.",
        f"- [ ] The boundaries a plain `create_agent` breaks here ({len(broken_by_default)} of "
        f"{len(report.rows)}) each have a section below; tick each once its suite test passes.",
        "",
        "## Summary (measured)",
        "",
        "| Boundary | Plain `create_agent` | With `ContractMiddleware` |",
        "| --- | --- | --- |",
    ]
    for boundary_id in report.rows:
        lines.append(
            f"| {boundary_label(boundary_id)} | {control[boundary_id].status.replace('_', ' ')} | "
            f"{kept[boundary_id].status.replace('_', ' ')} |"
        )
    for boundary_id in report.rows:
        plain, ours = control[boundary_id], kept[boundary_id]
        lines += [
            "",
            f"## {boundary_label(boundary_id)[0].upper()}{boundary_label(boundary_id)[1:]}",
        ]
        rule = _rule(boundary_id)
        if rule:
            lines += ["", f"The rule: {rule}."]
        lines += ["", f"- [ ] **Keep it:** {keep_it(boundary_id)}"]
        if plain.status in ("broken", "crashed"):
            lines.append(f"- **Plain `create_agent` (measured): {plain.status}.**")
            seen: set[str] = set()
            for item in plain.evidence:
                if item.scenario in seen:
                    continue
                seen.add(item.scenario)
                lines.append(f"  - `{item.scenario}`: {item.observed}")
        else:
            lines.append(f"- Plain `create_agent` (measured): {plain.status.replace('_', ' ')}.")
        scenarios = ", ".join(f"`{e.scenario}`" for e in ours.evidence)
        if ours.status == "holds":
            lines.append(f"- With `ContractMiddleware` (measured): holds ({scenarios}).")
        else:
            lines.append(
                f"- With `ContractMiddleware` (measured): {ours.status.replace('_', ' ')}."
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agent_contract_langchain.migration``: measure and print
    ``docs/MIGRATION.md``.

    Returns 0; 2 for any argument.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        sys.stderr.write("usage: python -m agent_contract_langchain.migration\n")
        return EXIT_USAGE
    report = run_check([CONTRACT_HARNESS], control=[CONTROL_HARNESS])
    sys.stdout.write(render_migration(report))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
