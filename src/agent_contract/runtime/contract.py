"""The contract: its terms (tools, allowlist, budget, redaction, executor, sink; see
:mod:`~agent_contract.runtime.terms`) and the runs held to them.

One :class:`Contract` is shared by every run and every harness; :meth:`Contract.start`
begins a run (a :class:`~agent_contract.runtime.RunState`) and :meth:`Contract.restore`
continues a paused one from its snapshot. It is the top of the runtime: it imports the
seam, nothing in the runtime imports it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from ..budget import Budget
from ..errors import ConfigurationError
from ..messages import Message
from ..tools import ToolRegistry, ToolSpec
from ..trace import RedactionPolicy
from .records import Stop
from .run import ChildScopeRefused, Run, child_writes_refusal
from .snapshot import load
from .state import RunState
from .terms import Terms
from .writes import restate_applied

__all__ = ["Contract"]


class Contract(Terms):
    """The contract's configuration, shared by every run and every harness: its
    :class:`~agent_contract.runtime.terms.Terms` (what the rules read), and the runs
    started (:meth:`start`) and resumed (:meth:`restore`) under them.

    Args:
        tools: a registry or the specs to register.
        budget: run limits; defaults to :class:`Budget()`.
        allowlist: names of the tools this contract lets run; ``None`` allows every
            registered tool. Only allowlisted tools are offered to the model.
        redaction: the redaction policy; ``secrets`` are added to it.
        secrets: exact values that must never leave a run; as a mapping
            ``name -> value``, also the named secrets (:attr:`named_secrets`): a tool
            that declared a name (``ToolSpec(secrets=(name,))``) reads its value with
            ``context.secret(name)`` in every run and restored run of this contract;
            every other tool, and a write's preview, sees at most a
            :class:`~agent_contract.tools.SecretHandle`.
        executor: the worker pool; defaults to the process-wide one.
        expose_exception_text: show (redacted) exception text to the model for tool
            failures that are not ToolErrors. Off by default.
        trace_sink: receives every trace event of every run of this contract as it is
            recorded (see :mod:`agent_contract.trace.sinks`); each run also keeps its
            own trace.
        commentary: text a model sends beside tool calls: ``"keep"`` (the default: it
            is commentary, kept in the transcript and the trace, never the output) or
            ``"refuse"`` (a contract violation, ``text_and_tool_calls``).
        answer_format: the structured answer every run asks for (see
            :mod:`agent_contract.runtime.answers`); ``None`` for a text answer.
        clock: monotonic seconds, for the deadline and the trace's offsets; default
            ``time.monotonic`` (tests pass a fake clock instead of sleeping).
        signing_key: the secret that approval tokens are keyed with (HMAC-SHA256; see
            :func:`agent_contract.approval.approval_token`); ``None``: a plain hash,
            still recomputed from the call, but anyone can compute one, so a snapshot
            stored where others can write must be authenticated some other way. The
            demo app passes its data folder's key (:mod:`agent_contract.sealing`).

    Raises:
        ConfigurationError: the allowlist names a tool that is not registered.
    """

    @classmethod
    def of(
        cls,
        tools: ToolRegistry | Iterable[ToolSpec] | Contract,
        *,
        budget: Budget | None = None,
        allowlist: Iterable[str] | None = None,
        redaction: RedactionPolicy | None = None,
        secrets: Iterable[str] | Mapping[str, str] = (),
    ) -> Contract:
        """``tools`` if it is a Contract already (then the options must be unset), else a
        new Contract built from the tools and options. Harness entry points use it.

        Raises:
            ConfigurationError: a Contract combined with options.
        """
        if isinstance(tools, Contract):
            secrets = tuple(secrets)
            if budget is not None or allowlist is not None or redaction is not None or secrets:
                raise ConfigurationError("pass budget/allowlist/redaction/secrets to the Contract")
            return tools
        return cls(tools, budget=budget, allowlist=allowlist, redaction=redaction, secrets=secrets)

    def child(
        self,
        agent: str,
        *,
        tools: ToolRegistry | Iterable[ToolSpec] | None = None,
        allowlist: Iterable[str] | None = None,
    ) -> Contract:
        """The contract of a child agent this contract's runs start (a sub-agent, a
        supervisor's worker, an agent wrapped as a tool): its own tools and allowlist,
        enforced on its own calls; the run's budget, redaction, executor, sink, clock,
        commentary and signing key. A child runs as a child scope of the run that
        starts it (:meth:`start` with ``parent=``): its model steps, tool calls,
        repeated calls and time are charged to that run, and a stop other than its
        answer ends the whole run.

        Build it once, beside this contract (the same object for every run).

        Args:
            agent: the child agent's name (the trace's ``scope`` and every message
                about it name it).
            tools: the child's tools; default: this contract's registry.
            allowlist: the names of those it may run; default: this contract's
                allowlist when ``tools`` is not given, else every one of ``tools``.

        Raises:
            ConfigurationError: ``agent`` is empty, the allowlist names a tool that is
                not registered, or it lets the child run a write tool (a write waits
                for approval, a pause a child agent cannot take: leave writes to the
                top agent; the message names the agent, the tools and the fix).
        """
        if not isinstance(agent, str) or not agent:
            raise ConfigurationError("Contract.child needs the child agent's name")
        if tools is None:
            tools = self.registry
            if allowlist is None and self.allowlist is not None:
                allowlist = self.allowlist
        child = Contract(
            tools,
            budget=self.budget,
            allowlist=allowlist,
            redaction=self.redaction,
            executor=self._executor,
            expose_exception_text=self.expose_exception_text,
            trace_sink=self.trace_sink,
            clock=self.clock,
            commentary=self.commentary,
            signing_key=self.signing_key,
        )
        refusal = child_writes_refusal(child, agent)
        if refusal is not None:
            raise ConfigurationError(refusal)
        child.agent = agent
        child.derived_from = self
        return child

    def restore(
        self, snapshot: Mapping[str, Any], *, context: Mapping[str, Any] | None = None
    ) -> tuple[RunState, list[Message]]:
        """Rebuild a paused run from ``RunState.view.snapshot`` with this contract's tools.

        An approved write whose result the stored run holds (its process was stopped
        before the model read it) is handed on as already applied
        (:func:`~agent_contract.runtime.writes.restate_applied`).

        Returns:
            ``(state, transcript)``.

        Raises:
            CheckpointError: another snapshot version, a tool that is no longer
                registered, or a snapshot that is not well-formed. Never starts afresh.
        """
        values = dict(context or {})
        # A write its stopped process ran: already applied now.
        snapshot = restate_applied(snapshot, self.registry, self.redaction)
        run, transcript = load(
            snapshot,
            lambda run_id, caller: Run.create(self, run_id=run_id, caller=caller, context=values),
        )
        return RunState(run), transcript

    def start(
        self,
        *,
        run_id: str | None = None,
        caller: str | None = None,
        context: Mapping[str, Any] | None = None,
        parent: RunState | None = None,
        parent_call_id: str | None = None,
        agent: str | None = None,
    ) -> RunState:
        """Begin one run, or a child scope of a running one.

        Args:
            run_id: defaults to a random id.
            caller: the identity the run acts for (tools read it from ToolContext).
            context: application values handed to context-aware tools.
            parent: the run (or child scope) inside whose tool call ``parent_call_id``
                a child agent starts under this contract: the child scope is returned
                (the same one when asked again for that call), with the parent's id,
                caller and context, its own ledger and allowlist, and the run's
                budget and trace (see :meth:`child`).
            parent_call_id: with ``parent``, the id of that tool call.
            agent: with ``parent``, the child agent's name; default: the one
                :meth:`child` gave this contract, else ``"agent"``.

        Raises:
            ConfigurationError: ``parent`` without ``parent_call_id`` (or the reverse),
                or with ``run_id``/``caller``/``context``.
            ChildScopeRefused: this contract is neither the run's contract nor made
                from it by :meth:`child` (directly or through a child of a child): a
                free-standing Contract (even with the same budget: the run's
                redaction and secrets would not hold in it), or a child of another. The run halts with ``middleware_stop`` first (the
                message names the agent and the fix).
        """
        if parent is not None or parent_call_id is not None:
            if parent is None or not parent_call_id:
                raise ConfigurationError("a child scope needs parent= and parent_call_id=")
            if run_id is not None or caller is not None or context is not None:
                raise ConfigurationError("a child scope takes its run's id, caller and context")
            name = agent or self.agent or "agent"
            try:
                child = parent._run.open_child(self, call_id=parent_call_id, agent=name)
            except ChildScopeRefused as exc:
                parent.halt(Stop(reason="middleware_stop", detail=str(exc)))
                raise
            return child.facade if isinstance(child.facade, RunState) else RunState(child)
        run = Run.create(
            self,
            run_id=run_id or f"run-{uuid.uuid4().hex[:12]}",
            caller=caller,
            context=dict(context or {}),
        )
        run.trace.record(
            "run_started",
            run_id=run.run_id,
            tools_offered=self.offered_names(),
            budget=self.budget.to_dict(),
        )
        return RunState(run)
