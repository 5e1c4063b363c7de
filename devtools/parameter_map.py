"""``docs/PARAMETER_MAP.md``: the parameters of ``AgentExecutor`` (langchain-classic) and
``create_react_agent`` (langgraph.prebuilt) mapped to ``create_agent`` plus the contract.

Each :class:`MapRow` states what the old parameter did and what its replacement does,
both as measured: ``tests/suite/test_parameter_map.py`` runs both sides of every row with
a scripted chat model (the old APIs from langchain-classic and langgraph 1.x, installed
in the development environment only) and asserts the row's words. Regenerate with
``python -m devtools.parameter_map > docs/PARAMETER_MAP.md``; a test fails
when the file is stale.

Importing this module imports no LangChain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["ROWS", "MapRow", "render"]


@dataclass(frozen=True, kw_only=True)
class MapRow:
    """One old parameter and its replacement."""

    id: str
    """The row's test: ``test_<id>`` in ``tests/suite/test_parameter_map.py``."""
    api: Literal["AgentExecutor", "create_react_agent"]
    old: str
    """The old parameter, as written."""
    old_measured: str
    """What it did (measured)."""
    new: str
    """Its replacement on ``create_agent`` with ``ContractMiddleware``."""
    new_measured: str
    """What the replacement did (measured)."""


