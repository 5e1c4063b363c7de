"""``create_agent(response_format=...)`` and the contract's structured answers.

:func:`answer_format_of` reads the strategy a model request carries into the core's
:class:`~agent_contract.runtime.answers.AnswerFormat`, so the contract judges a
structured answer by its one rule (the answer call is the answer, not a tool call; its
arguments are validated against the schema; mixed with other calls it is refused):

- ``ToolStrategy``: one answer tool per schema (a union gives several);
- ``ProviderStrategy``: final text that is JSON matching the schema;
- ``AutoStrategy`` (a bare schema): either, since LangChain picks one per model.

:func:`response_format_for` goes the other way, for a contract built with an
``answer_format`` (the suite's structured scenarios): a ``ToolStrategy`` over the JSON
Schemas, which LangChain passes through unvalidated and the contract validates.
"""

from __future__ import annotations

from typing import Any, Final

from langchain.agents.structured_output import AutoStrategy, ProviderStrategy, ToolStrategy

from agent_contract.runtime import AnswerFormat, Contract

__all__ = ["answer_format_of", "response_format_for"]

_CACHE: dict[int, tuple[Any, AnswerFormat]] = {}
_CACHE_SIZE: Final = 64


def _derive(response_format: Any) -> AnswerFormat | None:
    if isinstance(response_format, ToolStrategy):
        specs = response_format.schema_specs
        return AnswerFormat(tools={s.name: s.json_schema for s in specs})
    if isinstance(response_format, ProviderStrategy):
        return AnswerFormat(text_schema=response_format.schema_spec.json_schema)
    if isinstance(response_format, AutoStrategy):
        specs = ToolStrategy(response_format.schema).schema_specs
        text = ProviderStrategy(response_format.schema).schema_spec.json_schema
        return AnswerFormat(tools={s.name: s.json_schema for s in specs}, text_schema=text)
    return None


def answer_format_of(response_format: Any, contract: Contract) -> AnswerFormat | None:
    """The structured answer a model request asks for: from its ``response_format``
    (see the module doc), else the contract's ``answer_format``, else ``None``.

    Raises:
        ConfigurationError: a schema is not a JSON Schema of an object.
    """
    if response_format is None:
        return contract.answer_format
    cached = _CACHE.get(id(response_format))
    if cached is not None and cached[0] is response_format:
        return cached[1]
    answer = _derive(response_format)
    if answer is None:
        return contract.answer_format
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(response_format)] = (response_format, answer)
    return answer


def response_format_for(answer: AnswerFormat) -> Any:
    """The ``create_agent`` ``response_format`` for ``answer``: a ``ToolStrategy`` over
    its answer tools (a ``oneOf`` for several), or a ``ProviderStrategy`` for a text
    schema alone."""
    if answer.tools:
        schemas = [{**schema, "title": name} for name, schema in answer.tools.items()]
        return ToolStrategy(schemas[0] if len(schemas) == 1 else {"oneOf": schemas})
    return ProviderStrategy({**(answer.text_schema or {}), "title": "answer"})
