"""Session-wide guard for parallel runs (pytest-xdist).

``python -O -m pytest -n 2`` starts its workers as plain ``python``: the tests would run
without ``-O`` (or ``-W error``) and a mode of CI would check nothing it claims. Each
worker compares its interpreter flags with the controller's and refuses to start on a
difference. To run a flag mode in parallel, start the workers with the flags:
``python -O -m pytest --dist load --tx "2*popen//python=$(which python) -O"`` (what
.ci/run does).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest


def _interpreter_flags() -> list[Any]:
    """The flags a mode of the suite sets: optimization level and warning options."""
    return [sys.flags.optimize, list(sys.warnoptions)]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(controller) Hand the controller's interpreter flags to each worker."""
    node.workerinput["agent_contract_interpreter_flags"] = _interpreter_flags()


def pytest_configure(config: pytest.Config) -> None:
    """(worker) Refuse to run under other interpreter flags than the controller's."""
    wanted = getattr(config, "workerinput", {}).get("agent_contract_interpreter_flags")
    if wanted is not None and wanted != _interpreter_flags():
        raise pytest.UsageError(
            f"this pytest-xdist worker runs with interpreter flags {_interpreter_flags()} "
            f"(optimize, warnoptions), the controller with {wanted}: start the workers with "
            '--dist load --tx "N*popen//python=PYTHON FLAGS" (see tests/conftest.py)'
        )


# -- what runs where: CI's flag modes, and which tests share one worker ------------------

MATRIX_SAMPLE_ENV = "AGENT_CONTRACT_MATRIX_SAMPLE"
"""Set to ``1`` by .ci/run in its three flag modes (``-O``, ``-W error``, both)."""

SHARED_RESULT_GROUPS = {
    "default_report": "check_report",
    "cached_outcomes": "check_report",
    "child_runs": "crash_children",  # tests/orders: every crash point's child processes
    "report": "pydantic_ai_migration",  # tests/contract/test_migration_pydantic_ai.py
    "measured": "migration_columns",  # tests/suite/test_migration_doc.py
    "venv": "wheels",  # tests/suite/test_wheels_only.py: the wheels built and installed
    "project": "ci_recipe",  # tests/suite/test_ci_doc.py
}
"""Fixtures whose result is computed once per process (a session fixture, a module-level
cache): under pytest-xdist each worker that gets one of their tests computes it again, so
``--dist loadgroup`` (pyproject's addopts) keeps their tests on one worker (the
``xdist_group`` named here). The results do not change; only the repeats go."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests of :data:`SHARED_RESULT_GROUPS` (``xdist_group``); in CI's flag
    modes (``$AGENT_CONTRACT_MATRIX_SAMPLE=1``), skip the tests marked
    ``children_run_plain``: their work runs in child processes started without those
    flags, so those modes would repeat the plain mode's run unchanged."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        groups = {g for name, g in SHARED_RESULT_GROUPS.items() if name in fixtures}
        if groups and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(min(groups)))
    if os.environ.get(MATRIX_SAMPLE_ENV) != "1":
        return
    skip = pytest.mark.skip(reason="children run without this run's flags: the plain mode runs it")
    for item in items:
        if item.get_closest_marker("children_run_plain") is not None:
            item.add_marker(skip)


# -- a throwaway PostgreSQL server (devtools/postgres.py) ---------------------------------

REQUIRE_POSTGRES_ENV = "AGENT_CONTRACT_REQUIRE_POSTGRES"
"""Set (CI does): a machine without PostgreSQL server binaries fails the PostgreSQL tests
instead of skipping them."""
_NO_SERVER = (
    "no PostgreSQL server binaries (initdb, pg_ctl) on PATH, in $AGENT_CONTRACT_PG_BIN or "
    "in /usr/lib/postgresql/*/bin (Debian's postgresql package)"
)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL server for this test session (one per pytest-xdist worker):
    a new cluster on a unix socket in a temporary folder, stopped and removed at the end.
    Skipped when the machine has no server binaries, unless
    ``$AGENT_CONTRACT_REQUIRE_POSTGRES`` is set (then it fails)."""
    from devtools.postgres import server_binaries, throwaway_cluster

    if server_binaries() is None:
        if os.environ.get(REQUIRE_POSTGRES_ENV):
            pytest.fail(f"{REQUIRE_POSTGRES_ENV} is set, but there are {_NO_SERVER}")
        pytest.skip(_NO_SERVER)
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: Any) -> str:
    """The URL of a new, empty PostgreSQL database on the session's server."""
    return str(postgres_cluster.new_database())


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> str | None:
    """Each store in turn: ``None`` (the data folder's SQLite files, the default), then a
    new PostgreSQL database's URL (``--store``, ``$AGENT_CONTRACT_STORE``)."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line when PostgreSQL tests were skipped for want of a server (counted from the
    skip reports, so it holds under pytest-xdist too)."""
    skipped = [
        r for r in terminalreporter.stats.get("skipped", []) if _NO_SERVER in str(r.longrepr)
    ]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} PostgreSQL tests skipped: {_NO_SERVER}")
