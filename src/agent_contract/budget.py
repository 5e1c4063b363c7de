"""Run budgets, what a run has used, and the checks named by when they run.

:class:`Budget` is the limits; :class:`RunCounters` what a run has used so far (live,
serializable across resumes); :class:`RunUsage` what a finished (or paused) run reports.
Every check runs *before* the work it guards and returns a :class:`Breach` (or
``None``); the caller turns a breach into a stop with the breach's reason. Messages
carry the limit and the observed value, e.g. ``"max_tool_calls of 3 exceeded (4
requested)"``; tests pin them.

Token counts a model reports are another thing:
:class:`~agent_contract.messages.TokenUsage`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .canonical import field_dict
from .errors import ConfigurationError, StopReason

__all__ = [
    "Breach",
    "Budget",
    "RunCounters",
    "RunUsage",
    "admit_tool_calls",
    "argument_chars",
    "check_argument_sizes",
    "check_before_model_call",
    "check_before_tool_calls",
    "check_deadline",
    "check_history_size",
    "check_trace_size",
]


def _positive_int(owner: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{owner}.{name} must be an int >= 1, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Budget:
    """The limits of one run. Every breach fails closed with a named stop reason.

    Raises:
        ConfigurationError: a limit is not a positive number.
    """

    max_model_steps: int = 8
    """Model calls a run may make. The check runs before each call; a run that needs
    one more step to answer stops with ``max_model_steps``, never with a made-up answer."""
    max_tool_calls: int = 8
    """Tool calls a run may *request* (refused and failed calls count too). A batch that
    would cross the limit is refused whole, before any of it runs."""
    max_identical_calls: int = 2
    """How many times one identical call (same tool, same canonical arguments; key order
    does not matter) may be requested in a run. The next one is refused and the run
    stops with ``repeated_call``."""
    deadline_seconds: float | None = 60.0
    """Wall-clock seconds of active running (time spent paused for approval is not
    counted); ``None`` for no deadline. Also caps each tool's timeout."""
    max_trace_bytes: int = 1_000_000
    """Size of the trace as UTF-8 JSONL, in bytes; checked before each model call and
    each tool batch."""
    max_argument_chars: int = 50_000
    """Size of one argument of a tool call, in characters: a string's length, any other
    value's JSON text (:func:`argument_chars`). A call with an argument over it is
    refused one by one (``invalid_arguments``, naming the limit and the argument) before
    its schema is checked, and never runs; the trace keeps a cut, marked copy of its
    arguments. The default, 50,000, is far above what a tool's input needs and keeps a
    handful of runaway arguments under ``max_trace_bytes``."""
    max_history_messages: int = 50_000
    """Messages in the history a model is about to be sent (the system prompt left out
    where a framework keeps it apart), checked before each model call and before a
    driver converts the history into its framework's types. A history over it stops the
    run with ``max_history_messages``, and the model is not called. The default, 50,000,
    is far above what any model's context window holds."""
    max_history_chars: int = 10_000_000
    """Size of that history, in characters: each message's text plus each of its tool
    calls' arguments as :func:`argument_chars` counts them. Over it: the stop
    ``max_history_chars``, checked where ``max_history_messages`` is. The default,
    10,000,000 (some 2.5 million tokens), is above every model's context window."""

    def __post_init__(self) -> None:
        for name in (
            "max_model_steps",
            "max_tool_calls",
            "max_identical_calls",
            "max_trace_bytes",
            "max_argument_chars",
            "max_history_messages",
            "max_history_chars",
        ):
            _positive_int("Budget", name, getattr(self, name))
        deadline = self.deadline_seconds
        if deadline is not None and (
            isinstance(deadline, bool) or not isinstance(deadline, int | float) or deadline <= 0
        ):
            raise ConfigurationError(
                f"Budget.deadline_seconds must be > 0 or None, got {deadline!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict."""
        return field_dict(self)


@dataclass(frozen=True, kw_only=True)
class Breach:
    """A budget check that failed."""

    reason: StopReason
    """The stop reason the run ends with."""
    message: str
    """Human-readable, with the limit and the observed value."""
    call_ids: tuple[str | None, ...] = ()
    """For ``repeated_call``: the calls that were one too many."""


@dataclass(frozen=True, kw_only=True)
class RunUsage:
    """What a run used, as its result reports it (``RunResult.usage``)."""

    model_steps: int
    """Model calls made."""
    tool_calls: int
    """Tool calls requested and admitted past the batch checks (refused batches do not
    count; calls refused one by one do)."""
    elapsed_seconds: float
    """Active wall-clock seconds, in seconds, rounded to microseconds: time spent paused
    for approval is left out, earlier processes of a resumed run are counted."""

    def to_dict(self) -> dict[str, Any]:
        """``{"model_steps", "tool_calls", "elapsed_seconds"}``."""
        return field_dict(self)


@dataclass(kw_only=True)
class RunCounters:
    """What a run has used so far, checked against its :class:`Budget`. Serializable, so
    budgets hold across resumes."""

    model_steps: int = 0
    """Model calls made."""
    tool_calls: int = 0
    """Tool calls requested and admitted past the batch checks."""
    call_counts: dict[str, int] = field(default_factory=dict)
    """Requests per call key (``name`` + canonical arguments)."""
    elapsed_before: float = 0.0
    """Active seconds spent in earlier processes or before a pause."""
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    """Monotonic seconds (``time.monotonic``; tests inject their own)."""
    _started: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self._started is None:
            self._started = self.clock()

    def elapsed(self) -> float:
        """Active seconds so far, including earlier segments of a resumed run."""
        started = self._started if self._started is not None else self.clock()
        return self.elapsed_before + (self.clock() - started)

    def to_dict(self) -> dict[str, Any]:
        """Snapshot as a JSON-ready dict (the running segment is folded in)."""
        return {
            "model_steps": self.model_steps,
            "tool_calls": self.tool_calls,
            "call_counts": dict(self.call_counts),
            "elapsed_before": self.elapsed(),
        }

    def usage(self) -> RunUsage:
        """What a report shows: steps, tool calls and elapsed seconds, now."""
        return RunUsage(
            model_steps=self.model_steps,
            tool_calls=self.tool_calls,
            elapsed_seconds=round(self.elapsed(), 6),
        )

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, clock: Callable[[], float] = time.monotonic
    ) -> RunCounters:
        """Restore a snapshot; the clock (``clock``, monotonic seconds) restarts now.

        Raises:
            ConfigurationError: the snapshot is malformed.
        """
        try:
            return cls(
                model_steps=int(data["model_steps"]),
                tool_calls=int(data["tool_calls"]),
                call_counts={str(k): int(v) for k, v in dict(data["call_counts"]).items()},
                elapsed_before=float(data["elapsed_before"]),
                clock=clock,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"malformed run counters snapshot: {exc!r}") from exc


