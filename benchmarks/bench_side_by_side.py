"""What the contract costs per model step, side by side with the frameworks it runs in.

One process, every variant on the same scripted workload, runs interleaved round by
round in a shuffled (seeded) order after warm-up runs; figures are **process CPU time**
(``time.process_time``: all threads, so a worker-thread hop is counted) per model step,
medians over the rounds. The machine this runs on may be shared: CPU time and
interleaving keep the ratios stable where wall-clock time is not.

The workload (the issue's): ``--steps`` model steps that each call a trivial ``echo``
tool, then one answer. Every variant uses the same stateless scripted model
(``FakeModel``; on LangChain wrapped in ``ContractChatModel``, on PydanticAI in
``contract_model``) and the same handler; graphs and agents are built once.

Tables printed (Markdown):

1. **side by side**: the pure-Python floor (a loop calling the script and the handler),
   the offline loop (as shipped; with an ``async def`` tool; with handlers inline, which
   is for measurement only: it shows what the worker-thread hop of a sync tool costs),
   bare ``create_agent`` on ``invoke`` / ``ainvoke`` / ``stream``, ``create_agent`` with
   an empty middleware (LangChain's own hook cost), the contract's middleware on
   ``invoke`` / ``ainvoke`` / ``stream`` (``build_agent`` + ``run_graph`` /
   ``arun_graph``: the RunResult included), ``run_graph(mode="ainvoke")`` (an event loop
   per run), PydanticAI bare and with the binding, and the OpenAI Agents SDK when it is
   installed (it is not a dependency).
2. **growth**: per-step cost over run length (steps 1-1000, and first tenth vs last
   tenth of the longest run), offered tools (1-100), result size (100 B-1 MB) and
   parallel calls per step (1-50), for the offline loop, bare ``create_agent`` and the
   middleware.
3. **memory**: ``tracemalloc`` peak of one long run with 10 KB results.

Usage::

    uv run python benchmarks/bench_side_by_side.py            # everything
    uv run python benchmarks/bench_side_by_side.py --quick    # a subset, for a quick look
    uv run python benchmarks/bench_side_by_side.py --only side --rounds 60
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import _common
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_contract import Budget, Completion, Contract, Message, ToolExecutor, ToolSpec, run
from agent_contract.executor import Invocation
from agent_contract.testing import FakeModel, tool_call, tool_calls
from agent_contract_langchain import ContractMiddleware, build_agent, to_langchain_tools
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.controls.plain_create_agent import plain_tool
from agent_contract_langchain.harness import arun_graph, run_graph
from agent_contract_langchain.messages import to_langchain_messages
from agent_contract_langchain.run_config import contract_config, recursion_limit

Run = Callable[[], Any]

# -- the workload -------------------------------------------------------------------------


def echo_spec(
    name: str = "echo",
    *,
    payload: str | None = None,
    is_async: bool = False,
    fresh: bool = False,
    max_result_chars: int = 8_000,
) -> ToolSpec:
    """A trivial tool: returns its ``text`` (or a fixed ``payload`` of a given size; with
    ``fresh``, a new string per call: the text, then the payload)."""

    def handler(text: str) -> str:
        if payload is None:
            return text
        return f"{text} {payload}" if fresh else payload

    async def ahandler(text: str) -> str:
        return handler(text)

    return ToolSpec(
        name=name,
        description="Echo the text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=ahandler if is_async else handler,
        max_result_chars=max_result_chars,
    )


def script(steps: int, parallel: int = 1, tool: str = "echo") -> list[Any]:
    """``steps`` tool-call replies (``parallel`` calls each), then an answer."""
    replies: list[Any] = []
    for i in range(steps):
        if parallel == 1:
            replies.append(tool_call(tool, {"text": f"step {i}"}))
        else:
            replies.append(
                tool_calls(*((tool, {"text": f"step {i} call {j}"}) for j in range(parallel)))
            )
    replies.append("done")
    return replies


def _common_json(arguments: Any) -> str:
    import json

    return json.dumps(dict(arguments))


def payload_of(size: int) -> str:
    """Clean text of ``size`` characters (words, no secret-like literal)."""
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    return (words * (size // len(words) + 1))[:size]


class InlineExecutor(ToolExecutor):
    """Runs each handler in the calling thread, with no timeout: for measurement only
    (what the worker-thread hop of the real executor costs)."""

    def submit(self, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        try:
            invocation = Invocation(value=fn())
        except Exception as exc:  # noqa: BLE001 - reported like the real executor does
            invocation = Invocation(error=exc)
        return _Done(replace(invocation, duration_seconds=time.monotonic() - start))


class _Done:
    def __init__(self, invocation: Invocation) -> None:
        self.invocation = invocation

    def result(self, timeout: float) -> Invocation:
        return self.invocation


class EmptyWrap(AgentMiddleware):  # type: ignore[type-arg]
    """wrap_model_call + wrap_tool_call that only call the handler."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


