"""Broken ``create_agent`` wirings: a subclass of ``ContractMiddleware`` with one
defect, stock middleware used in the contract's place, and a team's
``CreateAgentContractSuite`` whose approval endpoint drops edits. Imported only when the
LangChain binding is installed."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.approval import PendingApproval
from agent_contract.conformance.wire_check import stream_plan
from agent_contract.harnesses import Harness, RunInput
from agent_contract.model import Model
from agent_contract.runtime import Contract, RunResult
from agent_contract.tools import ToolSpec
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.driving import Mode
from agent_contract_langchain.middleware import ContractMiddleware
from agent_contract_langchain.resuming import run_options
from agent_contract_langchain.sealed import check_paused
from agent_contract_langchain.structured import response_format_for
from agent_contract_langchain.suite_store import SealCheck, SuiteStore
from agent_contract_langchain.testing import CreateAgentContractSuite
from agent_contract_langchain.tools import to_langchain_tools

GENERIC = json.dumps(
    {
        "error": "invalid_arguments",
        "message": "invalid arguments, please try again",
        "outcome": "not_run",
        "side_effects_possible": False,
    }
)


class TerseValidationMiddleware(ContractMiddleware):
    """A team's subclass that 'simplifies' validation errors for the model."""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        reply = super().wrap_tool_call(request, handler)
        if isinstance(reply, ToolMessage) and '"invalid_arguments"' in str(reply.content):
            return reply.model_copy(update={"content": GENERIC})
        return reply


class EchoingRefusalMiddleware(ContractMiddleware):
    """A team's subclass that adds the refused call's arguments to its error, 'for
    debugging'."""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        reply = super().wrap_tool_call(request, handler)
        if isinstance(reply, ToolMessage) and reply.status == "error":
            args = json.dumps(request.tool_call.get("args", {}))
            return reply.model_copy(update={"content": f"{reply.content} (arguments: {args})"})
        return reply


class PlainMiddleware(ContractMiddleware):
    """The correct twin: a subclass that changes nothing."""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return super().wrap_tool_call(request, handler)


def resume_unchecked(conn: Any, thread_id: str, seal: Any, key: bytes) -> None:
    """A team's resume over the sealed SQLite checkpointer that skips the paused
    checkpoint's seal ("the values are sealed already"): it reads whatever the file's
    newest checkpoint of the thread is."""


def create_agent_harness(
    middleware_class: type[ContractMiddleware] = ContractMiddleware,
    *,
    extra: Callable[[RunInput], Sequence[Any]] = lambda o: (),
    options: Callable[[RunInput], RunInput] = lambda o: o,
    check: SealCheck = check_paused,
    chat_model: type[ContractChatModel] | None = None,
) -> Harness:
    """A team's ``create_agent`` wiring (invoke), through the suite's runner; a tampered
    scenario's graph is kept in the sealed SQLite checkpointer, its resume checked with
    ``check`` (:class:`~agent_contract_langchain.suite_store.SuiteStore`). With
    ``chat_model`` the run streams (``graph.stream``) on that chat model class, in the
    pieces of the scenario's stream plan, and the harness declares ``streamed_replies``."""
    mode: Mode = "invoke" if chat_model is None else "stream"

    def model_for(model: Model, opts: RunInput) -> ContractChatModel:
        if chat_model is None:
            return ContractChatModel(model=model)
        pieces, interleaved = stream_plan(opts.extras)
        return chat_model(model=model, chunk_chars=pieces, interleave_calls=interleaved)

    def harness(model: Model, tools: list[ToolSpec], base: RunInput) -> RunResult:
        opts = options(base)
        store = SuiteStore(opts, mode, check=check)
        saver = store.saver

        def build() -> tuple[Any, Contract]:
            contract = opts.contract(tools)
            contract_mw = middleware_class(contract)
            more: dict[str, Any] = {}
            if contract.answer_format is not None:
                more["response_format"] = response_format_for(contract.answer_format)
            graph = create_agent(
                model_for(model, opts),
                tools=to_langchain_tools(contract.registry),
                middleware=contract_mw.around(*extra(base)),
                checkpointer=saver,
                **more,
            )
            return graph, contract

        with store:
            graph, contract = build()
            return run_options(
                graph, contract, opts, mode=mode, rebuild=build, endpoint=store.endpoint
            )

    streams = () if chat_model is None else ("streamed_replies",)
    harness.capabilities = ("timeouts", "write_tools", "crash_restart", "durable_store", *streams)  # type: ignore[attr-defined]
    return harness


def _budget(**changes: Any) -> Callable[[RunInput], RunInput]:
    def swap(o: RunInput) -> RunInput:
        return dataclasses.replace(o, budget=dataclasses.replace(o.budget, **changes))

    return swap


def stock_tool_limit() -> Harness:
    """ToolCallLimitMiddleware in place of the contract's tool-call budget."""
    return create_agent_harness(
        extra=lambda o: [ToolCallLimitMiddleware(run_limit=o.budget.max_tool_calls)],
        options=_budget(max_tool_calls=1000),
    )


