"""Exceptions and the closed vocabularies of the contract.

One root; developer mistakes (:class:`ConfigurationError`: bad wiring, or a driver that
breaks the protocol) are kept apart from failures of a run's parts (the model, stored
state, a human decision). Tool failures are not exceptions that escape a run: a
tool raises one of the :class:`ToolError` subclasses (or anything else), and
the executor turns it into a classified :class:`~agent_contract.results.ToolResult`
that is bound to the ``tool_call_id`` and handed back to the model.

::

    AgentContractError
    ├── ConfigurationError          bad wiring, or a driver breaking the RunState protocol
    │   └── DependencyMissingError  an optional framework is not installed
    ├── ScriptExhaustedError        a FakeModel ran out of scripted replies (also an AssertionError)
    ├── ModelError                  the model failed or returned something that is not a Completion
    │   └── ModelHTTPError          a model server refused or failed a request (status, kind)
    ├── CheckpointError             saved run state cannot be read: locked, corrupt, wrong version
    ├── ApprovalError               a human decision does not fit the pending approval
    └── ToolError                   raised *by tools* to classify their own failure
        ├── InvalidArgumentsError   kind "invalid_arguments"
        ├── UnauthorizedError       kind "unauthorized"
        ├── NotFoundError           kind "not_found"
        └── TransientError          kind "transient"

The error kinds a tool message can carry are :data:`ERROR_KINDS`; the reasons a
run can stop are :data:`STOP_REASONS`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

__all__ = [
    "ERROR_KINDS",
    "PAUSE_REASONS",
    "STOP_REASONS",
    "AgentContractError",
    "ApprovalError",
    "CheckpointError",
    "ConfigurationError",
    "DependencyMissingError",
    "ErrorKind",
    "InvalidArgumentsError",
    "ModelError",
    "ModelHTTPError",
    "ModelHTTPErrorKind",
    "NotFoundError",
    "ScriptExhaustedError",
    "StopReason",
    "ToolError",
    "TransientError",
    "UnauthorizedError",
]

ErrorKind = Literal[
    "unknown_tool",
    "not_allowed",
    "invalid_arguments",
    "unauthorized",
    "not_found",
    "transient",
    "timeout",
    "tool_error",
    "result_too_large",
    "budget_exceeded",
    "repeated_call",
    "invalid_call",
    "rejected",
    "interrupted",
]
"""Every classification a failed tool call can carry.

- ``unknown_tool``: the name is not registered.
- ``not_allowed``: registered, but outside this run's allowlist.
- ``invalid_arguments``: the arguments fail the tool's JSON Schema (or the tool said so).
- ``unauthorized``: the caller may not do this (raised by the tool).
- ``not_found``: the object does not exist (raised by the tool).
- ``transient``: a temporary failure; retrying later may succeed (raised by the tool).
- ``timeout``: the per-tool wall-clock limit passed; the outcome is unknown.
- ``tool_error``: anything else the tool raised, or a result that cannot be serialized.
- ``result_too_large``: the serialized result exceeded ``max_result_chars`` and
  truncation was not allowed.
- ``budget_exceeded``: the call was refused because running it would cross a run budget.
- ``repeated_call``: the call was refused as one identical call too many.
- ``invalid_call``: the call itself broke the response contract (missing id, empty
  name, arguments that are not a JSON object); the run stops with ``invalid_response``;
  or its reply was unfinished (cut by the output limit, filtered, refused: the stops
  ``truncated_response``, ``content_filtered``, ``refused``), so it never ran.
- ``rejected``: a human rejected a write call at approval.
- ``interrupted``: the run was interrupted (Ctrl-C, SIGTERM, ``SystemExit``) while the
  call ran; its outcome is unknown and side effects are possible.
