"""The contract inside real ``create_agent`` stacks: stock and user middleware placed
before or after ``ContractMiddleware``, driven with invoke, ainvoke and stream.

``Stack`` builds the graph the way a team does (``create_agent`` with the contract's two
middleware around theirs) and runs it through the harness (``run_graph``), which sets
the run's config and derived recursion limit. ``companion``/``position``/``mode``
parametrize a test over a stock middleware with an ``after_model`` hook placed before
and after the contract, under every mode.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langgraph.checkpoint.memory import InMemorySaver

from agent_contract.budget import Budget
from agent_contract.messages import Message
from agent_contract.model import Model
from agent_contract.runtime import Contract, RunResult
from agent_contract.tools import ToolSpec
from agent_contract_langchain.chat_model import ContractChatModel
from agent_contract_langchain.harness import run_graph
from agent_contract_langchain.middleware import ContractMiddleware
from agent_contract_langchain.tools import to_langchain_tools

Position = Literal["before", "after"]
POSITIONS: tuple[Position, ...] = ("before", "after")
MODES = ("invoke", "ainvoke", "stream")


@dataclass
class Ran:
    """What the tools of a stack did (handler runs, by tool)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.calls if n == name)


def echo_spec(ran: Ran, name: str = "echo", **options: Any) -> ToolSpec:
    def handler(a: int) -> str:
        ran.calls.append((name, {"a": a}))
        return f"{name} {a}"

    return ToolSpec(
        name=name,
        description=f"{name} a number",
        parameters={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        handler=handler,
        **options,
    )


@dataclass
class Stack:
    """A ``create_agent`` graph with the contract and ``middleware`` placed ``position``."""

    model: Model
    contract: Contract
    middleware: Sequence[Any] = ()
    position: Position = "after"
    extra_tools: Sequence[Any] = ()
    options: dict[str, Any] = field(default_factory=dict)
    tools: Sequence[Any] | None = None
    """The tools given to ``create_agent`` (default: the contract's, converted)."""
    checkpointer: Any = field(default_factory=InMemorySaver)

    def __post_init__(self) -> None:
        contract_mw = ContractMiddleware(self.contract)
        if self.position == "before":
            stack = [*self.middleware, contract_mw, contract_mw.inner()]
        else:
            stack = contract_mw.around(*self.middleware)
        self.graph = create_agent(
            ContractChatModel(model=self.model),
            tools=(
                list(self.tools)
                if self.tools is not None
                else [*to_langchain_tools(self.contract.registry), *self.extra_tools]
            ),
            middleware=stack,
            checkpointer=self.checkpointer,
            **self.options,
        )

    def run(
        self, text: str = "hi", *, mode: str = "invoke", thread: str | None = None, **kw: Any
    ) -> RunResult:
        state = self.contract.start()
        config = {"configurable": {"thread_id": thread or state.view.run_id}}
        return run_graph(
            self.graph,
            state,
            [Message(role="user", content=text)],
            mode=mode,  # type: ignore[arg-type]
            config=config,
            **kw,
        )


@pytest.fixture
def ran() -> Ran:
    return Ran()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=POSITIONS)
def position(request: pytest.FixtureRequest) -> Position:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def companion() -> Callable[[], Any]:
    """A stock middleware with an ``after_model`` hook, realistic and inert here."""
    return lambda: ToolCallLimitMiddleware(run_limit=50)


def cells() -> list[tuple[str, str]]:
    """Every (position, mode)."""
    return list(itertools.product(POSITIONS, MODES))


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return tmp_path


def budget(**limits: Any) -> Budget:
    return Budget(deadline_seconds=30.0, **limits)
