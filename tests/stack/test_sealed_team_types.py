"""A team's own types in the sealed checkpointer (issue 24, item 7), on invoke, ainvoke
and stream: named in ``allowed_types`` they round-trip; a type not named is refused
before the tool runs (a state key declared to hold it) or as the call's error (a value
in a key declared ``Any``), naming the type and how to allow it; the thread stays
usable either way."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import importlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NotRequired

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from pydantic import BaseModel
from pydantic.v1 import BaseModel as BaseModelV1

from agent_contract.approval import Approval, PendingApproval
from agent_contract.errors import CheckpointError, ConfigurationError
from agent_contract.runtime import Contract, RunResult
from agent_contract.sealing import folder_key
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolSpec
from agent_contract_langchain.durable import async_sqlite_checkpointer, sqlite_checkpointer
from agent_contract_langchain.harness import arun_agent, run_agent
from agent_contract_langchain.resuming import aresume_agent, resume_agent
from agent_contract_langchain.sealed import (
    SealedSerializer,
    TypeNotAllowedError,
    allowed_type_keys,
)
from agent_contract_langchain.tools import (
    current_tool_context,
    from_langchain_tool,
    to_langchain_tools,
)

ROOT = Path(__file__).resolve().parents[2]
MODES = ("invoke", "ainvoke", "stream")
THREAD = "thread-team-types"
HERE = __name__


class Status(enum.Enum):
    OPEN = "open"
    PAID = "paid"


class Item(BaseModel):
    sku: str


class Order(BaseModel):
    id: str
    total: int


class Basket(BaseModel):
    item: Item
    status: Status


@dataclasses.dataclass
class Shipment:
    order_id: str
    parcels: int


class OrderState(AgentState):  # type: ignore[type-arg]
    order: NotRequired[Order]


class ShipmentState(AgentState):  # type: ignore[type-arg]
    shipments: NotRequired[list[Shipment | None]]


class BasketState(AgentState):  # type: ignore[type-arg]
    basket: NotRequired[Basket]


class LooseState(AgentState):  # type: ignore[type-arg]
    loose: NotRequired[Any]


def _keyed(schema: type) -> AgentMiddleware:
    return type(f"{schema.__name__}Keys", (AgentMiddleware,), {"state_schema": schema})()


class Tool:
    """A tool that writes ``value`` under ``key`` with a Command, counting its runs."""

    def __init__(self, key: str, value: Any) -> None:
        self.runs = 0

        @tool
        def save(ref: str) -> Command[Any]:
            """Save a value."""
            self.runs += 1
            context = current_tool_context.get()
            call_id = context.tool_call_id if context else "?"
            reply = ToolMessage(content=f"saved {ref}", tool_call_id=call_id)
            return Command(update={"messages": [reply], key: value})

        self.tool = save


def turn(
    mode: str,
    folder: Path,
    saving: Tool,
    schema: type,
    call_id: str,
    allowed: Sequence[type | str] = (),
) -> RunResult:
    """One turn on :data:`THREAD` (the model calls the tool, then answers) with the
    binding's sealed checkpointer in ``folder``."""
    contract = Contract([from_langchain_tool(saving.tool, effect="read")])
    model = FakeModel([tool_call("save", {"ref": call_id}, id=call_id), f"done {call_id}"])
    options: dict[str, Any] = {
        "run_id": THREAD,
        "create_agent_options": {"middleware": [_keyed(schema)], "tools": [saving.tool]},
    }
    path = folder / "checkpoints.sqlite3"
    named = {"allowed_types": allowed} if allowed else {}  # the bare call, as before
    if mode == "ainvoke":

        async def run() -> RunResult:
            async with async_sqlite_checkpointer(path, **named) as saver:
                return await arun_agent(model, contract, "save it", checkpointer=saver, **options)

        return asyncio.run(run())
    with sqlite_checkpointer(path, **named) as saver:
        return run_agent(model, contract, "save it", mode=mode, checkpointer=saver, **options)  # type: ignore[arg-type]


def stored(folder: Path, key: str, allowed: Sequence[type | str]) -> Any:
    with sqlite_checkpointer(folder / "checkpoints.sqlite3", allowed_types=allowed) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": THREAD}})
    assert found is not None
    return found.checkpoint["channel_values"].get(key)


