"""Mutation testing of the contract suite: every deliberately broken harness of
``harnesses.py`` / ``framework_mutants.py`` (LangChain) / ``pydantic_ai_mutants.py``
(PydanticAI) is caught, under the boundary its defect breaks, by ``check``'s own
measurement (scenarios, then the comparison with the offline
reference, then not-checked cells); every correct twin holds everywhere.

The score is printed at the end of the run (``mutation score: N/M ...``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from agent_contract.conformance import (
    SCENARIOS,
    Scenario,
    ScenarioOutcome,
    run_check,
    run_scenario,
)
from agent_contract.conformance.check import CheckReport
from agent_contract.conformance.scenarios import scenario as named
from agent_contract.harnesses import Harness, Observation, RunInput, offline_harness
from agent_contract.model import Model
from agent_contract.tools import ToolSpec

from .conftest import ScoreRecorder
from .harnesses import CORE_MUTANTS, CORE_TWINS, Mutant, Twin

HAS_LANGCHAIN = importlib.util.find_spec("agent_contract_langchain") is not None
HAS_PYDANTIC_AI = importlib.util.find_spec("agent_contract_pydantic_ai") is not None

_reference: dict[str, ScenarioOutcome] = {}


def _check(
    name: str, harness: Harness, scenarios: Sequence[Scenario], **options: object
) -> CheckReport:
    def runner(scenario: Scenario, harness_name: str) -> ScenarioOutcome:
        if harness_name == "offline":
            if scenario.name not in _reference:
                _reference[scenario.name] = run_scenario(scenario, offline_harness, "offline")
            return _reference[scenario.name]
        return run_scenario(scenario, harness, harness_name)

    return run_check(
        [name], harnesses={name: harness}, scenarios=scenarios, runner=runner, **options
    )  # type: ignore[arg-type]


def _framework_mutants() -> tuple[list[Mutant], list[Twin]]:
    if not HAS_LANGCHAIN:
        return [], []
    from . import framework_mutants as fw

    mutants = [
        Mutant(
            "subclass_terse_validation",
            "ContractMiddleware subclass",
            "validation errors replaced by a message without path or constraint",
            "argument_validation",
            lambda: fw.create_agent_harness(fw.TerseValidationMiddleware),
        ),
        Mutant(
            "subclass_echoes_refused_arguments",
            "ContractMiddleware subclass",
            "a refused call's arguments appended to its error",
            "trace_redaction",
            lambda: fw.create_agent_harness(fw.EchoingRefusalMiddleware),
        ),
        Mutant(
            "stock_tool_call_limit",
            "stock middleware in its place",
            "ToolCallLimitMiddleware instead of the contract's tool-call budget",
            "tool_call_budget",
            fw.stock_tool_limit,
        ),
        Mutant(
            "stock_model_call_limit",
            "stock middleware in its place",
            "ModelCallLimitMiddleware instead of the contract's step budget",
            "model_step_budget",
            fw.stock_model_limit,
        ),
        Mutant(
            "suite_endpoint_drops_edits",
            "approval endpoint (CreateAgentContractSuite.approval_endpoint)",
            "a reviewer's edit turned into a plain approval",
            "write_approval",
            lambda: fw.EditDroppingSuite().harness(),
        ),
        Mutant(
            "checkpointer_resume_unsealed",
            "sealed checkpointer (resume over sqlite_checkpointer)",
            "a resume that skips the paused checkpoint's seal and reads the file's newest rows",
            "checkpoint_integrity",
            lambda: fw.create_agent_harness(check=fw.resume_unchecked),
        ),
        Mutant(
            "stream_client_repairs_arguments",
            "provider client (ChatOpenAI subclass, langchain-stream@openai over the wire)",
            "a streamed call's argument pieces joined and 'repaired' into JSON before the "
            "message is built",
            "streamed_arguments",
            lambda: fw.stream_column(repair=True),
        ),
        Mutant(
            "stream_chat_model_repairs_arguments",
            "streaming chat model wrapper (ContractChatModel subclass, create_agent streamed)",
            "a streamed call's argument pieces joined and 'repaired' into JSON before "
            "LangChain sees them",
            "streamed_arguments",
            lambda: fw.create_agent_harness(chat_model=fw.RepairingChatModel),
        ),
    ]
    twins = [
        Twin("create_agent_plain_subclass", lambda: fw.create_agent_harness(fw.PlainMiddleware)),
        Twin("suite_team_endpoint", lambda: fw.ShopSuite().harness()),
        Twin("stream_client_pieces_as_sent", lambda: fw.stream_column(repair=False)),
        Twin(
            "stream_chat_model_pieces_as_sent",
            lambda: fw.create_agent_harness(chat_model=fw.ContractChatModel),
        ),
    ]
    return mutants, twins


def _pydantic_ai_mutants() -> tuple[list[Mutant], list[Twin]]:
    if not HAS_PYDANTIC_AI:
        return [], []
    from . import pydantic_ai_mutants as pa

    def agent(**wiring: Any) -> Callable[[], Harness]:
        return lambda: pa.agent_harness(**wiring)

    mutants = [
        Mutant(
            "capability_terse_validation",
            "ContractCapability subclass",
            "validation errors the model gets replaced by a message without path or constraint",
            "argument_validation",
            agent(capability=pa.TerseValidationCapability),
            needs_framework="pydantic_ai",
        ),
        Mutant(
            "capability_echoes_refused_arguments",
            "ContractCapability subclass",
            "a refused call's arguments appended to the error the model gets next",
            "trace_redaction",
            agent(capability=pa.EchoingRefusalCapability),
            needs_framework="pydantic_ai",
        ),
        Mutant(
            "wrapper_model_drops_finish",
            "model wrapper (WrapperModel)",
            "each response rebuilt from its parts: finish reason and refusal lost",
            "finish_reasons",
            agent(model=pa.NormalizingModel),
            needs_framework="pydantic_ai",
        ),
        Mutant(
            "tool_conversion_open_schema",
            "tool conversion",
            "the team's tools handed to the contract with an open schema",
            "argument_validation",
            agent(tools=pa.open_conversion),
            needs_framework="pydantic_ai",
        ),
        Mutant(
            "run_started_without_caller",
            "run driver",
            "runs started with contract.start() from the run id and context, no caller",
            "tool_context",
            agent(start=pa.without_caller),
            needs_framework="pydantic_ai",
        ),
    ]
    twins = [
        Twin("team_agent_driver", agent(), needs_framework="pydantic_ai"),
        Twin(
            "capability_plain_subclass",
            agent(capability=pa.PlainCapability),
            needs_framework="pydantic_ai",
        ),
        Twin(
            "wrapper_model_passthrough",
            agent(model=lambda m: pa.NormalizingModel(m, keep=True)),
            needs_framework="pydantic_ai",
        ),
    ]
    return mutants, twins


FW_MUTANTS, FW_TWINS = _framework_mutants()
PA_MUTANTS, PA_TWINS = _pydantic_ai_mutants()
MUTANTS = (*CORE_MUTANTS, *FW_MUTANTS, *PA_MUTANTS)
TWINS = (*CORE_TWINS, *FW_TWINS, *PA_TWINS)


def _wires(entry: Mutant | Twin) -> str:
    """What a mutant or twin wires, for the score line: the core, LangChain, PydanticAI."""
    if entry in (*FW_MUTANTS, *FW_TWINS):
        return "langchain"
    if entry in (*PA_MUTANTS, *PA_TWINS):
        return "pydantic-ai"
    return "core"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_under_its_boundary(mutant: Mutant, mutation_score: ScoreRecorder) -> None:
    """The mutant's boundary is broken (or crashed: a run that raised, filed under the
    scenario's boundary; or, for a harness that leaves the boundary out, not checked,
    which fails the run) in ``check``'s measurement."""
    scenarios = [s for s in SCENARIOS if s.boundary == mutant.boundary]
    report = _check(mutant.name, mutant.build(), scenarios)
    cell = report.cell(mutant.boundary, mutant.name)
    wanted = ("not_checked",) if mutant.unchecked else ("broken", "crashed")
    others = sorted({c.boundary for c in report.cells if c.status in ("broken", "crashed")})
    if cell.status in wanted:
        mutation_score("caught", mutant.name, _wires(mutant))
    elif others:
        mutation_score("wrong", f"{mutant.name} ({', '.join(others)})", _wires(mutant))
    else:
        mutation_score("escaped", mutant.name, _wires(mutant))
    assert cell.status in wanted, f"{mutant.name} ({mutant.defect}): {cell.status}, {others}"
    assert report.exit_code == 5


