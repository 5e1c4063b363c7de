"""Per-step overhead of the contract: the offline loop, ``create_agent`` with our
ContractMiddleware, and a bare ``create_agent``, on the same scripted model and tools,
side by side in one process.

The script: ``--steps`` model steps that each call a trivial ``echo`` tool, then one
answer (so a run has steps + 1 model calls). Every variant replays it with a stateless
FakeModel (the reply is picked by the number of assistant turns), so each graph is
compiled once and invoked many times. Runs are interleaved round by round in a
shuffled order; the figures are per model step (run time / (steps + 1)).

Variants:

- ``offline``: ``agent_contract.run`` (the reference loop).
- ``middleware``: ``build_agent`` + ``run_graph``: ``create_agent`` with
  ContractMiddleware, the contract's tools, the contract's RunResult at the end.
- ``bare``: ``controls.plain_create_agent.plain_agent``: ``create_agent`` with stock
  tools over the same handlers, no middleware; ``graph.invoke``.
- ``empty-wrap``: bare + a middleware whose ``wrap_model_call`` and ``wrap_tool_call``
  only call the handler.
- ``empty-after-model``: bare + a middleware with an empty ``after_model`` hook.

With ``--decompose``, four more variants split the middleware's cost:

- ``bare+contract-tools``: bare, but with the binding's StructuredTools
  (``to_langchain_tools``: validation inside the tool, raw value as artifact).
- ``mw-invoke``: the middleware graph's ``invoke`` alone (no RunResult built).
- ``mw-inline``: ``mw-invoke`` with a test executor that runs each handler inline
  (no worker-thread hop, so no timeout protection: for measurement only).
- ``offline-inline``: the offline loop with that inline executor.

Last, one line: the time to refuse a ``--history`` message history (1,000,000 by
default; ``0`` skips it) over ``Budget.max_history_messages`` on ``run_graph`` (LangChain
invoke: refused before the history becomes LangChain messages) and offline.

Usage: ``uv run python benchmarks/bench_step_overhead.py [--steps 10] [--rounds 150]
[--history 1000000]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import _common
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware

from agent_contract import Budget, Contract, Message, ToolExecutor, ToolSpec, run
from agent_contract.executor import Invocation
from agent_contract.testing import FakeModel, tool_call
from agent_contract_langchain import build_agent
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.controls.plain_create_agent import plain_agent, plain_tool
from agent_contract_langchain.harness import run_graph
from agent_contract_langchain.messages import from_langchain_messages, to_langchain_messages
from agent_contract_langchain.run_config import contract_config
from agent_contract_langchain.tools import to_langchain_tools


def echo_tool() -> ToolSpec:
    def handler(text: str) -> str:
        return text

    return ToolSpec(
        name="echo",
        description="Echo the text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        handler=handler,
    )


def script(steps: int) -> list[Any]:
    return [*(tool_call("echo", {"text": f"step {i}"}) for i in range(steps)), "done"]


class EmptyWrap(AgentMiddleware):  # type: ignore[type-arg]
    """wrap_model_call + wrap_tool_call that only call the handler (sync)."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


class EmptyAfterModel(AgentMiddleware):  # type: ignore[type-arg]
    """An after_model hook that does nothing (one more graph node per step)."""

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return None


