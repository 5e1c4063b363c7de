"""The contract suite's scenarios, defined once and run on every harness.

Each is a :class:`~agent_contract.conformance.evaluate.Scenario`: a script of model
replies, tools, a budget and the expected outcome. The write-approval scenarios are in
:mod:`~agent_contract.conformance.approvals`, the ones that pin the contract exactly
(names, messages, spellings, crashes, counts) in
:mod:`~agent_contract.conformance.exactness`.

Every scenario plants :data:`~agent_contract.conformance.fixtures.PLANTED_SECRET` (in
arguments, tool results or exception text) and checks that it appears nowhere a run
emits: trace, tool messages, output, the JSON summary.

No pytest import: ``agent-contract check`` and the pytest suite both use this module.
"""

from __future__ import annotations

from typing import Final

from ..budget import Budget
from ..messages import Completion, Message
from ..testing import Reply, tool_call, tool_calls
from .approvals import build_approval_scenarios
from .evaluate import (
    Scenario,
    check_contents,
    check_hidden_text,
    check_history,
    check_offered,
    check_ran,
    check_timeout,
    check_truncated,
)
from .exactness import build_exactness_scenarios
from .fixtures import (
    PLANTED_SECRET,
    basic_tools,
    big_tool,
    credentials_tool,
    explode_tool,
    fetch_record_tool,
    hang_tool,
    slow_echo_tool,
    tools_with,
    typed_tool,
)
from .stack_scenarios import build_stack_scenarios
from .values import build_value_scenarios

__all__ = ["SCENARIOS", "build_scenarios", "scenario"]


def _loop_forever() -> tuple[Reply, ...]:
    return tuple(tool_call("echo", {"text": f"step {i}"}) for i in range(1, 8))


_SECRET_ARGS = {"text": f"my key is {PLANTED_SECRET}"}