@pytest.mark.parametrize("twin", TWINS, ids=[t.name for t in TWINS])
def test_correct_twin_holds_everywhere(twin: Twin, mutation_score: ScoreRecorder) -> None:
    """The same wiring without the defect: no false alarm on any scenario it can express."""
    report = _check(twin.name, twin.build(), SCENARIOS)
    bad = [
        (c.boundary, c.status, c.evidence[:1])
        for c in report.cells
        if c.status != "holds" and not c.undeclared  # a row it declares it cannot express
    ]
    if bad:
        mutation_score("false_alarms", twin.name, _wires(twin))
    assert bad == []


@pytest.mark.parametrize(
    ("name", "catcher"),
    [
        ("answer_schema_loosened", "structured_answer_missing_field"),
        ("answer_schema_opened", "structured_answer_undeclared_field"),
    ],
)
def test_a_loosened_answer_schema_escapes_the_out_of_range_answer(name: str, catcher: str) -> None:
    """A loosened answer schema keeps its ``maximum``: the out-of-range structured answer
    alone holds on it (the gap issue 25 names); the answer that leaves a required field
    out, or adds an undeclared one, catches it."""
    mutant = next(m for m in CORE_MUTANTS if m.name == name)
    alone = _check(name, mutant.build(), [named("structured_answer_retried")])
    assert alone.cell("response_shape", name).status == "holds"
    caught = _check(name, mutant.build(), [named(catcher)])
    assert caught.cell("response_shape", name).status == "broken"


