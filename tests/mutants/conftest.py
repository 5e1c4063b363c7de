"""The mutation score of the contract suite, printed at the end of the pytest run."""

from __future__ import annotations

from typing import Any

import pytest


def new_score() -> dict[str, list[str]]:
    """Mutant names by result, and the correct twins that broke."""
    return {"caught": [], "wrong": [], "escaped": [], "false_alarms": []}


@pytest.fixture(scope="session")
def mutation_score(pytestconfig: pytest.Config) -> dict[str, list[str]]:
    """The session's score, kept on the config for the terminal summary."""
    score = new_score()
    pytestconfig.mutation_score = score  # type: ignore[attr-defined]
    return score


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the mutation score (CI logs show it)."""
    SCORE = getattr(terminalreporter.config, "mutation_score", None)
    if SCORE is None:
        return
    total = len(SCORE["caught"]) + len(SCORE["wrong"]) + len(SCORE["escaped"])
    if not total and not SCORE["false_alarms"]:
        return
    terminalreporter.write_line(
        f"mutation score: {len(SCORE['caught'])}/{total} mutants caught under the right "
        f"boundary; {len(SCORE['false_alarms'])} false alarm(s) on correct harnesses"
        + (f"; wrong boundary: {SCORE['wrong']}" if SCORE["wrong"] else "")
        + (f"; escaped: {SCORE['escaped']}" if SCORE["escaped"] else "")
        + (f"; false alarms: {SCORE['false_alarms']}" if SCORE["false_alarms"] else "")
    )


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
