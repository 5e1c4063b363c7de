"""``ToolSpec.from_function``: a plain function adopted unchanged, its effect declared."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest

from agent_contract import ToolSpec
from agent_contract.errors import ConfigurationError
from agent_contract.function_tools import schema_from_signature
from agent_contract.loop import run
from agent_contract.testing import FakeModel, tool_call
from agent_contract.tools import ToolContext


def forecast(
    city: str,
    days: Annotated[int, "how many days"] = 2,
    unit: Literal["c", "f"] = "c",
    tags: list[str] | None = None,
) -> str:
    """Forecast for a city.

    Longer text that is not the description.
    """
    return f"{city} {days}{unit} {tags}"


def test_the_schema_comes_from_the_signature() -> None:
    spec = ToolSpec.from_function(forecast, effect="read")
    assert spec.name == "forecast"
    assert spec.description == "Forecast for a city."
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "description": "how many days", "default": 2},
            "unit": {"enum": ["c", "f"], "default": "c"},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert spec.validate({"city": "Oslo"}) is None
    assert "required" in (spec.validate({}) or "")
    assert "integer" in (spec.validate({"city": "Oslo", "days": "2"}) or "")
    assert "enum" in (spec.validate({"city": "Oslo", "unit": "k"}) or "")
    assert "additionalProperties" in (spec.validate({"city": "Oslo", "x": 1}) or "")


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (str, {"type": "string"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (Any, {}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ],
)
def test_annotations_map_to_json_schema(annotation: Any, schema: dict[str, Any]) -> None:
    def fn(x):  # type: ignore[no-untyped-def]
        return x

    fn.__annotations__ = {"x": annotation}
    found, needs_context = schema_from_signature(fn)
    assert found["properties"]["x"] == schema
    assert found["required"] == ["x"]
    assert needs_context is False


def test_the_effect_must_be_declared() -> None:
    with pytest.raises(ConfigurationError, match="declare its effect"):
        ToolSpec.from_function(forecast)
    with pytest.raises(ConfigurationError, match="effect must be"):
        ToolSpec.from_function(forecast, effect="maybe")


def test_a_write_needs_preview_and_verify() -> None:
    def refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    with pytest.raises(ConfigurationError, match="preview and verify"):
        ToolSpec.from_function(refund, effect="write")


@pytest.mark.parametrize(
    "fn",
    [
        lambda *args: None,
        lambda **kwargs: None,
    ],
)
def test_variadic_parameters_are_refused(fn: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"\*args"):
        ToolSpec.from_function(fn, effect="read", description="x")


def test_an_unmappable_annotation_is_refused() -> None:
    def fn(when: complex) -> None:
        """x"""

    with pytest.raises(ConfigurationError, match="cannot map"):
        ToolSpec.from_function(fn, effect="read")


def test_no_docstring_needs_a_description() -> None:
    def fn(x: int) -> int:
        return x

    with pytest.raises(ConfigurationError, match="description="):
        ToolSpec.from_function(fn, effect="read")
    assert ToolSpec.from_function(fn, effect="read", description="twice").description == "twice"


def test_a_context_parameter_is_the_runtimes_not_the_models() -> None:
    def whoami(context: ToolContext, topic: str) -> str:
        """Who asks."""
        return f"{context.caller}:{topic}"

    spec = ToolSpec.from_function(whoami, effect="read")
    assert spec.needs_context
    assert list(spec.parameters["properties"]) == ["topic"]
    result = run(
        FakeModel([tool_call("whoami", {"topic": "t"}), "done"]), [spec], "hi", caller="ann"
    )
    assert result.messages[-2].content == "ann:t"


def test_an_adopted_write_never_runs_without_approval() -> None:
    applied: list[str] = []

    def refund(order_id: str) -> str:
        """Refund an order."""
        applied.append(order_id)
        return "refunded"

    spec = ToolSpec.from_function(
        refund,
        effect="write",
        preview=lambda context, order_id: {"refund": order_id},
        verify=lambda context, order_id: None,
    )
    result = run(FakeModel([tool_call("refund", {"order_id": "A-1"}), "done"]), [spec], "hi")
    assert result.stop_reason == "pending_approval"
    assert applied == []