"""

ERROR_KINDS: Final[tuple[str, ...]] = ErrorKind.__args__  # type: ignore[attr-defined]
"""Every :data:`ErrorKind`, in declaration order."""

StopReason = Literal[
    "answered",
    "max_model_steps",
    "max_tool_calls",
    "repeated_call",
    "deadline",
    "max_trace_bytes",
    "max_history_messages",
    "max_history_chars",
    "invalid_response",
    "invalid_history",
    "model_error",
    "pending_approval",
    "policy_changed",
    "interrupted",
    "middleware_stop",
    "max_graph_steps",
    "truncated_response",
    "content_filtered",
    "refused",
]
"""Why a run ended. Only ``answered`` carries an answer; every other reason is a stop
that the caller must not present as one.

- ``answered``: the model gave a final answer.
- ``max_model_steps``, ``max_tool_calls``, ``repeated_call``, ``deadline``,
  ``max_trace_bytes``: a budget of the contract was reached.
- ``max_history_messages``, ``max_history_chars``: the history the model was about to
  get is over the budget's size limits (:class:`~agent_contract.budget.Budget`); it was
  refused before it was converted or sent, and the model was not called.
- ``invalid_response``: the model's response broke the response contract.
- ``invalid_history``: the transcript about to be sent to the model is not a
  conversation a provider accepts (an orphan tool result, an unanswered call, a reused
  id; see :mod:`agent_contract.runtime.history`); the model was not called.
- ``model_error``: the model raised, or returned something that is not a Completion.
- ``pending_approval``: a pause; write calls wait for a human decision.
- ``policy_changed``: on resume, an approved write no longer fits the current contract
  (its tool left the allowlist or is no longer a write, its arguments fail the current
  schema or check, or the budget shrank below what the run used); it did not run, and
  the human's decision is kept (trace, stored snapshot) for a human to see.
- ``interrupted``: a pause that is not the contract's write approval: a framework
  interrupt (a human-in-the-loop review, an ``interrupt()`` inside a tool) waits for an
  answer, or the run was stopped from outside (Ctrl-C, SIGTERM, a ``SystemExit``:
  :class:`~agent_contract.runtime.RunInterrupted`; a call in flight is recorded with an
  unknown outcome, and a write approved but not settled is verified, not repeated, on
  resume); the run resumes once it is given, or continued.
- ``middleware_stop``: another layer of the agent (a framework middleware, e.g. a call
  limit) ended the run before the contract decided; the detail names which.
- ``max_graph_steps``: the framework's step limit, derived from the budget, was hit
  while the contract had not stopped the run (a stack that keeps looping).
- ``truncated_response``: the model's reply was cut by its output limit (finish reason
  ``length``, Anthropic's ``max_tokens``) or paused unfinished (``pause_turn``): its text
  is not an answer and its tool calls did not run (each is answered ``invalid_call``).
- ``content_filtered``: the provider's content filter cut or withheld the reply
  (``content_filter``); nothing of it is an answer and no call of it ran.
- ``refused``: the model declined (OpenAI's ``message.refusal``, Anthropic's
  ``refusal`` stop reason): not a contract violation; the detail holds the refusal's
  text, redacted; no call of the reply ran.

``pending_approval`` and ``interrupted`` are pauses (:data:`PAUSE_REASONS`): the
run's state is kept and it can be resumed."""

STOP_REASONS: Final[tuple[str, ...]] = StopReason.__args__  # type: ignore[attr-defined]
"""Every :data:`StopReason`, in declaration order."""

PAUSE_REASONS: Final[frozenset[str]] = frozenset({"pending_approval", "interrupted"})
"""Stop reasons that pause a run rather than end it: its snapshot is kept to resume."""


class AgentContractError(Exception):
    """Root of every exception this package raises on purpose."""


class ConfigurationError(AgentContractError, ValueError):
    """A developer mistake, never a run's outcome: the contract was wired wrongly (a bad
    ToolSpec, Budget, registry entry, option or harness), or a driver broke the
    :class:`~agent_contract.runtime.RunState` protocol.

    Most are raised at construction, before any run. Protocol breaches are raised in
    the middle of a run, where they happen: a result for an id that was never issued or
    is already answered, running a refused call or a write without a decision, tool
    calls lost from a stream. A run never turns one into a stop: it is a bug to fix.
    """


