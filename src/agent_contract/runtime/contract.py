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
from .run import Run
from .snapshot import load
from .state import RunState
from .terms import Terms

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
        secrets: exact values that must never leave a run.
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
        secrets: Iterable[str] = (),
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

    def restore(
        self, snapshot: Mapping[str, Any], *, context: Mapping[str, Any] | None = None
    ) -> tuple[RunState, list[Message]]:
        """Rebuild a paused run from ``RunState.view.snapshot`` with this contract's tools.

        Returns:
            ``(state, transcript)``.

        Raises:
            CheckpointError: another snapshot version, a tool that is no longer
                registered, or a snapshot that is not well-formed. Never starts afresh.
        """
        values = dict(context or {})
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
    ) -> RunState:
        """Begin one run.

        Args:
            run_id: defaults to a random id.
            caller: the identity the run acts for (tools read it from ToolContext).
            context: application values handed to context-aware tools.
        """
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
