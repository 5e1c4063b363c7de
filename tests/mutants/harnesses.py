"""Deliberately broken harnesses, one defect each, and their correct twins.

Each :class:`Mutant` is a harness a team could plausibly write (a fork of the offline
loop, a tool adapter, a model adapter, a run driver, an approval endpoint, a subclass of
``ContractMiddleware``, a stock middleware in its place) with exactly one thing wrong,
and the boundary the suite must report it under. Each family also has a correct twin
(the same wrapper with the defect switched off): it must hold everywhere (no false
alarm).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_contract.approval import Approval, PendingApproval
from agent_contract.budget import Budget
from agent_contract.conformance.evaluate import observe
from agent_contract.delegation import SubAgentPlan
from agent_contract.errors import ApprovalError
from agent_contract.harnesses import (
    OFFLINE_CAPABILITIES,
    Harness,
    Observation,
    RunInput,
    offline_harness,
    settle_approvals,
)
from agent_contract.loop import resume, run_child, run_input
from agent_contract.messages import Completion, Message
from agent_contract.model import Model
from agent_contract.runstore import SECRETS_FIELD, VERSION_FIELD, RunStore
from agent_contract.runtime import AnswerFormat, Contract, RunResult, RunState, Stop
from agent_contract.stores import Database
from agent_contract.tampering import OpenStore
from agent_contract.tools import ToolContext, ToolSpec
from agent_contract.trace import RedactionPolicy

Wrap = Callable[[Harness], Harness]


@dataclass(frozen=True)
class Mutant:
    """One broken harness."""

    name: str
    kind: str
    """Which part of a team's wiring holds the defect."""
    defect: str
    boundary: str
    """The boundary the suite must report it under."""
    build: Callable[[], Harness]
    needs_framework: str | None = None
    """``langchain`` or ``pydantic_ai`` when it needs that binding."""
    unchecked: bool = False
    """Caught as a not-checked cell (the harness leaves the boundary out) rather than a
    broken one."""


@dataclass(frozen=True)
class Twin:
    """A correct harness of a mutant family: it must hold everywhere."""

    name: str
    build: Callable[[], Harness]
    needs_framework: str | None = None


def _with_caps(harness: Any, capabilities: Sequence[str] = OFFLINE_CAPABILITIES) -> Harness:
    harness.capabilities = tuple(capabilities)
    return harness  # type: ignore[no-any-return]


# -- a run driver over the offline loop: its options and contract ----------------------


Delegate = Callable[[SubAgentPlan, Contract, Contract, RunState, str, str], str | None]
"""``delegate(plan, run_contract, child_contract, run, call_id, text) -> answer``: how the
team's delegating tool runs its child agent on ``text`` inside the call ``call_id``."""


def in_child_scope(
    plan: SubAgentPlan,
    contract: Contract,
    child: Contract,
    state: RunState,
    call_id: str,
    text: str,
) -> str | None:
    """The child under the run's child contract, as a child scope of the call (correct)."""
    return run_child(plan.model, child, state, call_id, text)


def in_a_contract_of_its_own(
    plan: SubAgentPlan,
    contract: Contract,
    child: Contract,
    state: RunState,
    call_id: str,
    text: str,
) -> str | None:
    """The child in a run of its own, under a fresh Contract over its tools with the
    same budget settings (a fresh budget: its calls never charge the run's)."""
    own = Contract(list(plan.tools), budget=contract.budget, allowlist=plan.allowlist)
    return run_input(plan.model, own, RunInput(user=text)).output


def under_the_parents_contract(
    plan: SubAgentPlan,
    contract: Contract,
    child: Contract,
    state: RunState,
    call_id: str,
    text: str,
) -> str | None:
    """The child scope under the run's own Contract (the parent's allowlist, not its
    own)."""
    return run_child(plan.model, contract, state, call_id, text)