def tool_messages(result: RunResult) -> list[str]:
    return [m.content for m in result.messages if m.role == "tool"]


# -- named types round-trip ----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("named", ["class", "string"])
def test_a_named_pydantic_model_round_trips_and_the_next_turn_works(
    mode: str, named: str, tmp_path: Path
) -> None:
    allowed = [Order] if named == "class" else [f"{HERE}.Order"]
    saving = Tool("order", Order(id="o-1", total=5))
    first = turn(mode, tmp_path, saving, OrderState, "c1", allowed)
    assert (first.stop_reason, first.tool_calls[0].status) == ("answered", "success")
    assert stored(tmp_path, "order", allowed) == Order(id="o-1", total=5)
    second = turn(mode, tmp_path, saving, OrderState, "c2", allowed)
    assert second.stop_reason == "answered"
    assert saving.runs == 2
    assert isinstance(stored(tmp_path, "order", allowed), Order)


@pytest.mark.parametrize("mode", MODES)
def test_a_named_dataclass_round_trips(mode: str, tmp_path: Path) -> None:
    saving = Tool("shipments", [Shipment("o-1", 2), None])
    result = turn(mode, tmp_path, saving, ShipmentState, "c1", [Shipment])
    assert result.stop_reason == "answered"
    assert stored(tmp_path, "shipments", [Shipment]) == [Shipment("o-1", 2), None]


@pytest.mark.parametrize("mode", MODES)
def test_a_run_paused_with_a_named_type_in_state_resumes(mode: str, tmp_path: Path) -> None:
    """The approval path: the run pauses on a write with an Order in its state, and the
    resume (a new checkpointer, the same allowed_types) reads it back and writes once."""
    saving = Tool("order", Order(id="o-1", total=5))
    paid: list[str] = []

    def pay(context: Any, order_id: str) -> dict[str, Any]:
        paid.append(order_id)
        return {"paid": order_id}

    refund = ToolSpec(
        name="refund",
        description="Refund an order.",
        effect="write",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
        handler=pay,
        preview=lambda context, order_id: {"refund": order_id},
        verify=lambda context, order_id: None,
    )
    contract = Contract([from_langchain_tool(saving.tool, effect="read"), refund])
    script = [
        tool_call("save", {"ref": "o-1"}, id="c1"),
        tool_call("refund", {"order_id": "o-1"}, id="c2"),
        "refunded",
    ]
    options: dict[str, Any] = {
        "create_agent_options": {
            "middleware": [_keyed(OrderState)],
            "tools": [saving.tool, *to_langchain_tools([refund])],
        },
    }
    path = tmp_path / "checkpoints.sqlite3"

    async def arun() -> RunResult:
        async with async_sqlite_checkpointer(path, allowed_types=[Order]) as saver:
            return await arun_agent(
                FakeModel(script, stateless=True),
                contract,
                "refund o-1",
                run_id=THREAD,
                checkpointer=saver,
                **options,
            )

    async def aresume(snapshot: Any, decisions: list[Approval]) -> RunResult:
        async with async_sqlite_checkpointer(path, allowed_types=[Order]) as saver:
            return await aresume_agent(
                FakeModel(script, stateless=True),
                contract,
                snapshot,
                decisions,
                checkpointer=saver,
                **options,
            )

    if mode == "ainvoke":
        paused = asyncio.run(arun())
    else:
        with sqlite_checkpointer(path, allowed_types=[Order]) as saver:
            paused = run_agent(
                FakeModel(script, stateless=True),
                contract,
                "refund o-1",
                mode=mode,  # type: ignore[arg-type]
                run_id=THREAD,
                checkpointer=saver,
                **options,
            )
    assert (paused.stop_reason, saving.runs, paid) == ("pending_approval", 1, [])
    assert paused.tool_calls[0].status == "success"
    snapshot = paused.snapshot
    assert snapshot is not None
    decisions = [
        Approval.for_pending(PendingApproval.from_dict(p["approval"]), "approve")
        for p in snapshot["batch"]
    ]
    if mode == "ainvoke":
        done = asyncio.run(aresume(snapshot, decisions))
    else:
        with sqlite_checkpointer(path, allowed_types=[Order]) as saver:
            done = resume_agent(
                FakeModel(script, stateless=True),
                contract,
                snapshot,
                decisions,
                checkpointer=saver,
                mode=mode,
                **options,  # type: ignore[arg-type]
            )
    assert (done.stop_reason, paid) == ("answered", ["o-1"])
    assert stored(tmp_path, "order", [Order]) == Order(id="o-1", total=5)


