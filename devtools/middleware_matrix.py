"""The stock middleware matrix: every middleware class the installed
``langchain.agents.middleware`` exports, with realistic settings
(:data:`~devtools.stock.STOCK`), placed before and after
``ContractMiddleware``, under invoke, ainvoke and stream, runs contract scenarios; a
cell holds when every boundary holds in every scenario. :func:`render` writes
``docs/MIDDLEWARE.md`` from the measured cells and the entries' relations.

Regenerate the document with::

    uv run python -m devtools.middleware_matrix > docs/MIDDLEWARE.md

(``tests/stack/test_middleware_matrix.py`` measures the same cells and fails when the
committed document differs.)
"""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.conformance import SCENARIOS, Scenario, run_scenario
from agent_contract.conformance.boundaries.table import boundary_label
from agent_contract.harnesses import Harness, RunInput
from agent_contract.model import Model
from agent_contract.runtime import RunResult
from agent_contract.tools import ToolSpec
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.middleware import ContractMiddleware
from agent_contract_langchain.resuming import run_options
from agent_contract_langchain.tools import to_langchain_tools
from devtools.stock import STOCK, StockContext, stock_classes

__all__ = [
    "MATRIX_SCENARIOS",
    "MIDDLEWARE_COMMAND",
    "MODES",
    "POSITIONS",
    "Cell",
    "Position",
    "all_cells",
    "main",
    "measure",
    "measure_cell",
    "render",
    "stack_harness",
]

Position = Literal["before", "after"]
POSITIONS: Final[tuple[Position, ...]] = ("before", "after")
"""Before: listed ahead of ``ContractMiddleware`` (outside it); after: between it and its
gate (inside it)."""
MODES: Final = ("invoke", "ainvoke", "stream")
MIDDLEWARE_COMMAND: Final = "uv run python -m devtools.middleware_matrix > docs/MIDDLEWARE.md"

