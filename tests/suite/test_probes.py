"""The kit's probe sees what tools really did: handler runs per ``tool_call_id``, where
an async handler's coroutine is, and the key each write ran with; the every-run checks
judge those effects, whatever the run reported."""

from __future__ import annotations

import asyncio
import contextlib

from agent_contract.approval import idempotency_key
from agent_contract.conformance import SCENARIOS
from agent_contract.conformance.boundaries.tool_errors import check_handler_runs
from agent_contract.conformance.boundaries.write_approval import check_write_keys
from agent_contract.conformance.fixtures import Probe, echo_tool, transfer_tool
from agent_contract.harnesses import Observation
from agent_contract.testing import FakeModel
from agent_contract.tools import ToolContext

_SCENARIO = next(s for s in SCENARIOS if s.name == "single_tool_call")


def _echoed(call_ids: tuple[str, ...], *, retries: int = 0) -> Observation:
    """A run that issued ``call_ids`` (echo calls, each answered with a success)."""
    messages = tuple(
        {"id": i, "name": "echo", "status": "success", "error_kind": None, "content": "echo: a"}
        for i in call_ids
    )
    return Observation(
        harness="probe-test",
        stop_reason="answered",
        output="done",
        trajectory=("echo",) * len(call_ids),
        tool_messages=messages,
        trace_types=("tool_retry",) * retries,
        emitted="",
        issued_ids=call_ids,
    )


def _run_echo(probe: Probe, call_id: str, times: int = 1) -> None:
    handler = echo_tool(probe).handler
    for _ in range(times):
        handler(ToolContext(run_id="run-1", tool_call_id=call_id), text="a")


def _problems(probe: Probe, obs: Observation) -> list[str]:
    return [p.message for p in check_handler_runs(_SCENARIO, obs, FakeModel(["done"]), probe)]


def test_a_handler_run_once_per_call_holds() -> None:
    probe = Probe()
    _run_echo(probe, "call_a")
    _run_echo(probe, "call_b")
    assert probe.runs_by_call(["echo"]) == {"call_a": 1, "call_b": 1}
    assert _problems(probe, _echoed(("call_a", "call_b"))) == []


def test_a_hidden_rerun_of_one_call_is_caught() -> None:
    probe = Probe()
    _run_echo(probe, "call_a", times=3)
    problems = _problems(probe, _echoed(("call_a",)))
    assert problems == [
        "the handler ran 3 times for call 'call_a', but the contract admitted 1 attempt(s)"
    ]


def test_retries_the_contract_traced_are_admitted() -> None:
    probe = Probe()
    _run_echo(probe, "call_a", times=3)
    assert _problems(probe, _echoed(("call_a",), retries=2)) == []


def test_a_success_whose_handler_never_ran_is_caught() -> None:
    probe = Probe()
    echo_tool(probe)
    problems = _problems(probe, _echoed(("call_a",)))
    assert problems == [
        "call 'call_a' of 'echo' was answered with a success, but its handler never ran"
    ]


def test_runs_under_an_id_never_issued_are_not_matched() -> None:
    """A bare context (id ``""``) cannot be matched to a call: not counted here."""
    probe = Probe()
    _run_echo(probe, "", times=2)
    assert _problems(probe, _echoed(("call_a",))) == []


def test_a_write_must_run_with_its_calls_key() -> None:
    probe = Probe()
    handler = transfer_tool(probe).handler
    arguments = {"to": "bob", "amount": 10}
    key = idempotency_key("run-1", "call_w", "transfer", arguments)
    handler(ToolContext(run_id="run-1", tool_call_id="call_w", idempotency_key=key), **arguments)
    handler(ToolContext(run_id="run-1", tool_call_id="call_w", idempotency_key=key), **arguments)
    model = FakeModel(["done"])
    assert check_write_keys(_SCENARIO, _echoed(()), model, probe) == []
    fresh = ToolContext(run_id="run-1", tool_call_id="call_w", idempotency_key="idem-fresh")
    handler(fresh, **arguments)
    problems = [p.message for p in check_write_keys(_SCENARIO, _echoed(()), model, probe)]
    assert problems == [
        f"the write for call 'call_w' ran with the idempotency key 'idem-fresh', not its "
        f"call's {key!r}"
    ]


def test_the_probe_sees_whether_a_coroutine_stopped() -> None:
    """Cancelled: the coroutine ended by its cancellation; shielded: the awaiting task
    was cancelled, the handler's coroutine still runs."""
    probe = Probe()
    release = asyncio.Event()

    async def body(name: str) -> None:
        with probe.coroutine(name):
            await release.wait()

    async def scenario() -> None:
        plain = asyncio.ensure_future(body("plain"))
        inner = asyncio.ensure_future(body("shielded"))
        shielded = asyncio.ensure_future(asyncio.shield(inner))
        await asyncio.sleep(0)
        plain.cancel()
        shielded.cancel()
        for task in (plain, shielded):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        assert probe.coroutines == {"plain": "cancelled", "shielded": "running"}
        release.set()
        await inner
        assert probe.coroutines["shielded"] == "returned"

    asyncio.run(scenario())