def stock_model_limit() -> Harness:
    """ModelCallLimitMiddleware in place of the contract's step budget."""
    return create_agent_harness(
        extra=lambda o: [
            ModelCallLimitMiddleware(run_limit=o.budget.max_model_steps, exit_behavior="end")
        ],
        options=_budget(max_model_steps=1000),
    )


# -- a team's approval endpoint on the create_agent suite -------------------------------


class ShopSuite(CreateAgentContractSuite):
    """A team's suite: their graph (with its own checkpointer) and their approval
    endpoint, which reads a reviewer's decision and resumes through the binding."""

    __test__ = False  # a harness source here, not a test class

    def __init__(self) -> None:
        self.saver = InMemorySaver()  # the team's store: shared by every graph it builds

    def build_agent(self, chat_model: Any, tools: Sequence[Any], middleware: Sequence[Any]) -> Any:
        return create_agent(
            chat_model,
            tools=list(tools),
            middleware=[middleware[0], middleware[-1]],
            checkpointer=self.saver,
        )

    def approval_endpoint(
        self,
        graph: Any,
        contract: Contract,
        snapshot: Mapping[str, Any],
        pending: Sequence[PendingApproval],
        decisions: Mapping[str, Mapping[str, Any]],
        *,
        checkpoint: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        return super().approval_endpoint(
            graph,
            contract,
            snapshot,
            pending,
            {call_id: self.reviewed(d) for call_id, d in decisions.items()},
            checkpoint=checkpoint,
        )

    def reviewed(self, decision: Mapping[str, Any]) -> Mapping[str, Any]:
        """The decision as the endpoint hands it on."""
        return decision


class EditDroppingSuite(ShopSuite):
    """The endpoint turns a reviewer's edit into a plain approval."""

    __test__ = False

    def reviewed(self, decision: Mapping[str, Any]) -> Mapping[str, Any]:
        if decision.get("type") != "edit":
            return decision
        return {"type": "approve", "agent_contract": decision.get("agent_contract", {})}


# -- a real provider client on the wire (check --wire's langchain-stream@openai column) -------


def _repaired(text: str) -> str:
    """Argument text "repaired" the way a lenient client does: duplicated and trailing
    commas dropped, unclosed strings and objects closed (valid JSON is left as it is)."""
    try:
        json.loads(text)
    except ValueError:
        text = re.sub(r",\s*(?=[,}])", "", text)
        if text.count('"') % 2:
            text += '"'
        text += "}" * (text.count("{") - text.count("}"))
    return text


def repaired_chunks(chunks: list[Any]) -> Iterator[Any]:
    """A reply's chunks with each call's argument pieces joined and "repaired"
    (:func:`_repaired`) into its first chunk, its later pieces emptied: what a lenient
    streaming client hands on."""
    joined: dict[int, str] = {}
    for chunk in chunks:
        for piece in getattr(chunk.message, "tool_call_chunks", None) or ():
            index = piece.get("index") or 0
            joined[index] = joined.get(index, "") + (piece.get("args") or "")
    seen: set[int] = set()
    for chunk in chunks:
        pieces = getattr(chunk.message, "tool_call_chunks", None) or ()
        if pieces:
            fixed = []
            for piece in pieces:
                index = piece.get("index") or 0
                args = "" if index in seen else _repaired(joined[index])
                seen.add(index)
                fixed.append({**piece, "args": args})
            chunk.message.tool_call_chunks = fixed
        yield chunk


class RepairingChatModel(ContractChatModel):
    """A team's streaming chat model wrapper (in process) that joins each call's
    argument pieces and "repairs" text that is not JSON before LangChain sees them."""

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        yield from repaired_chunks(list(super()._stream(*args, **kwargs)))


def repairing_stream_client(base_url: str, *, repair: bool = True) -> Any:
    """A team's ``ChatOpenAI`` subclass whose stream joins each call's argument pieces
    and "repairs" text that is not JSON before the message is built (``repair=False``:
    the pieces as they came, the twin)."""
    from langchain_openai import ChatOpenAI

    class RepairingChatOpenAI(ChatOpenAI):
        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            chunks = super()._stream(*args, **kwargs)
            yield from (repaired_chunks(list(chunks)) if repair else chunks)

    return RepairingChatOpenAI(
        model="replay-model", base_url=base_url, api_key="sk-replay", max_retries=0, timeout=30
    )


def stream_column(*, repair: bool) -> Any:
    """``langchain-stream@openai`` (check --wire's column) on the team's client."""
    from agent_contract.conformance.wire_check import WireHarness
    from agent_contract.registry import harness_plugin

    plugin = harness_plugin("langchain-stream")
    stock = next(c for c in plugin.wires if c.wire == "openai")
    client = dataclasses.replace(
        stock,
        client="RepairingChatOpenAI",
        build=lambda url: repairing_stream_client(url, repair=repair),
    )
    return WireHarness(plugin, client)
