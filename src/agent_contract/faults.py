"""Named crash points, for proving that a write survives a process being killed.

Set ``AGENT_CONTRACT_CRASH_AT`` to a point's name and the process kills itself with
``SIGKILL`` when it reaches that point: no ``finally`` blocks, no flushing, exactly
like a machine losing power. ``NAME:SIGINT`` or ``NAME:SIGTERM`` sends that signal
instead (the process handles it as it would Ctrl-C or a ``kill``). Points:

- ``after_approval``: the decision is stored; the write has not started.
- ``after_write``: the write committed; the result is not acknowledged (stored) yet.
- ``before_finish_record``: the run ended (a resumed run's graph finished, its write
  settled); the run store's "finished" record is not written yet.

Tests start a subprocess with the variable set, then resume in a fresh process.

In process, a harness can be asked to crash at a point too (the contract suite's
crash/restart hook, :class:`CrashPlan`): inside :meth:`CrashPlan.armed` the point raises
:class:`SimulatedCrash` once, the harness drops everything it holds in memory and
resumes the run in a fresh instance from what it stored (the snapshot handed to its
``checkpoint``, a framework's checkpointer).
"""

from __future__ import annotations

import contextvars
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = [
    "CRASH_ENV",
    "CRASH_POINTS",
    "CRASH_SIGNALS",
    "CrashPlan",
    "SimulatedCrash",
    "crashpoint",
    "is_simulated_crash",
]

CRASH_ENV: Final = "AGENT_CONTRACT_CRASH_AT"
CRASH_POINTS: Final[tuple[str, ...]] = ("after_approval", "after_write", "before_finish_record")
"""The named crash points (see the module doc)."""
CRASH_SIGNALS: Final[tuple[str, ...]] = ("SIGKILL", "SIGINT", "SIGTERM")
"""What a crash point can send: ``NAME`` alone is ``SIGKILL``."""


class SimulatedCrash(BaseException):
    """The process "died" at a crash point (raised inside :meth:`CrashPlan.armed`).

    A ``BaseException``, so no tool or model error handling catches it; a harness that
    gets it (directly, as the cause of a ``RunInterrupted``, or inside an exception
    group) discards its in-memory state and restarts from what it stored.
    """

    def __init__(self, point: str) -> None:
        super().__init__(f"simulated crash at {point!r}")
        self.point = point


class CrashPlan:
    """A request to crash once at a named point (one of :data:`CRASH_POINTS`).

    Args:
        point: the crash point's name.

    Raises:
        ValueError: ``point`` is not one of :data:`CRASH_POINTS`.
    """

    def __init__(self, point: str) -> None:
        if point not in CRASH_POINTS:
            raise ValueError(f"unknown crash point {point!r}; expected one of {CRASH_POINTS}")
        self.point = point
        self.fired = 0
        """How many times the crash happened (a harness that honours the plan: 1)."""
        self.restarts = 0
        """How many times the harness restarted in a fresh instance (it notes it)."""

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Inside this block (and the threads and tasks it starts with a copy of its
        context), reaching the plan's ``point`` raises :class:`SimulatedCrash`, once."""
        token = _ARMED.set(self)
        try:
            yield
        finally:
            _ARMED.reset(token)

    def restarted(self) -> None:
        """Note that the harness resumed the run in a fresh instance."""
        self.restarts += 1


_ARMED: Final[contextvars.ContextVar[CrashPlan | None]] = contextvars.ContextVar(
    "agent_contract_crash_plan", default=None
)


def is_simulated_crash(exc: BaseException) -> bool:
    """True when ``exc`` is a :class:`SimulatedCrash`, carries one as its cause or
    context (a ``RunInterrupted``), or holds one in an exception group."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, SimulatedCrash):
            return True
        if isinstance(item, BaseExceptionGroup):
            todo.extend(item.exceptions)
        for linked in (item.__cause__, item.__context__):
            if linked is not None:
                todo.append(linked)
    return False


def crashpoint(name: str) -> None:
    """Raise :class:`SimulatedCrash` if an armed :class:`CrashPlan` names this point and
    has not fired yet; send this process a signal if ``AGENT_CONTRACT_CRASH_AT`` names
    it: ``name`` (SIGKILL) or ``name:SIGINT`` / ``name:SIGTERM``.

    Raises:
        SimulatedCrash: an armed plan names this point.
    """
    plan = _ARMED.get()
    if plan is not None and plan.point == name and not plan.fired:
        plan.fired += 1
        raise SimulatedCrash(name)
    point, _, sig = os.environ.get(CRASH_ENV, "").partition(":")
    if point == name and (sig or "SIGKILL") in CRASH_SIGNALS:
        os.kill(os.getpid(), signal.Signals[sig or "SIGKILL"])
