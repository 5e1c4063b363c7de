"""LangSmith's async ``traceable`` wrapper, run inline during the contract's own runs.

``create_agent`` wraps every async middleware hook in LangSmith's ``traceable``, which
hands its run set-up and tear-down to a worker thread (``aio_to_thread``) on every hook
call, whether tracing is on or off: two thread hops per hook call, four hook calls per
step for the contract's two layers. LangSmith lets a runtime replace that function
(``langsmith.set_runtime_overrides``, meant for runtimes such as Temporal); during a run
the harness drives (:func:`inline_hooks`), the replacement calls the function in the
given context on the event loop's thread instead. Outside those runs, and when the
application installed its own replacement first, nothing changes: the previous one (or
LangSmith's default) is called.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["inline_hooks"]

_INLINE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_contract_inline_langsmith_hooks", default=False
)
_installed = False
_lock = threading.Lock()


def _install() -> None:
    """Install the replacement once, chaining whatever was installed before."""
    global _installed
    with _lock:
        if _installed:
            return
        try:
            from langsmith import set_runtime_overrides
            from langsmith._runtime_overrides import get_runtime_overrides
        except ImportError:  # another LangSmith: leave its runtime alone
            _installed = True
            return
        previous: Callable[..., Any] | None = get_runtime_overrides().aio_to_thread

        async def aio_to_thread(
            default: Callable[..., Any], ctx: contextvars.Context, func: Any, /, *a: Any, **k: Any
        ) -> Any:
            if _INLINE.get():
                return ctx.run(func, *a, **k)
            if previous is not None:
                return await previous(default, ctx, func, *a, **k)
            return await default(ctx, func, *a, **k)

        set_runtime_overrides(aio_to_thread=aio_to_thread)
        _installed = True


@contextmanager
def inline_hooks() -> Iterator[None]:
    """Run LangSmith's hook wrappers inline in the current context (see the module doc)."""
    _install()
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)
