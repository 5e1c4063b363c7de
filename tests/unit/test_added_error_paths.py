"""Error paths added with issue 16's changes: each test fails when its path is removed."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

from agent_contract.conformance import run_check
from agent_contract.conformance.agent_factory import bounded_call
from agent_contract.conformance.scenarios import SCENARIOS
from agent_contract_langchain._driver.requests import injected_arguments


class _NoWeakref:
    """A tool function object that cannot be referenced weakly (no ``__weakref__``)."""

    __slots__ = ()

    def __call__(self, text: str, runtime: Any = None) -> str:
        return text


def test_injected_arguments_of_a_function_that_cannot_be_cached() -> None:
    tool = SimpleNamespace(func=_NoWeakref(), args={"text": {"type": "string"}})
    for _ in range(2):  # not cached, asked again: the same answer
        assert injected_arguments(tool, {"text": "a", "runtime": 1}) == {"runtime": 1}


def test_a_factory_outside_the_main_thread_is_not_interrupted() -> None:
    """No watchdog there: it would send SIGINT to the main thread, not to this one."""
    found: list[Any] = []

    def slow(model: Any) -> str:
        time.sleep(0.05)
        return "built"

    worker = threading.Thread(target=lambda: found.append(bounded_call(slow, None, 0.01)))
    worker.start()
    worker.join()
    assert found == ["built"]


def test_a_boundary_no_scenario_ran_for_says_so() -> None:
    """The control breaks the trace (a row with no scenario of its own); on the
    checked harness that row is not checked, and its evidence says why."""
    unknown = [s for s in SCENARIOS if s.name == "unknown_tool"]
    report = run_check(["offline"], control=["plain-create-agent"], scenarios=unknown)
    cell = report.cell("trace_redaction", "offline")
    assert cell.status == "not_checked"
    assert [(e.scenario, e.observed) for e in cell.evidence] == [("-", "no scenario ran here")]