class AsyncEmptyWrap(EmptyWrap):
    """:class:`EmptyWrap` with the async hooks too (the contract's four hooks, empty)."""

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(request)


class LastMessageChatModel(BaseChatModel):
    """A scripted LangChain chat model that reads **only the last message** (O(1) work
    per step, whatever the history's length): a human message starts the script over,
    anything else takes the next reply. The bare baseline of the growth table (a
    baseline that converts the whole history each step grows with the run too)."""

    replies: list[Any]
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "last-message-script"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            self.position = 0
        reply = self.replies[self.position]
        self.position += 1
        if isinstance(reply, str):
            message = AIMessage(content=reply, id=f"lm-{self.position}")
        else:
            message = AIMessage(
                content=reply.text or "",
                id=f"lm-{self.position}",
                tool_calls=[
                    {
                        "name": c.name,
                        "args": dict(c.arguments),
                        "id": f"call-{self.position}-{j}",
                        "type": "tool_call",
                    }
                    for j, c in enumerate(reply.tool_calls)
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> Any:
        return self._reply(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> Any:
        return self._reply(messages)


def _answered(result: Any) -> Any:
    if result.stop_reason != "answered":
        raise RuntimeError(f"the run stopped with {result.stop_reason}: {result.stop_detail}")
    return result


def _messages_checked(expected: int) -> Callable[[Any], Any]:
    def check(final: Any) -> Any:
        got = len(final["messages"])
        if got != expected:
            raise RuntimeError(f"unexpected transcript of {got} messages (expected {expected})")
        return final

    return check


class Harnesses:
    """Builds the runnable variants of one workload (graphs and agents built once)."""

    def __init__(
        self,
        steps: int,
        *,
        parallel: int = 1,
        tools: int = 1,
        payload: str | None = None,
        fresh: bool = False,
        max_result_chars: int = 8_000,
        loop: asyncio.AbstractEventLoop,
        chat: str = "contract",
    ) -> None:
        self.steps = steps
        self.chat = chat
        self.loop = loop
        specs = [
            echo_spec(
                "echo" if i == 0 else f"echo_{i}",
                payload=payload,
                fresh=fresh,
                max_result_chars=max_result_chars,
            )
            for i in range(tools)
        ]
        self.specs = specs
        calls = steps * parallel
        self.budget = Budget(
            max_model_steps=steps + 1,
            max_tool_calls=calls,
            deadline_seconds=None,
            max_trace_bytes=10**12,
            max_identical_calls=calls + 1,
        )
        self.contract = Contract(specs, budget=self.budget)
        self.replies = script(steps, parallel)
        self.user = [Message(role="user", content="go")]
        self.lc_input = {"messages": to_langchain_messages(self.user)}
        self.expect = _messages_checked(2 + steps * (1 + parallel))
        self._graph: Any = None
        self._bare: Any = None

    def model(self) -> FakeModel:
        return FakeModel(self.replies, stateless=True)

    def chat_model(self) -> Any:
        """The LangChain model of the LangChain variants: ``ContractChatModel`` over the
        scripted ``FakeModel`` (``chat="contract"``: converts the history each step), or
        :class:`LastMessageChatModel` (``chat="last"``: reads the last message only)."""
        if self.chat == "last":
            return LastMessageChatModel(replies=self.replies)
        return ContractChatModel(model=self.model())

    # offline
    def offline(self, *, inline: bool = False, is_async: bool = False) -> Run:
        contract = self.contract
        if inline or is_async:
            specs = [
                replace(s, handler=echo_spec(is_async=True).handler) if is_async else s
                for s in self.specs
            ]
            executor = InlineExecutor(max_workers=1) if inline else None
            contract = Contract(specs, budget=self.budget, executor=executor)
        model = self.model()
        return lambda: _answered(run(model, contract, "go"))

    # LangChain
    def bare_graph(self) -> Any:
        if self._bare is None:
            self._bare = create_agent(self.chat_model(), tools=[plain_tool(t) for t in self.specs])
        return self._bare

    def mw_graph(self) -> Any:
        if self._graph is None:
            self._graph = build_agent(self.chat_model(), self.contract)
        return self._graph

    def driven(self, graph: Any, mode: str, config: Callable[[], Any] = lambda: None) -> Run:
        """``graph`` called as a team calls it (``invoke`` / ``ainvoke`` /
        ``stream(stream_mode="values")``), with ``config()`` per run; the final state
        checked."""
        expect, payload = self.expect, self.lc_input
        if mode == "invoke":
            return lambda: expect(graph.invoke(payload, config()))
        if mode == "ainvoke":
            return lambda: expect(self.loop.run_until_complete(graph.ainvoke(payload, config())))
        if mode == "stream":
            return lambda: expect(list(graph.stream(payload, config(), stream_mode="values"))[-1])
        raise ValueError(mode)

    def bare(self, mode: str = "invoke") -> Run:
        return self.driven(self.bare_graph(), mode)

    def empty_wrap(self, layers: int = 1, mode: str = "invoke") -> Run:
        """``create_agent`` with ``layers`` empty middlewares having the contract's hooks
        (sync and async ``wrap_model_call`` / ``wrap_tool_call``): the hook floor."""
        graph = create_agent(
            self.chat_model(),
            tools=[plain_tool(t) for t in self.specs],
            middleware=[type(f"EmptyWrap{i}", (AsyncEmptyWrap,), {})() for i in range(layers)],
        )
        return self.driven(graph, mode)

    def middleware(self, mode: str = "invoke", *, inline: bool = False) -> Run:
        graph, contract, user = self.mw_graph(), self.contract, self.user
        if inline:  # handlers in the calling thread: measurement only
            contract = Contract(
                self.specs, budget=self.budget, executor=InlineExecutor(max_workers=1)
            )
            graph = build_agent(self.chat_model(), contract)
        if mode == "ainvoke":  # on the caller's loop, as bare ainvoke is measured
            return lambda: _answered(
                self.loop.run_until_complete(arun_graph(graph, contract.start(), user))
            )
        if mode == "run_graph-ainvoke":  # run_graph's own loop per run
            return lambda: _answered(run_graph(graph, contract.start(), user, mode="ainvoke"))
        return lambda: _answered(run_graph(graph, contract.start(), user, mode=mode))  # type: ignore[arg-type]

    def middleware_split(self, mode: str = "invoke") -> Run:
        """The contract as two middleware, ``[ContractMiddleware, its gate]`` (what a
        stack with middleware of yours between them pays; ``around()`` with none gives
        one middleware), run through ``run_graph``."""
        contract, user = self.contract, self.user
        contract_mw = ContractMiddleware(contract)
        graph = create_agent(
            self.chat_model(),
            tools=to_langchain_tools(contract.registry),
            middleware=[contract_mw, contract_mw.inner()],
        )
        return lambda: _answered(run_graph(graph, contract.start(), user, mode=mode))  # type: ignore[arg-type]

    def middleware_direct(self, mode: str = "invoke") -> Run:
        """The contract's graph called exactly as bare is (``invoke`` / ``ainvoke`` /
        ``stream(stream_mode="values")``) with the run's state in the config, no
        RunResult: the middleware's own cost, apart from ``run_graph``'s (its stream
        mode reads the ``messages``, ``updates`` and ``values`` streams)."""
        graph, contract = self.mw_graph(), self.contract
        limit = recursion_limit(graph, contract.budget)
        return self.driven(
            graph, mode, lambda: contract_config(contract.start(), recursion_limit=limit)
        )

    # PydanticAI
    def pydantic(self, *, contract: bool) -> Run | None:
        try:
            import pydantic_ai  # noqa: F401  (the binding's framework)
        except ImportError:
            return None
        from agent_contract_pydantic_ai.baseline import plain_agent as plain_pa
        from agent_contract_pydantic_ai.driving import build_agent as build_pa
        from agent_contract_pydantic_ai.driving import drive_agent, run_sync_on_own_loop

        if contract:
            agent = build_pa(self.model(), self.contract)
            return lambda: _answered(drive_agent(agent, self.contract.start(), self.user))
        plain = plain_pa(self.model(), self.specs)

        def bare_run() -> Any:
            result = run_sync_on_own_loop(plain, {"user_prompt": "go"})
            if result.output != "done":
                raise RuntimeError(f"unexpected output {result.output!r}")
            return result

        return bare_run

    def openai_agents(self) -> Run | None:
        """The OpenAI Agents SDK (``uv run --group bench``): an ``Agent`` with the same
        ``echo`` tool, driven by ``Runner.run`` on the benchmark's loop, with a scripted
        ``Model`` that reads only the last input item; tracing off. ``None`` when the
        SDK is not installed."""
        try:
            from agents.items import ModelResponse
            from agents.models.interface import Model as AgentsModel
            from agents.usage import Usage
            from openai.types.responses import (
                ResponseFunctionToolCall,
                ResponseOutputMessage,
                ResponseOutputText,
            )

            from agents import Agent, ModelSettings, Runner, function_tool, set_tracing_disabled
        except ImportError:
            return None
        set_tracing_disabled(True)
        replies, handler = self.replies, self.specs[0].handler

        class Scripted(AgentsModel):  # type: ignore[misc]
            position = 0

            async def get_response(
                self, system_instructions: Any, input: Any, *a: Any, **k: Any
            ) -> Any:
                last = input if isinstance(input, str) else input[-1]
                if isinstance(last, str) or (isinstance(last, dict) and last.get("role") == "user"):
                    self.position = 0
                reply = replies[self.position]
                self.position += 1
                output: list[Any]
                if isinstance(reply, str):
                    output = [
                        ResponseOutputMessage(
                            id=f"m{self.position}",
                            type="message",
                            role="assistant",
                            status="completed",
                            content=[
                                ResponseOutputText(type="output_text", text=reply, annotations=[])
                            ],
                        )
                    ]
                else:
                    output = [
                        ResponseFunctionToolCall(
                            type="function_call",
                            name=c.name,
                            call_id=f"c{self.position}-{j}",
                            arguments=_common_json(c.arguments),
                        )
                        for j, c in enumerate(reply.tool_calls)
                    ]
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            def stream_response(self, *a: Any, **k: Any) -> Any:
                raise NotImplementedError

        @function_tool
        def echo(text: str) -> str:
            """Returns its text."""
            return str(handler(text=text))

        agent = Agent(
            name="bench",
            instructions="",
            tools=[echo],
            model=Scripted(),
            model_settings=ModelSettings(),
        )
        loop, turns = self.loop, self.steps + 5

        def once() -> Any:
            result = loop.run_until_complete(Runner.run(agent, "go", max_turns=turns))
            if result.final_output != "done":
                raise RuntimeError(f"unexpected output {result.final_output!r}")
            return result

        return once

    # the floor
    def floor(self) -> Run:
        replies, handler = self.replies, self.specs[0].handler

        def loop() -> Any:
            transcript: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            for reply in replies:
                if isinstance(reply, str):
                    transcript.append({"role": "assistant", "content": reply})
                    return transcript
                completion: Completion = reply
                transcript.append({"role": "assistant", "calls": completion.tool_calls})
                for call in completion.tool_calls:
                    transcript.append(
                        {"role": "tool", "id": call.id, "content": handler(**call.arguments)}
                    )
            return transcript

        return loop


# -- measurement --------------------------------------------------------------------------


def measure(
    variants: dict[str, Run], *, rounds: int, warmup: int, seed: int = 0
) -> dict[str, list[float]]:
    """CPU seconds per run, by variant, interleaved round by round (shuffled, seeded)."""
    rng = random.Random(seed)
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            fn = variants[name]
            start = time.process_time()
            fn()
            cpu[name].append(time.process_time() - start)
        gc.collect()
    return cpu


def med(values: Sequence[float]) -> float:
    return statistics.median(values)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def side_by_side(args: argparse.Namespace, loop: asyncio.AbstractEventLoop) -> None:
    h = Harnesses(args.steps, loop=loop, chat=args.chat)
    variants: dict[str, Run] = {
        "floor: pure-Python loop (script + handler + a list)": h.floor(),
        "offline loop (sync tool, worker-thread hop)": h.offline(),
        "offline loop, async def tool": h.offline(is_async=True),
        "offline loop, handlers inline (measurement only)": h.offline(inline=True),
        "bare create_agent, invoke": h.bare("invoke"),
        "bare create_agent, ainvoke": h.bare("ainvoke"),
        "bare create_agent, stream": h.bare("stream"),
        "create_agent + empty wrap middleware, invoke": h.empty_wrap(),
        "create_agent + two empty wrap middlewares, invoke": h.empty_wrap(2),
        "create_agent + two empty wrap middlewares, ainvoke": h.empty_wrap(2, "ainvoke"),
        "create_agent + two empty wrap middlewares, stream": h.empty_wrap(2, "stream"),
        "contract middleware (build_agent + run_graph), invoke": h.middleware("invoke"),
        "contract middleware (build_agent + arun_graph), ainvoke": h.middleware("ainvoke"),
        "contract middleware (build_agent + run_graph), stream": h.middleware("stream"),
        "contract as two middleware ([mw, gate]), invoke": h.middleware_split("invoke"),
        "contract middleware, graph.invoke as bare (no RunResult)": h.middleware_direct("invoke"),
        "contract middleware, graph.ainvoke as bare (no RunResult)": h.middleware_direct("ainvoke"),
        "contract middleware, graph.stream as bare (values; no RunResult)": h.middleware_direct(
            "stream"
        ),
        "contract middleware, run_graph(mode='ainvoke') (a loop per run)": h.middleware(
            "run_graph-ainvoke"
        ),
        "contract middleware, handlers inline (measurement only), invoke": h.middleware(
            inline=True
        ),
    }
    pa_bare, pa_contract = h.pydantic(contract=False), h.pydantic(contract=True)
    if pa_bare is not None and pa_contract is not None:
        variants["PydanticAI Agent + FunctionModel, bare (run_sync)"] = pa_bare
        variants["PydanticAI + contract binding (run_sync)"] = pa_contract
    oa = h.openai_agents()
    if oa is not None:
        variants["OpenAI Agents SDK"] = oa
    cpu = measure(variants, rounds=args.rounds, warmup=args.warmup)
    model_steps = args.steps + 1
    per_step = {name: med(v) / model_steps for name, v in cpu.items()}
    bare = {m: per_step[f"bare create_agent, {m}"] for m in ("invoke", "ainvoke", "stream")}
    reference = {
        "contract middleware (build_agent + run_graph), invoke": "invoke",
        "contract middleware (build_agent + arun_graph), ainvoke": "ainvoke",
        "contract middleware (build_agent + run_graph), stream": "stream",
        "contract as two middleware ([mw, gate]), invoke": "invoke",
        "contract middleware, graph.invoke as bare (no RunResult)": "invoke",
        "contract middleware, graph.ainvoke as bare (no RunResult)": "ainvoke",
        "contract middleware, graph.stream as bare (values; no RunResult)": "stream",
        "bare create_agent, ainvoke": "ainvoke",
        "bare create_agent, stream": "stream",
        "create_agent + two empty wrap middlewares, ainvoke": "ainvoke",
        "create_agent + two empty wrap middlewares, stream": "stream",
    }
    rows = []
    for name, value in per_step.items():
        same_mode = reference.get(name)
        rows.append(
            [
                name,
                us(value),
                f"{value / bare['invoke']:.3f}",
                f"{value / bare[same_mode]:.3f}" if same_mode else "",
            ]
        )
    print(
        f"### Side by side: {args.steps} tool steps + 1 answer, {args.rounds} rounds, "
        f"CPU median per model step; LangChain model: {args.chat}; {_common.load()}\n"
    )
    print(_common.table(["variant", "CPU us/step", "vs bare invoke", "vs bare, same mode"], rows))
    if oa is None:
        print("\n(OpenAI Agents SDK: not installed, not measured.)")
    offline = per_step["offline loop (sync tool, worker-thread hop)"]
    inline = per_step["offline loop, handlers inline (measurement only)"]
    print(
        f"\nworker-thread hop of a sync tool: {us(offline - inline)} us per call "
        f"(offline as shipped minus handlers inline); offline is {bare['invoke'] / offline:.0f}x "
        f"faster than bare invoke, {bare['invoke'] / per_step['offline loop, async def tool']:.0f}x "
        "with an async def tool\n"
    )


def _per_step_times(model: FakeModel) -> Callable[[], list[float]]:
    """Wrap ``model.complete`` to stamp the process CPU time of each call; the returned
    function gives the per-step durations of the last run."""
    stamps: list[float] = []
    original = model.complete

    def complete(*args: Any, **kwargs: Any) -> Any:
        stamps.append(time.process_time())
        return original(*args, **kwargs)

    model.complete = complete  # type: ignore[method-assign]

    def durations() -> list[float]:
        found = [b - a for a, b in itertools.pairwise(stamps)]
        stamps.clear()
        return found

    return durations


def _per_step_chat_times(chat_model: Any) -> Callable[[], list[float]]:
    """:func:`_per_step_times` for a LangChain chat model (its ``_generate``)."""
    stamps: list[float] = []
    target = chat_model.model if isinstance(chat_model, ContractChatModel) else chat_model
    if isinstance(target, FakeModel):
        return _per_step_times(target)
    original = type(target)._generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        stamps.append(time.process_time())
        return original(target, *args, **kwargs)

    object.__setattr__(target, "_generate", generate)

    def durations() -> list[float]:
        found = [b - a for a, b in itertools.pairwise(stamps)]
        stamps.clear()
        return found

    return durations


def growth_steps(args: argparse.Namespace, loop: asyncio.AbstractEventLoop) -> None:
    lengths = [1, 10, 100] if args.quick else [1, 10, 100, 1000]
    rows = []
    within: dict[str, float] = {}
    for steps in lengths:
        h = Harnesses(steps, loop=loop, chat=args.chat)
        rounds = max(2, args.rounds // max(1, steps // 10)) if steps > 10 else args.rounds
        rounds = min(rounds, args.rounds)
        variants = {"offline": h.offline(), "bare": h.bare(), "middleware": h.middleware()}
        cpu = measure(variants, rounds=rounds, warmup=1 if steps >= 100 else args.warmup)
        rows.append(
            [
                steps,
                rounds,
                *(us(med(cpu[n]) / (steps + 1)) for n in variants),
                f"{med(cpu['middleware']) / med(cpu['bare']):.3f}",
            ]
        )
        if steps == lengths[-1]:
            within = _within_run(steps, loop, args.chat)
    print(
        "### Growth over run length (CPU us per model step, median; LangChain model: "
        f"{args.chat}; {_common.load()})\n"
    )
    print(
        _common.table(
            ["steps", "rounds", "offline", "bare invoke", "middleware invoke", "middleware / bare"],
            rows,
        )
    )
    print(
        f"\nWithin one {lengths[-1]}-step run, mean step of the last tenth / the first tenth: "
        + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in within.items())
        + "\n"
    )


def _within_run(steps: int, loop: asyncio.AbstractEventLoop, chat: str) -> dict[str, float]:
    h = Harnesses(steps, loop=loop, chat=chat)
    found: dict[str, float] = {}
    models = {"offline": h.model()}
    timers = {"offline": _per_step_times(models["offline"])}
    chats = {name: h.chat_model() for name in ("bare", "middleware")}
    for name, chat_model in chats.items():
        timers[name] = _per_step_chat_times(chat_model)
    bare_graph = create_agent(chats["bare"], tools=[plain_tool(t) for t in h.specs])
    mw_graph = build_agent(chats["middleware"], h.contract)
    runs = {
        "offline": lambda: _answered(run(models["offline"], h.contract, "go")),
        "bare": lambda: h.expect(bare_graph.invoke(h.lc_input)),
        "middleware": lambda: _answered(run_graph(mw_graph, h.contract.start(), h.user)),
    }
    for name, fn in runs.items():
        fn()
        steps_cpu = timers[name]()
        tenth = max(1, len(steps_cpu) // 10)
        first = statistics.fmean(steps_cpu[:tenth])
        last = statistics.fmean(steps_cpu[-tenth:])
        found[name] = last / first if first else float("nan")
    return found


def growth_other(args: argparse.Namespace, loop: asyncio.AbstractEventLoop) -> None:
    steps = args.steps
    tools = [1, 10, 100]
    sizes = [100, 10_000] if args.quick else [100, 10_000, 100_000, 1_000_000]
    parallel = [1, 10] if args.quick else [1, 10, 50]
    rounds = max(5, args.rounds // 4)

    def table_for(title: str, header: str, cells: list[tuple[Any, Harnesses]], per: str) -> None:
        rows = []
        base: dict[str, float] = {}
        for value, h in cells:
            divisor = h.steps + 1 if per == "step" else h.steps * int(value)
            variants = {"offline": h.offline(), "bare": h.bare(), "middleware": h.middleware()}
            cpu = measure(variants, rounds=rounds, warmup=2)
            print(f"<!-- {header} {value}: {_common.load()} -->")
            figures = {n: med(cpu[n]) / divisor for n in variants}
            if not base:
                base = figures
            rows.append(
                [value]
                + [f"{us(figures[n])} ({figures[n] / base[n]:.2f}x)" for n in variants]
                + [f"{figures['middleware'] / figures['bare']:.3f}"]
            )
        print(
            f"### {title} (CPU us per {per}, median of {rounds}; in brackets: vs the first row)\n"
        )
        print(
            _common.table(
                [header, "offline", "bare invoke", "middleware invoke", "middleware / bare"], rows
            )
        )
        print()

    table_for(
        "Offered tools", "tools", [(n, Harnesses(steps, tools=n, loop=loop)) for n in tools], "step"
    )
    table_for(
        "Result size",
        "result chars",
        [(n, Harnesses(steps, payload=payload_of(n), loop=loop)) for n in sizes],
        "step",
    )
    table_for(
        "Parallel calls per step",
        "calls per step",
        [(n, Harnesses(5, parallel=n, loop=loop)) for n in parallel],
        "call",
    )


def memory(args: argparse.Namespace, loop: asyncio.AbstractEventLoop) -> None:
    steps = 200 if args.quick else 1000
    # A new 10 KB string per call (as a real tool returns new data), under the result
    # limit (so what the model reads is the result itself, not a cut copy).
    h = Harnesses(steps, payload=payload_of(10_000), fresh=True, max_result_chars=20_000, loop=loop)
    variants = {"offline": h.offline(), "bare": h.bare(), "middleware": h.middleware()}
    rows = []
    peaks: dict[str, float] = {}
    for name, fn in variants.items():
        fn()  # warm caches outside the measurement
        gc.collect()
        tracemalloc.start()
        fn()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        peaks[name] = peak
    for name, peak in peaks.items():
        rows.append([name, f"{peak / 1e6:.1f}", f"{peak / peaks['bare']:.2f}"])
    print(f"### Memory: one {steps}-step run, a new 10 KB result per call (tracemalloc peak)\n")
    print(_common.table(["variant", "peak MB", "vs bare"], rows))
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="tool steps per run")
    parser.add_argument("--rounds", type=int, default=40, help="timed runs per variant")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs per variant")
    parser.add_argument("--quick", action="store_true", help="smaller growth and memory runs")
    parser.add_argument(
        "--chat",
        choices=["last", "contract"],
        default="last",
        help="the LangChain variants' chat model: one that reads only the last message "
        "(default: O(1) per step), or ContractChatModel over the scripted FakeModel",
    )
    parser.add_argument(
        "--only",
        choices=["side", "steps", "other", "memory"],
        action="append",
        help="run only these tables (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = min(args.rounds, 15)
        args.warmup = min(args.warmup, 3)
    print(_common.environment())
    print(f"command: python benchmarks/bench_side_by_side.py {' '.join(argv or sys.argv[1:])}\n")
    loop = asyncio.new_event_loop()
    try:
        chosen = args.only or ["side", "steps", "other", "memory"]
        for part, fn in (
            ("side", side_by_side),
            ("steps", growth_steps),
            ("other", growth_other),
            ("memory", memory),
        ):
            if part in chosen:
                fn(args, loop)
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
