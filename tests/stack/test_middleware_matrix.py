"""The stock middleware matrix (issue 10): every middleware class the installed
``langchain.agents.middleware`` exports, before and after the contract, under invoke,
ainvoke and stream, runs the contract scenarios; ``docs/MIDDLEWARE.md`` is generated
from the measured cells.

CI runs the whole matrix in plain mode; in the ``-O`` and ``-W error`` modes
(``$AGENT_CONTRACT_FLAG_MODE`` set: tests/conftest.py) it runs every sixth cell (each
class still runs at least once; marker ``samples_itself``: conftest's rotation of
parametrized cases leaves these alone), and the document's drift test runs in plain mode
only.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_contract.pools import run_async
from devtools.middleware_matrix import (
    MIDDLEWARE_COMMAND,
    Cell,
    all_cells,
    measure_cell,
    render,
)
from devtools.stock import STOCK, stock_classes

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = os.environ.get("AGENT_CONTRACT_FLAG_MODE", "") != ""
CELLS = all_cells()
CHOSEN = [cell for index, cell in enumerate(CELLS) if not SAMPLE or index % 6 == 0]
LEAKS = {"ShellToolMiddleware"}
"""Classes whose own resources leak (LangChain's ResourceWarning; see test_stops)."""

_measured: dict[tuple[str, str, str], Cell] = {}
_folder = tempfile.mkdtemp(prefix="agent-contract-matrix-test-")


def cell_of(name: str, position: Any, mode: str) -> Cell:
    key = (name, position, mode)
    if key not in _measured:
        _measured[key] = measure_cell(name, position, mode, Path(_folder))
    return _measured[key]


async def _other_tasks_done() -> None:
    """Wait (at most 5 s) for the tasks the process's run loop still holds: an ``ainvoke``
    cell's teardown (a shell session's stop) may finish there after the run returned."""
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if others:
        await asyncio.wait(others, timeout=5)
    await asyncio.sleep(0)


def settle_leaks() -> None:
    """Let the scenario workers and the run loop's pending tasks end and collect what
    they leave, so a leak's warning is reported in the test that filters it, not in the
    next one."""
    for thread in threading.enumerate():
        if thread.name.startswith("scenario-"):
            thread.join(5)
    run_async(_other_tasks_done())
    gc.collect()
    # A shell session of an ainvoke cell can outlive its run: the last run's graph state
    # stays reachable from the process's run loop thread until the next run there, so
    # its finalizer (which stops the shell and leaks its pipes, LangChain's own
    # ResourceWarning) would fire in another test. End those sessions here.
    from langchain.agents.middleware import shell_tool

    for resources in [o for o in gc.get_objects() if isinstance(o, shell_tool._SessionResources)]:
        resources.finalizer()
    gc.collect()
    gc.collect()


def params() -> list[Any]:
    marks = [
        pytest.mark.filterwarnings("ignore::ResourceWarning"),
        pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ]
    return [
        pytest.param(n, p, m, id=f"{n}-{p}-{m}", marks=marks if n in LEAKS else [])
        for n, p, m in CHOSEN
    ]


@pytest.mark.samples_itself
@pytest.mark.parametrize(("name", "position", "mode"), params())
def test_every_boundary_holds_beside_a_stock_middleware(
    name: str, position: Any, mode: str
) -> None:
    cell = cell_of(name, position, mode)
    if name in LEAKS:
        settle_leaks()
    assert cell.holds, "\n".join(f"{s}: {p}" for s, p in cell.broken)


def test_the_matrix_covers_every_stock_class_in_every_sample() -> None:
    assert {n for n, _, _ in CHOSEN} == set(stock_classes())
    assert set(stock_classes()) <= set(STOCK)


@pytest.mark.skipif(SAMPLE, reason="the document is checked in CI's plain mode (whole matrix)")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_middleware_document_is_current() -> None:
    """If this fails: a stock middleware, its settings, a note or a measured cell changed;
    regenerate the document with the command it names and read the diff."""
    cells = [cell_of(n, p, m) for n, p, m in CELLS]
    settle_leaks()
    committed = (ROOT / "docs" / "MIDDLEWARE.md").read_text(encoding="utf-8")
    assert committed == render(cells), f"docs/MIDDLEWARE.md is stale: {MIDDLEWARE_COMMAND}"