def driver(
    *,
    options: Callable[[RunInput], RunInput] = lambda o: o,
    contract: Callable[[RunInput, list[ToolSpec]], Contract] | None = None,
    model: Callable[[Model], Model] = lambda m: m,
    tools: Callable[[list[ToolSpec]], list[ToolSpec]] = lambda t: t,
    result: Callable[[RunResult], RunResult | Observation] = lambda r: r,
    capabilities: Sequence[str] = OFFLINE_CAPABILITIES,
    open_store: OpenStore = RunStore,
    delegate: Delegate = in_child_scope,
) -> Harness:
    """The offline harness with one piece of the team's wiring swapped in."""

    def harness(
        base_model: Model, base_tools: list[ToolSpec], base: RunInput
    ) -> RunResult | Observation:
        opts = options(base)
        adapted = tools(base_tools)
        make = contract or (lambda o, t: o.contract(t))
        wrapped = model(base_model)
        request = RunInput.of(
            opts.user, history=opts.history, caller=opts.caller, context=opts.context
        )
        plan, state = opts.sub_agent, None
        if plan is None:
            current = make(opts, adapted)
        else:  # the sub-agent hook: the delegating tool runs the child as ``delegate`` does
            started: list[RunState] = []

            def run_delegated(child: Contract, context: ToolContext, text: str) -> str:
                return delegate(plan, current, child, started[0], context.tool_call_id, text) or ""

            current = plan.contract(adapted, lambda t: make(opts, t), run_delegated)
            state = request.start(current)
            started.append(state)
        first = run_input(wrapped, current, request, state=state)
        settled = settle_approvals(
            first,
            lambda snapshot, approvals, checkpoint=None: resume(
                wrapped, current, snapshot, approvals, checkpoint=checkpoint
            ),
            opts,
            restart=lambda snapshot, approvals: resume(
                wrapped, make(opts, tools(base_tools)), snapshot, approvals
            ),
            open_store=open_store,
        )
        return result(settled)

    return _with_caps(harness, capabilities)


# -- a run store (where paused runs are kept) -------------------------------------------


