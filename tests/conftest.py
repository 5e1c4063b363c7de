"""Session-wide guard for parallel runs (pytest-xdist).

``python -O -m pytest -n 2`` starts its workers as plain ``python``: the tests would run
without ``-O`` (or ``-W error``) and a mode of CI would check nothing it claims. Each
worker compares its interpreter flags with the controller's and refuses to start on a
difference. To run a flag mode in parallel, start the workers with the flags:
``python -O -m pytest --dist loadgroup --tx "2*popen//python=$(which python) -O"`` (what
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
            '--dist loadgroup --tx "N*popen//python=PYTHON FLAGS" (see tests/conftest.py)'
        )


# -- what runs where: CI's flag modes, and which tests share one worker ------------------

FLAG_MODE_ENV = "AGENT_CONTRACT_FLAG_MODE"
"""Set by .ci/run in its three flag modes: ``1`` (``-O``), ``2`` (``-W error``), ``3``
(``-O -W error``); unset (the plain mode, and any run by hand) runs everything."""
FLAG_MODES = 3


def flag_mode() -> int:
    """Which of CI's flag modes this run is (1 to 3), or 0 outside them.

    Raises:
        pytest.UsageError: ``$AGENT_CONTRACT_FLAG_MODE`` is set to anything else.
    """
    value = os.environ.get(FLAG_MODE_ENV, "")
    if value == "":
        return 0
    if value not in {str(m) for m in range(1, FLAG_MODES + 1)}:
        raise pytest.UsageError(f"${FLAG_MODE_ENV} is 1, 2 or 3 (CI's flag modes), not {value!r}")
    return int(value)


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


def in_flag_mode(index: int, mode: int) -> bool:
    """Whether the ``index``-th case (0-based, in collection order) of a parametrized test
    runs in flag mode ``mode`` (0: the plain mode, every case): the first case in every
    mode, each other case in one of the three (``index % 3 == mode - 1``), so that each
    case runs in the plain mode and in one flag mode, and each test in all four."""
    return mode == 0 or index == 0 or index % FLAG_MODES == mode - 1


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests of :data:`SHARED_RESULT_GROUPS` (``xdist_group``). In CI's flag
    modes (:func:`flag_mode`): skip the tests marked ``children_run_plain`` (their work
    runs in child processes started without those flags, so those modes would repeat the
    plain mode's run unchanged), and deselect the cases of parametrized tests that
    :func:`in_flag_mode` leaves to another flag mode (a test marked
    ``samples_itself`` chooses its own cases)."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        groups = {g for name, g in SHARED_RESULT_GROUPS.items() if name in fixtures}
        if groups and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(min(groups)))
    mode = flag_mode()
    if mode == 0:
        return
    skip = pytest.mark.skip(reason="children run without this run's flags: the plain mode runs it")
    for item in items:
        if item.get_closest_marker("children_run_plain") is not None:
            item.add_marker(skip)
    seen: dict[str, int] = {}
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        index = seen[function] = seen.get(function, -1) + 1
        own = item.get_closest_marker("samples_itself") is not None
        (kept if own or in_flag_mode(index, mode) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


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


def _postgres_skips(terminalreporter: Any) -> None:
    """One line when PostgreSQL tests were skipped for want of a server (counted from the
    skip reports, so it holds under pytest-xdist too)."""
    skipped = [
        r for r in terminalreporter.stats.get("skipped", []) if _NO_SERVER in str(r.longrepr)
    ]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} PostgreSQL tests skipped: {_NO_SERVER}")


# -- the mutation score (tests/mutants) -----------------------------------------------------


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The summary's own lines: PostgreSQL tests skipped for want of a server, and the
    mutation score."""
    _postgres_skips(terminalreporter)
    _mutation_score(terminalreporter)


def _mutation_score(terminalreporter: Any) -> None:
    """Print the mutation score, summed over every test report's ``mutation_score``
    records (tests/mutants/conftest.py), here in the root conftest so that the score is
    printed under pytest-xdist too (the controller loads only this conftest; the
    workers' reports carry the records). Nothing is printed when no mutant ran."""
    score: dict[str, list[str]] = {"caught": [], "wrong": [], "escaped": [], "false_alarms": []}
    caught_in: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == "mutation_score":
                    kind, name, where = value
                    score[kind].append(name)
                    if kind == "caught":
                        caught_in[where] = caught_in.get(where, 0) + 1
    total = len(score["caught"]) + len(score["wrong"]) + len(score["escaped"])
    if not total and not score["false_alarms"]:
        return
    split = ", ".join(f"{where} {count}" for where, count in sorted(caught_in.items()))
    terminalreporter.write_line(
        f"mutation score: {len(score['caught'])}/{total} mutants caught under the right "
        f"boundary ({split or 'none'}); {len(score['false_alarms'])} false alarm(s) on "
        "correct harnesses"
        + (f"; wrong boundary: {score['wrong']}" if score["wrong"] else "")
        + (f"; escaped: {score['escaped']}" if score["escaped"] else "")
        + (f"; false alarms: {score['false_alarms']}" if score["false_alarms"] else "")
    )
