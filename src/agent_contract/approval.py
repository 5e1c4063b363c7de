"""Human approval for write tools: pending approvals, decisions, and the keys that bind
them.

A write call never runs on the model's word. The runtime previews it, pauses the run
with ``pending_approval``, and waits for a human :class:`Approval`:

- ``approve``: run it, once, with an idempotency key;
- ``reject``: never run it; the call gets a bound ``rejected`` tool message;
- ``edit``: run it once with the human's arguments (validated against the schema).

An approval is bound to the exact call by :func:`approval_token`: a hash (an HMAC when the
contract has a signing key) of the run id, the ``tool_call_id``, the tool name, the
canonical arguments (RFC 8785: :func:`agent_contract.canonical.canonical_json`, the form
the repeated-call key uses) and the caller. A decision carrying a token for other
arguments, another call, another caller or another run is refused
(:class:`~agent_contract.errors.ApprovalError`), so an approval cannot be replayed. The
token is recomputed from the call, never read back from stored state, when the decision
is checked and again right before the write runs.

The idempotency key (:func:`idempotency_key`) is derived from the same parts plus the
arguments actually written, so a retry or a resume after a crash computes the same key
and the tool applies the write at most once.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .canonical import canonical_json, field_dict
from .errors import ApprovalError

__all__ = [
    "Approval",
    "DecisionKind",
    "PendingApproval",
    "approval_token",
    "idempotency_key",
]

DecisionKind = Literal["approve", "reject", "edit"]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def approval_token(
    run_id: str,
    tool_call_id: str,
    name: str,
    arguments: Any,
    caller: str | None = None,
    *,
    key: bytes | None = None,
    canonical: str | None = None,
) -> str:
    """The token that binds an approval to one call (32 hex chars): the run, the
    ``tool_call_id``, the tool, the canonical arguments and the caller the run acts for
    (``canonical``: the canonical text of ``arguments`` when the caller has it already,
    :attr:`~agent_contract.messages.ToolCall.canonical_arguments`).

    With ``key`` it is an HMAC-SHA256 (only a holder of the key can make one: the demo
    app keys it with its data folder's key); without, a SHA-256 anyone can compute, so
    stored snapshots must then be authenticated some other way. The runtime recomputes
    it from the call when a decision is checked and again before the write runs.
    """
    text = canonical if canonical is not None else canonical_json(arguments)
    parts = ("approval", run_id, tool_call_id, name, text, caller or "")
    if key is None:
        return _digest(*parts)[:32]
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        data = part.encode("utf-8")
        mac.update(len(data).to_bytes(8, "big") + data)
    return mac.hexdigest()[:32]


def idempotency_key(run_id: str, tool_call_id: str, name: str, arguments: Any) -> str:
    """The idempotency key of a write with these exact arguments (``idem-`` + 32 hex)."""
    return "idem-" + _digest("write", run_id, tool_call_id, name, canonical_json(arguments))[:32]


@dataclass(frozen=True, kw_only=True)
class PendingApproval:
    """A write call waiting for a human decision."""

    tool_call_id: str
    """The call waiting."""
    name: str
    """The write tool."""
    arguments: dict[str, Any]
    """The validated arguments the model proposed."""
    preview: Any
    """What the call would change (from the tool's ``preview``), redacted."""
    token: str
    """The :func:`approval_token` a decision must carry."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return field_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingApproval:
        """Inverse of :meth:`to_dict`."""
        return cls(
            tool_call_id=str(data["tool_call_id"]),
            name=str(data["name"]),
            arguments=dict(data["arguments"]),
            preview=data.get("preview"),
            token=str(data["token"]),
        )


@dataclass(frozen=True, kw_only=True)
class Approval:
    """A human decision on one pending approval.

    Raises:
        ApprovalError: an unknown decision, or ``edit`` without arguments.
    """

    tool_call_id: str
    """The call decided on."""
    decision: DecisionKind
    """``approve``, ``reject`` or ``edit``."""
    token: str
    """The pending approval's token (binds the decision to that call and arguments)."""
    arguments: dict[str, Any] | None = None
    """For ``edit``: the arguments to run with instead."""
    reason: str = ""
    """Free text for the audit trail (and, for ``reject``, the model)."""
    decided_by: str = field(default="")
    """Who decided, for the audit trail."""

    def __post_init__(self) -> None:
        if self.decision not in ("approve", "reject", "edit"):
            raise ApprovalError(
                f"unknown decision {self.decision!r}; expected approve, reject or edit",
                tool_call_id=self.tool_call_id,
            )
        if self.decision == "edit" and not isinstance(self.arguments, dict):
            raise ApprovalError("an edit needs the new arguments", tool_call_id=self.tool_call_id)

    @classmethod
    def for_pending(
        cls,
        pending: PendingApproval,
        decision: DecisionKind,
        *,
        arguments: dict[str, Any] | None = None,
        reason: str = "",
        decided_by: str = "",
    ) -> Approval:
        """A decision on ``pending``, carrying its token."""
        return cls(
            tool_call_id=pending.tool_call_id,
            decision=decision,
            token=pending.token,
            arguments=arguments,
            reason=reason,
            decided_by=decided_by,
        )

    def binding(self) -> tuple[str, str, Any]:
        """What makes two decisions the same: kind, token, edited arguments."""
        return (self.decision, self.token, self.arguments)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return field_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Approval:
        """Inverse of :meth:`to_dict`.

        Raises:
            ApprovalError: the dict is not a decision.
        """
        try:
            return cls(
                tool_call_id=str(data["tool_call_id"]),
                decision=data["decision"],
                token=str(data["token"]),
                arguments=data.get("arguments"),
                reason=str(data.get("reason", "")),
                decided_by=str(data.get("decided_by", "")),
            )
        except (KeyError, TypeError) as exc:
            raise ApprovalError(f"not a decision: {exc!r}") from exc
