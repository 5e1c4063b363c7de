"""CI's flag modes share a parametrized test's cases out (tests/conftest.py,
``$AGENT_CONTRACT_FLAG_MODE``): the first case runs in every mode, every case runs in the
plain mode and in exactly one of the three flag modes, and a value that is not a flag
mode is refused rather than read as "run everything"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests/stores/test_store_urls.py"  # parametrized, quick to collect

pytestmark = [pytest.mark.children_run_plain]  # the collecting children run plain


def _collected(mode: str) -> tuple[int, list[str]]:
    env = {**os.environ, "AGENT_CONTRACT_FLAG_MODE": mode}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:xdist",
         "-o", "addopts=", "-p", "pytester", TARGET],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    return proc.returncode, ids + ([proc.stderr] if proc.returncode else [])


def test_each_case_runs_in_the_plain_mode_and_in_one_flag_mode() -> None:
    code, everything = _collected("")
    assert code == 0, everything
    modes = {}
    for mode in ("1", "2", "3"):
        code, ids = _collected(mode)
        assert code == 0, ids
        modes[mode] = set(ids)
    functions = {i.split("[", 1)[0] for i in everything}
    for function in functions:
        cases = [i for i in everything if i.split("[", 1)[0] == function]
        first, rest = cases[0], cases[1:]
        assert all(first in ids for ids in modes.values()), first
        for case in rest:
            assert sum(case in ids for ids in modes.values()) == 1, case
    assert set().union(*modes.values()) == set(everything)
    assert all(len(ids) < len(everything) for ids in modes.values())


def test_a_value_that_is_not_a_flag_mode_is_refused() -> None:
    code, out = _collected("7")
    assert code == 4, out  # pytest's usage error
    assert "AGENT_CONTRACT_FLAG_MODE is 1, 2 or 3" in out[-1]