class DependencyMissingError(ConfigurationError, ImportError):
    """An optional framework is not installed.

    Attributes:
        package: the distribution(s) to install, comma-separated.
    """

    def __init__(self, package: str, detail: str = "") -> None:
        self.package = package
        message = f"dependency_missing: install {package!r}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


class ScriptExhaustedError(AgentContractError, AssertionError):
    """A :class:`~agent_contract.testing.FakeModel` was called after its script ran out.

    Almost always a test bug: the agent looped more often than the script expected.
    Raised instead of returning an empty reply, which would look like an answer.

    Attributes:
        call_number: the 1-based number of the call that found the script empty.
        script_length: how many replies were scripted.
    """

    def __init__(self, call_number: int, script_length: int) -> None:
        self.call_number = call_number
        self.script_length = script_length
        super().__init__(
            f"FakeModel ran out of scripted replies on call {call_number} "
            f"(script has {script_length}); queue more replies, or check why the "
            "agent looped further than expected"
        )


class ModelError(AgentContractError):
    """The model raised, or returned something that is not a Completion.

    The loops catch it and stop the run with ``model_error``; the text that reaches
    the trace is the exception type only, never its message.
    """


ModelHTTPErrorKind = Literal[
    "refused_request", "rate_limited", "server_error", "timeout", "connection", "bad_reply"
]
"""Why a model server's request failed: ``refused_request`` (a 4xx other than 429:
retrying cannot help, raised at once), ``rate_limited`` (429), ``server_error`` (5xx),
``timeout``, ``connection`` (refused, reset, or a stream cut part way), ``bad_reply``
(a 2xx body that is not the API's shape)."""


class ModelHTTPError(ModelError):
    """A model server over HTTP refused or failed a request (after the retries allowed).

    Attributes:
        kind: a :data:`ModelHTTPErrorKind`.
        status: the HTTP status code, or None when no response came.
        attempts: how many requests were made, retries included.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ModelHTTPErrorKind,
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        self.kind: ModelHTTPErrorKind = kind
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class CheckpointError(AgentContractError):
    """Saved run state cannot be read (locked, corrupt, or written by another version).

    Raised instead of starting afresh, which could redo work that already happened.

    Attributes:
        path: the file or thread the state was read from.
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        self.path = path
        super().__init__(message)


class ToolError(AgentContractError):
    """Raised by a tool to classify its own failure.

    The message is *public*: it is what the model reads (after redaction), so write
    it for the model and keep internals out of it. Any other exception a tool raises
    becomes kind ``tool_error`` with a generic message; its text is never shown.

    Attributes:
        kind: one of :data:`ERROR_KINDS`.
        details: JSON-serializable, application-only details (kept out of the model's
            view, recorded in the redacted trace).
    """

    kind: ErrorKind = "tool_error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        self.details = dict(details or {})
        super().__init__(message)

    @property
    def message(self) -> str:
        """The public message given at construction."""
        return str(self.args[0]) if self.args else ""


class InvalidArgumentsError(ToolError):
    """The arguments are well-typed but semantically invalid (kind ``invalid_arguments``)."""

    kind: ErrorKind = "invalid_arguments"


class UnauthorizedError(ToolError):
    """The caller may not perform this call (kind ``unauthorized``)."""

    kind: ErrorKind = "unauthorized"


class NotFoundError(ToolError):
    """The object the call names does not exist (kind ``not_found``)."""

    kind: ErrorKind = "not_found"


class TransientError(ToolError):
    """A temporary failure; the same call may succeed later (kind ``transient``)."""

    kind: ErrorKind = "transient"


class ApprovalError(AgentContractError):
    """A human decision does not fit a pending approval: an unknown call, a token bound
    to other arguments or another run (an approval cannot be replayed), a decision that
    conflicts with one already recorded, or edited arguments that fail the schema.

    Nothing runs when it is raised; the approval stays pending.

    Attributes:
        tool_call_id: the call the decision named.
    """

    def __init__(self, message: str, *, tool_call_id: str = "") -> None:
        self.tool_call_id = tool_call_id
        super().__init__(message)
