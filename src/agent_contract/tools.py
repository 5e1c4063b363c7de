"""Tool specifications, the registry, and argument validation.

A :class:`ToolSpec` is framework-neutral: a name, a description, a JSON Schema for
the arguments, a handler, whether the tool reads or writes, and its limits. The
registry turns specs into the JSON tool definitions offered to a model (the
OpenAI-style ``{"type": "function", "function": {...}}`` shape that LangChain's
``convert_to_openai_tool`` also produces).

Argument validation uses :mod:`jsonschema` with Draft 2020-12. One rule is ours:
an object schema that does not say whether extra properties are allowed is closed
(``additionalProperties: false`` is added), because a model inventing an argument
is more often a bug than a feature.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from .errors import ConfigurationError, ToolError
from .function_tools import UNDECLARED, tool_from_function
from .text import json_data_problem

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from .trace import ProgressEmitter

__all__ = [
    "MAX_VALIDATION_ERRORS",
    "SECRET_NAME_PATTERN",
    "TOOL_NAME_PATTERN",
    "Effect",
    "Handler",
    "Isolation",
    "OnOversize",
    "SecretHandle",
    "ToolContext",
    "ToolRegistry",
    "ToolSpec",
    "check_secret_names",
]

Effect = Literal["read", "write"]
OnOversize = Literal["truncate", "error"]
Isolation = Literal["thread", "process"]

TOOL_NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Tool names providers accept: 1-64 ASCII letters, digits, ``_`` or ``-``."""

MAX_VALIDATION_ERRORS: Final = 5
"""How many schema violations one invalid-arguments message lists at most."""

SECRET_NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""Secret names a run and a tool may use: 1-64 ASCII letters, digits, ``_``, ``.`` or
``-``."""


class SecretHandle(str):
    """A named secret as everything but its declaring tool sees it: the text
    ``<secret NAME>`` (so its ``str``, its JSON form and anything built from it show
    that marker, never the value), with the secret's name in :attr:`name`.

    A tool that declared the secret (``ToolSpec(secrets=("api_key",))``) finds the
    handle in ``context.secrets["api_key"]`` (it may put it in a preview or a result:
    a human or the model then sees the marker) and gets the value only by asking
    ``context.secret("api_key")``. The handle itself holds no value.

    Raises:
        ConfigurationError: ``name`` does not match :data:`SECRET_NAME_PATTERN`.
    """

    name: str
    """The secret's name."""

    def __new__(cls, name: str) -> SecretHandle:
        check_secret_names((name,), "a secret handle")
        handle = super().__new__(cls, f"<secret {name}>")
        handle.name = name
        return handle

    def __repr__(self) -> str:
        return f"SecretHandle({self.name!r})"

    def __reduce__(self) -> tuple[type[SecretHandle], tuple[str]]:
        return (SecretHandle, (self.name,))


def check_secret_names(names: Iterable[object], what: str) -> tuple[str, ...]:
    """``names`` as a tuple, each checked against :data:`SECRET_NAME_PATTERN`
    (``what`` names their owner in the error).

    Raises:
        ConfigurationError: a name that is not a string matching the pattern, or
            ``names`` given as one string.
    """
    if isinstance(names, str):
        raise ConfigurationError(f"{what}: secrets must be a sequence of names, not one string")
    checked: list[str] = []
    for name in names:
        if not isinstance(name, str) or not SECRET_NAME_PATTERN.match(name):
            raise ConfigurationError(
                f"{what}: secret name {name!r} must match {SECRET_NAME_PATTERN.pattern}"
            )
        checked.append(name)
    return tuple(checked)


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What the runtime (never the model) tells a tool about the call.

    Passed as the first positional argument to handlers of specs with
    ``needs_context=True``.
    """

    run_id: str
    """The run the call belongs to."""
    tool_call_id: str
    """The id of the call being executed."""
    caller: str | None = None
    """The authenticated identity the run acts for, from the run's context; tools use
    it for authorization. ``None`` means anonymous."""
    values: Mapping[str, Any] = field(default_factory=dict)
    """Application values handed to the run (database paths, clients, ...)."""
    idempotency_key: str | None = None
    """For write tools: the key that makes a retried write apply once."""
    emitter: ProgressEmitter | None = None
    """Sends progress events into the run's trace (and its sink) while the call runs:
    ``context.emitter.progress(done=3)``; ``None`` outside a run."""
    tool: str | None = None
    """The name of the tool this context was made for (``None`` outside a run)."""
    secrets: Mapping[str, SecretHandle] = field(default_factory=dict)
    """A handle for each secret the tool declared (``ToolSpec.secrets``), by name:
    safe to show (its text is ``<secret NAME>``); the value is :meth:`secret`'s."""
    _secret_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The declared secrets' values the run holds (built by the runtime; read them
    through :meth:`secret`). Empty for a preview: the approval step sees handles only."""
    _reveals: bool = field(default=True, repr=False)
    """False for a write's preview, whose context gives handles and never values."""

    def secret(self, name: str) -> str:
        """The value of the run's secret ``name``, for a tool that declared it.

        Raises:
            ConfigurationError: the tool did not declare ``name`` in
                ``ToolSpec.secrets`` (fail closed: an undeclared secret is never
                handed out), the context is a write's preview (the approval step sees
                only handles), or the run was started without a secret of that name.
        """
        tool = self.tool or "?"
        if name not in self.secrets:
            raise ConfigurationError(
                f"tool {tool!r} did not declare the secret {name!r}; "
                f"declare it: ToolSpec(..., secrets=({name!r},))"
            )
        if not self._reveals:
            raise ConfigurationError(
                f"tool {tool!r}: a preview sees the secret {name!r} as a handle only "
                "(the approval step never gets its value)"
            )
        value = self._secret_values.get(name)
        if value is None:
            raise ConfigurationError(
                f"tool {tool!r} declared the secret {name!r} but the run was started "
                "without it (Contract(secrets={name: value}) or RunInput(secrets={...}))"
            )
        return value