ROWS: Final[tuple[MapRow, ...]] = (
    MapRow(
        id="max_iterations",
        api="AgentExecutor",
        old="`max_iterations=2` (a model that calls a tool forever)",
        old_measured='output "Agent stopped due to max iterations." after 2 model calls',
        new="`Budget(max_model_steps=2)`",
        new_measured="stop `max_model_steps` after 2 model calls, no output (exit 3)",
    ),
    MapRow(
        id="max_execution_time",
        api="AgentExecutor",
        old="`max_execution_time=0.1` (a tool that takes 0.2 s)",
        old_measured='output "Agent stopped due to max iterations." after 1 tool call',
        new="`Budget(deadline_seconds=0.1)`",
        new_measured="stop `deadline` after 1 tool call, no output (exit 3)",
    ),
    MapRow(
        id="early_stopping_method",
        api="AgentExecutor",
        old='`early_stopping_method="generate"`',
        old_measured="ValueError: tool-calling agents support only `force` "
        "(a fixed stop message as the output)",
        new="none: a stop is never dressed up as an answer",
        new_measured="every stop has `output=None` and a named `stop_reason`",
    ),
    MapRow(
        id="handle_parsing_errors",
        api="AgentExecutor",
        old="`handle_parsing_errors=True` (tool-call arguments that are not JSON)",
        old_measured="output '' with True and with False: nothing reports the bad call",
        new="nothing to set: the response contract",
        new_measured="stop `invalid_response`; the call gets an `invalid_call` error bound to "
        "its id; nothing runs",
    ),
    MapRow(
        id="return_intermediate_steps",
        api="AgentExecutor",
        old="`return_intermediate_steps=True`",
        old_measured="`intermediate_steps`: [(AgentAction('lookup', {'q': 'x'}), 'result for x')]",
        new="`RunResult.tool_calls` (and the redacted trace)",
        new_measured="`tool_calls`: [('lookup', {'q': 'x'}, 'success', 'result for x')]",
    ),
    MapRow(
        id="trim_intermediate_steps",
        api="AgentExecutor",
        old="`trim_intermediate_steps=1`",
        old_measured="the model saw 0, 1, 1 tool messages",
        new="`ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=1, keep=1)])` inside "
        "`ContractMiddleware(contract).around(...)`",
        new_measured="the model saw 0, 1, 2 tool messages, all but the last cleared; every "
        "call keeps its bound result",
    ),
    MapRow(
        id="unknown_tool",
        api="AgentExecutor",
        old="`tools=[lookup]`, the model calls `nope`",
        old_measured="observation 'nope is not a valid tool, try one of [lookup].'",
        new="the allowlist",
        new_measured="error `unknown_tool` bound to the call id; the run goes on",
    ),
    MapRow(
        id="recursion_limit",
        api="create_react_agent",
        old='`config={"recursion_limit": 5}` (a model that calls a tool forever)',
        old_measured="GraphRecursionError",
        new="`Budget(max_model_steps=2)` (the recursion limit still applies as a backstop)",
        new_measured="stop `max_model_steps` after 2 model calls, no output (exit 3)",
    ),
    MapRow(
        id="prompt",
        api="create_react_agent",
        old='`prompt="You are the shop."`',
        old_measured="the model's first message: system 'You are the shop.'",
        new='`system_prompt="You are the shop."`',
        new_measured="the model's first message: system 'You are the shop.'",
    ),
    MapRow(
        id="response_format",
        api="create_react_agent",
        old="`response_format=Answer` (a Pydantic model)",
        old_measured="`structured_response`: Answer(text='hello'), from a second model call",
        new="`response_format=ToolStrategy(Answer)` (or `ProviderStrategy`, or a bare schema)",
        new_measured="stop `answered` (''): the answer is validated against the schema and is "
        "`RunResult.structured_response`; the `Answer` tool is offered beside the allowlist, "
        "never run, not a tool call",
    ),
    MapRow(
        id="pre_model_hook",
        api="create_react_agent",
        old="`pre_model_hook` returning `llm_input_messages`",
        old_measured="the model saw the hook's messages: user 'hi', system 'note'",
        new="a `@before_model` middleware inside `ContractMiddleware(contract).around(...)`",
        new_measured="the model saw the hook's messages: user 'hi', system 'note'",
    ),
    MapRow(
        id="post_model_hook",
        api="create_react_agent",
        old="`post_model_hook` rewriting a tool call's arguments",
        old_measured="the tool ran with the rewritten arguments: 'result for EDITED'",
        new="an `@after_model` middleware inside `ContractMiddleware(contract).around(...)`",
        new_measured="the rewritten call ran: 'result for EDITED', validated again: a rewrite "
        "to `{'q': 123}` was refused `invalid_arguments`",
    ),
    MapRow(
        id="checkpointer",
        api="create_react_agent",
        old="`checkpointer=InMemorySaver()`",
        old_measured="`get_state(thread)` holds 4 messages",
        new="`checkpointer=InMemorySaver()` (the same)",
        new_measured="`get_state(thread)` holds 4 messages; the contract's approvals pause "
        "and resume through it",
    ),
    MapRow(
        id="interrupt_before",
        api="create_react_agent",
        old='`interrupt_before=["tools"]` (or `interrupt_after`) to review calls',
        old_measured="paused before `tools` (with `interrupt_after`: before `agent`)",
        new='a write tool (`ToolSpec(effect="write")`): the contract asks for approval; '
        "`interrupt_before`/`interrupt_after` are not supported with the contract",
        new_measured="write: stop `pending_approval` with the call's preview; "
        "`interrupt_before`: stop `middleware_stop` ('model ended the run before the "
        "contract decided'), `interrupt_after`: ('tools ended the run before the contract "
        "decided')",
    ),
)
"""Every row, in document order."""


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """The document (Markdown), newline-ended."""
    lines = [
        "# Parameter map: `AgentExecutor` and `create_react_agent` to `create_agent` + the contract",
        "",
        "<!-- Generated by `python -m devtools.parameter_map`; "
        "tests/suite/test_parameter_map.py runs both sides of every row. -->",
        "",
        "Each row was measured, on both sides, with a scripted chat model: the old API from "
        "langchain-classic (`AgentExecutor` with `create_tool_calling_agent`) or langgraph "
        "(`create_react_agent`, deprecated since langgraph 1.0), the new one as `create_agent` "
        "with `ContractMiddleware` around the other middleware "
        "(`middleware=ContractMiddleware(contract).around(...)`). A test runs both sides of "
        "each row and checks its words. The boundary-by-boundary checklist is "
        "[MIGRATION.md](MIGRATION.md).",
        "",
    ]
    for api in ("AgentExecutor", "create_react_agent"):
        lines += [
            f"## `{api}`",
            "",
            "| Old | What it did | With `create_agent` + the contract | What that does |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_md(r.old)} | {_md(r.old_measured)} | {_md(r.new)} | {_md(r.new_measured)} |"
            for r in ROWS
            if r.api == api
        ]
        lines.append("")
    lines += [
        "`state_schema`, `context_schema` and a team's own middleware stack around the "
        "contract are the subject of the composition work and are not mapped here yet.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
