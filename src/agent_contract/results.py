"""Tool results: the one serializer, the size limit, and error classification.

Serializer (:func:`serialize_result`), the only place a tool's return value becomes
the text a model reads:

- ``str``: as it is (a lone surrogate escaped, see :mod:`agent_contract.text`);
- ``int``, ``float``, ``bool``, ``None``, ``dict`` (string keys), ``list``: JSON, with
  non-ASCII text kept literal (``ensure_ascii=False``) and no NaN or infinity;
- anything else (tuples, sets, bytes, objects, non-string keys, cycles, non-finite
  floats): :class:`ResultNotSerializableError`, which becomes a ``tool_error``.

Text: lone surrogates in a value or an error message are escaped (the one escape of
:mod:`agent_contract.text`) before the value is serialized, so the model, the trace and
every store see valid UTF-8; the result's ``escaped_chars`` says how many.

Size limit: a serialized result longer than the tool's ``max_result_chars`` is cut
to fit with an explicit marker (:data:`TRUNCATION_MARKER`), or refused with
``result_too_large`` when the tool says so. The limit counts redacted characters; a
result more than twice over it is redacted over the shown window only (and a margin
past it, so a secret straddling the cut is still found:
``RedactionPolicy.redact_head``), and its ``total`` is then
the serialized length before redaction: the rest is never shown, so it is not redacted.

Errors reach the model as a JSON object, ``{"error": KIND, "message": TEXT,
"outcome": ..., "side_effects_possible": BOOL}``; the message is the tool's public
:class:`~agent_contract.errors.ToolError` text or a generic sentence, never an
exception's text or a traceback (unless the contract opts in with
``expose_exception_text``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from .errors import ErrorKind, ToolError
from .messages import Message, ToolStatus
from .text import count_surrogates, escape_surrogates, escape_value

if TYPE_CHECKING:  # annotations only: results sit below the trace
    from .trace import RedactionPolicy

__all__ = [
    "MAX_ERROR_CHARS",
    "TRUNCATION_MARKER",
    "Outcome",
    "ResultNotSerializableError",
    "ToolOutput",
    "ToolResult",
    "classify_exception",
    "error_content",
    "error_result",
    "serialize_result",
    "success_result",
]

Outcome = Literal["succeeded", "failed", "unknown", "not_run", "killed", "cancelled"]
"""What is known about a call's effect: ``unknown`` after a timeout in thread mode (it
may still be running), ``killed`` after a timeout in process isolation (it cannot do
anything more), ``cancelled`` after a timeout of an ``async def`` handler whose task
was cancelled and has ended (it cannot do anything more either; work before the
cancellation may have happened), ``not_run`` for calls refused before their handler
started."""

MAX_ERROR_CHARS: Final = 1_000
"""Longest public error message, in characters (a validation error can quote a huge
argument back); longer ones are cut with a marker."""

TRUNCATION_MARKER: Final = "\n[truncated by agent-contract: {shown} of {total} chars shown]"
"""Appended to a result cut to its size limit (``shown`` and ``total`` in characters)."""


@dataclass(frozen=True)
class ToolOutput:
    """What a handler returns to keep data away from the model.

    ``value`` is serialized for the model; ``artifact`` stays application-only: it is
    kept on the :class:`ToolResult` in memory and reaches the application as
    ``RunResult.artifacts[tool_call_id]``; it is never shown to the model, written to
    the trace, a snapshot or a checkpoint (so it does not survive a resume in another
    process).
    """

    value: Any
    """What the model reads (through the serializer)."""
    artifact: Any = None
    """Application-only data."""


class ResultNotSerializableError(ToolError):
    """A tool returned a value the result serializer does not accept (kind ``tool_error``)."""


def _check_json(value: Any, depth: int = 0) -> None:
    if depth > 100:
        raise ResultNotSerializableError("result is nested more than 100 levels deep")
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ResultNotSerializableError("result holds a non-finite number")
        return
    if isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ResultNotSerializableError(
                    f"result has a non-string key of type {type(key).__name__}"
                )
            _check_json(item, depth + 1)
        return
    raise ResultNotSerializableError(
        f"result of type {type(value).__name__} is not JSON-serializable"
    )


def serialize_result(value: Any) -> str:
    """Serialize a tool's return value to the text a model reads (see module doc).

    Raises:
        ResultNotSerializableError: ``value`` is not a JSON value.
    """
    if isinstance(value, str):
        return value
    _check_json(value)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (ValueError, RecursionError) as exc:
        # e.g. an int longer than sys.get_int_max_str_digits() digits (ValueError)
        raise ResultNotSerializableError(
            f"result cannot be written as JSON ({type(exc).__name__})"
        ) from None


def error_content(kind: str, message: str, *, outcome: Outcome, side_effects_possible: bool) -> str:
    """The JSON text a model reads for a failed call (see module doc)."""
    return json.dumps(
        {
            "error": kind,
            "message": message,
            "outcome": outcome,
            "side_effects_possible": side_effects_possible,
        },
        ensure_ascii=False,
    )


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call, bound to the ``tool_call_id`` that asked for it."""

    tool_call_id: str
    """The id of the call this answers."""
    name: str
    """The tool the model asked for (possibly unknown)."""
    status: ToolStatus
    """``"success"`` or ``"error"``."""
    content: str
    """Exactly what the model reads (redacted, size-limited)."""
    error_kind: ErrorKind | None = None
    """The classification when ``status == "error"``."""
    error_message: str | None = None
    """The public, redacted error message."""
    outcome: Outcome = "succeeded"
    """What is known about the call's effect."""
    side_effects_possible: bool = False
    """True when the call may have changed something even though it failed (a timed-out
    call may still be running)."""
    truncated: bool = False
    """True when ``content`` was cut to ``max_result_chars``."""
    original_chars: int = 0
    """Length of the serialized result before truncation, in characters (redacted; for a
    result cut from a redacted window, see the module doc, the serialized length)."""
    duration_seconds: float = 0.0
    """Wall-clock time of the handler, in seconds (0 when not run)."""
    escaped_chars: int = 0
    """How many lone surrogates of the value or message were escaped (see
    :mod:`agent_contract.text`)."""
    artifact: Any = field(default=None, compare=False)
    """Application-only data (never shown to the model, never stored): a
    :class:`ToolOutput`'s artifact, or the handler's raw return value."""

    @property
    def ok(self) -> bool:
        """True for a successful call."""
        return self.status == "success"

    def to_message(self) -> Message:
        """The tool message that answers the call."""
        return Message(
            role="tool",
            content=self.content,
            tool_call_id=self.tool_call_id,
            name=self.name,
            status=self.status,
        )

    def json_artifact(self) -> Any:
        """The artifact when it is JSON data (what may be stored or sent on), else None."""
        try:
            serialize_result(self.artifact)
        except ResultNotSerializableError:
            return None
        return self.artifact

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for snapshots: everything but the artifact (application-only
        data stays in memory; a snapshot is stored)."""
        return {
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "status": self.status,
            "content": self.content,
            "error_kind": self.error_kind,
            "error_message": self.error_message,
            "outcome": self.outcome,
            "side_effects_possible": self.side_effects_possible,
            "truncated": self.truncated,
            "original_chars": self.original_chars,
            "duration_seconds": self.duration_seconds,
            "escaped_chars": self.escaped_chars,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolResult:
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: data[k] for k in data if k in cls.__dataclass_fields__})

    def summary(self) -> dict[str, Any]:
        """JSON-ready fields for traces and reports (no content, no artifact);
        ``escaped_chars`` only when something was escaped."""
        summary: dict[str, Any] = {
            "id": self.tool_call_id,
            "name": self.name,
            "status": self.status,
            "error_kind": self.error_kind,
            "outcome": self.outcome,
            "side_effects_possible": self.side_effects_possible,
            "chars": len(self.content),
            "truncated": self.truncated,
        }
        if self.escaped_chars:
            summary["escaped_chars"] = self.escaped_chars
        return summary


def error_result(
    tool_call_id: str,
    name: str,
    kind: ErrorKind,
    message: str,
    *,
    redaction: RedactionPolicy,
    outcome: Outcome = "not_run",
    side_effects_possible: bool = False,
    duration_seconds: float = 0.0,
) -> ToolResult:
    """A failed :class:`ToolResult` with an escaped, redacted public message."""
    escaped = escape_surrogates(message)
    public = redaction.redact(escaped) or f"{kind}: no details"
    if len(public) > MAX_ERROR_CHARS:
        cut = len(public) - MAX_ERROR_CHARS
        public = public[:MAX_ERROR_CHARS] + f" [... {cut} more chars cut by agent-contract]"
    return ToolResult(
        tool_call_id=tool_call_id,
        name=name,
        status="error",
        content=error_content(
            kind, public, outcome=outcome, side_effects_possible=side_effects_possible
        ),
        error_kind=kind,
        error_message=public,
        outcome=outcome,
        side_effects_possible=side_effects_possible,
        duration_seconds=duration_seconds,
        escaped_chars=count_surrogates(message),
    )


def classify_exception(
    exc: BaseException, name: str, *, expose_exception_text: bool = False
) -> tuple[ErrorKind, str]:
    """The kind and public message for an exception a tool raised.

    A :class:`ToolError` keeps its kind and its public message. Anything else is
    ``tool_error`` with the exception's type name only, unless
    ``expose_exception_text`` is set (the text is then redacted by the caller).
    """
    if isinstance(exc, ToolError):
        return exc.kind, exc.message or f"tool {name!r} failed ({exc.kind})"
    detail = f": {exc}" if expose_exception_text and str(exc) else ""
    return "tool_error", f"tool {name!r} failed ({type(exc).__name__}){detail}"


def _cut_from_window(
    text: str,
    max_result_chars: int,
    on_oversize: Literal["truncate", "error"],
    redaction: RedactionPolicy,
) -> str | None:
    """The content of a result cut to ``max_result_chars``, redacted over the shown
    window only (:meth:`RedactionPolicy.redact_head`); ``None`` when the whole text must
    be redacted (it is not far over the limit, the limit is an error, a secret key in the
    window holds an object or array, or the policy cannot window)."""
    if on_oversize != "truncate" or len(text) <= 2 * max_result_chars:
        return None
    total = len(text)
    shown = max_result_chars - len(TRUNCATION_MARKER.format(shown=max_result_chars, total=total))
    if shown <= 0:
        return None
    head = redaction.redact_head(text, shown)
    if head is None:
        return None
    return head + TRUNCATION_MARKER.format(shown=shown, total=total)


def success_result(
    tool_call_id: str,
    name: str,
    value: Any,
    *,
    max_result_chars: int,
    on_oversize: Literal["truncate", "error"],
    redaction: RedactionPolicy,
    duration_seconds: float = 0.0,
    artifact: Any = None,
) -> ToolResult:
    """Serialize, redact and size-limit a tool's return value.

    A :class:`ToolOutput` is unwrapped (its artifact stays off the content). The limit
    is in characters of the redacted serialized text. Returns a success result (cut
    with :data:`TRUNCATION_MARKER` when over the limit and ``on_oversize ==
    "truncate"``), or an error result with outcome ``succeeded``: ``tool_error`` when
    the value cannot be serialized, ``result_too_large`` when it is over the limit and
    ``on_oversize == "error"``.
    """
    if isinstance(value, ToolOutput):
        value, artifact = value.value, value.artifact
    value, escaped = escape_value(value)
    try:
        text = serialize_result(value)
        cut = _cut_from_window(text, max_result_chars, on_oversize, redaction)
        if cut is not None:
            # Only the shown window (and a margin past it) is redacted; ``total`` is
            # the serialized length (the rest is never shown, so never redacted).
            return ToolResult(
                tool_call_id=tool_call_id,
                name=name,
                status="success",
                content=cut,
                truncated=True,
                original_chars=len(text),
                duration_seconds=duration_seconds,
                escaped_chars=escaped,
                artifact=artifact,
            )
        if not isinstance(value, str) and redaction.hides_nested_values(text):
            # An object or array under a secret key: redacted whole (text rules cannot).
            text = serialize_result(redaction.redact_value(value))
        text = redaction.redact(text)
    except ResultNotSerializableError as exc:
        return error_result(
            tool_call_id,
            name,
            "tool_error",
            exc.message,
            redaction=redaction,
            outcome="succeeded",
            duration_seconds=duration_seconds,
        )
    total = len(text)
    if total > max_result_chars and on_oversize == "error":
        return replace(
            error_result(
                tool_call_id,
                name,
                "result_too_large",
                f"result of {total} chars exceeds max_result_chars of {max_result_chars}",
                redaction=redaction,
                outcome="succeeded",
                duration_seconds=duration_seconds,
            ),
            original_chars=total,
        )
    content, truncated = text, False
    if total > max_result_chars:
        shown = max_result_chars - len(
            TRUNCATION_MARKER.format(shown=max_result_chars, total=total)
        )
        content = text[:shown] + TRUNCATION_MARKER.format(shown=shown, total=total)
        truncated = True
    return ToolResult(
        tool_call_id=tool_call_id,
        name=name,
        status="success",
        content=content,
        truncated=truncated,
        original_chars=total,
        duration_seconds=duration_seconds,
        escaped_chars=escaped,
        artifact=artifact,
    )
