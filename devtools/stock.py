"""LangChain's stock middleware beside the contract: each class, realistic offline
settings, and what it means for the contract.

:func:`stock_classes` enumerates the middleware classes the *installed*
``langchain.agents.middleware`` exports, so a new release's additions show up;
:data:`STOCK` holds, per class name, how to build it with realistic settings that need
no network (scripted helper models where it needs one), and its relation to the
contract: ``composes`` (no boundary in common), ``overlaps`` (both enforce a boundary:
which one wins) or ``conflicts`` (it would break a boundary: what the contract does).
A class with no entry fails the middleware matrix test (``tests/stack``), and
``docs/MIDDLEWARE.md`` is generated from these entries and the measured matrix
(``devtools.middleware_matrix``).
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from langchain.agents import middleware as stock_module
from langchain.agents.middleware.types import AgentMiddleware
from langchain_core._api.beta_decorator import LangChainBetaWarning
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ["STOCK", "Relation", "StockContext", "StockEntry", "stock_classes"]

Relation = Literal["composes", "overlaps", "conflicts"]


@dataclass(frozen=True, kw_only=True)
class StockContext:
    """What a stock middleware is built around."""

    model: BaseChatModel
    """The agent's (scripted) chat model."""
    folder: Path
    """A scratch folder (for file search and shell middleware)."""
    read_tool: str
    """A read tool the scenarios call."""
    quiet_tool: str
    """A registered tool the scenarios do not call (gated, emulated)."""


