"""`load_harness("module:attribute")`: a harness, or a zero-argument factory of one;
anything else is a configuration error (exit 2), never a contract failure."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from agent_contract.errors import ConfigurationError
from agent_contract.harnesses import offline_harness
from agent_contract.registry import load_harness

MODULE = textwrap.dedent(
    """
    from agent_contract.harnesses import offline_harness

    def factory():
        return offline_harness

    def raising():
        raise RuntimeError("factory broke")

    def exiting():
        raise SystemExit(3)

    def returns_none():
        return None

    def two_args(model, tools):
        return None

    direct = offline_harness
    not_callable = 42
    """
)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "user_harnesses.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("user_harnesses", None)
    return "user_harnesses"


@pytest.mark.parametrize("attribute", ["factory", "direct"])
def test_harness_or_factory_loads(module: str, attribute: str) -> None:
    assert load_harness(f"{module}:{attribute}") is offline_harness


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("raising", "raised RuntimeError"),
        ("exiting", r"called sys\.exit\(3\)"),
        ("returns_none", "returned NoneType"),
        ("two_args", "neither a harness"),
        ("not_callable", "not callable"),
        ("missing", "cannot load harness"),
    ],
)
def test_wiring_errors_are_configuration_errors(module: str, attribute: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        load_harness(f"{module}:{attribute}")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\ndef f(:\n", r"SyntaxError in .*user_broken\.py, line 2"),
        ("raise RuntimeError('no config')\n", "importing 'user_broken' raised RuntimeError"),
        ("import sys\nsys.exit(4)\n", r"importing 'user_broken' called sys\.exit\(4\)"),
    ],
    ids=["syntax-error", "raises", "exits"],
)
def test_a_module_that_fails_to_import_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, message: str
) -> None:
    (tmp_path / "user_broken.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "user_broken", raising=False)
    with pytest.raises(ConfigurationError, match=message):
        load_harness("user_broken:factory")
