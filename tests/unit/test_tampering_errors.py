"""The error paths of the tampering kit (``agent_contract.tampering``) and of a
scenario's stream plan (``conformance.wire_check.stream_plan``): bad input is refused
with a clear error, never taken for a tampering or a split that did not happen."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_contract.conformance.wire_check import stream_plan
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.tampering import CHECKPOINTS_FILE, TamperPlan, tamper_checkpoints


def test_an_unknown_tampering_is_refused_by_the_plan() -> None:
    with pytest.raises(ValueError, match="unknown tampering 'melted'"):
        TamperPlan("melted")


def test_an_unknown_tampering_is_refused_before_any_row_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown tampering 'melted'"):
        tamper_checkpoints(tmp_path, "run-1", "melted")
    assert not (tmp_path / CHECKPOINTS_FILE).exists()


def test_a_thread_without_a_checkpoint_cannot_be_tampered_with(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / CHECKPOINTS_FILE)) as conn:
        SqliteSaver(conn).setup()
    with pytest.raises(CheckpointError, match="no checkpoint row of thread 'run-1'"):
        tamper_checkpoints(tmp_path, "run-1", "forged")


def test_a_stream_plan_is_read_from_the_extras() -> None:
    assert stream_plan({}) == (None, False)
    assert stream_plan({"stream": ("pieces:3", "interleaved")}) == (3, True)


@pytest.mark.parametrize("item", ["pieces:0", "pieces:x", "pieces", "shuffled"])
def test_an_unknown_stream_extra_is_refused(item: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown stream extra"):
        stream_plan({"stream": (item,)})
