"""``docs/MIGRATION.md``: the checklist for moving a tool-calling loop to LangChain's
``create_agent``, generated from measured ``check`` results.

Per boundary (:data:`agent_contract.conformance.BOUNDARIES`): what a plain
``create_agent`` does (measured on the control harness, :data:`CONTROL_HARNESS`), the
configuration of this package that keeps it (:data:`KEEP_IT`, LangChain's terms, keyed by
boundary id), and whether it holds with it (measured on :data:`CONTRACT_HARNESS`).

Regenerate the document with::

    uv run python -m devtools.langchain_migration > docs/MIGRATION.md
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from agent_contract.conformance import CheckReport, boundary_label, run_check
from agent_contract.conformance.check import Cell, Runner
from agent_contract_langchain.plugin import LANGCHAIN, PLAIN_CREATE_AGENT, STACK
from devtools import checklist

__all__ = [
    "CONTRACT_HARNESS",
    "CONTROL_HARNESS",
    "GENERATOR",
    "KEEP_IT",
    "MIGRATION_COMMAND",
    "STOCK_GIVES",
    "keep_it",
    "main",
    "migration_report",
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
    "finish_reasons": (
        "The same `ContractMiddleware(contract)` and its gate: each reply's finish reason "
        "(`finish_reason` / Anthropic's `stop_reason` in `response_metadata`, a refusal in "
        "`additional_kwargs`) is contract input: a reply cut by the length limit runs none "
        "of its tool calls and stops `truncated_response`, a filtered one `content_filtered`, "
        "a refusal `refused` with its redacted text (docs/FINISH_REASONS.md)."
    ),
    "allowlist": (
        "`Contract(tools, allowlist=[...])`: only registered, allowlisted tools are offered "
        "to the model and run; a call to any other tool gets `unknown_tool` or `not_allowed`. "
        "Hiding tools in `wrap_model_call` alone is not an allowlist."
    ),
    "argument_validation": (
        "Adopt each tool with `from_langchain_tool(tool, effect=...)` (its model-visible "
        "schema) or declare a `ToolSpec(parameters=<JSON Schema>)`, in the `Contract`: "
        "arguments are validated (Draft 2020-12, closed objects: an extra field is refused, "
        "not dropped) before the tool runs, and failures are `invalid_arguments` naming the "
        "JSON path."
    ),
    "argument_size": (
        "The same `Contract` in `ContractMiddleware(contract)`, its `Budget` the run's: "
        "`max_argument_chars` (50,000 characters by default; a nested value counts its JSON "
        "text) refuses a call with a larger argument as `invalid_arguments`, naming the "
        "limit and the argument, before the tool runs; the trace keeps a cut, marked copy. "
        "Do not build the Contract from a config that raises or drops the limit."
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
    "tool_context": (
        "`run_graph(graph, contract.start(caller=..., context=...), messages)` (or "
        "`run_agent(..., caller=..., context=...)`): a `needs_context=True` tool gets the "
        "caller, the values and its own `tool_call_id` in its `ToolContext`, a write's "
        "preview and approval act for the caller, a tool without it gets no context; "
        "name secrets (`secrets={name: value}` on the Contract or the run) and declare "
        "them per tool (`ToolSpec(secrets=(name,))`, `context.secret(name)`): other tools "
        "and the approval step see only a handle."
    ),
    "checkpoint_integrity": (
        "The app's `RunStore` for the paused run (sealed, encrypted, versioned rows) and "
        "`sqlite_checkpointer(path)` for the graph (`SealedSerializer`, the paused "
        "checkpoint's seal in the stored run): a row the store did not seal, an edited "
        "one, an older copy put back or another run's row is refused with "
        "`CheckpointError` before anything runs, and the approval is kept."
    ),
    "sub_agents": (
        "Give every child agent (an agent wrapped as a tool, a deepagents sub-agent) "
        "`ContractMiddleware(contract.child(name, tools=..., allowlist=...)).around()`, "
        "the child contract built once from the run's: the child's calls spend the run's "
        "budget and its stop ends the run, its own allowlist holds on its calls, and each "
        "delegation is a fresh child scope (docs/MULTI_AGENT.md)."
    ),
    "streamed_arguments": (
        "Stream with the provider's own client (`ChatOpenAI`, `ChatAnthropic`) under "
        "`ContractMiddleware`: the pieces of each call are joined by the call's index and "
        "the joined text judged as it is, so cut JSON (finish reason `length`) and "
        "malformed text never run; never close or repair argument text in a client "
        "subclass (`agent-contract check --wire` runs the scenarios on the streamed columns)."
    ),
}
"""Per boundary: the configuration of this package that keeps it on ``create_agent``."""


STOCK_GIVES: Final[dict[str, str]] = {
    "response_shape": (
        "Nothing judges a reply's shape: `create_agent` ends the run on any AIMessage "
        "without tool calls (an empty one too), and a malformed call is answered or "
        "dropped by the tool node."
    ),
    "finish_reasons": (
        "Nothing reads the finish reason: a reply cut by the length limit ends the run as "
        "an answer with the partial text, and its tool calls (their arguments repaired by "
        "the stream parser) run; a refusal ends the run as an ordinary answer."
    ),
    "allowlist": (
        "The tool node runs any tool given to `create_agent`; a call to another name gets "
        "an error message naming the valid tools. A middleware that selects tools narrows "
        "what is offered, not what runs."
    ),
    "argument_validation": (
        "`@tool` validates typed arguments with pydantic: a missing field or a wrong type "
        "goes back to the model as an error message (unclassified text) and the tool does "
        "not run; an extra field is dropped and the tool runs. A dict `args_schema` is not "
        "validated at all."
    ),
    "argument_size": (
        "Nothing limits one argument's size: a 60,000-character argument, flat or nested in "
        "an object's list, reaches the tool and runs."
    ),
    "call_id_binding": "The tool node binds each tool message to its call id.",
    "tool_errors": (
        "Without middleware the tool node re-raises a tool's exception and `invoke` "
        "crashes; `ToolRetryMiddleware` retries, then answers with the exception's type "
        "and text (`on_failure='continue'`), unclassified."
    ),
    "model_step_budget": (
        "`ModelCallLimitMiddleware(run_limit=N, exit_behavior='end')` stops the loop, with "
        "an ordinary AIMessage ('Model call limits exceeded ...') that reads as an answer; "
        "`recursion_limit` raises `GraphRecursionError`."
    ),
    "tool_call_budget": (
        "`ToolCallLimitMiddleware(run_limit=N, exit_behavior='continue')` refuses the calls "
        "past N one at a time and lets the run go on; it counts per invocation."
    ),
    "repeated_calls": "Nothing refuses an identical call: the limits count calls only.",
    "deadline": (
        "No run deadline: `AgentExecutor`'s `max_execution_time` is gone, and a timeout "
        "around `invoke` leaves the tool thread running and the run unrecorded."
    ),
    "timeouts": (
        "No per-tool timeout: a slow tool holds the run; `ToolRetryMiddleware` retries "
        "failures, not slowness."
    ),
    "result_size": "No per-result cap: a tool's whole result goes to the model.",
    "serialization": (
        "The tool node turns any return value into text (`str()` of a set), and a lone "
        "surrogate goes through unescaped."
    ),
    "history": "The messages are sent as they are, broken pairs included.",
    "trace_redaction": (
        "No trace of the run. `PIIMiddleware` with a detector for API-key shapes redacts "
        "matches in input, output and tool results; a secret of another shape, or a value "
        "the run was given, is unknown to it."
    ),
    "write_approval": (
        "A write runs at once. `HumanInTheLoopMiddleware(interrupt_on=...)` pauses a call "
        "for review, with no preview, no decision bound to the exact arguments, no "
        "idempotency key and no read-back (see MIDDLEWARE.md)."
    ),
    "tool_context": (
        "A tool learns the caller only from what the team injects (`ToolRuntime`, "
        "`InjectedToolCallId`, its own `context=`); a handler wired by hand gets no "
        "caller, no call id and no values, and there is no approval step to act for one."
    ),
    "checkpoint_integrity": (
        "`SqliteSaver` stores what the graph hands it and reads back whatever a row holds: "
        "no seal, so a forged, edited, rolled-back or grafted checkpoint is resumed from "
        "(its default serializer once ran the code a stored row named)."
    ),
    "sub_agents": (
        "A child agent invoked inside a tool is a graph of its own: its tool calls count "
        "against no limit of the parent's (a stock call limit counts per graph), its "
        "tools run without any allowlist, and nothing ties its calls to the parent's."
    ),
    "streamed_arguments": (
        "LangChain joins streamed tool-call pieces by index and parses the joined text "
        "leniently (`parse_partial_json` closes cut JSON), so a call the output limit cut "
        "reaches the tools as a valid-looking call unless something reads the finish reason."
    ),
}
"""Per boundary: what stock LangChain gives a team (``@tool`` tools, the stock middleware
of :data:`~devtools.langchain_controls.STOCK_MIDDLEWARE`); the measured
columns show whether it holds."""


def keep_it(boundary_id: str) -> str:
    """What keeps ``boundary_id`` on ``create_agent``: :data:`KEEP_IT`'s advice, else the
    boundary's framework-neutral advice, else a pointer to its rule."""
    return checklist.keep_it(KEEP_IT, boundary_id)


