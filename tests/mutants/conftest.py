"""The mutation score of the contract suite, printed at the end of the pytest run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

KINDS = ("caught", "wrong", "escaped", "false_alarms")
"""Mutant names by result (caught under the right boundary, caught under another, escaped),
and the correct twins that raised an alarm."""

ScoreRecorder = Callable[[str, str], None]
"""``record(kind, name)``: file one mutant or twin under one of :data:`KINDS`."""


@pytest.fixture
def mutation_score(request: pytest.FixtureRequest) -> ScoreRecorder:
    """Records a test's result on its own report (``user_properties``), so the score is
    summed from the reports: the same with one process or with pytest-xdist workers."""

    def record(kind: str, name: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown mutation score kind {kind!r}")
        request.node.user_properties.append(("mutation_score", (kind, name)))

    return record


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the mutation score (CI logs show it), summed over every test report."""
    score: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == "mutation_score":
                    kind, name = value
                    score[kind].append(name)
    total = len(score["caught"]) + len(score["wrong"]) + len(score["escaped"])
    if not total and not score["false_alarms"]:
        return
    terminalreporter.write_line(
        f"mutation score: {len(score['caught'])}/{total} mutants caught under the right "
        f"boundary; {len(score['false_alarms'])} false alarm(s) on correct harnesses"
        + (f"; wrong boundary: {score['wrong']}" if score["wrong"] else "")
        + (f"; escaped: {score['escaped']}" if score["escaped"] else "")
        + (f"; false alarms: {score['false_alarms']}" if score["false_alarms"] else "")
    )


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
