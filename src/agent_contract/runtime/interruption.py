"""A run interrupted from outside: every driver ends it the same way.

``KeyboardInterrupt`` (Ctrl-C), ``SystemExit``, a signal handler's exception, a cancelled
task: anything that is not an ``Exception`` is never a tool's error or a model's. The
call in flight is recorded with outcome ``unknown`` (see
:mod:`agent_contract.runtime.execution`), the run pauses with ``interrupted`` (its
snapshot resumes it), and :class:`~agent_contract.runtime.RunInterrupted` carries that
result out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..messages import Message
from .records import RunInterrupted, Stop

if TYPE_CHECKING:
    from .state import RunState

__all__ = ["interruptible"]


@contextmanager
def interruptible(
    state: RunState, transcript: Sequence[Message], harness: str = "offline"
) -> Iterator[None]:
    """End the run with the pause ``interrupted`` when something that is not an
    ``Exception`` (``KeyboardInterrupt``, ``SystemExit``, a signal) interrupts it, and
    raise :class:`RunInterrupted` carrying that result (its snapshot resumes the run).

    Raises:
        RunInterrupted: the run was interrupted.
    """
    try:
        yield
    except RunInterrupted:
        raise
    except BaseException as exc:
        if isinstance(exc, Exception):
            raise
        result = state.finish(Stop.interrupted(exc), messages=transcript, harness=harness)
        raise RunInterrupted(result, exc) from exc