# -- a type not named is refused before the tool runs ---------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_state_key_of_a_type_not_named_is_refused_before_the_tool_runs(
    mode: str, tmp_path: Path
) -> None:
    saving = Tool("order", Order(id="o-1", total=5))
    with pytest.raises(TypeNotAllowedError) as caught:
        turn(mode, tmp_path, saving, OrderState, "c1")
    assert saving.runs == 0
    assert caught.value.types == (f"{HERE}.Order",)
    assert caught.value.keys == ("order",)
    assert isinstance(caught.value, CheckpointError)
    message = str(caught.value)
    assert f"{HERE}.Order (state key order)" in message
    assert "nothing ran" in message
    assert f"allowed_types=['{HERE}.Order']" in message
    # The thread is not left broken: named, the next turn on it works.
    again = turn(mode, tmp_path, saving, OrderState, "c2", [Order])
    assert (again.stop_reason, saving.runs) == ("answered", 1)
    assert stored(tmp_path, "order", [Order]) == Order(id="o-1", total=5)


@pytest.mark.parametrize("mode", MODES)
def test_a_type_inside_a_named_model_must_be_named_too(mode: str, tmp_path: Path) -> None:
    saving = Tool("basket", Basket(item=Item(sku="s-1"), status=Status.OPEN))
    with pytest.raises(TypeNotAllowedError) as caught:
        turn(mode, tmp_path, saving, BasketState, "c1", [Basket])
    assert saving.runs == 0
    assert caught.value.types == (f"{HERE}.Item", f"{HERE}.Status")
    everything = [Basket, Item, Status]
    result = turn(mode, tmp_path, saving, BasketState, "c2", everything)
    assert result.stop_reason == "answered"
    assert stored(tmp_path, "basket", everything) == Basket(
        item=Item(sku="s-1"), status=Status.OPEN
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_value_of_a_type_not_named_in_an_any_key_is_the_calls_error(
    mode: str, tmp_path: Path
) -> None:
    """Declared ``Any``, the key says nothing before the run: the update is refused as
    the call's error (the tool has run), nothing is stored, and the next turn works."""
    saving = Tool("loose", Order(id="o-1", total=5))
    first = turn(mode, tmp_path, saving, LooseState, "c1")
    assert first.stop_reason == "answered"
    (record,) = first.tool_calls
    assert (record.status, record.error_kind) == ("error", "tool_error")
    (reply,) = tool_messages(first)
    assert f"{HERE}.Order" in reply
    assert "allowed_types" in reply
    assert stored(tmp_path, "loose", ()) is None
    second = turn(mode, tmp_path, Tool("loose", {"plain": 1}), LooseState, "c2")
    assert (second.stop_reason, second.tool_calls[0].status) == ("answered", "success")
    assert stored(tmp_path, "loose", ()) == {"plain": 1}


# -- the serializer itself --------------------------------------------------------------------


def test_the_serializer_stores_nothing_it_could_not_read_back(tmp_path: Path) -> None:
    key = folder_key(tmp_path)
    plain, named = SealedSerializer(key), SealedSerializer(key, allowed_types=[Order])
    with pytest.raises(TypeNotAllowedError, match=f"holds {HERE}.Order.*allowed_types") as caught:
        plain.dumps_typed({"order": Order(id="o", total=1)})
    assert caught.value.types == (f"{HERE}.Order",)
    row = named.dumps_typed({"order": Order(id="o", total=1)})
    assert named.loads_typed(row) == {"order": Order(id="o", total=1)}
    # A row of a type this serializer was not told about: refused, naming the fix.
    with pytest.raises(CheckpointError, match=f"outside the allowlist.*'{HERE}.Order'"):
        plain.loads_typed(row)


def test_a_string_names_the_class_where_it_is_defined() -> None:
    assert allowed_type_keys([f"{HERE}.Order", Shipment, Status]) == {
        (HERE, "Order"),
        (HERE, "Shipment"),
        (HERE, "Status"),
    }


class _Plain:
    pass


class _V1(BaseModelV1):
    x: int


class _Outer:
    class Inner(BaseModel):
        x: int


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (f"{HERE}.*", "no wildcard"),
        ("Order", "not 'module.Name'"),
        ("no_such_module_for_sure.Order", "importable module"),
        (f"{HERE}.Missing", "importable module"),
        (f"{HERE}.THREAD", "not a class"),
        (_Outer.Inner, "nested or local"),
        (_Plain, "nothing to allow"),
        (_V1, "pydantic v1"),
        (str, "nothing to allow"),
    ],
)
def test_an_entry_that_is_not_a_team_class_is_refused(entry: Any, why: str) -> None:
    with pytest.raises(ConfigurationError, match=why):
        SealedSerializer(bytes(32), allowed_types=[entry])


