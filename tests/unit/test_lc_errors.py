"""The binding's exception mapping: complete for the installed LangChain and LangGraph,
most specific first, and applied where a graph is driven."""

from __future__ import annotations

import importlib
import inspect
import sqlite3

import pytest

from agent_contract.errors import (
    AgentContractError,
    CheckpointError,
    ConfigurationError,
    ModelError,
    ScriptExhaustedError,
)
from agent_contract_langchain.errors import FRAMEWORK_ERRORS, framework_errors, resolved

FRAMEWORK_MODULES = ("langgraph.errors", "langchain_core.exceptions")


def defined_exceptions() -> set[tuple[str, str]]:
    """Every exception class the framework modules define or re-export publicly (warning
    categories are not raised at a run, so they are left out)."""
    found = set()
    for module_name in FRAMEWORK_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("_") or not inspect.isclass(value):
                continue
            if issubclass(value, BaseException) and not issubclass(value, Warning):
                found.add((value.__module__, value.__name__))
    return found


def test_every_framework_exception_is_decided() -> None:
    """If this fails: a LangChain or LangGraph release added an exception; add it to
    FRAMEWORK_ERRORS, mapped to the contract exception it means or passed through on
    purpose, before its base class."""
    listed = {(module, name) for module, name, _, _ in FRAMEWORK_ERRORS}
    assert defined_exceptions() - listed == set()


def test_every_entry_resolves_on_the_locked_releases() -> None:
    assert len(resolved()) == len(FRAMEWORK_ERRORS)


def test_no_entry_is_shadowed_by_an_earlier_base() -> None:
    kinds = [kind for kind, _, _ in resolved()]
    shadowed = [
        (later.__name__, earlier.__name__)
        for i, earlier in enumerate(kinds)
        for later in kinds[i + 1 :]
        if issubclass(later, earlier)
    ]
    assert shadowed == []


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        pytest.param(sqlite3.DatabaseError("file is not a database"), CheckpointError, id="sqlite"),
        pytest.param(
            importlib.import_module("langgraph.errors").GraphRecursionError("limit 25"),
            ConfigurationError,
            id="recursion",
        ),
        pytest.param(
            importlib.import_module("langchain_core.exceptions").ModelRateLimitError("429"),
            ModelError,
            id="rate-limit",
        ),
    ],
)
def test_mapped_exceptions_become_the_contracts(
    raised: Exception, expected: type[AgentContractError]
) -> None:
    with pytest.raises(expected) as caught, framework_errors():
        raise raised
    assert caught.value.__cause__ is raised
    assert str(raised) in str(caught.value)


@pytest.mark.parametrize(
    "raised",
    [
        pytest.param(ScriptExhaustedError(2, 1), id="contract"),
        pytest.param(KeyError("x"), id="foreign"),
        pytest.param(
            importlib.import_module("langgraph.errors").GraphInterrupt(), id="passed-through"
        ),
    ],
)
def test_everything_else_passes_through_unchanged(raised: Exception) -> None:
    with pytest.raises(type(raised)) as caught, framework_errors():
        raise raised
    assert caught.value is raised