class InlineExecutor(ToolExecutor):
    """Runs each handler in the calling thread: no timeout protection. Only to measure
    what the worker-thread hop of the real executor costs."""

    def submit(self, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        try:
            invocation = Invocation(value=fn())
        except Exception as exc:  # noqa: BLE001 - reported like the real executor does
            invocation = Invocation(error=exc)
        duration = time.monotonic() - start
        return _Done(replace(invocation, duration_seconds=duration))


class _Done:
    def __init__(self, invocation: Invocation) -> None:
        self.invocation = invocation

    def result(self, timeout: float) -> Invocation:
        return self.invocation


def expect_answer(result: Any) -> Any:
    if result.stop_reason != "answered":
        raise RuntimeError(f"the run stopped with {result.stop_reason}: {result.stop_detail}")
    return result


def variants(steps: int, *, decompose: bool = False) -> dict[str, Callable[[], Any]]:
    tools = [echo_tool()]
    budget = Budget(max_model_steps=steps + 1, max_tool_calls=steps, deadline_seconds=None)
    contract = Contract(tools, budget=budget)
    replies = script(steps)
    user = [Message(role="user", content="go")]
    lc_user = {"messages": to_langchain_messages(user)}

    def offline() -> Any:
        return expect_answer(run(FakeModel(replies, stateless=True), contract, "go"))

    graph = build_agent(FakeModel(replies, stateless=True), contract)

    def middleware() -> Any:
        return expect_answer(run_graph(graph, contract.start(), user))

    bare_graph = plain_agent(FakeModel(replies, stateless=True), tools)

    def stock(extra: list[Any]) -> Any:
        return create_agent(
            ContractChatModel(model=FakeModel(replies, stateless=True)),
            tools=[plain_tool(t) for t in tools],
            middleware=extra,
        )

    wrap_graph = stock([EmptyWrap()])
    after_graph = stock([EmptyAfterModel()])

    def invoker(g: Any) -> Callable[[], Any]:
        def go() -> Any:
            final = g.invoke(lc_user)
            if len(final["messages"]) != 2 * steps + 2:
                raise RuntimeError(f"unexpected transcript of {len(final['messages'])} messages")
            return final

        return go

    found: dict[str, Callable[[], Any]] = {
        "offline": offline,
        "middleware": middleware,
        "bare": invoker(bare_graph),
        "empty-wrap": invoker(wrap_graph),
        "empty-after-model": invoker(after_graph),
    }
    if not decompose:
        return found
    inline = Contract(tools, budget=budget, executor=InlineExecutor(max_workers=1))
    contract_tools_graph = create_agent(
        ContractChatModel(model=FakeModel(replies, stateless=True)),
        tools=to_langchain_tools(contract.registry),
    )
    inline_graph = build_agent(FakeModel(replies, stateless=True), inline)

    def graph_only(g: Any, c: Contract) -> Callable[[], Any]:
        def go() -> Any:
            state = c.start()
            final = g.invoke(lc_user, contract_config(state))
            result = state.finish(messages=from_langchain_messages(final["messages"]))
            if result.stop_reason != "answered":
                raise RuntimeError(f"the run stopped with {result.stop_reason}")

        return go

    def offline_inline() -> Any:
        return expect_answer(run(FakeModel(replies, stateless=True), inline, "go"))

    found.update(
        {
            "bare+contract-tools": invoker(contract_tools_graph),
            "mw-invoke": graph_only(graph, contract),
            "mw-inline": graph_only(inline_graph, inline),
            "offline-inline": offline_inline,
        }
    )
    return found


def refuse_history(count: int) -> str:
    """One line: wall and CPU seconds to refuse a ``count``-message history (the default
    budget) on LangChain's ``run_graph`` (invoke) and offline, the model never called."""
    history = [
        Message(role="user" if n % 2 == 0 else "assistant", content=f"turn {n}")
        for n in range(count)
    ]
    contract = Contract([echo_tool()])
    graph = build_agent(FakeModel(["never"]), contract)
    timings: list[str] = []
    for name, go in (
        ("langchain-invoke", lambda: run_graph(graph, contract.start(), history)),
        ("offline", lambda: run(FakeModel(["never"]), contract, "go", history=history)),
    ):
        wall, cpu = time.perf_counter(), time.process_time()
        result = go()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if result.stop_reason not in ("max_history_messages", "max_history_chars"):
            raise SystemExit(f"{name}: a {count}-message history was not refused: {result}")
        timings.append(f"{name} {wall:.4f} s wall, {cpu:.4f} s CPU")
    return f"refusing a {count}-message history ({result.stop_reason}): " + "; ".join(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="tool-call steps per run")
    parser.add_argument("--rounds", type=int, default=150, help="timed runs per variant")
    parser.add_argument("--warmup", type=int, default=15, help="untimed runs per variant")
    parser.add_argument(
        "--decompose", action="store_true", help="add the variants that split the cost"
    )
    parser.add_argument(
        "--history", type=int, default=1_000_000, help="messages of the refused history (0: skip)"
    )
    args = parser.parse_args(argv)
    print(_common.environment())
    model_steps = args.steps + 1
    print(
        f"script: {args.steps} echo steps + 1 answer = {model_steps} model steps per run; "
        f"{args.rounds} runs per variant, interleaved, after {args.warmup} warm-up runs\n"
    )
    wall, cpu = _common.interleaved(
        variants(args.steps, decompose=args.decompose), rounds=args.rounds, warmup=args.warmup
    )

    def per_step(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
        return {
            name: _common.summary([v / model_steps for v in values])
            for name, values in samples.items()
        }

    w, c = per_step(wall), per_step(cpu)
    rows = [
        [
            name,
            f"{w[name]['median'] * 1e3:.3f}",
            f"{w[name]['min'] * 1e3:.3f}",
            f"{c[name]['median'] * 1e3:.3f}",
            f"{w[name]['median'] / w['bare']['median']:.3f}",
            f"{c[name]['median'] / c['bare']['median']:.3f}",
        ]
        for name in w
    ]
    print(
        _common.table(
            [
                "variant",
                "wall median ms/step",
                "wall min ms/step",
                "CPU median ms/step",
                "vs bare (wall)",
                "vs bare (CPU)",
            ],
            rows,
        )
    )
    print()
    for label, stats in (("wall-clock", w), ("CPU time", c)):
        bare = stats["bare"]["median"]
        ratio = stats["middleware"]["median"] / bare
        speedup = bare / stats["offline"]["median"]
        print(
            f"{label}: middleware vs bare create_agent {ratio:.3f}x per step "
            f"({(ratio - 1) * 100:+.1f}%; target <= +10%: {'met' if ratio <= 1.10 else 'missed'}); "
            f"empty wrap hooks {(stats['empty-wrap']['median'] / bare - 1) * 100:+.1f}% "
            f"(notes: +6%); empty after_model "
            f"{(stats['empty-after-model']['median'] / bare - 1) * 100:+.1f}% (notes: +22%); "
            f"offline {speedup:.1f}x faster than bare (target >= 20x: "
            f"{'met' if speedup >= 20 else 'missed'}), "
            f"{stats['middleware']['median'] / stats['offline']['median']:.1f}x faster than "
            "create_agent + middleware"
        )
    if args.history:
        print(refuse_history(args.history))
    return 0


if __name__ == "__main__":
    sys.exit(main())
