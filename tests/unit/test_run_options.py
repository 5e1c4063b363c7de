"""The run's keywords are declared once (RunOptions), next to the RunInput they fill; a
resume's too (ResumeOptions)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

import agent_contract_langchain
import agent_contract_pydantic_ai
from agent_contract import resume as agent_contract_resume
from agent_contract import run
from agent_contract.runtime import RunInput, RunOptions

HARNESS_ONLY = {
    "user",
    "decider",
    "commentary",
    "answer_format",
    "trace_sink",
    "extras",
    "crash",
    "tamper",
    "sub_agent",
}
"""RunInput's fields a keyword front door does not take: the user turn is its positional
``user_message``; the rest are a harness's or the Contract's business."""


def test_run_options_are_run_inputs_fields_and_no_front_door_repeats_them() -> None:
    fields = {field.name for field in dataclasses.fields(RunInput)}
    assert set(RunOptions.__annotations__) == fields - HARNESS_ONLY
    assert RunInput.of("hi") == RunInput(user="hi")
    front_doors = [
        run,
        agent_contract_langchain.run_agent,
        agent_contract_langchain.arun_agent,
        agent_contract_pydantic_ai.run_agent,
        agent_contract_pydantic_ai.arun_agent,
    ]
    for front_door in front_doors:
        parameters = inspect.signature(front_door).parameters
        assert not set(parameters) & set(RunOptions.__annotations__), front_door
        assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD, front_door


def test_resume_options_are_the_parameters_they_reach_and_no_resume_repeats_them() -> None:
    from agent_contract.runtime import Contract, ResumeOptions, RunState
    from agent_contract_langchain.resuming import GraphResumeOptions

    reached = {
        "context": inspect.signature(Contract.restore).parameters["context"],
        "checkpoint": inspect.signature(RunState.resume).parameters["checkpoint"],
    }
    declared = {
        k: getattr(t, "__forward_arg__", t) for k, t in ResumeOptions.__annotations__.items()
    }
    assert declared == {k: p.annotation for k, p in reached.items()}
    assert all(p.default is None for p in reached.values())
    assert set(ResumeOptions.__annotations__) < set(GraphResumeOptions.__annotations__)
    resumes = [
        agent_contract_langchain.resume_agent,
        agent_contract_langchain.aresume_agent,
        agent_contract_langchain.resume_graph,
        agent_contract_langchain.aresume_graph,
    ]
    for resume in resumes:
        parameters = inspect.signature(resume).parameters
        assert not set(parameters) & set(GraphResumeOptions.__annotations__), resume
        assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD, resume
    for resume in (agent_contract_resume, agent_contract_pydantic_ai.resume_agent):
        parameters = inspect.signature(resume).parameters
        assert not set(parameters) & set(ResumeOptions.__annotations__), resume
        assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD, resume


def test_resume_agent_hands_create_agent_its_options_in_either_spelling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_contract_langchain import resuming

    built: list[dict[str, Any]] = []
    resumed: list[dict[str, Any]] = []
    monkeypatch.setattr(resuming, "build_agent", lambda model, contract, **kw: built.append(kw))
    monkeypatch.setattr(
        resuming,
        "resume_graph",
        lambda graph, contract, snapshot, approvals, **kw: resumed.append(kw),
    )
    resuming.resume_agent(
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        {},
        checkpointer="saver",
        create_agent_options={"tools": ["t"]},
        middleware=["m"],  # type: ignore[call-arg]
        system="s",
        answers={"i": 1},
    )
    assert built == [{"system": "s", "checkpointer": "saver", "tools": ["t"], "middleware": ["m"]}]
    assert resumed == [{"mode": "invoke", "system": "s", "answers": {"i": 1}}]
