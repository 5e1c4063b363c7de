"""The state of one run, and the one seam every driver uses: :class:`RunState`."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from .. import budget as budget_checks
from ..approval import Approval
from ..faults import crashpoint
from ..messages import Completion, Message, ToolCall
from ..results import ToolResult
from . import ending, execution, writes
from .answers import AnswerFormat
from .execution import AsyncInvoke, Invoke, Passthrough
from .history import direct_answer
from .judging import judge
from .layers import LayerOps
from .ledger import PlannedCall
from .planning import BatchPlan, plan_batch
from .recheck import still_fits
from .records import RunResult, Stop
from .response import ResponseVerdict
from .run import Run
from .view import RunView

__all__ = ["Checkpoint", "RunState"]

_ESCAPED_CHARS = operator.attrgetter("escaped_chars")

Checkpoint = Callable[[dict[str, Any]], None]
"""Called with a run snapshot whenever it must be stored durably."""


class RunState:
    """The mutable state of one run, and the one seam every driver uses.

    A driver (the offline loop, the LangChain middleware and runner, the PydanticAI
    capability, a binding of your own) gets a RunState, calls only the ten operations
    below and reads the run through ``view``; every rule lives behind them, so two
    drivers cannot drift apart. Thread-safe: the calls of a batch may run and be
    recorded concurrently.

    The driver protocol, in the order a run uses it:

    1. **start**: ``Contract.start(...)`` gives a new run; ``Contract.restore(snapshot)``
       a paused one (with its transcript).
    2. **before model call**: ``check_before_model_call(messages, count_step=True) ->
       Stop | None`` closes the last batch and checks the history (its size:
       ``max_history_messages``, ``max_history_chars``; its shape: ``invalid_history``),
       deadline, trace size and step budget; ``None`` means call the model now (the step
       is counted; with ``count_step=False`` it only checks, for a framework that may
       change the messages after this check and is checked again where its provider is
       called).
    3. **accept response**: ``accept_response(completion, answer=None) ->
       ResponseVerdict`` judges the reply: ``final`` (end with its text), ``tool_calls``
       (plan them), ``refused_answer`` (told to the model, the run goes on) or
       ``invalid`` (its refusals are recorded; end with its stop).
    4. **plan batch**: ``plan_tool_calls(calls) -> BatchPlan`` admits or refuses the
       batch; each call is runnable, refused (its refusal recorded) or waiting for
       approval.
    5. **execute**: ``execute(planned, invoke=None) -> ToolResult`` runs one call and
       records its result; ``submit(planned, invoke=None)`` starts it and returns the
       function that waits; ``aexecute(planned, ainvoke=None)`` is the async form. A
       refused call returns its refusal; a write runs only once a human approved it.
    6. **record result**: ``record_result(result) -> ToolResult`` is the ledger's one
       way in, for a driver that runs a tool by other means; every result the other
       operations produce goes through it.
    7. **pause / resume**: ``view.pending_stop()`` is the ``pending_approval`` pause
       while write calls wait; ``resume(approvals, checkpoint=None, transcript=())
       -> tuple[PlannedCall, ...]`` checks and records human decisions (a bad one
       changes nothing), stores the snapshot, and returns the approved writes to
       ``execute``.
    8. **finish**: ``halt(stop, output=None, structured=None)`` records the stop a
       driver reached inside a framework that ends the run by itself; ``finish(stop=None,
       *, messages, output=None, harness=...) -> RunResult`` closes the batch, records
       the stop (given; else the pause; else the halted stop; else
       ``invalid_response``) and builds the result.

    Read the run through ``view``, a :class:`~agent_contract.runtime.view.RunView`
    (read-only; its docstring lists the lookups: ``view.result_for(tool_call_id)``,
    ``view.pending_approvals()``, ``view.snapshot(transcript)``, ...).

    Opt-in, for a driver inside a framework whose other layers may run a call again,
    rewrite its arguments or answer it in the tool's place (the LangChain binding):
    ``layers``, a :class:`~agent_contract.runtime.layers.LayerOps` with a protocol of
    its own. A driver that owns its loop (the offline loop, PydanticAI) never needs it.
    """

    PROTOCOL: ClassVar[frozenset[str]] = frozenset(
        {
            "check_before_model_call",
            "accept_response",
            "plan_tool_calls",
            "execute",
            "submit",
            "aexecute",
            "record_result",
            "resume",
            "halt",
            "finish",
            "view",
        }
    )
    """The ten operations a driver may call and the ``view`` it reads the run through
    (the class docstring explains each); ``layers`` is the opt-in extension."""

    def __init__(self, run: Run) -> None:
        self._run = run
        if run.facade is None:
            run.facade = self
        self._view = RunView(run)
        self._layers = LayerOps(run)

    @property
    def view(self) -> RunView:
        """The read-only view of the run: every lookup a driver may read."""
        return self._view

    @property
    def layers(self) -> LayerOps:
        """The opt-in operations of a driver inside a framework's layers (see
        :class:`~agent_contract.runtime.layers.LayerOps`)."""
        return self._layers

    # -- 2. before model call ------------------------------------------------------------

    def check_before_model_call(
        self, messages: Sequence[Message], *, count_step: bool = True
    ) -> Stop | None:
        """Close the previous tool batch, then check the history the model is about to
        get (:mod:`agent_contract.runtime.history`: its size, then its shape), deadline,
        trace size and step budget.

        A halted run (:meth:`halt`) refuses every further model call: it returns its
        stop again, so a framework that loops on after a stop gets nothing called.

        Args:
            messages: the transcript the model will be called with, oldest first (the
                system prompt may be left out). One over ``Budget.max_history_messages``
                is refused on its ``len`` alone, before any item is read (a driver may
                pass a sequence that converts a message when it is read); one over
                ``Budget.max_history_chars`` is refused next; a broken one is
                ``invalid_history``, each problem traced as a ``contract_violation``.
            count_step: ``True`` (the default): a ``None`` also counts the step; call
                the model right after (the ``model_call`` event says how many lone
                surrogates the history's messages had escaped, when any). ``False``
                only checks: for a driver that counts each provider call where it is
                made (the LangChain gate, so a retry layer's second call is a step too).

        Returns:
            The stop to end the run with, or ``None`` to go ahead.
        """
        with self._run.lock:
            halted = self._run.stopped()
            if halted is not None:
                self._run.trace.record(
                    "refused_after_stop", what="model_call", reason=halted.reason
                )
                return halted
            direct = direct_answer(self._run.ledger.close())
            if direct is not None:  # a return_direct tool answered: the run ends here
                self.halt(direct.stop, direct.text)
                return direct.stop
            broken = self._run.history.stop(messages, self._run.trace, self._run.contract.budget)
            if broken is not None:
                return broken
            breach = budget_checks.check_before_model_call(
                self._run.contract.budget, self._run.counters, self._run.trace.size_bytes
            )
            if breach is not None:
                return Stop(reason=breach.reason, detail=breach.message)
            if count_step:
                self._run.counters.model_steps += 1
                escaped = sum(map(_ESCAPED_CHARS, messages))
                extra = {"escaped_chars": escaped} if escaped else {}
                self._run.trace.record("model_call", step=self._run.counters.model_steps, **extra)
            return None

    # -- 3. accept response --------------------------------------------------------------

    def accept_response(
        self, completion: Completion, *, answer: AnswerFormat | None = None
    ) -> ResponseVerdict:
        """Judge the model's response and record it (see
        :mod:`agent_contract.runtime.judging`).

        Args:
            completion: the model's response.
            answer: the structured answer asked for, if any (default: the contract's
                ``answer_format``; a framework driver passes the one its request names).

        Returns:
            A :class:`ResponseVerdict`. For ``invalid`` it carries one bound error result
            per distinct call id (kind ``invalid_call``) and the ``invalid_response``
            stop; for ``refused_answer`` the answer call's bound refusal (go on: call the
            model again); those results are already recorded in the ledger.
        """
        with self._run.lock:
            chosen = answer if answer is not None else self._run.contract.answer_format
            return judge(self._run, completion, chosen)

    # -- 4. plan batch -------------------------------------------------------------------

    def plan_tool_calls(self, calls: Sequence[ToolCall]) -> BatchPlan:
        """Judge a batch of calls (from a ``tool_calls`` verdict) before any of it runs
        (see :mod:`agent_contract.runtime.planning`). Refusals are recorded at once."""
        with self._run.lock:
            self._run.ledger.close()
            plan = plan_batch(self._run, calls)
            self._run.ledger.open(plan.calls)
            return plan

    # -- 5. execute ----------------------------------------------------------------------

    def submit(
        self,
        planned: PlannedCall,
        invoke: Invoke | None = None,
        *,
        passthrough: Passthrough = (),
    ) -> Callable[[], ToolResult]:
        """Start one runnable call on the worker pool; the returned function waits for it.

        A tool with ``isolation="process"`` always runs its own handler in a child
        process killed at the timeout (``invoke`` is then not used).

        Args:
            planned: a runnable call from :meth:`plan_tool_calls`.
            invoke: how to run it, called with the call's ToolContext; defaults to the
                handler with a copy of the arguments. A binding passes its framework's
                handler here; it must return the tool's raw value.
            passthrough: exception types that are a framework's control flow, not a
                tool failure (a binding supplies them, e.g. a graph interrupt): one
                raised by ``invoke`` is re-raised by ``wait()`` and nothing is
                recorded (the call stays open, to run again when the framework
                resumes it).

        Returns:
            ``wait()``: blocks until the call returns or its timeout (seconds, from
            submission) passes, records the result in the ledger and returns it. A run
            that has halted refuses the call instead (a bound ``not_run`` error).

        Raises:
            ConfigurationError: ``planned`` was refused (it has nothing to run) or is a
                write call (run it with :meth:`execute` once approved).
        """
        halted = execution.refused_after_stop(self._run, planned)
        if halted is not None:
            return lambda: halted
        return execution.submit(self._run, planned, invoke, passthrough=passthrough)

    def execute(
        self,
        planned: PlannedCall,
        invoke: Invoke | None = None,
        *,
        passthrough: Passthrough = (),
    ) -> ToolResult:
        """Run one call, record its result and return it.

        A refused call returns its recorded refusal without running. A write call runs
        once a human approved it (see :mod:`agent_contract.runtime.writes`), with the
        decided arguments; ``invoke`` is not used for writes. Anything else runs as in
        :meth:`submit`.

        Raises:
            ConfigurationError: a write call without an approving decision, or one that
                already has a result.
        """
        if planned.refusal is not None:
            return planned.refusal
        halted = execution.refused_after_stop(self._run, planned)
        if halted is not None:
            return halted
        if planned.approval is not None:
            result = writes.execute_write(self._run, planned.call_id)
            return self.record_result(result)
        return self.submit(planned, invoke, passthrough=passthrough)()

    async def aexecute(
        self,
        planned: PlannedCall,
        ainvoke: AsyncInvoke | None = None,
        *,
        passthrough: Passthrough = (),
    ) -> ToolResult:
        """Async :meth:`execute` of a runnable or refused call: await ``ainvoke(context)``
        with the call's timeout (an async tool is cancelled at it). ``passthrough`` as in
        :meth:`submit`. Without ``ainvoke``, the tool's own handler with a copy of the
        arguments: an ``async def`` one awaited on this loop (cancelled at the
        timeout), a sync one on the contract's worker pool, the loop woken when it
        ends (no thread waits for it), timed out as :meth:`submit`'s.

        Raises:
            ConfigurationError: as :meth:`submit`.
        """
        if planned.refusal is not None:
            return planned.refusal
        halted = execution.refused_after_stop(self._run, planned)
        if halted is not None:
            return halted
        return await execution.aexecute(self._run, planned, ainvoke, passthrough=passthrough)

    # -- 6. record result ----------------------------------------------------------------

    def record_result(self, result: ToolResult) -> ToolResult:
        """Bind ``result`` to its call in the ledger (once per id) and return it (for a
        call whose child agent was stopped, the ``interrupted`` error
        :meth:`~agent_contract.runtime.run.Run.after_child_stop` makes of it).

        Raises:
            ConfigurationError: the id was never issued in this run, or is already
                answered (a driver bug: a tool message must answer exactly one call).
        """
        return self._run.record(result)

    # -- 7. pause / resume ---------------------------------------------------------------

    def resume(
        self,
        approvals: Sequence[Approval] = (),
        *,
        checkpoint: Checkpoint | None = None,
        transcript: Sequence[Message] = (),
    ) -> tuple[PlannedCall, ...]:
        """Record human decisions, then return the approved writes to run.

        The order makes a crash at any point safe: the decisions are all checked before
        any is recorded; then the snapshot (with ``transcript``) is handed to
        ``checkpoint`` (store it durably); only then may a write run. A rejected call
        is answered with a bound ``rejected`` error. Decisions recorded before a crash
        count: their calls are returned again with no new decision needed, and
        :meth:`execute` verifies before it writes.

        Before any is returned, each is re-checked against the run's current contract
        (:func:`agent_contract.runtime.recheck.still_fits`): one that no longer fits is
        answered with a bound refusal, never runs, and the run halts with
        ``policy_changed`` (the decision stays recorded).

        Returns:
            The write calls with an approving decision and no result yet that still fit,
            in issue order (an edit with its new arguments): run each with
            :meth:`execute`.

        Raises:
            ApprovalError: a decision does not fit (see
                :func:`agent_contract.runtime.writes.decide`); nothing is recorded.
        """
        with self._run.lock:
            writes.decide(self._run, approvals)
            if checkpoint is not None:
                checkpoint(self._view.snapshot(transcript))
        crashpoint("after_approval")
        with self._run.lock:
            runnable, changed = still_fits(self._run)
            if changed is not None:
                self.halt(changed)
            return tuple(runnable)

    # -- 8. finish -----------------------------------------------------------------------

    def halt(self, stop: Stop, output: str | None = None, structured: Any = None) -> None:
        """Record the stop a driver decided on inside a framework that ends the run by
        itself (the LangChain middleware); :meth:`finish` with no stop uses it.
        ``output`` is kept only with ``answered``.

        From then on the run refuses every model call (:meth:`check_before_model_call`
        returns this stop) and every tool call (a bound ``not_run`` error). The first
        stop wins; a later ``halt`` changes nothing.

        In a child scope (``Contract.start(parent=...)``) an ``answered`` stop ends the
        child agent only (its answer goes back to the parent's call); any other stop
        (a budget, a deadline, a refused response) ends the whole run: every scope up
        to the run's top agent halts with it.
        """
        with self._run.lock:
            if self._run.halted is not None:
                return
            self._run.halted = stop
            answered = stop.reason == "answered"
            self._run.answer = output if answered else None
            self._run.structured = structured if answered else None
            parent = self._run.parent
            while not answered and parent is not None:
                if parent.halted is None:
                    parent.halted = stop
                parent = parent.parent

    def finish(
        self,
        stop: Stop | None = None,
        *,
        messages: Sequence[Message],
        output: str | None = None,
        structured: Any = None,
        harness: str = "offline",
    ) -> RunResult:
        """End the run: close the batch, record the stop, and build the result.

        Args:
            stop: why the run ends. ``None``: the pause while writes wait, else the stop
                given to :meth:`halt` (with its output), else ``invalid_response`` (the
                framework ended without a contract decision). A pause
                (``pending_approval``, ``interrupted``) keeps the open batch and returns
                a snapshot to resume from.
            messages: the transcript.
            output: the answer, for ``answered``.
            structured: a structured answer's validated value, for ``answered``.
            harness: the driver's name, for the report.

        ``output`` and ``structured`` are kept (escaped by the text rule, then redacted)
        only for ``answered``; any other stop has no output, so running out of budget can
        never pass for an answer.
        """
        with self._run.lock:
            if stop is None:
                stop = self._view.pending_stop() or self._run.halted
            if stop is not None and stop is self._run.halted:
                output = self._run.answer if output is None else output
                structured = self._run.structured if structured is None else structured
            if stop is None:
                stop = Stop(
                    reason="invalid_response",
                    detail="the graph ended without a contract decision",
                )
            return ending.finish(
                self._run,
                stop,
                messages=messages,
                output=output,
                structured=structured,
                harness=harness,
            )