MATRIX_SCENARIOS: Final[tuple[str, ...]] = (
    "malformed_json_arguments",
    "commentary_with_tool_calls",
    "structured_answer_retried",
    "unknown_tool",
    "tool_schemas_offered",
    "invalid_arguments_wrong_type",
    "single_tool_call",
    "tool_raises",
    "step_budget",
    "tool_call_budget_parallel_batch",
    "repeated_identical_calls",
    "tool_timeout",
    "oversized_result",
    "non_string_results",
    "history_replayed",
    "secret_in_result",
    "write_approved",
)
"""The scenarios every cell runs: at least one per boundary of the contract."""


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One stock middleware, in one position, under one mode."""

    middleware: str
    position: Position
    mode: str
    broken: tuple[tuple[str, str], ...]
    """``(scenario, what broke)`` for every failed expectation; empty when it holds."""

    @property
    def holds(self) -> bool:
        """True when every boundary held in every scenario."""
        return not self.broken


def stack_harness(name: str, position: Position, mode: str, folder: Path) -> Harness:
    """A suite harness: ``create_agent`` with the contract and the stock middleware
    ``name`` (built with its :data:`STOCK` settings) placed ``position``, driven in
    ``mode``."""

    def harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
        contract = options.contract(tools)
        chat = ContractChatModel(model=model)
        context = StockContext(model=chat, folder=folder, read_tool="echo", quiet_tool="unused")
        extra = STOCK[name].make(context)
        contract_mw = ContractMiddleware(contract)
        stack = (
            [extra, contract_mw, contract_mw.inner()]
            if position == "before"
            else contract_mw.around(extra)
        )
        graph = create_agent(
            chat,
            tools=to_langchain_tools(contract.registry),
            middleware=stack,
            checkpointer=InMemorySaver(),
        )
        return run_options(graph, contract, options, mode=mode)  # type: ignore[arg-type]

    return harness


def _scenarios() -> list[Scenario]:
    by_name = {s.name: s for s in SCENARIOS}
    return [by_name[n] for n in MATRIX_SCENARIOS]


def measure_cell(name: str, position: Position, mode: str, folder: Path) -> Cell:
    """Run :data:`MATRIX_SCENARIOS` on one cell."""
    harness = stack_harness(name, position, mode, folder)
    label = f"{name}-{position}-{mode}"
    broken = [
        (scenario.name, f"[{problem.boundary}] {problem.message}")
        for scenario in _scenarios()
        for problem in run_scenario(scenario, harness, label).problems
    ]
    return Cell(middleware=name, position=position, mode=mode, broken=tuple(broken))


def all_cells(names: Iterable[str] | None = None) -> list[tuple[str, Position, str]]:
    """Every ``(middleware, position, mode)``, for the installed classes (or ``names``)."""
    chosen = list(stock_classes()) if names is None else list(names)
    return [(n, p, m) for n in chosen for p in POSITIONS for m in MODES]


def measure(cells: Sequence[tuple[str, Position, str]] | None = None) -> list[Cell]:
    """Measure ``cells`` (default: :func:`all_cells`)."""
    with tempfile.TemporaryDirectory(prefix="agent-contract-matrix-") as folder:
        return [measure_cell(n, p, m, Path(folder)) for n, p, m in (cells or all_cells())]


def _versions() -> str:
    names = ("langchain", "langchain-core", "langgraph")
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in names)


def _cell_text(cells: Sequence[Cell]) -> str:
    held = sum(c.holds for c in cells)
    return f"{held}/{len(cells)}"


def render(cells: Sequence[Cell]) -> str:
    """``docs/MIDDLEWARE.md`` from the measured ``cells``."""
    holding = sum(c.holds for c in cells)
    lines = [
        f"<!-- Generated by `{MIDDLEWARE_COMMAND}`; do not edit by hand. -->",
        "",
        "# The contract beside LangChain's stock middleware",
        "",
        "Every middleware class `langchain.agents.middleware` exports, built with realistic "
        "settings that need no network, placed **before** `ContractMiddleware` (outside it) "
        "and **after** it (between it and its gate, inside it), under `invoke`, `ainvoke` and "
        f"`stream`, runs {len(MATRIX_SCENARIOS)} contract scenarios (at least one per "
        "boundary). A cell holds when every boundary holds in every scenario.",
        "",
        f"Measured on {_versions()}: **{holding}/{len(cells)} cells hold** "
        f"({len({c.middleware for c in cells})} classes x 2 positions x 3 modes).",
        "",
        "- **composes**: no boundary in common;",
        "- **overlaps**: both enforce a boundary; the note says which wins;",
        "- **conflicts**: it would break a boundary; the note says what the contract does.",
        "",
        "Stack it as `create_agent(model, tools, middleware=ContractMiddleware(contract)"
        ".around(*yours))`: the contract first, its gate last, yours between. A middleware "
        "whose note says *put it inside* works only there. When to use LangChain's "
        "`HumanInTheLoopMiddleware` and when the contract's write approval: the HITL row "
        "below, and `agent_contract_langchain.approvals`.",
        "",
        "| middleware | relation | before (i/a/s) | after (i/a/s) | settings | what it means for "
        "the contract |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    by_name: dict[str, list[Cell]] = {}
    for cell in cells:
        by_name.setdefault(cell.middleware, []).append(cell)
    for name, own in by_name.items():
        entry = STOCK[name]
        before = _cell_text([c for c in own if c.position == "before"])
        after = _cell_text([c for c in own if c.position == "after"])
        settings = entry.settings.replace("|", "\\|")
        note = entry.note.replace("|", "\\|")
        lines.append(f"| `{name}` | {entry.relation} | {before} | {after} | {settings} | {note} |")
    broken = [c for c in cells if not c.holds]
    lines += ["", "## Cells that break", ""]
    if not broken:
        lines.append("None: every boundary holds in every cell.")
    for cell in broken:
        lines.append(f"- `{cell.middleware}` {cell.position}, {cell.mode}:")
        for scenario, problem in cell.broken:
            lines.append(f"  - {scenario}: {problem}")
    lines += [
        "",
        "## Human review: LangChain's HITL or the contract's write approval",
        "",
        "- `HumanInTheLoopMiddleware` reviews *any* tool call (read tools too) and can answer "
        "in a tool's place (`respond`). Under the contract its pause ends the run "
        "`interrupted`; resume with `resume_agent(..., answers={interrupt_id: "
        "{'decisions': [...]}})`. An `edit` is validated against the tool's schema and "
        "recorded (`arguments_rewritten`), wherever HITL sits. It has no preview, no token "
        "bound to the call, no idempotency key, and its counters reset on every resume.",
        "- The contract's write approval (`ToolSpec(effect='write', preview=..., "
        "verify=...)`) is for side effects: the preview runs before anyone is asked, the "
        "decision is bound to run, call and canonical arguments (a token), the write runs "
        "once with an idempotency key and is read back, and budgets hold across resumes. "
        "It pauses `pending_approval`; its interrupt has HITL's request shape "
        "(`action_requests`, `review_configs`) with the contract's binding under "
        "`agent_contract`, and takes HITL's decisions (`approve`, `edit`, `reject`), so a UI "
        "built for HITL renders and answers it.",
        "- Use HITL for review of reads and of the conversation; use the contract's approval "
        "for every write. A write's arguments changed by another layer after its preview "
        "are refused: edit a write through its approval.",
        "",
        "## The scenarios each cell runs",
        "",
        *(f"- `{s.name}` ({boundary_label(s.boundary)}): {s.description}" for s in _scenarios()),
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``docs/MIDDLEWARE.md``, measured now."""
    del argv
    sys.stdout.write(render(measure()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
