"""The project's test run relies on pytest-xdist's ``--dist loadgroup`` (pyproject's
addopts, CI's workers): the tests that share a once-per-process result (a default
``check`` report, every crash point's child processes: ``SHARED_RESULT_GROUPS`` in
tests/conftest.py) run on one worker, so the result is computed once. A pytest or
pytest-xdist release that stops honouring the groups (pytest 9.2 with pytest-xdist 3.8
did: the groups were split and each worker computed the result again) fails here
rather than silently doubling CI's time."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.children_run_plain]  # the workers start without this run's flags


def test_tests_of_one_xdist_group_run_on_one_worker(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_modifyitems(items):
            for item in items:
                if "shared" in getattr(item, "fixturenames", ()):
                    item.add_marker(pytest.mark.xdist_group("shared"))

        @pytest.fixture(scope="session")
        def shared():
            return object()
        """
    )
    pytester.makepyfile(
        "\n".join(
            [
                *(f"def test_{i}(shared):\n    pass" for i in range(8)),
                *(f"def test_free_{i}():\n    pass" for i in range(8)),
            ]
        )
    )
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider", "-v"
    )
    result.assert_outcomes(passed=16)
    grouped = [line for line in result.outlines if line.startswith("[gw") and "@shared" in line]
    assert len(grouped) == 8, result.outlines
    workers = {line.split()[0] for line in grouped}
    assert len(workers) == 1, grouped
