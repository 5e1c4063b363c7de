"""The registry (``agent_contract.registry``): entry points in order, plugins validated,
and a binding that is not installed reported as dependency_missing (exit 4) without the
core naming it."""

from __future__ import annotations

import importlib.metadata
import io
import subprocess
import sys
from pathlib import Path

import pytest

from agent_contract import exitcodes, registry
from agent_contract.app import cli
from agent_contract.errors import ConfigurationError, DependencyMissingError
from agent_contract.harnesses import OFFLINE, offline_harness
from agent_contract.registry import (
    COMMAND_GROUP,
    HARNESS_GROUP,
    command_entry_points,
    durable_runner,
    harness_names,
    harness_plugin,
    load_harness,
    missing_bindings,
)
from tests.workspace import bindings, core, published_bindings

BINDING = "agent-contract-langchain"
PYDANTIC_BINDING = "agent-contract-pydantic-ai"
BINDINGS = tuple(sorted(binding.name for binding in published_bindings()))
"""Every published binding of the workspace (tests/workspace.py), by name: the order of
the core's extras in its installed metadata."""


def _installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


INSTALLED = tuple(b for b in bindings() if b.published or _installed(b.name))
"""The bindings whose entry points the registry reads here: every published one (the dev
environment installs them), and an experiment (``published = false``) only when it was
installed beside them (``uv run --package <its name>``)."""
EVERY_BINDING = frozenset(binding.name for binding in bindings())
"""Every binding's distribution, published or not: what "only the core installed" hides."""


def invoke(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def declared_harnesses() -> tuple[str, ...]:
    """The harness entry points the pyprojects declare, in the registry's order: the
    core's, then each binding's by distribution name, each in its installed metadata's
    order (by name)."""
    ordered = (core(), *sorted(INSTALLED, key=lambda binding: binding.name))
    return tuple(name for d in ordered for name in sorted(d.entry_points.get(HARNESS_GROUP, {})))


def test_the_core_registers_offline_first_then_the_binding_in_its_order() -> None:
    assert harness_names() == declared_harnesses()
    assert harness_names()[0] == "offline"
    assert set(harness_names()) >= {
        "offline",
        "langchain",
        "langchain-async",
        "langchain-stream",
        "plain-create-agent",
        "plain-pydantic-ai",
        "pydantic-ai",
        "pydantic-ai-async",
        "pydantic-ai-stream",
    }
    assert harness_plugin("offline") is OFFLINE
    assert load_harness("offline") is offline_harness
    assert [ep.name for ep in command_entry_points()] == ["lcel"]


def test_plugins_carry_role_default_and_durable_runner() -> None:
    plugins = {name: harness_plugin(name) for name in harness_names()}
    assert {n for n, p in plugins.items() if p.role == "control"} == {
        "plain-create-agent",
        "plain-pydantic-ai",
    }
    assert {n for n, p in plugins.items() if p.default} == {
        "offline",
        "langchain",
        "plain-create-agent",
        "pydantic-ai",
        "plain-pydantic-ai",
    }
    assert {n for n, p in plugins.items() if p.durable is not None} == {
        "offline",
        "langchain",
        "pydantic-ai",
    }
    assert all(p.name == n and p.description for n, p in plugins.items())


def test_reading_the_registry_imports_no_framework() -> None:
    code = (
        "import sys, agent_contract.registry as h;"
        "[h.harness_plugin(n) for n in h.harness_names()];"
        "[ep.load() for ep in h.command_entry_points()];"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langchain', 'langchain_core',"
        " 'langgraph')]; assert not bad, bad"
    )
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_an_unknown_name_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown harness 'cloud'; use one of offline"):
        load_harness("cloud")
    with pytest.raises(ConfigurationError, match="cannot run durably"):
        durable_runner("plain-create-agent")


def test_an_entry_point_must_name_a_plugin_of_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = importlib.metadata.EntryPoint(
        name="offline", value="agent_contract.harnesses:offline_harness", group=HARNESS_GROUP
    )
    monkeypatch.setattr(registry, "_entries", lambda group: (wrong,))
    with pytest.raises(ConfigurationError, match="is not a HarnessPlugin named 'offline'"):
        harness_plugin("offline")


def test_a_missing_framework_names_the_requirement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The binding is installed, a LangGraph module it imports is not: the error names
    the distribution the binding requires, read from its metadata."""
    monkeypatch.delitem(sys.modules, "agent_contract_langchain.resuming", raising=False)
    monkeypatch.setitem(sys.modules, "langgraph.types", None)
    with pytest.raises(DependencyMissingError) as caught:
        load_harness("langchain")
    assert caught.value.package == "langgraph"


def test_a_missing_binding_module_names_the_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agent_contract_langchain.resuming", None)
    with pytest.raises(DependencyMissingError) as caught:
        load_harness("langchain")
    assert caught.value.package == BINDING


# -- the binding not installed at all ------------------------------------------------------


@pytest.fixture
def without_binding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The registry as it is when only the core is installed (no binding)."""
    real = registry._entries

    def core_only(group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
        return tuple(
            ep for ep in real(group) if ep.dist is not None and ep.dist.name not in EVERY_BINDING
        )

    monkeypatch.setattr(registry, "_entries", core_only)
    monkeypatch.setattr(registry, "_installed", lambda distribution: distribution not in BINDINGS)
    monkeypatch.setenv("AGENT_CONTRACT_DATA_DIR", str(tmp_path))


@pytest.mark.usefixtures("without_binding")
def test_the_core_declares_the_binding_in_its_extras() -> None:
    assert missing_bindings() == BINDINGS
    assert harness_names() == ("offline",)
    assert [ep.group for ep in command_entry_points()] == []
    assert COMMAND_GROUP == "agent_contract.commands"


@pytest.mark.usefixtures("without_binding")
@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["lcel", "hello"], id="lcel"),
        pytest.param(["matrix", "--langchain", "latest"], id="matrix"),
        pytest.param(["check"], id="default-check"),
        pytest.param(["check", "--harness", "offline,langchain"], id="check-named"),
        pytest.param(["run", "calculate 1+1", "--harness", "langchain"], id="run"),
        pytest.param(["run", "calculate 1+1", "--harness", "pydantic-ai"], id="run-pydantic-ai"),
        pytest.param(["check", "--harness", "pydantic-ai"], id="check-pydantic-ai"),
    ],
)
def test_commands_that_need_the_binding_exit_4_naming_it(argv: list[str]) -> None:
    code, out, err = invoke(*argv)
    assert (code, out) == (exitcodes.EXIT_DEPENDENCY_MISSING, "")
    assert err.startswith(f"dependency_missing: install '{', '.join(BINDINGS)}'")


@pytest.mark.usefixtures("without_binding")
def test_the_offline_path_works_without_the_binding() -> None:
    assert invoke("run", "calculate 1+1")[0] == exitcodes.EXIT_OK
    code, out, _ = invoke("check", "--harness", "offline")
    assert code == exitcodes.EXIT_OK
    assert "every boundary holds on offline" in out
    assert invoke("bogus")[0] == exitcodes.EXIT_DEPENDENCY_MISSING  # it may be a binding's


def test_an_unknown_command_with_every_binding_installed_is_a_usage_error() -> None:
    assert invoke("bogus")[0] == exitcodes.EXIT_USAGE