class FastLoadingStore(RunStore):
    """A team's run store that "makes loading faster": ``load`` reads the row and decrypts
    it without checking its seal or its version (``verify=True``: the stock load, the
    twin)."""

    def __init__(self, database: Database, *, verify: bool = False) -> None:
        super().__init__(database)
        self.verify = verify

    def load(self, thread_id: str) -> tuple[str, dict[str, Any]]:
        if self.verify:
            return super().load(thread_id)
        with self.database.transaction(write=False) as conn:
            harness, text = conn.execute(
                "SELECT harness, snapshot FROM runs WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        snapshot = json.loads(self.decode(text))
        for field_name in (SECRETS_FIELD, VERSION_FIELD):
            snapshot.pop(field_name, None)
        return str(harness), snapshot


# -- model adapters (what the contract is shown of the model's reply) ------------------


class RenamingModel:
    """A model adapter that rewrites each tool call's name (``fix`` gets the name and
    the offered names) and, optionally, its id (``new_id``)."""

    def __init__(
        self,
        inner: Model,
        fix: Callable[[str, list[str]], str] = lambda n, offered: n,
        new_id: Callable[[str | None, set[str]], str | None] = lambda i, seen: i,
    ) -> None:
        self.inner = inner
        self.fix = fix
        self.new_id = new_id
        self.seen: set[str] = set()

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        completion = self.inner.complete(messages, **kwargs)
        offered = [t["function"]["name"] for t in (kwargs.get("tools") or [])]
        calls = []
        for call in completion.tool_calls:
            call_id = self.new_id(call.id, self.seen)
            if call_id:
                self.seen.add(call_id)
            calls.append(dataclasses.replace(call, name=self.fix(call.name, offered), id=call_id))
        return dataclasses.replace(completion, tool_calls=tuple(calls))


class FinishForgettingModel:
    """A model adapter that hands the contract every reply as finished: its finish
    reason ``stop`` and its refusal dropped (``forget=False``: unchanged, the twin)."""

    def __init__(self, inner: Model, forget: bool = True) -> None:
        self.inner = inner
        self.forget = forget

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        completion = self.inner.complete(messages, **kwargs)
        if not self.forget:
            return completion
        return dataclasses.replace(completion, finish_reason="stop", refusal=None)


class ReorderingModel:
    """A model adapter that hands the model the last batch's tool messages in completion
    order (here: reversed), not in issue order."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        tail = 0
        while tail < len(messages) and messages[len(messages) - 1 - tail].role == "tool":
            tail += 1
        if tail > 1:
            messages = [*messages[:-tail], *reversed(messages[-tail:])]
        return self.inner.complete(messages, **kwargs)


def _casefold_names(name: str, offered: list[str]) -> str:
    return next((o for o in offered if o.lower() == name.lower()), name)


_LOOK_ALIKES = str.maketrans({"\u0435": "e", "\u0430": "a", "\u043e": "o", "\u0441": "c"})


def _latin_names(name: str, offered: list[str]) -> str:
    return name.translate(_LOOK_ALIKES)


def _prefix_names(name: str, offered: list[str]) -> str:
    return next((o for o in offered if o.startswith(name) or name.startswith(o)), name)


def _fresh_on_reuse(call_id: str | None, seen: set[str]) -> str | None:
    return f"{call_id}-{uuid.uuid4().hex[:6]}" if call_id in seen else call_id


def one_call_past_budget() -> Harness:
    """A fork of the offline loop that asks the model before checking the step budget:
    at the budget it makes one more model call, then stops with ``max_model_steps``."""
    from agent_contract.loop import _drive  # the reference step loop

    def harness(model: Model, tools: list[ToolSpec], options: RunInput) -> RunResult:
        contract = options.contract(tools)
        state = contract.start(caller=options.caller)
        budget = contract.budget.max_model_steps

        class Peeking:
            def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
                return model.complete(messages, **kwargs)

        peek = Peeking()
        original = state.check_before_model_call

        def check(transcript: Any, **kwargs: Any) -> Stop | None:
            if budget is not None and state.view.usage().model_steps >= budget:
                peek.complete(list(transcript), tools=None, max_output_tokens=1, temperature=0)
            return original(transcript, **kwargs)

        state.check_before_model_call = check  # type: ignore[method-assign]
        transcript = [*options.history, Message(role="user", content=options.user)]
        return _drive(peek, state, transcript, 512, 0.0)

    return _with_caps(harness, ("timeouts",))


# -- tool adapters -------------------------------------------------------------------


def _adapt_writes(tools: list[ToolSpec], adapt: Callable[[ToolSpec], ToolSpec]) -> list[ToolSpec]:
    return [adapt(t) if t.effect == "write" else t for t in tools]


def remembered_verify(spec: ToolSpec) -> ToolSpec:
    """A write adapter whose ``verify`` never reads the store: it answers from what this
    adapter instance saw its own handler return."""
    seen: dict[str, Any] = {}
    handler = spec.handler

    def write(context: ToolContext, **arguments: Any) -> Any:
        value = handler(context, **arguments)
        seen[context.idempotency_key or ""] = value
        return value

    def verify(context: ToolContext, **arguments: Any) -> Any:
        return seen.get(context.idempotency_key or "")

    return dataclasses.replace(spec, handler=write, verify=verify)


def fresh_key(spec: ToolSpec) -> ToolSpec:
    """A write adapter that mints a fresh idempotency key for every attempt."""
    handler, check = spec.handler, spec.verify

    def rekey(context: ToolContext) -> ToolContext:
        return dataclasses.replace(context, idempotency_key=uuid.uuid4().hex)

    def write(context: ToolContext, **arguments: Any) -> Any:
        return handler(rekey(context), **arguments)

    def verify(context: ToolContext, **arguments: Any) -> Any:
        return check(rekey(context), **arguments) if check else None

    return dataclasses.replace(spec, handler=write, verify=verify)


def passthrough_write(spec: ToolSpec) -> ToolSpec:
    """The correct twin of the write adapters: handler and verify as they are."""
    handler, check = spec.handler, spec.verify

    def write(context: ToolContext, **arguments: Any) -> Any:
        return handler(context, **arguments)

    def verify(context: ToolContext, **arguments: Any) -> Any:
        return check(context, **arguments) if check else None

    return dataclasses.replace(spec, handler=write, verify=verify)


def _replace_tools(**changes: Any) -> Callable[[list[ToolSpec]], list[ToolSpec]]:
    return lambda tools: [dataclasses.replace(t, **changes) for t in tools]


def permissive_schema(tools: list[ToolSpec]) -> list[ToolSpec]:
    """A tool adapter that hands the contract an open schema (validation is 'the tool's
    job')."""
    return [
        dataclasses.replace(t, parameters={"type": "object", "additionalProperties": True})
        for t in tools
    ]


def _is_async(spec: ToolSpec) -> bool:
    return inspect.iscoroutinefunction(spec.handler)


def _adapt_reads(tools: list[ToolSpec], adapt: Callable[[ToolSpec], ToolSpec]) -> list[ToolSpec]:
    return [t if t.effect == "write" or _is_async(t) else adapt(t) for t in tools]


def str_results(tools: list[ToolSpec]) -> list[ToolSpec]:
    """A tool adapter that turns every result into ``str(value)``."""

    def adapt(spec: ToolSpec) -> ToolSpec:
        handler = spec.handler

        def stringify(*args: Any, **kwargs: Any) -> Any:
            value = handler(*args, **kwargs)
            return value if isinstance(value, str) else str(value)

        return dataclasses.replace(spec, handler=stringify)

    return _adapt_reads(tools, adapt)


def errors_as_text(tools: list[ToolSpec]) -> list[ToolSpec]:
    """A tool adapter that catches a tool's exception and returns its text."""

    def adapt(spec: ToolSpec) -> ToolSpec:
        handler = spec.handler

        def caught(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the defect
                return f"error: {exc}"

        return dataclasses.replace(spec, handler=caught)

    return _adapt_reads(tools, adapt)


def retrying(attempts: int) -> Callable[[list[ToolSpec]], list[ToolSpec]]:
    """A tool adapter that retries a failing tool up to ``attempts`` times inside one
    call, raising the last failure (one attempt: a passthrough, the correct twin)."""

    def adapt(spec: ToolSpec) -> ToolSpec:
        handler = spec.handler

        def retried(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(attempts):
                try:
                    return handler(*args, **kwargs)
                except Exception:
                    if attempt == attempts - 1:
                        raise
            raise RuntimeError("unreachable")

        return dataclasses.replace(spec, handler=retried)

    return lambda tools: _adapt_reads(tools, adapt)


def shielding(shield: bool) -> Callable[[list[ToolSpec]], list[ToolSpec]]:
    """A tool adapter that awaits each ``async def`` read tool's handler under
    ``asyncio.shield``, so a cancellation stops the adapter but the handler keeps running
    (``shield=False``: awaited as it is, the correct twin)."""

    def adapt(spec: ToolSpec) -> ToolSpec:
        handler = spec.handler

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            if shield:
                return await asyncio.shield(handler(*args, **kwargs))
            return await handler(*args, **kwargs)

        return dataclasses.replace(spec, handler=awaited)

    return lambda tools: [adapt(t) if _is_async(t) and t.effect != "write" else t for t in tools]


# -- redaction ----------------------------------------------------------------------


@dataclass(frozen=True)
class ExactSpellingRedaction(RedactionPolicy):
    """Redaction that replaces each secret's exact spelling only."""

    plain: tuple[str, ...] = field(default=())

    def redact(self, text: str) -> str:
        for secret in self.plain:
            text = text.replace(secret, self.replacement)
        return text


def exact_spelling_contract(options: RunInput, tools: list[ToolSpec]) -> Contract:
    redaction = ExactSpellingRedaction(plain=options.secrets)
    return Contract(
        tools,
        budget=options.budget,
        allowlist=options.allowlist,
        redaction=redaction,
        commentary=options.commentary,
        answer_format=options.answer_format,
    )


def configured_contract(
    max_argument_chars: int | None = None,
) -> Callable[[RunInput, list[ToolSpec]], Contract]:
    """A run driver that builds the Contract from the team's config: the run's settings,
    with ``max_argument_chars`` taken from the config when it sets one (``None``: the
    run's own budget as it is, the correct twin)."""

    def make(options: RunInput, tools: list[ToolSpec]) -> Contract:
        budget = options.budget or Budget()
        if max_argument_chars is not None:
            budget = dataclasses.replace(budget, max_argument_chars=max_argument_chars)
        return dataclasses.replace(options, budget=budget).contract(tools)

    return make


# -- answer formats -----------------------------------------------------------------


def _loosened(schema: Any, opened: bool) -> Any:
    """``schema`` with every object's ``required`` and ``additionalProperties`` dropped
    (``opened``: ``additionalProperties`` set to true instead of dropped)."""
    if isinstance(schema, list):
        return [_loosened(item, opened) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: _loosened(value, opened)
        for key, value in schema.items()
        if key not in ("required", "additionalProperties")
    }
    if opened and (out.get("type") == "object" or "properties" in out):
        out["additionalProperties"] = True
    return out


def answer_schemas(
    convert: Callable[[Any], Any],
) -> Callable[[RunInput], RunInput]:
    """A run driver whose adapter converts the structured answer's schemas (a Pydantic
    model's, say) with ``convert`` before the contract sees them."""

    def swap(options: RunInput) -> RunInput:
        answer = options.answer_format
        if answer is None:
            return options
        converted = AnswerFormat(
            tools={name: convert(schema) for name, schema in answer.tools.items()},
            text_schema=None if answer.text_schema is None else convert(answer.text_schema),
            description=answer.description,
        )
        return dataclasses.replace(options, answer_format=converted)

    return swap


# -- history ------------------------------------------------------------------------


def text_turns_only(options: RunInput) -> RunInput:
    """A driver that replays only the text turns of the history."""
    kept = tuple(m for m in options.history if m.role in ("user", "assistant") and not m.tool_calls)
    return dataclasses.replace(options, history=kept)


# -- trace ---------------------------------------------------------------------------


def without_tool_results(result: RunResult) -> Observation:
    """A driver whose trace leaves out the tool-result events."""
    obs = observe(result)
    events = [e for e in result.trace.events if e["type"] != "tool_result"]
    return dataclasses.replace(obs, trace_types=tuple(e["type"] for e in events))


# -- approval endpoints --------------------------------------------------------------


@dataclass
class EditDroppingEndpoint:
    """An approval endpoint that turns a human's edit into a plain approval."""

    inner: Any

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        approvals = self.inner(pending)
        by_id = {p.tool_call_id: p for p in pending}
        return [
            Approval.for_pending(by_id[a.tool_call_id], "approve") if a.decision == "edit" else a
            for a in approvals
        ]

    def refused(self, exc: ApprovalError) -> None:
        self.inner.refused(exc)


@dataclass
class PassthroughEndpoint:
    """The correct twin: decisions as the human gave them."""

    inner: Any

    def __call__(self, pending: Sequence[PendingApproval]) -> list[Approval]:
        return list(self.inner(pending))

    def refused(self, exc: ApprovalError) -> None:
        self.inner.refused(exc)


def endpoint(kind: Callable[[Any], Any]) -> Callable[[RunInput], RunInput]:
    def swap(options: RunInput) -> RunInput:
        if options.decider is None:
            return options
        return dataclasses.replace(options, decider=kind(options.decider))

    return swap


# -- the offline families ------------------------------------------------------------


def _budget(**changes: Any) -> Callable[[RunInput], RunInput]:
    def swap(options: RunInput) -> RunInput:
        return dataclasses.replace(options, budget=dataclasses.replace(options.budget, **changes))

    return swap


def secrets_as_values(leak: bool) -> Callable[[RunInput], RunInput]:
    """A run driver's options: as given (correct), or, with ``leak``, the run's named
    secrets also copied into its application values (``context``), where every
    context-aware tool reads them, declared or not."""

    def options(o: RunInput) -> RunInput:
        if not leak or not isinstance(o.secrets, Mapping):
            return o
        return dataclasses.replace(o, context={**(o.context or {}), **o.secrets})

    return options


def _call(**kwargs: Any) -> Callable[[], Harness]:
    return lambda: driver(**kwargs)


CORE_MUTANTS: tuple[Mutant, ...] = (
    # model / tool-name adapters
    Mutant(
        "casefold_tool_names",
        "tool adapter",
        "tool names matched ignoring case",
        "allowlist",
        _call(model=lambda m: RenamingModel(m, _casefold_names)),
    ),
    Mutant(
        "look_alike_tool_names",
        "tool adapter",
        "Cyrillic look-alike letters folded to Latin",
        "allowlist",
        _call(model=lambda m: RenamingModel(m, _latin_names)),
    ),
    Mutant(
        "prefix_tool_names",
        "tool adapter",
        "a tool name resolved by a shared prefix",
        "allowlist",
        _call(model=lambda m: RenamingModel(m, _prefix_names)),
    ),
    Mutant(
        "prefix_allowlist",
        "run driver",
        "the allowlist widened to names that start with an allowed one",
        "allowlist",
        _call(
            options=lambda o: dataclasses.replace(
                o, allowlist=None if o.allowlist is None else (*o.allowlist, "echo_admin")
            )
        ),
    ),
    Mutant(
        "allowlist_dropped",
        "run driver",
        "the run's allowlist not handed to the contract",
        "allowlist",
        _call(options=lambda o: dataclasses.replace(o, allowlist=None)),
    ),
    Mutant(
        "ids_renamed_on_reuse",
        "model adapter",
        "a reused call id silently renamed so the call runs",
        "response_shape",
        _call(model=lambda m: RenamingModel(m, new_id=_fresh_on_reuse)),
    ),
    Mutant(
        "child_outside_the_contract",
        "delegating tool",
        "the child agent run under a fresh Contract of its own (a fresh budget)",
        "sub_agents",
        _call(delegate=in_a_contract_of_its_own),
    ),
    Mutant(
        "child_under_the_parents_contract",
        "delegating tool",
        "the child agent run under the parent's Contract (the parent's allowlist)",
        "sub_agents",
        _call(delegate=under_the_parents_contract),
    ),
    Mutant(
        "finish_reason_dropped",
        "model adapter",
        "every reply handed on as finished (finish reason stop, refusal dropped)",
        "finish_reasons",
        _call(model=FinishForgettingModel),
    ),
    Mutant(
        "answer_schema_loosened",
        "answer-format adapter",
        "the structured answer's schema handed on without required and additionalProperties",
        "response_shape",
        _call(options=answer_schemas(lambda schema: _loosened(schema, opened=False))),
    ),
    Mutant(
        "answer_schema_opened",
        "answer-format adapter",
        "the structured answer's schema handed on open (additionalProperties true)",
        "response_shape",
        _call(options=answer_schemas(lambda schema: _loosened(schema, opened=True))),
    ),
    Mutant(
        "batch_reordered_for_the_model",
        "model adapter",
        "the model gets a batch's tool messages in completion order",
        "call_id_binding",
        _call(model=ReorderingModel),
    ),
    # tool adapters of the kinds the suite caught before
    Mutant(
        "permissive_schema",
        "tool adapter",
        "an open schema handed to the contract",
        "argument_validation",
        _call(tools=permissive_schema),
    ),
    Mutant(
        "str_results",
        "tool adapter",
        "results turned into str(value)",
        "serialization",
        _call(tools=str_results),
    ),
    Mutant(
        "errors_as_text",
        "tool adapter",
        "a tool's exception returned as its text",
        "tool_errors",
        _call(tools=errors_as_text),
    ),
    Mutant(
        "hidden_rerun_adapter",
        "tool adapter",
        "a failing tool retried three times inside one call (one error reported)",
        "tool_errors",
        _call(tools=retrying(3)),
    ),
    Mutant(
        "argument_limit_off",
        "run driver",
        "the Contract built from a config whose max_argument_chars is effectively unlimited",
        "argument_size",
        _call(contract=configured_contract(max_argument_chars=1_000_000_000)),
    ),
    Mutant(
        "no_result_limit",
        "tool adapter",
        "max_result_chars raised past any result",
        "result_size",
        _call(tools=_replace_tools(max_result_chars=1_000_000)),
    ),
    Mutant(
        "cancelled_tool_shielded",
        "tool adapter",
        "async handlers awaited under asyncio.shield (they run on after a cancellation)",
        "timeouts",
        _call(tools=shielding(True)),
    ),
    Mutant(
        "no_tool_timeout",
        "tool adapter",
        "per-tool timeouts raised to a minute",
        "timeouts",
        _call(tools=_replace_tools(timeout_seconds=60.0)),
    ),
    # redaction
    Mutant(
        "exact_spelling_redaction",
        "run driver",
        "redaction of each secret's exact spelling only",
        "trace_redaction",
        _call(contract=exact_spelling_contract),
    ),
    Mutant(
        "secrets_not_handed",
        "run driver",
        "the run's secrets never handed to the contract",
        "trace_redaction",
        _call(options=lambda o: dataclasses.replace(o, secrets=o.secrets[:1])),
    ),
    # history
    Mutant(
        "text_only_history",
        "run driver",
        "history replayed without tool calls and tool messages",
        "history",
        _call(options=text_turns_only),
    ),
    # writes
    Mutant(
        "write_never_read_back",
        "tool adapter",
        "verify answers from memory, never reads the store",
        "write_approval",
        _call(tools=lambda t: _adapt_writes(t, remembered_verify)),
    ),
    Mutant(
        "fresh_idempotency_key",
        "tool adapter",
        "a fresh idempotency key per attempt",
        "write_approval",
        _call(tools=lambda t: _adapt_writes(t, fresh_key)),
    ),
    Mutant(
        "approval_drops_edits",
        "approval endpoint",
        "a human's edit turned into a plain approval",
        "write_approval",
        _call(options=endpoint(EditDroppingEndpoint)),
    ),
    # budgets
    Mutant(
        "deadline_off",
        "run driver",
        "the run deadline switched off",
        "deadline",
        _call(options=_budget(deadline_seconds=None)),
    ),
    Mutant(
        "one_model_call_past_budget",
        "offline loop fork",
        "the model called before the step budget is checked",
        "model_step_budget",
        one_call_past_budget,
    ),
    Mutant(
        "identical_calls_unbounded",
        "run driver",
        "max_identical_calls not handed to the contract",
        "repeated_calls",
        _call(options=_budget(max_identical_calls=1000)),
    ),
    Mutant(
        "tool_budget_off",
        "run driver",
        "max_tool_calls not handed to the contract",
        "tool_call_budget",
        _call(options=_budget(max_tool_calls=1000)),
    ),
    # trace
    Mutant(
        "trace_without_tool_results",
        "offline loop fork",
        "the trace leaves out tool-result events",
        "trace_redaction",
        _call(result=without_tool_results),
    ),
    # tool context
    Mutant(
        "caller_dropped",
        "run driver",
        "runs started without the caller (caller=None)",
        "tool_context",
        _call(options=lambda o: dataclasses.replace(o, caller=None)),
    ),
    Mutant(
        "secrets_in_values",
        "run driver",
        "the run's named secrets copied into its application values (every tool sees them)",
        "tool_context",
        _call(options=secrets_as_values(True)),
    ),
    # capabilities
    Mutant(
        "timeouts_undeclared",
        "run driver",
        "the harness does not declare the timeouts capability",
        "timeouts",
        _call(capabilities=("write_tools", "crash_restart", "durable_store")),
        unchecked=True,
    ),
    # run stores
    Mutant(
        "store_load_unverified",
        "run store",
        "a run store subclass whose load skips the seal and version checks",
        "checkpoint_integrity",
        _call(open_store=FastLoadingStore),
    ),
)

CORE_TWINS: tuple[Twin, ...] = (
    Twin("offline_driver", _call()),
    Twin("identity_model_adapter", _call(model=lambda m: RenamingModel(m))),
    Twin("passthrough_write_adapter", _call(tools=lambda t: _adapt_writes(t, passthrough_write))),
    Twin("passthrough_endpoint", _call(options=endpoint(PassthroughEndpoint))),
    Twin("single_attempt_adapter", _call(tools=retrying(1))),
    Twin("unshielded_async_adapter", _call(tools=shielding(False))),
    Twin("caller_passed_on", _call(options=lambda o: dataclasses.replace(o, caller=o.caller))),
    Twin("secrets_kept_apart", _call(options=secrets_as_values(False))),
    Twin("child_in_a_child_scope", _call(delegate=in_child_scope)),
    Twin("finish_reason_passed_on", _call(model=lambda m: FinishForgettingModel(m, forget=False))),
    Twin("configured_contract", _call(contract=configured_contract())),
    Twin("answer_schema_copied", _call(options=answer_schemas(copy.deepcopy))),
    Twin(
        "store_load_verified",
        _call(open_store=lambda path: FastLoadingStore(path, verify=True)),
    ),
)


def offline_reference() -> Harness:
    return offline_harness
