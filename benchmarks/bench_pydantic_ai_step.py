"""Per-step cost of the PydanticAI binding against bare PydanticAI, side by side in one
process, on the same scripted model and tool.

The script: ``--steps`` model steps that each call a trivial ``echo`` tool, then one
answer (steps + 1 model calls per run). Every variant replays it with a stateless
FakeModel wrapped by ``contract_model`` (a PydanticAI ``FunctionModel``); each agent is
built once and run many times. Runs are interleaved round by round in a shuffled order;
the figures are per model step (run time / (steps + 1)).

Variants:

- ``bare``: ``baseline.plain_agent``: a plain ``Agent`` with ``Tool.from_schema`` over the
  same handler, ``run_sync``.
- ``bare-run``: the same agent, ``await agent.run`` on a fresh event loop.
- ``bare-stream``: the same agent, ``run_stream_events`` consumed to its result.
- ``binding``: ``build_agent`` + ``drive_agent``, ``run_sync``: the contract's capability
  and toolset, the RunResult built at the end.
- ``binding-run``: the same with ``await agent.run``.
- ``binding-stream``: the same with ``run_stream_events``.
- ``offline``: ``agent_contract.run`` (the reference loop), for scale.

Usage: ``uv run python benchmarks/bench_pydantic_ai_step.py [--steps 10] [--rounds 150]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import _common
from pydantic_ai.run import AgentRunResultEvent

from agent_contract import Budget, Contract, Message, ToolSpec, run
from agent_contract.testing import FakeModel, tool_call
from agent_contract_pydantic_ai import build_agent, drive_agent
from agent_contract_pydantic_ai.baseline import plain_agent
from agent_contract_pydantic_ai.driving import run_in_new_loop, run_sync_on_own_loop


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


def expect_answer(result: Any) -> Any:
    if result.stop_reason != "answered":
        raise RuntimeError(f"the run stopped with {result.stop_reason}: {result.stop_detail}")
    return result


def expect_output(result: Any) -> Any:
    if result.output != "done":
        raise RuntimeError(f"the bare agent answered {result.output!r}")
    return result


async def _stream(agent: Any) -> Any:
    result = None
    async with agent.run_stream_events("go") as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                result = event.result
    return result


def variants(steps: int) -> dict[str, Callable[[], Any]]:
    tools = [echo_tool()]
    budget = Budget(max_model_steps=steps + 1, max_tool_calls=steps, deadline_seconds=None)
    contract = Contract(tools, budget=budget)
    replies = script(steps)
    user = [Message(role="user", content="go")]
    bare = plain_agent(FakeModel(replies, stateless=True), tools)
    agent = build_agent(FakeModel(replies, stateless=True), contract)

    def binding(mode: str) -> Callable[[], Any]:
        return lambda: expect_answer(drive_agent(agent, contract.start(), user, mode=mode))  # type: ignore[arg-type]

    return {
        "bare": lambda: expect_output(run_sync_on_own_loop(bare, {"user_prompt": "go"})),
        "bare-run": lambda: expect_output(run_in_new_loop(lambda: bare.run("go"))),
        "bare-stream": lambda: expect_output(run_in_new_loop(lambda: _stream(bare))),
        "binding": binding("run_sync"),
        "binding-run": binding("run"),
        "binding-stream": binding("stream"),
        "offline": lambda: expect_answer(run(FakeModel(replies, stateless=True), contract, "go")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="tool-call steps per run")
    parser.add_argument("--rounds", type=int, default=150, help="timed runs per variant")
    parser.add_argument("--warmup", type=int, default=15, help="untimed runs per variant")
    args = parser.parse_args(argv)
    print(_common.environment())
    print(f"pydantic-ai-slim {_common.version('pydantic-ai-slim')}")
    model_steps = args.steps + 1
    print(
        f"script: {args.steps} echo steps + 1 answer = {model_steps} model steps per run; "
        f"{args.rounds} runs per variant, interleaved, after {args.warmup} warm-up runs\n"
    )
    wall, cpu = _common.interleaved(variants(args.steps), rounds=args.rounds, warmup=args.warmup)

    def per_step(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
        return {
            name: _common.summary([v / model_steps for v in values])
            for name, values in samples.items()
        }

    w, c = per_step(wall), per_step(cpu)
    base = {"bare": "bare", "bare-run": "bare-run", "binding": "bare", "offline": "bare"}
    base |= {"bare-stream": "bare-stream", "binding-run": "bare-run"}
    base |= {"binding-stream": "bare-stream"}
    rows = [
        [
            name,
            f"{w[name]['median'] * 1e3:.3f}",
            f"{w[name]['min'] * 1e3:.3f}",
            f"{c[name]['median'] * 1e3:.3f}",
            base[name],
            f"{w[name]['median'] / w[base[name]]['median']:.3f}",
            f"{c[name]['median'] / c[base[name]]['median']:.3f}",
        ]
        for name in w
    ]
    header = ["variant", "wall median ms/step", "wall min ms/step", "CPU median ms/step"]
    header += ["vs", "vs (wall)", "vs (CPU)"]
    print(_common.table(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
