"""The offline reference harness: a deterministic, bounded tool-calling loop.

It is a thin driver of :class:`~agent_contract.policy.RunState`; every rule lives in
:mod:`agent_contract.policy`. The LangChain middleware drives the same methods, so
both harnesses agree by construction and the contract suite proves they still do.

Parallel tool calls run concurrently on the contract's worker pool and their tool
messages are appended in the order the model issued the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .budget import Budget
from .errors import ModelError, ScriptExhaustedError
from .messages import Completion, Message
from .model import Model
from .policy import Contract, RunResult, Stop
from .tools import ToolRegistry, ToolSpec
from .trace import RedactionPolicy


def run(
    model: Model,
    tools: ToolRegistry | Iterable[ToolSpec] | Contract,
    user_message: str,
    *,
    budget: Budget | None = None,
    history: Sequence[Message] = (),
    allowlist: Iterable[str] | None = None,
    redaction: RedactionPolicy | None = None,
    secrets: Iterable[str] = (),
    system: str | None = None,
    caller: str | None = None,
    context: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    max_output_tokens: int = 512,
    temperature: float = 0.0,
) -> RunResult:
    """Run ``model`` on ``user_message`` under the contract and return the result.

    Args:
        model: anything with ``complete(messages, tools, max_output_tokens, temperature)``.
        tools: a :class:`Contract` (then ``budget``, ``allowlist``, ``redaction`` and
            ``secrets`` must be left unset), a registry, or tool specs.
        user_message: the new user turn.
        budget: run limits (default :class:`Budget()`).
        history: earlier turns, replayed to the model in order before the new turn.
        allowlist: tool names that may run (default: all registered).
        redaction: the redaction policy; ``secrets`` are added to it.
        secrets: values that must never appear in the trace, tool messages or output.
        system: an optional system message, sent first.
        caller: the identity the run acts for (tools see it in ToolContext).
        context: application values for context-aware tools.
        run_id: defaults to a random id.
        max_output_tokens: passed to the model, in tokens.
        temperature: passed to the model.

    Returns:
        A :class:`RunResult`; ``output`` is set only when ``stop_reason == "answered"``.

    Raises:
        ScriptExhaustedError: a scripted model ran dry (a test bug; never a stop).
        ConfigurationError: bad wiring (also when a Contract is combined with options).
    """
    contract = Contract.of(
        tools, budget=budget, allowlist=allowlist, redaction=redaction, secrets=secrets
    )
    state = contract.start(run_id=run_id, caller=caller, context=context)
    transcript: list[Message] = []
    if system is not None:
        transcript.append(Message(role="system", content=system))
    transcript.extend(history)
    transcript.append(Message(role="user", content=user_message))
    offered = contract.offered_tools()

    while True:
        stop = state.check_before_model_call()
        if stop is not None:
            return state.finish(stop, messages=transcript)
        try:
            completion = model.complete(
                list(transcript),
                tools=offered or None,
                max_output_tokens=max_output_tokens,
                temperature=temperature,
            )
            if not isinstance(completion, Completion):
                raise ModelError(f"model returned {type(completion).__name__}, not a Completion")
        except ScriptExhaustedError:
            raise
        except Exception as exc:
            return state.finish(state.model_failed(exc), messages=transcript)

        decision = state.accept_response(completion)
        transcript.append(
            Message(role="assistant", content=completion.text, tool_calls=decision.calls)
        )
        if decision.shape == "final":
            return state.finish(Stop(reason="answered"), messages=transcript, output=decision.text)
        if decision.shape == "invalid":
            transcript.extend(r.to_message() for r in decision.refusals)
            stop = decision.stop or Stop(reason="invalid_response")
            return state.finish(stop, messages=transcript)

        plan = state.plan_tool_calls(decision.calls)
        # Start every runnable call, then wait for each in issue order.
        waiters = [state.submit(p) for p in plan.runnable] if plan.stop is None else []
        for wait in waiters:
            wait()
        transcript.extend(state.batch_messages(plan))
        if plan.stop is not None:
            return state.finish(plan.stop, messages=transcript)