GENERATOR: Final = "devtools.langchain_migration"
"""This module, run as ``python -m`` (its ``__name__`` is then ``__main__``)."""
MIGRATION_COMMAND: Final = f"uv run python -m {GENERATOR} > docs/MIGRATION.md"
"""The command that regenerates ``docs/MIGRATION.md``."""


def migration_report(runner: Runner | None = None) -> CheckReport:
    """Measure the document's four columns: :data:`CONTRACT_HARNESS` (checked) and the
    controls :data:`CONTROL_HARNESS`, ``tool-create-agent`` and ``stock-create-agent``
    (:mod:`~devtools.langchain_controls`). ``runner`` as in ``run_check``."""
    from devtools.langchain_controls import (
        STOCK_CONTROL,
        TOOL_CONTROL,
        stock_agent_harness,
        tool_agent_harness,
    )

    return run_check(
        [CONTRACT_HARNESS],
        control=[CONTROL_HARNESS, TOOL_CONTROL, STOCK_CONTROL],
        runner=runner,
        harnesses={TOOL_CONTROL: tool_agent_harness, STOCK_CONTROL: stock_agent_harness},
    )


def _status(cell: Cell) -> str:
    return checklist.status(cell.status)


def _column(cells: dict[str, Cell], label: str, boundary_id: str) -> list[str]:
    cell = cells[boundary_id]
    if cell.status not in checklist.FAILED:
        return [f"- {label} (measured): {_status(cell)}."]
    return [f"- **{label} (measured): {_status(cell)}.**", *checklist.first_failures(cell)]