Handler = Callable[..., Any]


def _is_async(fn: Any) -> bool:
    """True for an ``async def`` function (or an object whose ``__call__`` is one)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
    )


def _close_objects(schema: Any) -> Any:
    """Return a copy of ``schema`` in which object schemas default to no extra properties."""
    if isinstance(schema, list):
        return [_close_objects(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _close_objects(value) for key, value in schema.items()}
    declares_object = out.get("type") == "object" or "properties" in out
    open_markers = ("additionalProperties", "unevaluatedProperties", "patternProperties")
    if declares_object and not any(marker in out for marker in open_markers):
        out["additionalProperties"] = False
    return out


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool as the contract sees it.

    Raises:
        ConfigurationError: on construction, for a bad name, a schema that is not a
            valid Draft 2020-12 object schema, a non-callable handler, or limits that
            are not positive.
    """

    name: str
    """Unique name, matching :data:`TOOL_NAME_PATTERN`."""
    description: str
    """What the tool does; sent to the model."""
    parameters: Mapping[str, Any]
    """JSON Schema (Draft 2020-12) of the arguments object. Stored closed: see module doc."""
    handler: Handler
    """Called as ``handler(**arguments)``, or ``handler(context, **arguments)`` when
    ``needs_context`` is true. Gets its own deep copy of the validated arguments. May be
    ``async def`` (see :attr:`is_async`; preview and verify too); not a generator.
    Returns any value the result serializer accepts; raises
    :class:`~agent_contract.errors.ToolError` subclasses to classify failures."""
    effect: Effect = "read"
    """``"read"`` tools only observe; ``"write"`` tools change something and go through
    preview, approval and an idempotency key."""
    timeout_seconds: float = 10.0
    """Wall-clock limit for one call, in seconds."""
    max_result_chars: int = 8_000
    """Largest serialized result handed to the model, in characters."""
    on_oversize: OnOversize = "truncate"
    """``"truncate"``: cut to ``max_result_chars`` with an explicit marker;
    ``"error"``: refuse with kind ``result_too_large``."""
    needs_context: bool = False
    """Pass a :class:`ToolContext` as the first positional argument."""
    secrets: tuple[str, ...] = ()
    """The names of the run's secrets this tool may read (``context.secret(name)``);
    its context carries a :class:`SecretHandle` for each. Needs ``needs_context``
    (a write tool has it). Any other secret is refused to it."""
    isolation: Isolation = "thread"
    """``"thread"``: run on the worker pool; a timed-out call keeps running and its
    outcome is reported unknown. ``"process"``: run in a child process killed at the
    timeout, so nothing it had not done yet can land later (the handler, its arguments
    and result must be picklable; start-up time counts against the timeout)."""
    preview: Handler | None = None
    """Write tools only: ``preview(context, **arguments)`` returns what the call would
    change (JSON data), without changing anything. Runs before approval is asked; it
    may raise ToolErrors (e.g. ``not_found``), which refuse the call."""
    verify: Handler | None = None
    """Write tools only: ``verify(context, **arguments)`` reads back whether the write
    with ``context.idempotency_key`` has been applied; returns the applied record
    (JSON data) or ``None``. Called before a write (to settle an unknown outcome after
    a timeout or crash) and after it (completion verification)."""
    check_arguments: Callable[[dict[str, Any]], str | None] | None = None
    """A check of the arguments the schema cannot express (a cross-field rule such as
    ``start <= end``), run after the schema passed and before anything else, with a
    copy of the arguments: returns ``None`` when they are fine, or the problem (text
    for the model), or raises :class:`~agent_contract.errors.InvalidArgumentsError`
    (its message is used; any other exception is reported by its type only). Either
    way the call is refused as ``invalid_arguments`` and the handler never runs. Also
    applied to a human's edited arguments and, on resume, to an approved write. A plain
    (not ``async``) function; keep it fast and free of side effects."""
    return_direct: bool = False
    """When a call of this tool succeeds, its result is the run's answer: the run ends
    with ``answered`` after the batch (the whole batch runs; with several such calls in
    it, the answer is their results in issue order, separated by a blank line). A
    failed call does not end the run."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.match(self.name):
            raise ConfigurationError(
                f"tool name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}"
            )
        if not isinstance(self.description, str) or not self.description.strip():
            raise ConfigurationError(f"tool {self.name!r} needs a non-empty description")
        if not callable(self.handler):
            raise ConfigurationError(f"tool {self.name!r}: handler is not callable")
        for role in ("handler", "preview", "verify"):
            fn = getattr(self, role)
            if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
                raise ConfigurationError(
                    f"tool {self.name!r}: {role} is a generator function; it must return "
                    "its value (plain or async def), not yield it"
                )
        if self.effect not in ("read", "write"):
            raise ConfigurationError(f"tool {self.name!r}: effect must be 'read' or 'write'")
        if self.effect == "write":
            if not (callable(self.preview) and callable(self.verify)):
                raise ConfigurationError(
                    f"write tool {self.name!r} needs callable preview and verify "
                    "(preview -> approval -> idempotent write -> verification)"
                )
            object.__setattr__(self, "needs_context", True)
        elif self.preview is not None or self.verify is not None:
            raise ConfigurationError(f"tool {self.name!r}: preview/verify are for write tools")
        object.__setattr__(self, "secrets", check_secret_names(self.secrets, f"tool {self.name!r}"))
        if self.secrets and not self.needs_context:
            raise ConfigurationError(
                f"tool {self.name!r} declares secrets but not needs_context=True "
                "(its handler reads them from its ToolContext)"
            )
        if self.check_arguments is not None and (
            not callable(self.check_arguments) or _is_async(self.check_arguments)
        ):
            raise ConfigurationError(
                f"tool {self.name!r}: check_arguments must be a plain (not async) callable"
            )
        if not isinstance(self.return_direct, bool):
            raise ConfigurationError(f"tool {self.name!r}: return_direct must be a bool")
        if self.isolation not in ("thread", "process"):
            raise ConfigurationError(f"tool {self.name!r}: isolation must be thread|process")
        if self.on_oversize not in ("truncate", "error"):
            raise ConfigurationError(f"tool {self.name!r}: on_oversize must be truncate|error")
        timeout = self.timeout_seconds
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigurationError(f"tool {self.name!r}: timeout_seconds must be > 0")
        limit = self.max_result_chars
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 64:
            raise ConfigurationError(f"tool {self.name!r}: max_result_chars must be an int >= 64")
        if not isinstance(self.parameters, Mapping) or self.parameters.get("type") != "object":
            raise ConfigurationError(f"tool {self.name!r}: parameters must be an object schema")
        # jsonschema is imported with the first tool, not with agent_contract.
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        closed = _close_objects(copy.deepcopy(dict(self.parameters)))
        try:
            Draft202012Validator.check_schema(closed)
        except SchemaError as exc:
            raise ConfigurationError(
                f"tool {self.name!r}: invalid JSON Schema at {exc.json_path}: {exc.message}"
            ) from exc
        object.__setattr__(self, "parameters", closed)
        object.__setattr__(self, "_validator", Draft202012Validator(closed))
        # Asked on every call (the executor's path): decided once, the handler is fixed.
        object.__setattr__(self, "_async", _is_async(self.handler))

    @classmethod
    def from_function(
        cls, fn: Callable[..., Any], *, effect: Effect | Any = UNDECLARED, **options: Any
    ) -> ToolSpec:
        """Adopt a plain Python function unchanged: name, description (the docstring's
        first paragraph) and JSON Schema from its signature; ``effect`` must be
        declared. The schema rule and the options are those of
        :func:`agent_contract.function_tools.tool_from_function`. (A framework's tool
        objects are adopted by its binding, e.g. the LangChain binding's
        ``from_langchain_tool``.)

        Raises:
            ConfigurationError: see ``tool_from_function``.
        """
        spec = tool_from_function(fn, effect=effect, **options)
        if not isinstance(spec, cls):  # pragma: no cover - tool_from_function builds a ToolSpec
            raise ConfigurationError(f"tool_from_function returned {type(spec).__name__}")
        return spec

    @property
    def is_async(self) -> bool:
        """True when the handler is an ``async def`` function: it runs on the executor's
        event loop (offline and on a framework's sync path) or natively on an async
        path, and is cancelled at its timeout (outcome ``cancelled``)."""
        return bool(getattr(self, "_async"))  # noqa: B009 (set in __post_init__)

    def definition(self) -> dict[str, Any]:
        """The JSON tool definition offered to a model.

        Shape: ``{"type": "function", "function": {"name", "description", "parameters"}}``.
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(dict(self.parameters)),
            },
        }

    def validate(self, arguments: Any) -> str | None:
        """Check ``arguments``: JSON data first (the text rule: no lone surrogate, no NaN
        or Infinity, see :func:`agent_contract.text.json_data_problem`), then the schema,
        then :attr:`check_arguments`.

        Returns:
            ``None`` when valid; otherwise a message naming the failing JSON path(s) and
            the failed constraint, e.g. ``"$.expression: 3 is not of type 'string'
            (type)"``. At most :data:`MAX_VALIDATION_ERRORS` are listed.
        """
        problem = json_data_problem(arguments)
        if problem is not None:
            return problem
        problem = self._schema_problem(arguments)
        if problem is not None or self.check_arguments is None:
            return problem
        try:
            found = self.check_arguments(copy.deepcopy(arguments))
        except ToolError as exc:
            return exc.message or f"check_arguments of {self.name!r} refused them"
        except Exception as exc:  # noqa: BLE001 - the text may hold anything: type only
            return f"check_arguments of {self.name!r} raised {type(exc).__name__}"
        if found is None:
            return None
        return str(found) or f"check_arguments of {self.name!r} refused them"

    def _schema_problem(self, arguments: Any) -> str | None:
        validator: Draft202012Validator = getattr(self, "_validator")  # noqa: B009 (set in __post_init__)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: (e.json_path, e.validator))
        if not errors:
            return None
        parts = [f"{e.json_path}: {e.message} ({e.validator})" for e in errors]
        shown = parts[:MAX_VALIDATION_ERRORS]
        if len(parts) > len(shown):
            shown.append(f"... and {len(parts) - len(shown)} more")
        return "; ".join(shown)


