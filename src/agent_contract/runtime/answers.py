"""Structured answers: when the caller asks for an answer of a given shape.

An :class:`AnswerFormat` says how the model gives a structured answer: by calling one of
its *answer tools* (a name and a JSON Schema each: a framework's "tool strategy"), or, when
``text_schema`` is set, with final text that is a JSON value matching it (a provider's
native structured output). The rules, one place for every driver
(:meth:`~agent_contract.runtime.state.RunState.accept_response`):

- the answer call is the answer, not a tool call: it is not an allowlist violation, it is
  not charged to ``max_tool_calls``, and it never runs;
- its arguments (or the text's JSON) are validated with the same Draft 2020-12 rule as
  tool arguments (closed objects, JSON data only); an answer call that fails is refused
  with a bound ``invalid_arguments`` error and the run goes on, so the model is told and
  may answer again (it costs a model step);
- an answer call together with any other call, or two answer calls, is a response that
  breaks the contract (``invalid_response``): nothing of it runs;
- with answer tools and no ``text_schema``, a plain-text reply is not the answer that was
  asked for (``invalid_response``); JSON text that fails ``text_schema`` likewise;
- the validated value is the run's ``structured_response``, and its canonical JSON text
  the run's ``output``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ..tools import ToolSpec

__all__ = ["AnswerFormat"]


def _never(**_: Any) -> Any:  # an answer tool never runs
    raise ConfigurationError("an answer tool never runs")


@dataclass(frozen=True, kw_only=True)
class AnswerFormat:
    """How the model gives a structured answer (see the module doc).

    Raises:
        ConfigurationError: a schema is not a JSON Schema of an object, a name is not a
            valid tool name, or neither answer tools nor a text schema are given.
    """

    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Answer tools: name -> JSON Schema of the answer object."""
    text_schema: Mapping[str, Any] | None = None
    """When set, final text that is a JSON object matching it is the answer."""
    description: str = "Give the final answer in this structure."
    """What the answer tools say to the model."""

    def __post_init__(self) -> None:
        if not self.tools and self.text_schema is None:
            raise ConfigurationError("an AnswerFormat needs answer tools or a text schema")
        specs = {
            name: ToolSpec(
                name=name, description=self.description, parameters=schema, handler=_never
            )
            for name, schema in self.tools.items()
        }
        object.__setattr__(self, "_specs", specs)
        text = None
        if self.text_schema is not None:
            text = ToolSpec(
                name="answer",
                description=self.description,
                parameters=self.text_schema,
                handler=_never,
            )
        object.__setattr__(self, "_text", text)

    def definitions(self) -> list[dict[str, Any]]:
        """The answer tools as JSON tool definitions, to offer beside the run's tools."""
        specs: dict[str, ToolSpec] = getattr(self, "_specs")  # noqa: B009
        return [spec.definition() for spec in specs.values()]

    def check_call(self, name: str, arguments: Any) -> str | None:
        """``None`` when ``arguments`` are a valid answer for tool ``name``, else why not."""
        specs: dict[str, ToolSpec] = getattr(self, "_specs")  # noqa: B009
        return specs[name].validate(arguments)

    def check_text(self, text: str) -> tuple[Any, str | None]:
        """``(value, None)`` when ``text`` is a JSON answer matching ``text_schema``,
        else ``(None, why not)``."""
        spec: ToolSpec | None = getattr(self, "_text")  # noqa: B009
        if spec is None:
            names = ", ".join(self.tools)
            return None, f"a structured answer was asked for: call one of [{names}]"
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None, "the answer is not JSON text"
        problem = spec.validate(value)
        return (value, None) if problem is None else (None, f"the answer: {problem}")
