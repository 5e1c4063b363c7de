"""Old import paths keep working for one release: each shim warns once it is imported
(DeprecationWarning naming the new path) and hands on the same objects. The rest of
the suite imports only the new paths (it runs with warnings as errors)."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

SHIMS = {
    "agent_contract.policy": "agent_contract.runtime",
    "agent_contract.scenarios": "agent_contract.conformance",
    "agent_contract.suite": "agent_contract.conformance.suite",
    "agent_contract.checklist": "agent_contract.conformance",
    "agent_contract.pytest_plugin": "agent_contract.conformance.plugin",
    "agent_contract.cli": "agent_contract.app.cli",
    "agent_contract.demo": "agent_contract.app.demo",
    "agent_contract.store": "agent_contract.app.store",
    "agent_contract.builtin_tools": "agent_contract.app.builtin_tools",
    "agent_contract.builtin_tools.calculator": "agent_contract.app.builtin_tools.calculator",
    "agent_contract.builtin_tools.orders": "agent_contract.app.builtin_tools.orders",
    "agent_contract.builtin_tools.policies": "agent_contract.app.builtin_tools.policies",
}
"""Old module -> where its names live now."""

RENAMED = {
    ("agent_contract.policy", "Decision"): ("agent_contract.runtime", "ResponseVerdict"),
    ("agent_contract.scenarios", "Outcome"): ("agent_contract.conformance", "ScenarioOutcome"),
    ("agent_contract.scenarios", "Decider"): ("agent_contract.conformance", "ScriptedDecider"),
    ("agent_contract.checklist", "harness_names"): (
        "agent_contract.app.check_command",
        "split_harness_names",
    ),
}
COMPATIBILITY_VIEWS = {
    ("agent_contract.scenarios", "BOUNDARIES"),  # the old {id: rule} dict
    ("agent_contract.scenarios", "RunOptions"),  # RunInput with the old default secrets
    ("agent_contract.scenarios", "HARNESS_NAMES"),  # a tuple read from the registry
    ("agent_contract.checklist", "boundary_rows"),  # with the old default argument
    ("agent_contract.checklist", "LABELS"),  # the old {id: label} dict
    ("agent_contract.policy", "restore_run"),  # Contract.restore as a function
}
"""Names a shim keeps in their old shape (checked in the next test)."""
NEW_HOMES = (
    "agent_contract.runtime",
    "agent_contract.runtime.execution",
    "agent_contract.conformance",
    "agent_contract.conformance.approvals",
    "agent_contract.conformance.check",
    "agent_contract.conformance.evaluate",
    "agent_contract.conformance.report",
    "agent_contract.conformance.scenarios",
    "agent_contract.harnesses",
    "agent_contract.registry",
    "agent_contract.app.check_command",
    "agent_contract.app.selftest",
    "agent_contract.app.demo",
    "agent_contract.exitcodes",
)
"""Where a shim's other names come from (a shim may gather names from several)."""


def fresh_import(name: str, monkeypatch: pytest.MonkeyPatch) -> object:
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    return importlib.import_module(name)


@pytest.mark.parametrize(("old", "new"), SHIMS.items(), ids=list(SHIMS))
def test_an_old_path_warns_and_hands_on_the_same_objects(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated.*{new}"):
        shim = fresh_import(old, monkeypatch)
    homes = [importlib.import_module(m) for m in (new, *NEW_HOMES)]
    for name in shim.__all__:  # type: ignore[attr-defined]
        value = getattr(shim, name)
        if (old, name) in COMPATIBILITY_VIEWS:
            continue
        if (old, name) in RENAMED:
            home, new_name = RENAMED[(old, name)]
            assert value is getattr(importlib.import_module(home), new_name), name
            continue
        found = [getattr(m, name) for m in homes if hasattr(m, name)]
        assert found, f"{name} has no new home"
        assert value is found[0], name


def test_compatibility_views_match_the_new_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_contract.conformance import BOUNDARIES, PLANTED_SECRET, SCENARIOS
    from agent_contract.registry import harness_names

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scenarios = fresh_import("agent_contract.scenarios", monkeypatch)
        checklist = fresh_import("agent_contract.checklist", monkeypatch)
    assert {b.id: b.rule for b in BOUNDARIES} == scenarios.BOUNDARIES  # type: ignore[attr-defined]
    assert {b.id: b.label for b in BOUNDARIES} == checklist.LABELS  # type: ignore[attr-defined]
    options = scenarios.RunOptions(user="u", budget=None)  # type: ignore[attr-defined]
    assert options.secrets == (PLANTED_SECRET,)  # the old default: the planted secret
    assert checklist.boundary_rows() == checklist.boundary_rows(SCENARIOS)  # type: ignore[attr-defined]
    assert harness_names() == scenarios.HARNESS_NAMES  # type: ignore[attr-defined]


def test_restore_run_is_contract_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_contract import Contract

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy = fresh_import("agent_contract.policy", monkeypatch)
    contract = Contract()
    state = contract.start(run_id="r-old")
    restored, transcript = policy.restore_run(contract, state.view.snapshot([]))  # type: ignore[attr-defined]
    assert (restored.view.run_id, transcript) == ("r-old", [])


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("agent_contract", "Usage", "TokenUsage"),
        ("agent_contract.messages", "Usage", "TokenUsage"),
        ("agent_contract.budget", "BudgetUsage", "RunCounters"),
    ],
)
def test_a_renamed_class_warns_under_its_old_name(module: str, old: str, new: str) -> None:
    home = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"use {new}"):
        value = getattr(home, old)
    assert value is getattr(home, new)
    with pytest.raises(AttributeError):
        _ = home.NoSuchName