class ToolRegistry:
    """The tools a contract knows, by name.

    Registration is not permission: a run's allowlist can still exclude a registered
    tool.
    """

    def __init__(self, tools: Iterable[ToolSpec] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for spec in tools:
            self.register(spec)

    def register(self, spec: ToolSpec) -> None:
        """Add ``spec``.

        Raises:
            ConfigurationError: not a ToolSpec, or the name is taken.
        """
        if not isinstance(spec, ToolSpec):
            raise ConfigurationError(f"register() takes a ToolSpec, got {type(spec)!r}")
        if spec.name in self._tools:
            raise ConfigurationError(f"tool {spec.name!r} is already registered")
        self._tools[spec.name] = spec

    def unregister(self, name: str) -> ToolSpec:
        """Remove and return the tool called ``name``.

        Raises:
            ConfigurationError: no such tool.
        """
        try:
            return self._tools.pop(name)
        except KeyError:
            raise ConfigurationError(f"tool {name!r} is not registered") from None

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

    def list_tools(self, allowlist: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """JSON tool definitions to offer a model, in registration order.

        Args:
            allowlist: when given, only these names are listed.
        """
        allowed = None if allowlist is None else set(allowlist)
        return [
            spec.definition()
            for spec in self._tools.values()
            if allowed is None or spec.name in allowed
        ]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)
