"""LangSmith's async ``traceable`` wrapper, run inline where it has nothing to trace.

``create_agent`` wraps every async middleware hook in LangSmith's ``traceable``, which
hands its run set-up and tear-down to a worker thread (``aio_to_thread``) on every hook
call, whether tracing is on or off: two thread hops per hook call, four hook calls per
step for the contract's two layers (measured: four empty async hooks cost ``ainvoke``
+67 % over a bare ``create_agent``). LangSmith lets a runtime replace that function
(``langsmith.set_runtime_overrides``, meant for runtimes such as Temporal). Once a
:class:`~agent_contract_langchain.ContractMiddleware` exists (:func:`install`), the
replacement calls the function in the given context on the event loop's thread instead
when

- LangSmith tracing is off in that context (``langsmith.utils.tracing_is_enabled``, the
  test ``traceable`` itself makes: the set-up then only copies a context, and the
  tear-down has no run to end), or
- the call is part of a run the contract's harness drives (:func:`inline_hooks`).

Otherwise (tracing on, outside the harness) LangSmith's own hand-off is kept, or the
replacement the application installed first is called: a traced run's set-up may
serialize inputs, which LangSmith keeps off the event loop.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["inline_hooks", "install"]

_INLINE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_contract_inline_langsmith_hooks", default=False
)
_installed = False
_lock = threading.Lock()


def _tracing_on(ctx: contextvars.Context) -> bool:
    """Whether LangSmith traces in ``ctx`` (True when that cannot be told: keep its
    hand-off)."""
    try:
        from langsmith.utils import tracing_is_enabled

        return bool(ctx.run(tracing_is_enabled))
    except Exception:  # noqa: BLE001 - another LangSmith: assume it traces
        return True


def install() -> None:
    """Install the replacement once per process, chaining whatever was installed
    before (see the module doc). Without LangSmith's runtime overrides, nothing."""
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
            if _INLINE.get() or not _tracing_on(ctx):
                return ctx.run(func, *a, **k)
            if previous is not None:
                return await previous(default, ctx, func, *a, **k)
            return await default(ctx, func, *a, **k)

        set_runtime_overrides(aio_to_thread=aio_to_thread)
        _installed = True


@contextmanager
def inline_hooks() -> Iterator[None]:
    """Run LangSmith's hook wrappers inline in the current context, traced or not (the
    contract harness's own runs; see the module doc)."""
    install()
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)