def check_deadline(budget: Budget, counters: RunCounters) -> Breach | None:
    """Breach ``deadline`` when the run's active time has reached the deadline."""
    if budget.deadline_seconds is None:
        return None
    elapsed = counters.elapsed()
    if elapsed >= budget.deadline_seconds:
        return Breach(
            reason="deadline",
            message=f"deadline of {budget.deadline_seconds:g} s reached ({elapsed:.3f} s elapsed)",
        )
    return None


def check_trace_size(budget: Budget, trace_bytes: int) -> Breach | None:
    """Breach ``max_trace_bytes`` when the trace has reached its size limit (bytes)."""
    if trace_bytes >= budget.max_trace_bytes:
        return Breach(
            reason="max_trace_bytes",
            message=f"max_trace_bytes of {budget.max_trace_bytes} reached ({trace_bytes} bytes)",
        )
    return None


def check_history_size(budget: Budget, messages: int, chars: int) -> Breach | None:
    """Breach ``max_history_messages`` when a history of ``messages`` messages is over
    :attr:`Budget.max_history_messages`, else ``max_history_chars`` when its ``chars``
    characters are over :attr:`Budget.max_history_chars` (a caller that stopped counting
    once past the limit passes what it counted: the message says "at least")."""
    if messages > budget.max_history_messages:
        return Breach(
            reason="max_history_messages",
            message=(
                f"max_history_messages of {budget.max_history_messages} exceeded "
                f"({messages} messages in the history)"
            ),
        )
    if chars > budget.max_history_chars:
        return Breach(
            reason="max_history_chars",
            message=(
                f"max_history_chars of {budget.max_history_chars} exceeded "
                f"(at least {chars} chars in the history)"
            ),
        )
    return None