def test_a_local_class_and_a_bare_entry_are_refused(tmp_path: Path) -> None:
    class Local(BaseModel):
        x: int

    with pytest.raises(ConfigurationError, match="nested or local"):
        SealedSerializer(bytes(32), allowed_types=[Local])
    with pytest.raises(ConfigurationError, match="a list of classes"):
        SealedSerializer(bytes(32), allowed_types=Order)  # type: ignore[arg-type]
    target = tmp_path / "cp.sqlite3"
    with pytest.raises(ConfigurationError), sqlite_checkpointer(target, allowed_types=[_Plain]):
        pass
    assert not target.exists()  # refused before any file is made


def test_the_docs_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/APPROVALS.md's example, copied into a module of its own, runs: the Order it
    names round-trips through the sealed checkpointer."""
    page = (ROOT / "docs" / "APPROVALS.md").read_text(encoding="utf-8")
    section = page.split("## Your own types in the LangChain checkpointer", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    (tmp_path / "approvals_example.py").write_text(match.group(1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        example = importlib.import_module("approvals_example")
        assert capsys.readouterr().out.strip() == "answered"
        path = tmp_path / "agent-data" / "checkpoints.sqlite3"
        with sqlite_checkpointer(path, allowed_types=[example.Order]) as saver:
            found = saver.get_tuple({"configurable": {"thread_id": "customer-42"}})
        assert found is not None
        assert found.checkpoint["channel_values"]["order"] == example.Order(id="o-1", total=40)
    finally:
        sys.modules.pop("approvals_example", None)


class _LooseWriter(AgentMiddleware):
    """A team middleware that puts an Order in a key declared ``Any`` before the model."""

    state_schema = LooseState

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"loose": Order(id="o-9", total=9)}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return self.before_model(state, runtime)


@pytest.mark.parametrize("mode", MODES)
def test_a_hook_writing_a_type_not_named_is_not_stored_and_the_thread_goes_on(
    mode: str, tmp_path: Path
) -> None:
    """The last guard: ``dumps_typed`` refuses the row, so the run raises naming the
    type, nothing unreadable is stored, and the next turn on the thread answers."""
    path = tmp_path / "checkpoints.sqlite3"
    saving = Tool("loose", {"plain": 1})
    contract = Contract([from_langchain_tool(saving.tool, effect="read")])

    def once(model: FakeModel, middleware: list[Any]) -> RunResult:
        options: dict[str, Any] = {
            "run_id": THREAD,
            "create_agent_options": {"middleware": middleware, "tools": [saving.tool]},
        }
        if mode == "ainvoke":

            async def run() -> RunResult:
                async with async_sqlite_checkpointer(path) as saver:
                    return await arun_agent(model, contract, "hi", checkpointer=saver, **options)

            return asyncio.run(run())
        with sqlite_checkpointer(path) as saver:
            return run_agent(model, contract, "hi", mode=mode, checkpointer=saver, **options)  # type: ignore[arg-type]

    with pytest.raises(TypeNotAllowedError) as caught:
        once(FakeModel(["an answer the run does not keep"]), [_LooseWriter()])
    assert caught.value.types == (f"{HERE}.Order",)
    assert "allowed_types" in str(caught.value)
    after = once(FakeModel(["hello again"]), [_keyed(LooseState)])
    assert (after.stop_reason, after.output) == ("answered", "hello again")
