"""The mutation score of the contract suite: each mutant and twin test records its result on
its report (:func:`mutation_score`); tests/conftest.py prints the score at the end of the
run (there, so that the pytest-xdist controller, which loads only the root conftest, prints
it too)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

KINDS = ("caught", "wrong", "escaped", "false_alarms")
"""Mutant names by result (caught under the right boundary, caught under another, escaped),
and the correct twins that raised an alarm."""

ScoreRecorder = Callable[[str, str, str], None]
"""``record(kind, name, where)``: file one mutant or twin under one of :data:`KINDS`;
``where`` is what it wires (``"core"``, ``"langchain"``, ``"pydantic-ai"``)."""


@pytest.fixture
def mutation_score(request: pytest.FixtureRequest) -> ScoreRecorder:
    """Records a test's result on its own report (``user_properties``), so the score is
    summed from the reports: the same with one process or with pytest-xdist workers."""

    def record(kind: str, name: str, where: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown mutation score kind {kind!r}")
        request.node.user_properties.append(("mutation_score", (kind, name, where)))

    return record


@pytest.fixture(autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
