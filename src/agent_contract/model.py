"""The model boundary: one protocol with one method.

Everything else in the package depends only on :class:`Model`. A real provider, the
scripted :class:`~agent_contract.testing.FakeModel`, the deterministic demo model and
a LangChain chat model wrapped by the binding all plug in here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from .messages import Completion, Message

__all__ = ["Model"]


@runtime_checkable
class Model(Protocol):
    """Anything that turns a transcript into a :class:`Completion`."""

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        max_output_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Completion:
        """Answer the transcript ``messages`` (oldest first).

        Args:
            messages: the whole conversation so far; the endpoint is stateless.
            tools: JSON tool definitions offered (see ``ToolSpec.definition``), or None.
            max_output_tokens: cap on the reply length, in tokens.
            temperature: sampling temperature; 0.0 asks for determinism.

        Returns:
            One Completion. Its shape is judged by the runtime, not trusted.
        """
        ...
