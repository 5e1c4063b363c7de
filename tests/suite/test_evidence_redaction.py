"""Every report quotes evidence through one redaction (``conformance.fixtures.hide_planted``):
planted values shown as ``<planted secret>``, and what the default redaction hides (a
``token=...`` in a harness's exception text) redacted, in ``check --harness`` output too."""

from __future__ import annotations

import io
import sys
import textwrap
from pathlib import Path

import pytest

from agent_contract.app import cli
from agent_contract.conformance.fixtures import (
    PLANTED_PASSWORD,
    PLANTED_SECRET,
    PLANTED_SHOWN,
    hide_planted,
)

LEAKY = "tok3n-Q9x8y7w6"

MODULE = textwrap.dedent(
    f"""
    def harness(model, tools, options):
        raise RuntimeError("backend refused: token={LEAKY} (password {PLANTED_PASSWORD})")
    """
)


def test_planted_values_and_secret_keys_are_hidden() -> None:
    text = f"boom token={LEAKY}; db password {PLANTED_PASSWORD}; key {PLANTED_SECRET}"
    shown = hide_planted(text)
    assert LEAKY not in shown
    assert PLANTED_PASSWORD not in shown
    assert PLANTED_SECRET not in shown
    assert shown == (f"boom token=[REDACTED] db password {PLANTED_SHOWN}; key {PLANTED_SHOWN}")


def test_check_harness_evidence_redacts_an_exception_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "leaky_harness.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("leaky_harness", None)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["check", "--harness", "leaky_harness:harness"], out=out, err=err)
    printed = out.getvalue() + err.getvalue()
    assert code == 5, printed
    assert "backend refused: token=[REDACTED]" in printed
    assert LEAKY not in printed
    assert PLANTED_PASSWORD not in printed