@dataclass(frozen=True, kw_only=True)
class StockEntry:
    """One stock middleware class beside the contract."""

    settings: str
    """The settings it is built with, as the document shows them."""
    build: Callable[[StockContext], Any]
    """Builds it (raises on a release whose constructor differs)."""
    relation: Relation
    """``composes``, ``overlaps`` or ``conflicts``."""
    note: str
    """Which boundary both enforce and which wins, or what the contract does."""

    def make(self, context: StockContext) -> Any:
        """:attr:`build` it, without LangChain's warning that the class is in beta (the
        matrix measures beta middleware on purpose; the warning is LangChain's, not ours)."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=LangChainBetaWarning)
            return self.build(context)


def stock_classes() -> dict[str, type[AgentMiddleware]]:
    """Every ``AgentMiddleware`` subclass the installed ``langchain.agents.middleware``
    exports, by name (``AgentMiddleware`` itself left out)."""
    found = {}
    for name in dir(stock_module):
        value = getattr(stock_module, name)
        middleware = inspect.isclass(value) and issubclass(value, AgentMiddleware)
        if middleware and value is not AgentMiddleware:
            found[name] = value
    return dict(sorted(found.items()))


class _TextChat(BaseChatModel):
    """A helper model (summarizer, emulator): always answers ``text``."""

    text: str = "summary"

    @property
    def _llm_type(self) -> str:
        return "agent-contract-text"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.text))])


class _SelectorChat(BaseChatModel):
    """A tool selector's model: answers ``with_structured_output`` by selecting every
    tool it is offered."""

    @property
    def _llm_type(self) -> str:
        return "agent-contract-selector"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kw: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        function = kw["tools"][0]["function"]
        items = function["parameters"]["properties"]["tools"]["items"]
        names = items.get("enum") or [a.get("const") for a in items.get("anyOf", [])]
        call = {"name": function["name"], "args": {"tools": names}, "id": "sel-1"}
        message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


def _decision_model(risk: float = 0.0) -> Any:
    """A scripted decision model (langchain-core's ``decisions``, newer releases only):
    every yes/no question answered with probability ``risk``, every choice with the
    first option."""
    decisions = importlib.import_module("langchain_core.decisions")

    class _Decision(decisions.BaseDecisionModel):  # type: ignore[misc, name-defined]
        model: str = "agent-contract-decision"

        @property
        def _provider(self) -> str:
            return "agent-contract"

        def _classify(self, state: Any, questions: Any) -> Any:
            answers: dict[str, Any] = {}
            for qid, question in questions.items():
                if type(question).__name__ == "Noul":
                    answers[qid] = {"type": "noul", "noul": risk}
                else:
                    label = next(iter(question.criteria))
                    answers[qid] = {
                        "type": "choice",
                        "choice": label,
                        "probabilities": {label: 1.0},
                        "confidence": 1.0,
                    }
            return decisions.ClassifierResponse.model_validate(
                {"model": self.model, "answers": answers}
            )

    return _Decision()


def _cls(name: str) -> Any:
    return getattr(stock_module, name)


def _takes(name: str, parameter: str) -> bool:
    return parameter in inspect.signature(_cls(name).__init__).parameters


def _summarization(ctx: StockContext) -> Any:
    cls = _cls("SummarizationMiddleware")
    if _takes("SummarizationMiddleware", "trigger"):
        return cls(_TextChat(), trigger=("messages", 50))
    return cls(_TextChat(), max_tokens_before_summary=100_000)


def _retry_settings(name: str) -> Any:
    return _cls(name)(max_retries=2, initial_delay=0.0, jitter=False)


STOCK: Final[dict[str, StockEntry]] = {
    "AutoModeMiddleware": StockEntry(
        settings="tools=[<the read tool>], classifier=<scripted decision model: risk 0.0>",
        build=lambda c: _cls("AutoModeMiddleware")(
            tools=[c.read_tool], classifier=_decision_model(0.0)
        ),
        relation="overlaps",
        note="authorization: a call it blocks is answered without running; inside the "
        "contract the gate saw no attempt, so the call is recorded `not_allowed` / "
        "`not_run` (its block wins, reported honestly); outside, it blocks before the "
        "contract's tool hook and the call is recorded the same way when the batch closes",
    ),
    "ContextEditingMiddleware": StockEntry(
        settings="defaults (clears old tool uses past 100k tokens)",
        build=lambda c: _cls("ContextEditingMiddleware")(),
        relation="composes",
        note="it edits only what the model is shown; the contract's transcript and trace "
        "keep the originals",
    ),
    "FilesystemFileSearchMiddleware": StockEntry(
        settings="root_path=<a scratch folder>, use_ripgrep=False",
        build=lambda c: _cls("FilesystemFileSearchMiddleware")(
            root_path=str(c.folder), use_ripgrep=False
        ),
        relation="overlaps",
        note="allowlist: its `glob_search` and `grep_search` tools are not registered with "
        "the contract, so the gate never offers them and a call to one is `unknown_tool`; "
        "register them (`from_langchain_tool`) to allow them",
    ),
    "HumanInTheLoopMiddleware": StockEntry(
        settings="interrupt_on={<a tool the scenarios do not call>: True}",
        build=lambda c: _cls("HumanInTheLoopMiddleware")(interrupt_on={c.quiet_tool: True}),
        relation="overlaps",
        note="human review: its pause ends the run `interrupted` (resumable with "
        "`resume_agent(answers=...)`); calls the contract refused are never put up for "
        "review (the stop message has no tool calls); an `edit` is validated against the "
        "schema and recorded, placed before or after the contract; for writes use the "
        "contract's approval (preview, token, idempotency key), which renders in the same "
        "request/decision shape",
    ),
    "LLMToolEmulator": StockEntry(
        settings="tools=[<a tool the scenarios do not call>], model=<scripted text model>",
        build=lambda c: _cls("LLMToolEmulator")(tools=[c.quiet_tool], model=_TextChat()),
        relation="conflicts",
        note="honest results: an emulated answer is not a tool result; inside the contract "
        "the gate saw no attempt, outside the contract's tool hook never ran: either way the "
        "call is recorded `not_allowed` / `not_run` and its answer is not taken as a result",
    ),
    "LLMToolSelectorMiddleware": StockEntry(
        settings="model=<scripted selector model: selects every tool>, max_tools=5",
        build=lambda c: _cls("LLMToolSelectorMiddleware")(model=_SelectorChat(), max_tools=5),
        relation="overlaps",
        note="allowlist: it only narrows the tools offered (the gate filters what is left); "
        "model budget: its selection call is a provider call of its own that the contract "
        "does not count",
    ),
    "ModelCallLimitMiddleware": StockEntry(
        settings="run_limit=50",
        build=lambda c: _cls("ModelCallLimitMiddleware")(run_limit=50),
        relation="overlaps",
        note="model-step budget: the lower limit wins; the contract's `max_model_steps` stops "
        "first when lower (its refused step counts as one call there); its own `end` is "
        "reported `middleware_stop` naming it, its `error` likewise; its counts reset on "
        "every invoke and resume, the contract's hold across resumes",
    ),
    "ModelFallbackMiddleware": StockEntry(
        settings="first fallback=<a second chat model on the same script>",
        build=lambda c: _cls("ModelFallbackMiddleware")(c.model),
        relation="overlaps",
        note="model errors: inside the contract each fallback call passes the gate and counts "
        "as a model step; outside, the contract turns the first failure into `model_error` "
        "and the fallback never runs (put it inside)",
    ),
    "ModelRefusalMiddleware": StockEntry(
        settings="()",
        build=lambda c: _cls("ModelRefusalMiddleware")(),
        relation="composes",
        note="a refusal it raises is the model's failure: `model_error`",
    ),
    "ModelRetryMiddleware": StockEntry(
        settings="max_retries=2, initial_delay=0.0, jitter=False",
        build=lambda c: _retry_settings("ModelRetryMiddleware"),
        relation="overlaps",
        note="model errors and the model-step budget: inside the contract every retry passes "
        "the gate and counts as a model step, and the message it invents after the last "
        "failure is never judged an answer (`model_error`); outside, the contract stops at "
        "the first failure with `model_error` and it never retries (put it inside)",
    ),
    "ModelRouterMiddleware": StockEntry(
        settings="choices={'main': ModelChoice(<the scripted model>, 'everything')}, "
        "classifier=<scripted decision model>",
        build=lambda c: _cls("ModelRouterMiddleware")(
            choices={"main": _cls("ModelChoice")(model=c.model, criteria="everything")},
            instructions="Pick the model.",
            classifier=_decision_model(),
        ),
        relation="composes",
        note="the routed model's calls pass the gate like any other (one more graph step "
        "per run: its before_agent hook, counted in the derived recursion limit)",
    ),
    "PIIMiddleware": StockEntry(
        settings="'email', strategy='redact', apply_to_output=True",
        build=lambda c: _cls("PIIMiddleware")("email", strategy="redact", apply_to_output=True),
        relation="overlaps",
        note="redaction: it rewrites messages in the graph state; the contract redacts its "
        "trace, tool messages and output with its own policy, independently; `block` raises, "
        "reported `middleware_stop` naming it (an answer it blocks is not an answer)",
    ),
    "ProviderToolSearchMiddleware": StockEntry(
        settings="searchable_tools=None (pass-through; deferring tools needs Anthropic or OpenAI)",
        build=lambda c: _cls("ProviderToolSearchMiddleware")(),
        relation="conflicts",
        note="allowlist: a provider-side tool it adds is not registered with the contract, so "
        "the gate never offers it (fail closed); a provider tool runs only if registered",
    ),
    "ShellToolMiddleware": StockEntry(
        settings="workspace_root=<a scratch folder> (host execution policy, spawns bash)",
        build=lambda c: _cls("ShellToolMiddleware")(workspace_root=str(c.folder)),
        relation="conflicts",
        note="allowlist: its `shell` tool is not registered, so it is never offered or run; "
        "a shell is not a previewable, verifiable write, so adopting it is not advised; on "
        "langchain 1.0-1.2.8 it fails with any checkpointer, with or without the contract",
    ),
    "SummarizationMiddleware": StockEntry(
        settings="model=<scripted text model>, trigger=('messages', 50)",
        build=_summarization,
        relation="overlaps",
        note="the transcript: it rewrites the state's messages; the contract's trace keeps "
        "every call and result; its summary calls are provider calls the contract does not "
        "count",
    ),
    "TodoListMiddleware": StockEntry(
        settings="()",
        build=lambda c: _cls("TodoListMiddleware")(),
        relation="overlaps",
        note="allowlist: its `write_todos` tool (a `Command` tool) is not registered, so it "
        "is never offered; registered, its state update goes through with a successful result",
    ),
    "ToolCallLimitMiddleware": StockEntry(
        settings="run_limit=50",
        build=lambda c: _cls("ToolCallLimitMiddleware")(run_limit=50),
        relation="overlaps",
        note="tool-call budget: the lower limit wins; a call it answers (`continue`) is "
        "recorded `not_run` and the transcript keeps issue order; its `end` and `error` are "
        "reported `middleware_stop` naming it, never blamed on the model",
    ),
    "ToolErrorMiddleware": StockEntry(
        settings="on_error=<a message naming the tool and the exception type>",
        build=lambda c: _cls("ToolErrorMiddleware")(
            on_error=lambda exc, req: f"{req.tool_call['name']} failed ({type(exc).__name__})"
        ),
        relation="overlaps",
        note="tool errors: inside the contract the gate sees the tool's exception first, and "
        "the contract classifies it as if nothing were in between (its message is not what "
        "the model sees); outside, it never sees an exception (the contract raises none)",
    ),
    "ToolRetryMiddleware": StockEntry(
        settings="max_retries=2, initial_delay=0.0, jitter=False",
        build=lambda c: _retry_settings("ToolRetryMiddleware"),
        relation="overlaps",
        note="retries: inside the contract every retry passes the gate as an attempt charged "
        "to `max_tool_calls`, a retried call that timed out reports `side_effects_possible`, "
        "and a write is never run twice; outside, the contract answers every call itself, so "
        "it never retries",
    ),
}
"""The stock middleware, by class name (see the module doc)."""