def build_scenarios() -> list[Scenario]:
    """All scenarios, in a stable order."""
    return [
        Scenario(
            name="direct_answer",
            boundary="response_shape",
            description="a plain text reply is the answer; no tool runs",
            script=("Tool calling lets a model ask the runtime to act.",),
            tools=basic_tools,
            stop_reason="answered",
            output_contains=("Tool calling",),
            must_not_run=("echo", "forecast"),
        ),
        Scenario(
            name="single_tool_call",
            boundary="call_id_binding",
            description="one call, its result bound to its id, then an answer",
            script=(tool_call("echo", _SECRET_ARGS, id="call_a"), "done"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None),),
            output_contains=("done",),
        ),
        Scenario(
            name="parallel_calls_issue_order",
            boundary="call_id_binding",
            description="two calls at once; the first is slowest; results come back in issue order",
            script=(
                tool_calls(
                    ("slow_echo", {"text": "first", "delay": 0.15}, "call_first"),
                    ("slow_echo", {"text": "second", "delay": 0.0}, "call_second"),
                ),
                "both done",
            ),
            tools=tools_with(slow_echo_tool),
            stop_reason="answered",
            trajectory=("slow_echo", "slow_echo"),
            results=(("success", None), ("success", None)),
            extra=(check_contents(["slow: first", "slow: second"], "call_id_binding"),),
        ),
        Scenario(
            name="unknown_tool",
            boundary="allowlist",
            description="a call to a tool nobody registered gets unknown_tool",
            script=(tool_call("delete_everything", {"text": "now"}), "could not do it"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("delete_everything",),
            results=(("error", "unknown_tool"),),
        ),
        Scenario(
            name="outside_allowlist",
            boundary="allowlist",
            description="a registered tool outside the run's allowlist is neither offered nor run",
            script=(tool_call("forecast", {"city": "Oslo", "days": 2}), "not allowed"),
            tools=basic_tools,
            allowlist=("echo",),
            stop_reason="answered",
            trajectory=("forecast",),
            results=(("error", "not_allowed"),),
            must_not_run=("forecast",),
            extra=(check_offered({"echo"}),),
        ),
        *[
            Scenario(
                name=f"invalid_arguments_{label}",
                boundary="argument_validation",
                description=f"arguments with {label.replace('_', ' ')} are refused before running",
                script=(tool_call("forecast", args), "bad arguments"),
                tools=basic_tools,
                stop_reason="answered",
                trajectory=("forecast",),
                results=(("error", "invalid_arguments"),),
                must_not_run=("forecast",),
            )
            for label, args in (
                ("missing_field", {"city": "Oslo"}),
                ("wrong_type", {"city": "Oslo", "days": "two"}),
                ("extra_property", {"city": "Oslo", "days": 2, "units": "metric"}),
                ("failed_constraint", {"city": "Oslo", "days": 30}),
            )
        ],
        Scenario(
            name="malformed_json_arguments",
            boundary="response_shape",
            description="arguments that are not parseable JSON are a contract violation",
            script=(tool_call("echo", '{"text": "unterminated', id="call_bad"),),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="arguments_not_object",
            boundary="response_shape",
            description="arguments that are a JSON list are a contract violation",
            script=(tool_call("echo", ["a", "b"], id="call_list"),),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo",),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="missing_call_id",
            boundary="response_shape",
            description="a call without an id cannot be answered: the run stops, nothing runs",
            script=(tool_call("echo", {"text": "hi"}, id=None),),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo",),
            must_not_run=("echo",),
        ),
        Scenario(
            name="duplicate_call_ids",
            boundary="response_shape",
            description="two calls sharing one id are a contract violation",
            script=(
                tool_calls(
                    ("echo", {"text": "one"}, "call_dup"), ("echo", {"text": "two"}, "call_dup")
                ),
            ),
            tools=basic_tools,
            stop_reason="invalid_response",
            trajectory=("echo", "echo"),
            results=(("error", "invalid_call"),),
            must_not_run=("echo",),
        ),
        Scenario(
            name="empty_response",
            boundary="response_shape",
            description="a reply with neither text nor calls is never an answer",
            script=(Completion(text=""),),
            tools=basic_tools,
            stop_reason="invalid_response",
        ),
        Scenario(
            name="tool_raises",
            boundary="tool_errors",
            description="an exception becomes tool_error; its text (with a secret) stays hidden",
            script=(tool_call("explode", {"text": "go"}), "it failed"),
            tools=tools_with(explode_tool),
            stop_reason="answered",
            trajectory=("explode",),
            results=(("error", "tool_error"),),
            extra=(check_hidden_text,),
        ),
        *[
            Scenario(
                name=f"classified_{kind}",
                boundary="tool_errors",
                description=f"a tool's own {kind} error keeps its kind",
                script=(tool_call("fetch_record", {"kind": kind}), "handled"),
                tools=tools_with(fetch_record_tool),
                stop_reason="answered",
                trajectory=("fetch_record",),
                results=(("error", kind),),
            )
            for kind in ("unauthorized", "not_found", "transient")
        ],
        Scenario(
            name="tool_timeout",
            boundary="timeouts",
            description="a tool past its timeout: outcome unknown, side effects possible",
            script=(tool_call("hang", {"text": "slow"}), "timed out"),
            tools=tools_with(hang_tool),
            stop_reason="answered",
            trajectory=("hang",),
            results=(("error", "timeout"),),
            extra=(check_timeout,),
            requires=("timeouts",),
        ),
        Scenario(
            name="oversized_result",
            boundary="result_size",
            description="a 5000-char result is cut to 500 chars with a marker",
            script=(tool_call("big", {"text": "all"}), "truncated"),
            tools=tools_with(big_tool),
            stop_reason="answered",
            trajectory=("big",),
            results=(("success", None),),
            extra=(check_truncated,),
        ),
        Scenario(
            name="non_string_results",
            boundary="serialization",
            description="numbers, dicts and lists reach the model as JSON; a set is an error",
            script=(
                tool_calls(
                    ("typed", {"kind": "int"}, "call_int"),
                    ("typed", {"kind": "float"}, "call_float"),
                    ("typed", {"kind": "dict"}, "call_dict"),
                    ("typed", {"kind": "list"}, "call_list"),
                    ("typed", {"kind": "set"}, "call_set"),
                ),
                "typed",
            ),
            tools=tools_with(typed_tool),
            budget=Budget(deadline_seconds=30.0, max_tool_calls=8),
            stop_reason="answered",
            trajectory=("typed",) * 5,
            results=(("success", None),) * 4 + (("error", "tool_error"),),
            extra=(
                check_contents(
                    [
                        "42",
                        "2.5",
                        '{"城市": "北京", "ok": true, "none": null}',
                        '[1, "二", {"three": 3}]',
                    ]
                ),
            ),
        ),
        Scenario(
            name="non_ascii",
            boundary="serialization",
            description="non-ASCII arguments and results pass through unchanged",
            script=(tool_call("echo", {"text": "你好, café ☕"}), "好的"),
            tools=basic_tools,
            stop_reason="answered",
            trajectory=("echo",),
            results=(("success", None),),
            output_contains=("好的",),
            extra=(check_contents(["echo: 你好, café ☕"]),),
        ),
        Scenario(
            name="step_budget",
            boundary="model_step_budget",
            description="a model that keeps calling tools stops at max_model_steps, unanswered",
            script=_loop_forever(),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_model_steps=3, max_tool_calls=10),
            stop_reason="max_model_steps",
            trajectory=("echo",) * 3,
            results=(("success", None),) * 3,
            model_calls=3,
            extra=(check_ran("echo", 3, "model_step_budget"),),
        ),
        Scenario(
            name="tool_call_budget_parallel_batch",
            boundary="tool_call_budget",
            description="a batch of 3 under a budget of 2 is refused whole, before any runs",
            script=(
                tool_calls(
                    ("echo", {"text": "a"}), ("echo", {"text": "b"}), ("echo", {"text": "c"})
                ),
            ),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_tool_calls=2),
            stop_reason="max_tool_calls",
            trajectory=("echo",) * 3,
            results=(("error", "budget_exceeded"),) * 3,
            must_not_run=("echo",),
        ),
        Scenario(
            name="repeated_identical_calls",
            boundary="repeated_calls",
            description="the same call (arguments in another key order) a third time is refused",
            script=(
                tool_call("forecast", {"city": "Oslo", "days": 2}),
                tool_call("forecast", {"days": 2, "city": "Oslo"}),
                tool_call("forecast", {"city": "Oslo", "days": 2}),
            ),
            tools=basic_tools,
            budget=Budget(deadline_seconds=30.0, max_identical_calls=2),
            stop_reason="repeated_call",
            trajectory=("forecast",) * 3,
            results=(("success", None), ("success", None), ("error", "repeated_call")),
            extra=(check_ran("forecast", 2, "repeated_calls"),),
        ),
        Scenario(
            name="history_replayed",
            boundary="history",
            description="earlier turns reach the model before the new one, in order",
            script=("four",),
            tools=basic_tools,
            user="and in words?",
            history=(
                Message(role="user", content="what is 2+2?"),
                Message(role="assistant", content="4"),
            ),
            stop_reason="answered",
            output_contains=("four",),
            extra=(check_history,),
        ),
        Scenario(
            name="tool_schemas_offered",
            boundary="allowlist",
            description="the model is offered exactly the allowlisted tools, with their schemas",
            script=("nothing to do",),
            tools=basic_tools,
            stop_reason="answered",
            extra=(check_offered({"echo", "forecast"}),),
        ),
        Scenario(
            name="secret_in_result",
            boundary="trace_redaction",
            description="a secret a tool returns is redacted before the model or trace sees it",
            script=(tool_call("credentials", {"text": "alice"}), "got them"),
            tools=tools_with(credentials_tool),
            stop_reason="answered",
            trajectory=("credentials",),
            results=(("success", None),),
        ),
    ]


SCENARIOS: Final[tuple[Scenario, ...]] = tuple(
    build_scenarios()
    + build_value_scenarios()
    + build_approval_scenarios()
    + build_stack_scenarios()
    + build_exactness_scenarios()
)
"""Every scenario, by stable name order of definition."""


def scenario(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        KeyError: no such scenario.
    """
    for item in SCENARIOS:
        if item.name == name:
            return item
    raise KeyError(name)
