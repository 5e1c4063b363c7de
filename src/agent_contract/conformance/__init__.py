"""The conformance kit: the contract suite's boundaries, scenarios and checks, run on
any harness.

- :mod:`~agent_contract.conformance.boundaries`: one module per boundary, each holding
  its row, its scenarios and its checks (``boundaries/<id>.py``), and the table of them;
- :mod:`~agent_contract.conformance.base`: the types they are written in (``Boundary``,
  ``Scenario``, ``Problem``, the checks);
- :mod:`~agent_contract.conformance.fixtures`: the planted secret, the probe, the
  scripted human, the tools scenarios of several boundaries share;
- :mod:`~agent_contract.conformance.checks`: the checks scenarios of several boundaries
  share;
- :mod:`~agent_contract.conformance.scenarios`: every scenario, in run order;
- :mod:`~agent_contract.conformance.evaluate`: judging a run;
- :mod:`~agent_contract.conformance.reference`: comparing a run with the reference
  harness's;
- :mod:`~agent_contract.conformance.runner`: one scenario on one harness;
- :mod:`~agent_contract.conformance.check` and
  :mod:`~agent_contract.conformance.report`: ``agent-contract check``'s checklist;
- :mod:`~agent_contract.conformance.junit`: the checklist as JUnit XML for CI;
- :mod:`~agent_contract.conformance.suite`: :class:`ContractSuite` for your own tests
  (imports pytest; not re-exported here);
- :mod:`~agent_contract.conformance.plugin`: the pytest plugin (fixtures).

The kit uses the runtime and never the application (:mod:`agent_contract.app`).
"""

from .base import Boundary, Problem, Scenario
from .boundaries.table import BOUNDARIES, boundary, boundary_label, boundary_rows
from .check import CheckReport, run_check
from .evaluate import evaluate, observe
from .fixtures import PLANTED_SECRET, Probe, ScriptedDecider, hide_planted
from .report import CHECK_FORMAT_VERSION, render_json, render_markdown, render_text
from .runner import ScenarioOutcome, run_scenario
from .scenarios import SCENARIOS, scenario

__all__ = [
    "BOUNDARIES",
    "CHECK_FORMAT_VERSION",
    "PLANTED_SECRET",
    "SCENARIOS",
    "Boundary",
    "CheckReport",
    "Probe",
    "Problem",
    "Scenario",
    "ScenarioOutcome",
    "ScriptedDecider",
    "boundary",
    "boundary_label",
    "boundary_rows",
    "evaluate",
    "hide_planted",
    "observe",
    "render_json",
    "render_markdown",
    "render_text",
    "run_check",
    "run_scenario",
    "scenario",
]