def render_migration(report: CheckReport) -> str:
    """``docs/MIGRATION.md``: per boundary, what stock LangChain gives
    (:data:`STOCK_GIVES`), what a ``create_agent`` with ``@tool`` tools does, plain and
    with the stock middleware a team adds (measured: what is missing), the one change that
    keeps it (:data:`KEEP_IT`), and whether it holds with it (measured on
    :data:`CONTRACT_HARNESS`); the dict-schema control is in the summary.

    Raises:
        KeyError: ``report`` lacks one of the four harnesses.
    """
    from devtools.langchain_controls import STOCK_CONTROL, STOCK_MIDDLEWARE, TOOL_CONTROL

    names = (CONTROL_HARNESS, TOOL_CONTROL, STOCK_CONTROL, CONTRACT_HARNESS)
    columns = {n: {c.boundary: c for c in report.cells if c.harness == n} for n in names}
    missing = [n for n, cells in columns.items() if not cells]
    if missing:
        raise KeyError(f"the report needs harnesses {', '.join(map(repr, missing))}")
    plain, tool, stocked, kept = (columns[n] for n in names)
    versions = report.versions
    stack = ", ".join(f"{k} {versions.get(k)}" for k in STACK)
    broken_by_default = [b for b in report.rows if stocked[b].status in checklist.FAILED]
    middleware = "; ".join(f"`{m}`" for m in STOCK_MIDDLEWARE)
    lines = checklist.generated_header(
        "Migrating a tool-calling loop to `create_agent`: the checklist",
        GENERATOR,
        MIGRATION_COMMAND,
    )
    lines += [
        "For teams moving a hand-rolled loop or `create_react_agent` to LangChain's "
        "`create_agent`. Each section is one boundary of the contract: what stock LangChain "
        "gives, what a `create_agent` with `@tool` tools does with it (plain, and with the "
        "stock middleware a team adds: what is still missing), the one change in this "
        "package that keeps it, and whether it then holds. The columns are measured, not "
        f"claimed, on {stack} (as locked in `uv.lock`), with the contract suite's scenarios:",
        "",
        "- `@tool`: `create_agent` with each tool as LangChain's docs teach it (a function "
        "with typed parameters: pydantic validates them), no middleware;",
        f"- `@tool` + stock: the same with {middleware};",
        f"- dict schemas: `agent-contract check --harness {CONTROL_HARNESS}` (the JSON Schema "
        "as a dict `args_schema`, which LangChain does not validate), in the summary only;",
        f"- with `ContractMiddleware`: `agent-contract check --harness {CONTRACT_HARNESS}`.",
        "",
        "Reading the evidence: each line is a scenario of `agent_contract.conformance` and "
        "the first expectation it broke. `crashed:<Exception>` means `invoke` raised; "
        "`crashed:ScriptExhaustedError` means the agent asked the scripted model for more "
        "turns than the script holds: it carried on where the contract stops the run.",
        "",
        "Coming from `AgentExecutor` or `create_react_agent`: their parameters "
        "(`max_iterations`, `handle_parsing_errors`, `prompt`, `post_model_hook`, ...) are "
        "mapped to `create_agent` and the contract in [PARAMETER_MAP.md](PARAMETER_MAP.md), "
        "each row measured on both sides. To measure your own agent: "
        "[AGENT_CHECK.md](AGENT_CHECK.md).",
        "",
        "## The steps",
        "",
        "- [ ] Adopt every tool unchanged with `from_langchain_tool(tool, effect='read' | "
        "'write', timeout_seconds=...)` (a plain function: `ToolSpec.from_function(fn, "
        "effect=...)`; writes also take `preview` and `verify`), and put them in one "
        "`Contract(tools, budget=Budget(...), allowlist=[...], secrets=[...])`.",
        "- [ ] Keep your `create_agent` call and add the contract around your middleware: "
        "`middleware=ContractMiddleware(contract).around(*yours)`, i.e. the contract first "
        "and its gate last.",
        "- [ ] Run it with `run_graph(graph, contract.start(), messages)` (or `run_agent`), "
        "which passes the run in `config=contract_config(state)` (your `context=` stays "
        "yours), sets the recursion limit from the budget, and returns a `RunResult` with the "
        "stop reason and the redacted trace; treat only `answered` as an answer.",
        "- [ ] Probe your own agent: `agent-contract check --agent yourmodule:build_agent` "
        "(or `AgentContractSuite` in pytest), and run the suite on your wiring with "
        "`CreateAgentContractSuite` (see the README).",
        f"- [ ] The boundaries `@tool` + stock middleware breaks here ({len(broken_by_default)} "
        f"of {len(report.rows)}) each have a section below; tick each once its probe holds.",
        "",
        "## Summary (measured)",
        "",
    ]
    lines += checklist.table(
        ("Boundary", "Dict schemas", "`@tool`", "`@tool` + stock", "With `ContractMiddleware`"),
        [
            (boundary_label(b), *(_status(cells[b]) for cells in (plain, tool, stocked, kept)))
            for b in report.rows
        ],
    )
    for b in report.rows:
        lines += checklist.section_heading(b)
        lines += ["", f"- **What stock LangChain gives:** {STOCK_GIVES.get(b, 'nothing named.')}"]
        lines += _column(tool, "`@tool` tools", b)
        lines += _column(stocked, "`@tool` + stock middleware: what is missing", b)
        lines.append(f"- [ ] **The one change:** {keep_it(b)}")
        ours = kept[b]
        scenarios = ", ".join(f"`{e.scenario}`" for e in ours.evidence)
        if ours.status == "holds":
            lines.append(f"- With `ContractMiddleware` (measured): holds ({scenarios}).")
        else:
            lines.append(f"- With `ContractMiddleware` (measured): {_status(ours)}.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m devtools.langchain_migration``: measure and print
    ``docs/MIGRATION.md``.

    Returns 0; 2 for any argument.
    """
    return checklist.run_generator(GENERATOR, lambda: render_migration(migration_report()), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