def test_an_undeclared_capability_fails_the_run_unless_opted_out() -> None:
    """``timeouts_undeclared`` leaves the timeouts boundary not checked: exit 5, unless
    the team opts out with ``allow_unchecked`` (then it is shown as allowed, exit 0)."""
    mutant = next(m for m in CORE_MUTANTS if m.name == "timeouts_undeclared")
    scenarios = [s for s in SCENARIOS if s.boundary in ("timeouts", "allowlist")]
    report = _check(mutant.name, mutant.build(), scenarios)
    assert [(c.boundary, c.allowed) for c in report.unchecked] == [("timeouts", False)]
    assert report.exit_code == 5
    allowed = _check(mutant.name, mutant.build(), scenarios, allow_unchecked=("timeouts",))
    assert allowed.unchecked == ()
    assert allowed.cell("timeouts", mutant.name).allowed
    assert allowed.exit_code == 0


def test_a_crash_is_its_own_verdict() -> None:
    """A harness that raises: its cell is ``crashed`` under the scenario's boundary, and
    no other boundary (trace redaction) is blamed for it."""

    def raising(model: Model, tools: list[ToolSpec], options: RunInput) -> Observation:
        raise RuntimeError("the team's driver fell over")

    scenarios = [s for s in SCENARIOS if s.name in ("unknown_tool", "single_tool_call")]
    report = _check("raising", raising, scenarios)
    statuses = {c.boundary: c.status for c in report.cells}
    assert statuses == {"allowlist": "crashed", "call_id_binding": "crashed"}
    assert "raised RuntimeError" in report.cell("allowlist", "raising").evidence[0].observed
