"""The call-ID ledger: every tool call gets exactly one result, bound to its id.

:class:`CallLedger` remembers which ``tool_call_id``\\ s the model issued, the one result
bound to each, the open batch (the calls of the last tool-calls response, in issue
order) and the report's :class:`~agent_contract.runtime.records.ToolCallRecord`\\ s.

**One path.** Every tool result enters the ledger through :meth:`CallLedger.record`:
the refusals of an invalid response or a refused call, a handler's result, a human's
rejection, a settled write, and the error a call still unanswered gets when its batch
is closed by force. :meth:`CallLedger.record` refuses an id that was never issued or is
already answered, so per-result accounting added there applies to every result. When a
batch closes, each call's record and ``tool_result`` trace event are written in issue
order (by one helper, :meth:`CallLedger._settle`), whatever order the calls finished in.

The ledger does no locking of its own: the :class:`~agent_contract.runtime.RunState`
that owns it holds the run's lock around every call.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..approval import PendingApproval
from ..errors import CheckpointError, ConfigurationError, ErrorKind
from ..messages import Message, ToolCall
from ..results import ToolResult, error_result
from ..text import escape_value
from ..tools import ToolRegistry, ToolSpec
from ..trace import PREVIEW_CHARS, RAW_ARGUMENTS_CHARS, RedactionPolicy, Trace
from .records import ToolCallRecord
from .response import Violation

__all__ = ["CallLedger", "PlannedCall", "refusal"]


@dataclass(frozen=True, kw_only=True)
class PlannedCall:
    """One call of an admitted or refused batch."""

    call: ToolCall
    """The call as issued (arguments normalized)."""
    spec: ToolSpec | None = None
    """The tool, when the call may run."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The validated arguments (the handler gets its own deep copy)."""
    refusal: ToolResult | None = None
    """Set when the call must not run; the bound error result to hand back."""
    approval: PendingApproval | None = None
    """Set for write calls: they wait for a human decision before they may run."""

    @property
    def call_id(self) -> str:
        """The call's id (always set: invalid responses never reach planning)."""
        return self.call.id or ""

    @property
    def shown_arguments(self) -> Any:
        """What the trace and the report show: the validated arguments, or a refused
        call's arguments as the model sent them."""
        return self.call.arguments if self.refusal is not None else self.arguments

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the spec by name) for snapshots."""
        return {
            "call": self.call.to_dict(),
            "spec": self.spec.name if self.spec else None,
            "arguments": self.arguments,
            "refusal": self.refusal.to_dict() if self.refusal else None,
            "approval": self.approval.to_dict() if self.approval else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], registry: ToolRegistry) -> PlannedCall:
        """Inverse of :meth:`to_dict`, finding the spec by name in ``registry``.

        Raises:
            CheckpointError: the snapshot names a tool that is not registered.
            KeyError, TypeError, ValueError: ``data`` is not well-formed.
        """
        name = data.get("spec")
        spec = registry.get(name) if name else None
        if name and spec is None:
            raise CheckpointError(f"snapshot names tool {name!r}, not registered")
        call = data["call"]
        return cls(
            call=ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"]),
            spec=spec,
            arguments=dict(data.get("arguments") or {}),
            refusal=ToolResult.from_dict(data["refusal"]) if data.get("refusal") else None,
            approval=(
                PendingApproval.from_dict(data["approval"]) if data.get("approval") else None
            ),
        )


def refusal(
    call: ToolCall, kind: ErrorKind, message: str, redaction: RedactionPolicy
) -> ToolResult:
    """The bound error result of a call that did not run (outcome ``not_run``)."""
    return error_result(call.id or "", call.name, kind, message, redaction=redaction)


class CallLedger:
    """The call-ID ledger of one run (see the module doc).

    Args:
        redaction: applied to the arguments the report records show.
        trace: where ``tool_result`` events are written.
    """

    def __init__(self, redaction: RedactionPolicy, trace: Trace) -> None:
        self.redaction = redaction
        self.trace = trace
        self.issued: list[str] = []
        """Every ``tool_call_id`` the model issued, in order ("" for a call without one);
        added to by :meth:`issue` only."""
        self.issued_ids: set[str] = set()
        """The same ids as a set (membership in constant time, however long the run)."""
        self.answered: dict[str, ToolResult] = {}
        """The one result bound to each answered id."""
        self.records: list[ToolCallRecord] = []
        """The report's records, in issue order, written when a batch closes."""
        self.batch: list[PlannedCall] = []
        """The open batch, in issue order."""

    # -- the one way in ------------------------------------------------------------------

    def issue(self, call_id: str) -> None:
        """Note ``call_id`` as issued by the model (``""`` for a call without an id)."""
        self.issued.append(call_id)
        self.issued_ids.add(call_id)

    def record(self, result: ToolResult) -> ToolResult:
        """Bind ``result`` to its call (once per id) and return it.

        Raises:
            ConfigurationError: the id was never issued in this run, or is already
                answered (a driver bug: a tool message must answer exactly one call).
        """
        if result.tool_call_id not in self.issued_ids:
            raise ConfigurationError(f"tool_call_id {result.tool_call_id!r} was never issued")
        if result.tool_call_id in self.answered:
            raise ConfigurationError(f"tool_call_id {result.tool_call_id!r} is already answered")
        self.answered[result.tool_call_id] = result
        return result

    # -- batches -------------------------------------------------------------------------

    def open(self, planned: Sequence[PlannedCall]) -> None:
        """Make ``planned`` the open batch: issue its ids, write its ``tool_call``
        events in issue order, and record the refusals among it."""
        for item in planned:
            self.issue(item.call_id)
        self.batch = list(planned)
        for item in planned:
            self._trace_call(item)
        for item in planned:
            if item.refusal is not None:
                self.record(item.refusal)

    def planned(self, tool_call_id: str) -> PlannedCall | None:
        """The call with this id in the open batch, or ``None``."""
        return next((p for p in self.batch if p.call_id == tool_call_id), None)

    def replace(self, planned: PlannedCall) -> None:
        """Swap the open batch's call with ``planned``'s id for ``planned`` (an edit)."""
        self.batch = [planned if p.call_id == planned.call_id else p for p in self.batch]

    def waiting(self) -> list[PlannedCall]:
        """Write calls of the open batch with no result yet."""
        return [p for p in self.batch if p.approval is not None and p.call_id not in self.answered]

    def batch_messages(self) -> list[Message] | None:
        """Tool messages answering the open batch in issue order, or ``None`` while a
        call of it still has no result."""
        if any(p.call_id not in self.answered for p in self.batch):
            return None
        return [self.answered[p.call_id].to_message() for p in self.batch]

    def close(self, *, force: bool = False) -> list[tuple[PlannedCall, ToolResult]]:
        """Write the open batch's records and ``tool_result`` events, in issue order.

        A batch with write calls still waiting for a decision stays open, unless
        ``force`` (the run is ending): then every unanswered call gets an error.

        Returns:
            The closed batch's calls with their results, in issue order (empty when
            nothing closed).
        """
        if not self.batch or (not force and self.waiting()):
            return []
        closed: list[tuple[PlannedCall, ToolResult]] = []
        for item in self.batch:
            result = self.answered.get(item.call_id)
            if result is None:
                result = self.record(
                    refusal(
                        item.call,
                        "tool_error",
                        "no result was recorded for this call",
                        self.redaction,
                    )
                )
            self._settle(item.call, item.shown_arguments, result, refused=item.refusal is not None)
            closed.append((item, result))
        self.batch = []
        return closed

    # -- an invalid response ---------------------------------------------------------------

    def refuse_invalid(
        self,
        calls: Sequence[ToolCall],
        violations: Sequence[Violation],
        taken: Collection[str] = (),
    ) -> tuple[ToolResult, ...]:
        """Answer the calls of a response that broke the contract: each distinct,
        non-empty, fresh id (not issued, not answered, not in ``taken``: the history's
        ids) gets an ``invalid_call`` refusal; every call gets a record.

        Returns:
            The refusals, in issue order.
        """
        general = [v.code for v in violations if v.tool_call_id is None]
        refusals: list[ToolResult] = []
        for call in calls:
            fresh = (
                bool(call.id)
                and call.id not in self.answered
                and call.id not in self.issued_ids
                and call.id not in taken
            )
            if not fresh:
                self._settle(call, call.arguments, None, refused=True)
                continue
            own = [v.message for v in violations if v.tool_call_id == call.id]
            reason = "; ".join(own) or (
                "not run: the response broke the contract (" + ", ".join(general) + ")"
            )
            self.issue(call.id or "")
            result = self.record(refusal(call, "invalid_call", reason, self.redaction))
            self._settle(call, call.arguments, result, refused=True)
            refusals.append(result)
        return tuple(refusals)

    # -- the report ------------------------------------------------------------------------

    def settle(self, call: ToolCall, result: ToolResult) -> None:
        """Write the report record and ``tool_result`` event of an answered call outside
        a batch (a refused structured answer)."""
        self._settle(call, call.arguments, result, refused=True)

    def _settle(
        self, call: ToolCall, arguments: Any, result: ToolResult | None, *, refused: bool
    ) -> None:
        """Write the report record of ``call`` and, when it has a result, its
        ``tool_result`` event. A call without a result broke the contract without an id
        (or with one already used): it did not run. A refused call's arguments are
        kept bounded (:meth:`_bounded`)."""
        arguments, _ = escape_value(arguments)  # a refused call's may hold lone surrogates
        if refused:
            arguments = self._bounded(arguments)
        if result is None:
            record = ToolCallRecord(
                id=call.id or None,
                name=call.name,
                status="error",
                error_kind="invalid_call",
                outcome="not_run",
                arguments=self.redaction.redact_value(arguments),
            )
        else:
            record = ToolCallRecord(
                id=call.id or None,
                name=call.name,
                status=result.status,
                error_kind=result.error_kind,
                outcome=result.outcome,
                side_effects_possible=result.side_effects_possible,
                arguments=self.redaction.redact_value(arguments),
            )
        self.records.append(record)
        if result is not None:
            self.trace.record(
                "tool_result", **result.summary(), preview=result.content[:PREVIEW_CHARS]
            )

    def _bounded(self, arguments: Any) -> Any:
        """A refused call's arguments as the report and trace keep them: as they are
        when their redacted JSON is at most :data:`RAW_ARGUMENTS_CHARS` characters, else
        ``{"arguments_cut": true, "arguments_chars": N, "arguments_text": <the first
        RAW_ARGUMENTS_CHARS characters of the redacted JSON>}`` (redacted before it is
        cut, so no part of a secret survives the cut; the trace cap holds however large
        the arguments a model sent)."""
        redacted = self.redaction.redact_value(escape_value(arguments)[0])
        text = json.dumps(redacted, ensure_ascii=False, sort_keys=True, default=repr)
        if len(text) <= RAW_ARGUMENTS_CHARS:
            return arguments
        return {
            "arguments_cut": True,
            "arguments_chars": len(text),
            "arguments_text": text[:RAW_ARGUMENTS_CHARS],
        }

    def _trace_call(self, planned: PlannedCall) -> None:
        shown = planned.shown_arguments
        fields: dict[str, Any] = {
            "id": planned.call.id,
            "name": planned.call.name,
            "arguments": self._bounded(shown) if planned.refusal is not None else shown,
            "decision": (
                "refused"
                if planned.refusal is not None
                else ("awaiting_approval" if planned.approval is not None else "run")
            ),
        }
        if planned.refusal is not None:
            fields["error_kind"] = planned.refusal.error_kind
        self.trace.record("tool_call", **fields)

    # -- snapshots -------------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """The ledger as JSON data: ``records``, ``issued``, ``answered``, ``batch``."""
        return {
            "records": [r.to_state() for r in self.records],
            "issued": list(self.issued),
            "answered": {k: v.to_dict() for k, v in self.answered.items()},
            "batch": [p.to_dict() for p in self.batch],
        }

    def load_state(self, data: Mapping[str, Any], registry: ToolRegistry) -> None:
        """Fill this (fresh) ledger from :meth:`to_state`'s data.

        Raises:
            CheckpointError: the batch names a tool that is not registered.
            KeyError, TypeError, ValueError, AttributeError: ``data`` is not well-formed.
        """
        self.records = [ToolCallRecord.from_state(r) for r in data["records"]]
        self.issued = [str(i) for i in data["issued"]]
        self.issued_ids = set(self.issued)
        self.answered = {str(k): ToolResult.from_dict(v) for k, v in dict(data["answered"]).items()}
        self.batch = [PlannedCall.from_dict(item, registry) for item in data["batch"]]