def check_before_model_call(
    budget: Budget, counters: RunCounters, trace_bytes: int
) -> Breach | None:
    """Run before each model call: deadline, trace size, then the step budget."""
    breach = check_deadline(budget, counters) or check_trace_size(budget, trace_bytes)
    if breach is not None:
        return breach
    if counters.model_steps >= budget.max_model_steps:
        return Breach(
            reason="max_model_steps",
            message=(
                f"max_model_steps of {budget.max_model_steps} reached "
                f"({counters.model_steps} steps taken, one more needed)"
            ),
        )
    return None


def check_before_tool_calls(
    budget: Budget,
    counters: RunCounters,
    trace_bytes: int,
    calls: Sequence[tuple[str | None, str]],
) -> Breach | None:
    """Run before a batch of tool calls, which is admitted or refused whole.

    Args:
        calls: ``(tool_call_id, call_key)`` for each call, in issue order; the key is
            the tool name plus canonical arguments (see ``runtime.call_key``).

    Checks, in order: deadline, trace size, the tool-call budget (the batch would
    cross it), identical repeats (counting earlier calls in the same batch).
    """
    breach = check_deadline(budget, counters) or check_trace_size(budget, trace_bytes)
    if breach is not None:
        return breach
    requested = counters.tool_calls + len(calls)
    if requested > budget.max_tool_calls:
        return Breach(
            reason="max_tool_calls",
            message=(
                f"max_tool_calls of {budget.max_tool_calls} exceeded ({requested} requested: "
                f"{counters.tool_calls} earlier + {len(calls)} in this batch)"
            ),
        )
    counts = dict(counters.call_counts)
    repeated: list[str | None] = []
    for call_id, key in calls:
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > budget.max_identical_calls:
            repeated.append(call_id)
    if repeated:
        return Breach(
            reason="repeated_call",
            message=(
                f"max_identical_calls of {budget.max_identical_calls} exceeded "
                f"by {len(repeated)} call(s): {', '.join(str(i) for i in repeated)}"
            ),
            call_ids=tuple(repeated),
        )
    return None


def admit_tool_calls(counters: RunCounters, keys: Sequence[str]) -> None:
    """Charge an admitted batch to ``counters`` (counts and per-key repeats)."""
    counters.tool_calls += len(keys)
    for key in keys:
        counters.call_counts[key] = counters.call_counts.get(key, 0) + 1


def argument_chars(value: Any) -> int:
    """The size of one argument value, in characters: a string's length, any other
    value's compact JSON text (non-ASCII kept; a value JSON cannot write counts its
    ``repr``)."""
    if isinstance(value, str):
        return len(value)
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr))
    except (ValueError, RecursionError):
        return len(repr(value))


def check_argument_sizes(budget: Budget, arguments: Any) -> str | None:
    """Before a tool call runs: each top-level argument of ``arguments`` (a dict) against
    :attr:`Budget.max_argument_chars`. Returns the refusal message naming the limit, the
    first argument over it and its size (``"max_argument_chars of 50000 exceeded by
    argument 'text' (300000 chars)"``), or ``None``."""
    if not isinstance(arguments, dict):
        return None
    limit = budget.max_argument_chars
    for name, value in arguments.items():
        size = argument_chars(value)
        if size > limit:
            return f"max_argument_chars of {limit} exceeded by argument {name!r} ({size} chars)"
    return None
