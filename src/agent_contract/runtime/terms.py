"""A contract's terms: what every rule of a run reads (tools, allowlist, budget, redaction,
executor, sink, commentary, answer format, clock, signing key).

:class:`Terms` is the base of :class:`~agent_contract.runtime.Contract`, which adds how
runs start and resume under them; a :class:`~agent_contract.runtime.run.Run` holds its
contract as its terms, so the data of a run never depends on the runs' entry points.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..budget import Budget
from ..errors import ConfigurationError
from ..executor import ToolExecutor, default_executor
from ..tools import ToolRegistry, ToolSpec, check_secret_names
from ..trace import RedactionPolicy, TraceSink
from .answers import AnswerFormat
from .response import Commentary

__all__ = ["Terms"]


class Terms:
    """The terms of a contract, validated: the arguments of
    :class:`~agent_contract.runtime.Contract` (documented there), read by every rule.

    Raises:
        ConfigurationError: the allowlist names a tool that is not registered, or an
            option is not one of its accepted values.
    """

    def __init__(
        self,
        tools: ToolRegistry | Iterable[ToolSpec] = (),
        *,
        budget: Budget | None = None,
        allowlist: Iterable[str] | None = None,
        redaction: RedactionPolicy | None = None,
        secrets: Iterable[str] | Mapping[str, str] = (),
        executor: ToolExecutor | None = None,
        expose_exception_text: bool = False,
        trace_sink: TraceSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        commentary: Commentary = "keep",
        answer_format: AnswerFormat | None = None,
        signing_key: bytes | None = None,
    ) -> None:
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.budget = budget or Budget()
        if allowlist is not None:
            names = frozenset(allowlist)
            unknown = sorted(n for n in names if n not in self.registry)
            if unknown:
                raise ConfigurationError(f"allowlist names unregistered tools: {unknown}")
            self.allowlist: frozenset[str] | None = names
        else:
            self.allowlist = None
        base = redaction or RedactionPolicy()
        self.named_secrets: dict[str, str] = {}
        """The named secrets, ``name -> value`` (``secrets`` given as a mapping): every
        run of these terms hands a tool the values of those it declared."""
        if isinstance(secrets, Mapping):
            secret_names = check_secret_names(secrets, "the contract")
            self.named_secrets = {name: secrets[name] for name in secret_names}
            secrets = tuple(self.named_secrets.values())
        secrets = tuple(secrets)
        self.redaction = base.with_secrets(secrets) if secrets else base
        self._executor = executor
        self.expose_exception_text = expose_exception_text
        self.trace_sink = trace_sink
        self.clock = clock
        if commentary not in ("keep", "refuse"):
            raise ConfigurationError(f"commentary must be 'keep' or 'refuse', got {commentary!r}")
        self.commentary: Commentary = commentary
        if answer_format is not None and not isinstance(answer_format, AnswerFormat):
            raise ConfigurationError("answer_format must be an AnswerFormat")
        self.answer_format = answer_format
        if signing_key is not None and (
            not isinstance(signing_key, bytes) or len(signing_key) < 16
        ):
            raise ConfigurationError("signing_key must be bytes, at least 16 of them")
        self.signing_key = signing_key
        self.agent: str | None = None
        """The child agent these terms are for (``Contract.child``); ``None`` for a
        run's top agent."""
        self.derived_from: Terms | None = None
        """The terms ``Contract.child`` made these from; ``None`` for terms built
        directly. A child scope's contract must descend from its run's contract."""

    @property
    def executor(self) -> ToolExecutor:
        """The worker pool tool handlers run on."""
        return self._executor or default_executor()

    def is_allowed(self, name: str) -> bool:
        """True when ``name`` is registered and inside the allowlist."""
        return name in self.registry and (self.allowlist is None or name in self.allowlist)

    def offered_names(self) -> list[str]:
        """Names of the tools offered to the model, in registration order."""
        return [n for n in self.registry.names() if self.is_allowed(n)]

    def offered_tools(self) -> list[dict[str, Any]]:
        """The JSON tool definitions offered to the model (allowlisted tools only)."""
        return self.registry.list_tools(self.allowlist)
