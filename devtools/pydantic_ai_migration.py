"""``docs/MIGRATION_PYDANTIC_AI.md``: the checklist for moving a tool-calling loop onto
PydanticAI's ``Agent``, generated from measured ``check`` results.

Per boundary (:data:`agent_contract.conformance.BOUNDARIES`): what a plain ``Agent`` does
(measured on the control harness, :data:`CONTROL_HARNESS`), the configuration of this
package that keeps it (:data:`KEEP_IT`, PydanticAI's terms, keyed by boundary id), and
whether it holds with it on each mode (measured on :data:`CONTRACT_HARNESSES`), with what a
mode cannot express and why (:data:`~agent_contract_pydantic_ai.plugin.NOT_EXPRESSIBLE`).

Regenerate the document with::

    uv run python -m devtools.pydantic_ai_migration > docs/MIGRATION_PYDANTIC_AI.md
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from agent_contract.conformance import SCENARIOS, CheckReport, boundary_label, run_check
from agent_contract.conformance.check import Cell
from agent_contract_pydantic_ai.plugin import (
    NOT_EXPRESSIBLE,
    PLAIN_PYDANTIC_AI,
    PYDANTIC_AI,
    PYDANTIC_AI_ASYNC,
    PYDANTIC_AI_STREAM,
    STACK,
)
from devtools import checklist

__all__ = [
    "CONTRACT_HARNESSES",
    "CONTROL_HARNESS",
    "GENERATOR",
    "KEEP_IT",
    "MIGRATION_COMMAND",
    "main",
    "render_migration",
]

CONTROL_HARNESS: Final = PLAIN_PYDANTIC_AI.name
"""The negative control: a plain ``Agent``, expected to break."""
CONTRACT_HARNESSES: Final = (PYDANTIC_AI.name, PYDANTIC_AI_ASYNC.name, PYDANTIC_AI_STREAM.name)
"""The harnesses whose columns show the configuration that keeps each boundary."""
_MODES: Final = {PYDANTIC_AI.name: "run_sync", PYDANTIC_AI_ASYNC.name: "run"}
_MODES[PYDANTIC_AI_STREAM.name] = "stream"

KEEP_IT: Final[dict[str, str]] = {
    "response_shape": (
        "Pass `ContractCapability(state)` to every run (`agent.run(..., capabilities=[...])`, "
        "or use `run_agent`): it is always the outermost capability, and its "
        "`wrap_model_request` judges every reply (a final text or tool calls; ids present "
        "and unique; arguments a JSON object; a structured answer alone) before PydanticAI "
        "acts on it, raising `ContractStopped` (`invalid_response`) instead of asking the "
        "model again."
    ),
    "finish_reasons": (
        "The same `ContractCapability(state)`: each `ModelResponse.finish_reason` is contract "
        "input: a reply cut by the length limit runs none of its tool calls and stops "
        "`truncated_response`, a filtered one `content_filtered`, a refusal `refused` with "
        "its redacted text, where a plain `Agent` acts on the cut reply or raises "
        "`ContentFilterError` (docs/FINISH_REASONS.md)."
    ),
    "allowlist": (
        "`Contract(tools, allowlist=[...])` and `ContractToolset(contract)`: only allowlisted "
        "tools are offered; a call to a registered tool outside it gets `not_allowed`, an "
        "unknown name `unknown_tool` (not PydanticAI's retry prompt), and a tool of another "
        "toolset is never run."
    ),
    "argument_validation": (
        "Declare each tool as a `ToolSpec(parameters=<JSON Schema>)`: `ContractToolset` keeps "
        "the schema and passes the arguments through, and the contract validates them "
        "(Draft 2020-12, closed objects) before anything runs. `Tool.from_schema` validates "
        "nothing."
    ),
    "argument_size": (
        "The same `Contract` under `ContractToolset` and `ContractCapability`, its `Budget` "
        "the run's: `max_argument_chars` (50,000 characters by default; a nested value "
        "counts its JSON text) refuses a call with a larger argument as `invalid_arguments` "
        "before anything runs, and the trace keeps a cut, marked copy, where a plain `Agent` "
        "runs the tool with an argument of any size."
    ),
    "call_id_binding": (
        "Holds by itself. The capability also rewrites the next request's tool results from "
        "the contract's ledger: one per call, in issue order."
    ),
    "tool_errors": (
        "Run tools through `ContractToolset`: an exception becomes `tool_error` (or the kind "
        "of a raised `UnauthorizedError` / `NotFoundError` / `TransientError`) and reaches "
        "the model as `ToolFailed` content; a plain agent re-raises it out of `run`."
    ),
    "model_step_budget": (
        "`Budget(max_model_steps=N)`, and `UsageLimits(request_limit=None)` on the run: "
        "`UsageLimits`' request limit (50 by default) raises `UsageLimitExceeded` with no "
        "named stop."
    ),
    "tool_call_budget": (
        "`Budget(max_tool_calls=N)`: a batch that would cross it is refused whole, before "
        "any of it runs. `UsageLimits(tool_calls_limit=...)` counts only successful calls."
    ),
    "repeated_calls": (
        "`Budget(max_identical_calls=N)`: the same tool with the same canonical arguments "
        "beyond N is refused with `repeated_call`. PydanticAI has no counterpart."
    ),
    "deadline": (
        "`Budget(deadline_seconds=S)` in the `Contract`: a call in flight gets at most the "
        "time left (then `timeout`, outcome unknown) and the run stops with `deadline` "
        "before the next model call. A plain `Agent` has no run deadline (`UsageLimits` "
        "counts requests and tokens, not time)."
    ),
    "timeouts": (
        "`ToolSpec(timeout_seconds=...)`: each call runs on the contract's executor and one "
        "past its limit reports `timeout` with `outcome: unknown`, side effects possible. "
        "`Tool(timeout=...)` answers with a retry prompt that invites the same call again."
    ),
    "result_size": (
        "`ToolSpec(max_result_chars=..., on_oversize='truncate' | 'error')`: oversized "
        "results are cut with an explicit marker, or refused as `result_too_large`."
    ),
    "serialization": (
        "The contract's one serializer: JSON with non-ASCII kept; a value that is not JSON "
        "is a `tool_error`, never PydanticAI's own rendering of it."
    ),
    "history": (
        "`run_agent(history=...)` (or `drive_agent`) checks the history it is handed before "
        "PydanticAI repairs it (PydanticAI drops a tool result whose call is not there), "
        "and the capability checks what the model gets before every request."
    ),
    "trace_redaction": (
        "`Contract(..., secrets=[...])` and a `RunState` per run: `run_agent` returns a "
        "`RunResult` with its append-only, redacted trace. PydanticAI's own instrumentation "
        "exports contents unless `InstrumentationSettings(include_content=False)`."
    ),
    "write_approval": (
        "`ToolSpec(effect='write', preview=..., verify=...)`: the call is deferred "
        "(`ApprovalRequired`, the run ends with `DeferredToolRequests`, `pending_approval`), "
        "and `resume_agent(model, contract, snapshot, approvals)` continues it from the "
        "snapshot, in any process: the decision is bound to the exact call, "
        "`ToolApproved(override_args=...)` cannot change what runs, and a write applies once."
    ),
    "tool_context": (
        "`run_agent(model, contract, user, caller=..., context=...)` (or "
        "`contract.start(caller=..., context=...)` for the capability): a "
        "`needs_context=True` tool gets the caller, the values and its own `tool_call_id` "
        "in its `ToolContext`, a write's preview and approval act for the caller, a tool "
        "without it gets no context; name secrets (`secrets={name: value}`) and declare "
        "them per tool (`ToolSpec(secrets=(name,))`, `context.secret(name)`): other tools "
        "and the approval step see only a handle, where a plain `Agent`'s tools see "
        "whatever `deps` carries."
    ),
    "checkpoint_integrity": (
        "Keep the paused run's snapshot (all a paused PydanticAI run needs) in the app's "
        "`RunStore`: sealed, encrypted, versioned rows; a forged, edited, rolled-back or "
        "grafted row is refused with `CheckpointError` before `resume_agent` runs "
        "anything, and the approval is kept."
    ),
    "sub_agents": (
        "Run every delegated `Agent` with `ContractToolset(child)` and "
        "`capabilities=[ContractCapability.child(child)]`, `child = contract.child(name, "
        "tools=..., allowlist=...)` built once from the run's: the child's calls spend the "
        "run's budget and its stop ends the run, its own allowlist holds on its calls, and "
        "each delegation is a fresh child scope, where a plain delegated `Agent` has usage "
        "limits of its own (docs/MULTI_AGENT.md)."
    ),
    "streamed_arguments": (
        "Stream with the provider's own model class (`OpenAIChatModel`, `AnthropicModel`) "
        "under `ContractCapability`: the joined argument text of each call is judged as "
        "it is, so cut JSON (finish reason `length`) and malformed text never run; never "
        "repair argument text in a wrapper (`agent-contract check --wire` runs the "
        "scenarios on the streamed columns)."
    ),
}
"""Per boundary: the configuration of this package that keeps it on PydanticAI."""

GENERATOR: Final = "devtools.pydantic_ai_migration"
"""This module, run as ``python -m`` (its ``__name__`` is then ``__main__``)."""
MIGRATION_COMMAND: Final = f"uv run python -m {GENERATOR} > docs/MIGRATION_PYDANTIC_AI.md"
"""The command that regenerates ``docs/MIGRATION_PYDANTIC_AI.md``."""


def _verdict(cell: Cell, report: CheckReport) -> str:
    """A contract cell's status; a holding cell whose boundary has scenarios the harness
    declares not expressible (they broke there, as declared) reads ``holds (not
    expressible: ...)``."""
    declared = {n for run in report.harnesses if run.name == cell.harness for n, _ in run.declared}
    here = sorted(s.name for s in SCENARIOS if s.name in declared and s.boundary == cell.boundary)
    if cell.status == "holds" and here:
        return f"holds (not expressible: {', '.join(here)})"
    return checklist.status(cell.status)


def render_migration(report: CheckReport) -> str:
    """``docs/MIGRATION_PYDANTIC_AI.md`` from ``report`` (see the module doc).

    Raises:
        KeyError: ``report`` lacks the control or one of the contract harnesses.
    """
    cells = {(c.harness, c.boundary): c for c in report.cells}
    names = [CONTROL_HARNESS, *CONTRACT_HARNESSES]
    missing = [n for n in names if not any(h == n for h, _ in cells)]
    if missing:
        raise KeyError(f"the report needs harnesses {missing}")
    stack = ", ".join(f"{k} {report.versions.get(k)}" for k in STACK)
    broken = [b for b in report.rows if cells[CONTROL_HARNESS, b].status in checklist.FAILED]
    lines = checklist.generated_header(
        "Moving a tool-calling loop onto PydanticAI's `Agent`: the checklist",
        GENERATOR,
        MIGRATION_COMMAND,
    )
    lines += [
        "Each section is one boundary of the contract: what a plain PydanticAI `Agent` does "
        "with it by default, the configuration in `agent-contract-pydantic-ai` that keeps it, "
        "and whether it then holds on each way to drive the agent. All of it is measured: the "
        f"plain column is `agent-contract check --harness {CONTROL_HARNESS}` (`Tool.from_schema` "
        "over the same handlers, default retries and `UsageLimits`, `run_sync`), the kept "
        f"columns are `agent-contract check --harness {','.join(CONTRACT_HARNESSES)}` "
        f"(`ContractCapability` and `ContractToolset`), on {stack} (as locked in `uv.lock`).",
        "",
        "Reading the evidence: each line is a scenario of `agent_contract.conformance` and the "
        "first expectation it broke. `crashed:<Exception>` means `run_sync` raised; "
        "`crashed:ScriptExhaustedError` means the agent asked the scripted model for more "
        "turns than the script holds: it carried on where the contract stops the run.",
        "",
        "## The steps",
        "",
        "- [ ] Declare every tool as a `ToolSpec` (JSON Schema, handler, `timeout_seconds`, "
        "`max_result_chars`; `effect='write'` with `preview`/`verify` for writes) in one "
        "`Contract(tools, budget=Budget(...), allowlist=[...], secrets=[...])`.",
        "- [ ] Give the agent `ContractToolset(contract)` (or use "
        "`agent_contract_pydantic_ai.build_agent`), with `output_type=[str, "
        "DeferredToolRequests]` so a write can pause.",
        "- [ ] Run it with `run_agent` / `drive_agent` (or pass `capabilities=[ContractCapability("
        "contract.start())]` and `usage_limits=UsageLimits(request_limit=None)` yourself, and "
        "catch `ContractStopped`); treat only `answered` as an answer.",
        "- [ ] Resume a paused run with `resume_agent(model, contract, snapshot, approvals)`.",
        f"- [ ] The boundaries a plain `Agent` breaks here ({len(broken)} of "
        f"{len(report.rows)}) each have a section below.",
        "",
        "## Summary (measured)",
        "",
    ]
    lines += checklist.table(
        ("Boundary", "Plain `Agent`", *(f"`{_MODES[n]}`" for n in CONTRACT_HARNESSES)),
        [
            (
                boundary_label(b),
                checklist.status(cells[CONTROL_HARNESS, b].status),
                *(_verdict(cells[n, b], report) for n in CONTRACT_HARNESSES),
            )
            for b in report.rows
        ],
    )
    lines += [
        "",
        "## What a mode cannot express",
        "",
        "Declared by the harness (its `not_expressible`, with the reason); the scenario still "
        "runs there and the suite asserts that it breaks, so a declaration that stops being "
        "true fails the tests.",
        "",
    ]
    for name in CONTRACT_HARNESSES:
        declared = NOT_EXPRESSIBLE[_MODES[name]]
        for scenario, reason in declared.items():
            lines.append(f"- `{name}`, `{scenario}`: {reason}.")
        if not declared:
            lines.append(f"- `{name}`: nothing.")
    for b in report.rows:
        plain = cells[CONTROL_HARNESS, b]
        lines += checklist.section_heading(b)
        lines += ["", f"- [ ] **Keep it:** {checklist.keep_it(KEEP_IT, b)}"]
        if plain.status in checklist.FAILED:
            lines.append(f"- **Plain `Agent` (measured): {plain.status}.**")
            lines += checklist.first_failures(plain)
        else:
            lines.append(f"- Plain `Agent` (measured): {checklist.status(plain.status)}.")
        for name in CONTRACT_HARNESSES:
            ours = cells[name, b]
            mode = f"With the contract, `{_MODES[name]}` (measured)"
            if ours.status == "holds":
                lines.append(f"- {mode}: holds ({len(ours.evidence)} scenarios).")
            else:
                shown = sorted({e.scenario for e in ours.evidence})
                verdict = _verdict(ours, report)
                listed = "" if verdict.startswith("holds") else f" ({', '.join(shown)})"
                lines.append(f"- {mode}: {verdict}{listed}.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m devtools.pydantic_ai_migration``: measure and print
    ``docs/MIGRATION_PYDANTIC_AI.md``.

    Returns 0; 2 for any argument.
    """
    return checklist.run_generator(
        GENERATOR,
        lambda: render_migration(run_check(list(CONTRACT_HARNESSES), control=[CONTROL_HARNESS])),
        argv,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
