"""An exception raised in the team's own middleware is reported as theirs (issue 13,
item 2): named, never ``model_error``, on invoke, ainvoke and stream."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse

from agent_contract.runtime import Contract
from agent_contract.testing import FakeModel, tool_call

from .conftest import Ran, Stack, budget, echo_spec


class AuditMiddleware(AgentMiddleware):
    """A team's middleware with a bug: it fails on the model's response."""

    @property
    def name(self) -> str:
        return "TeamAudit"

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Any:
        handler(request)
        raise KeyError("audit log column missing")

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        await handler(request)
        raise KeyError("audit log column missing")


def test_an_error_in_the_teams_middleware_inside_the_contract_is_theirs(
    mode: str, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    stack = Stack(FakeModel([tool_call("echo", {"a": 1}), "done"]), contract, [AuditMiddleware()])
    result = stack.run(mode=mode)
    assert result.stop_reason == "middleware_stop"
    assert result.stop_detail == (
        "the middleware 'TeamAudit' raised KeyError; the model did not fail"
    )
    assert "audit log column" not in result.stop_detail
    assert ran.calls == []


def test_an_error_in_the_teams_middleware_outside_the_contract_is_raised(
    mode: str, ran: Ran
) -> None:
    contract = Contract([echo_spec(ran)], budget=budget())
    stack = Stack(
        FakeModel([tool_call("echo", {"a": 1}), "done"]), contract, [AuditMiddleware()], "before"
    )
    with pytest.raises(KeyError, match="audit log column"):
        stack.run(mode=mode)


def test_a_provider_error_is_still_the_models(mode: str, ran: Ran) -> None:
    class Down:
        def complete(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("provider down")

    stack = Stack(Down(), Contract([echo_spec(ran)], budget=budget()), [])  # type: ignore[arg-type]
    result = stack.run(mode=mode)
    assert result.stop_reason == "model_error"
    assert result.stop_detail == "the model raised ConnectionError"
