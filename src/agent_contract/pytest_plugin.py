"""Deprecated: the pytest plugin moved to :mod:`agent_contract.conformance.plugin`, which
the ``pytest11`` entry point loads (kept for one release)."""

from __future__ import annotations

from ._deprecated import moved
from .conformance.plugin import (
    contract_harness,
    contract_scenarios,
    fake_model,
    run_contract_scenario,
)

moved(__name__, "agent_contract.conformance.plugin")

__all__ = ["contract_harness", "contract_scenarios", "fake_model", "run_contract_scenario"]
