"""Session-wide guard for parallel runs (pytest-xdist).

``python -O -m pytest -n 2`` starts its workers as plain ``python``: the tests would run
without ``-O`` (or ``-W error``) and a mode of CI would check nothing it claims. Each
worker compares its interpreter flags with the controller's and refuses to start on a
difference. To run a flag mode in parallel, start the workers with the flags:
``python -O -m pytest --dist load --tx "2*popen//python=$(which python) -O"`` (what
.ci/run does).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest


def _interpreter_flags() -> list[Any]:
    """The flags a mode of the suite sets: optimization level and warning options."""
    return [sys.flags.optimize, list(sys.warnoptions)]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(controller) Hand the controller's interpreter flags to each worker."""
    node.workerinput["agent_contract_interpreter_flags"] = _interpreter_flags()


def pytest_configure(config: pytest.Config) -> None:
    """(worker) Refuse to run under other interpreter flags than the controller's."""
    wanted = getattr(config, "workerinput", {}).get("agent_contract_interpreter_flags")
    if wanted is not None and wanted != _interpreter_flags():
        raise pytest.UsageError(
            f"this pytest-xdist worker runs with interpreter flags {_interpreter_flags()} "
            f"(optimize, warnoptions), the controller with {wanted}: start the workers with "
            '--dist load --tx "N*popen//python=PYTHON FLAGS" (see tests/conftest.py)'
        )
