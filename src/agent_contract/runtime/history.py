"""The history boundary: the transcript a model is about to get must be a conversation a
provider accepts; and the answer a batch gives by itself (``return_direct``), checked at
the same point, before the next model call.

Checked before every model call on every harness (:meth:`RunState.check_before_model_call`;
a framework that can change the messages after that check calls it again with
``count_step=False`` where the provider is called). A history is well-formed when:

- every tool call on an assistant turn has an id, and no id is used twice in the
  conversation (``missing_call_id``, ``duplicate_call_id``);
- the messages right after an assistant turn with tool calls are tool messages that answer
  exactly those calls, each once, before any other turn (``unanswered_call``,
  ``duplicate_answer``);
- every tool message answers a call of the assistant turn just before it
  (``orphan_tool_message``: a result whose call is not there, e.g. after a trimming
  middleware dropped the assistant turn but kept its results, or a result placed after
  another turn).

Providers reject a conversation that breaks any of these; the run stops with
``invalid_history`` instead, and the model is not called.

Before the shape, its size: a history over
:attr:`~agent_contract.budget.Budget.max_history_messages` (refused on its length alone,
before any message is read) or :attr:`~agent_contract.budget.Budget.max_history_chars`
(:func:`message_chars` summed, stopping once past the limit) stops the run with that
limit's name. A run keeps the count of the history it checked last, so a step that only
added messages counts only those (:class:`CheckedHistory`); a driver that converts a
history before it reaches :meth:`RunState.check_before_model_call` checks its input first
with :func:`history_size_stop`.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..budget import Budget, argument_chars, check_history_size
from ..messages import Message
from ..results import ToolResult
from ..trace import Trace
from .ledger import PlannedCall
from .records import ContractViolation, Stop

__all__ = [
    "BREAKS_HISTORY",
    "CheckedHistory",
    "DirectAnswer",
    "HistoryCode",
    "HistoryProblem",
    "HistoryScan",
    "answers_in_issue_order",
    "check_history",
    "direct_answer",
    "history_size_stop",
    "keeps_refused_turn",
    "message_chars",
]

BREAKS_HISTORY: frozenset[str] = frozenset(
    {"missing_call_id", "duplicate_call_id", "empty_tool_name"}
)
"""Violation codes of a refused model turn that no answer can make a valid history of
(a call with no id, an id used twice or reused from an earlier turn, a call with no
name): such a turn is kept out of the messages handed forward and stored."""


def answers_in_issue_order(messages: Iterable[Message]) -> list[Message]:
    """``messages`` with the tool messages after each assistant turn in the order the
    turn issued its calls (the order the offline loop writes and every model reads).

    A framework may hand its answers back in the order they came (a resumed run's
    approved writes after the reads that ran before the pause): the run of tool
    messages right after an assistant turn with calls is sorted, stably, by its call's
    position in the turn; a tool message answering none of the turn's calls keeps its
    place relative to the others, after them. Every other message stays where it is.
    Returns a new list; the messages themselves are not copied.
    """
    out: list[Message] = []
    position: dict[str, int] = {}
    block: list[Message] = []

    def flush() -> None:
        block.sort(key=lambda m: position.get(m.tool_call_id or "", len(position)))
        out.extend(block)
        block.clear()

    for message in messages:
        if message.role == "tool" and position:
            block.append(message)
            continue
        flush()
        position = {}
        if message.role == "assistant" and message.tool_calls:
            position = {c.id: n for n, c in enumerate(message.tool_calls) if c.id}
        out.append(message)
    flush()
    return out


def keeps_refused_turn(violations: Iterable[ContractViolation[Any]]) -> bool:
    """Whether a refused (``invalid``) model turn stays in the messages a run returns and
    a thread stores: ``False`` when any of ``violations`` is one of
    :data:`BREAKS_HISTORY` (the next turn would be refused as a broken history before
    any model call); the refusal itself is still in the run's trace and result. Other
    refused turns stay, their calls answered by the contract's error tool messages."""
    return not any(v.code in BREAKS_HISTORY for v in violations)


def message_chars(message: Message) -> int:
    """The size of one message for :attr:`Budget.max_history_chars`, in characters: its
    text, plus each of its tool calls' arguments as
    :func:`~agent_contract.budget.argument_chars` counts them."""
    chars = len(message.content)
    for call in message.tool_calls:
        chars += argument_chars(call.arguments)
    return chars


def _size_stop(
    budget: Budget,
    messages: Sequence[Message],
    start: int,
    chars: int,
    each: list[int] | None = None,
) -> tuple[Stop | None, int]:
    """``(stop, chars)``: the size stop of ``messages`` (its length first, read from
    ``len`` alone; then ``chars`` plus the :func:`message_chars` of the messages from
    ``start`` on, counted until past the limit), and the chars counted. Each message's
    own count is appended to ``each`` when given."""
    breach = check_history_size(budget, len(messages), 0)
    if breach is None:
        limit = budget.max_history_chars
        for index in range(start, len(messages)):
            size = message_chars(messages[index])
            chars += size
            if each is not None:
                each.append(size)
            if chars > limit:
                breach = check_history_size(budget, 0, chars)
                break
    if breach is None:
        return None, chars
    return Stop(reason=breach.reason, detail=breach.message), chars


def history_size_stop(budget: Budget, messages: Sequence[Message]) -> Stop | None:
    """The ``max_history_messages`` or ``max_history_chars`` stop for ``messages``, or
    ``None`` (see the module doc). For a driver that converts a history into its
    framework's types before the run's own check: call it on the input first, so that a
    history over the limits is refused before any conversion. O(len(messages)) at most,
    O(1) for one over ``max_history_messages``."""
    return _size_stop(budget, messages, 0, 0)[0]


HistoryCode = Literal[
    "missing_call_id",
    "duplicate_call_id",
    "unanswered_call",
    "duplicate_answer",
    "orphan_tool_message",
]


@dataclass(frozen=True, kw_only=True)
class HistoryProblem(ContractViolation[HistoryCode]):
    """One way a transcript breaks the history boundary (its message names the
    message's position, 0-based, and the id)."""


class HistoryScan:
    """The history check's state machine, fed one message at a time (what
    :func:`check_history` runs); :meth:`copy` lets a run resume a scan of a prefix it
    checked before instead of walking the whole history on every step."""

    __slots__ = ("answered", "open_calls", "position", "problems", "seen_ids")

    def __init__(self) -> None:
        self.problems: list[HistoryProblem] = []
        self.seen_ids: set[str] = set()
        self.open_calls: dict[str, int] = {}  # calls of the current turn -> its position
        self.answered: set[str] = set()
        self.position = 0

    def copy(self) -> HistoryScan:
        """An independent copy of the state."""
        twin = HistoryScan()
        twin.problems = list(self.problems)
        twin.seen_ids = set(self.seen_ids)
        twin.open_calls = dict(self.open_calls)
        twin.answered = set(self.answered)
        twin.position = self.position
        return twin

    def close_turn(self) -> None:
        """End the current assistant turn: each of its calls without an answer is a
        problem."""
        for call_id, where in self.open_calls.items():
            if call_id not in self.answered:
                self.problems.append(
                    HistoryProblem(
                        code="unanswered_call",
                        message=(
                            f"call {call_id!r} of the assistant turn at position {where} has "
                            "no tool message before the next turn"
                        ),
                        tool_call_id=call_id,
                    )
                )
        self.open_calls.clear()
        self.answered.clear()

    def feed(self, messages: Iterable[Message]) -> None:
        """Check the next ``messages`` (continuing at ``position``)."""
        problems, seen_ids = self.problems, self.seen_ids
        open_calls, answered = self.open_calls, self.answered
        position = self.position - 1
        for position, message in enumerate(messages, start=self.position):
            if message.role == "tool":
                call_id = message.tool_call_id or ""
                if call_id not in open_calls:
                    earlier = "an earlier turn" if call_id in seen_ids else "no assistant turn"
                    problems.append(
                        HistoryProblem(
                            code="orphan_tool_message",
                            message=(
                                f"the tool message at position {position} answers {call_id!r}, "
                                f"a call of {earlier}, not of the assistant turn just before it"
                            ),
                            tool_call_id=call_id,
                        )
                    )
                elif call_id in answered:
                    problems.append(
                        HistoryProblem(
                            code="duplicate_answer",
                            message=(
                                f"call {call_id!r} is answered again by the tool message at "
                                f"position {position}"
                            ),
                            tool_call_id=call_id,
                        )
                    )
                else:
                    answered.add(call_id)
                continue
            self.close_turn()
            if message.role != "assistant":
                continue
            for call in message.tool_calls:
                if not call.id:
                    problems.append(
                        HistoryProblem(
                            code="missing_call_id",
                            message=(
                                f"a call to {call.name!r} in the assistant turn at position "
                                f"{position} has no id"
                            ),
                        )
                    )
                    continue
                if call.id in seen_ids:
                    problems.append(
                        HistoryProblem(
                            code="duplicate_call_id",
                            message=(
                                f"tool_call_id {call.id!r} in the assistant turn at position "
                                f"{position} is used earlier in the conversation"
                            ),
                            tool_call_id=call.id,
                        )
                    )
                    continue
                seen_ids.add(call.id)
                open_calls[call.id] = position
        self.position = position + 1


def check_history(messages: Sequence[Message]) -> tuple[HistoryProblem, ...]:
    """Every way ``messages`` breaks the history boundary (see the module doc), in
    transcript order; empty when the history is well-formed."""
    scan = HistoryScan()
    scan.feed(messages)
    scan.close_turn()
    return tuple(scan.problems)


def _check_facts(message: Message, chars: int | None = None) -> tuple[object, ...]:
    """Everything the history check reads of ``message`` (its role, the id it answers,
    its calls' ids and names, its :func:`message_chars`, or ``chars`` when counted
    already), as exact values (strings, ``None``, ints): two messages with equal facts
    check and count the same, whatever their other fields."""
    return (
        message.role,
        message.tool_call_id,
        tuple((call.id, call.name) for call in message.tool_calls),
        message_chars(message) if chars is None else chars,
    )


def _same_prefix(
    prefix: tuple[Message, ...], facts: list[tuple[object, ...]], messages: Sequence[Message]
) -> bool:
    """Whether ``messages`` starts with messages that check as ``prefix`` did: the same
    objects (one C pass), else, message by message, the same object or a message whose
    :func:`_check_facts` equal those ``facts`` recorded of the prefix's message when it
    was checked (not read again from it: a call's arguments dict may be shared with the
    framework and edited since). ``==`` would not do: ``{"n": 1} == {"n": True}``, while
    the two arguments have different sizes."""
    if len(messages) < len(prefix):
        return False
    head = messages[: len(prefix)]
    if all(map(operator.is_, prefix, head)):
        return True
    return all(
        a is b or fact == _check_facts(b) for a, fact, b in zip(prefix, facts, head, strict=True)
    )


class CheckedHistory:
    """What a run knows of the history its model was last sent: that history's tool-call
    ids (:attr:`ids`: a new call may not reuse one), and the clean history checked last
    with its scan, so that the next check resumes where this one ended. Held by the run
    (not stored: a restored run checks its transcript afresh); the caller holds the
    run's lock.

    A step's work is proportional to what it added: the scan of the clean prefix is
    resumed in place (the call ids it adds are taken back when the longer history is
    refused), not copied, and the prefix is recognised by identity, one C pass (see
    :func:`_same_prefix` for a message that is not the same object). A :class:`Message`
    is frozen; the one thing of it that can change in place is a call's ``arguments``
    (a dict the framework may still hold): the bindings hand a new message when they
    see such an edit (``agent_contract_langchain._memo``, the PydanticAI binding's
    cache), which is then compared by its facts.
    """

    __slots__ = ("_checked", "_facts", "_ids", "_scan")

    def __init__(self) -> None:
        self._ids: frozenset[str] | None = frozenset()
        """The frozen :attr:`ids`, built when first read after a check (None: not yet)."""
        self._scan = HistoryScan()
        """The scan of the clean history checked last, its last turn left open."""
        self._checked: tuple[tuple[Message, ...], int] | None = None
        """The clean history checked last and its size in chars."""
        self._facts: list[tuple[object, ...]] = []
        """The :func:`_check_facts` of each message of that history, taken when checked."""

    @property
    def ids(self) -> frozenset[str]:
        """The tool-call ids of the history checked last (a new call may not reuse one):
        frozen once per check, when first read."""
        ids = self._ids
        if ids is None:
            ids = self._ids = frozenset(self._scan.seen_ids)
        return ids

    def stop(self, messages: Sequence[Message], trace: Trace, budget: Budget) -> Stop | None:
        """The size stop (``max_history_messages``, ``max_history_chars``: see the module
        doc) when ``messages`` is over ``budget``'s limits, else the ``invalid_history``
        stop when it breaks the boundary (each problem traced in ``trace`` as a
        ``contract_violation``), else ``None`` (and :attr:`ids` become the history's call
        ids). A history over ``max_history_messages`` is refused before any of its
        messages is read. A refused history leaves what the run knows as it was."""
        if check_history_size(budget, len(messages), 0) is not None:
            return _size_stop(budget, messages, 0, 0)[0]
        checked = self._checked
        if checked is not None and _same_prefix(checked[0], self._facts, messages):
            scan, start, chars = self._scan, len(checked[0]), checked[1]
        else:
            scan, start, chars = HistoryScan(), 0, 0
        sizes: list[int] = []
        too_big, chars = _size_stop(budget, messages, start, chars, sizes)
        if too_big is not None:
            return too_big
        if start == len(messages) and scan is self._scan:  # nothing added (a second check)
            self._checked = (tuple(messages), chars)
            return None
        saved = (dict(scan.open_calls), set(scan.answered), scan.position)
        ids_before = len(scan.seen_ids)
        added: list[str] = []
        seen = scan.seen_ids
        for message in messages[start:]:
            added.extend(c.id for c in message.tool_calls if c.id and c.id not in seen)
        scan.feed(messages[start:])
        open_calls, answered = dict(scan.open_calls), set(scan.answered)
        scan.close_turn()
        problems = tuple(scan.problems)
        if not problems:
            scan.open_calls, scan.answered = open_calls, answered  # the last turn stays open
            facts = list(map(_check_facts, messages[start:], sizes))
            if start:
                self._facts += facts
            else:
                self._facts = facts
            self._scan, self._checked = scan, (tuple(messages), chars)
            if start == 0 or len(scan.seen_ids) != ids_before:
                self._ids = None
            return None
        if scan is self._scan:  # take the prefix's scan back to where it was
            scan.problems.clear()
            scan.seen_ids.difference_update(added)
            scan.open_calls, scan.answered, scan.position = saved
        for problem in problems:
            trace.record("contract_violation", **problem.to_dict())
        return Stop(reason="invalid_history", detail="; ".join(p.message for p in problems))


@dataclass(frozen=True)
class DirectAnswer:
    """The answer of a batch whose ``return_direct`` calls succeeded."""

    stop: Stop
    """The ``answered`` stop, naming the calls."""
    text: str
    """Their results (what the model would have read), in issue order."""


def direct_answer(closed: Sequence[tuple[PlannedCall, ToolResult]]) -> DirectAnswer | None:
    """The answer a closed batch gives by itself: the successful results of its calls
    to ``return_direct`` tools, in issue order, separated by a blank line; ``None`` when
    it has none (a failed ``return_direct`` call does not end the run)."""
    direct = [
        (planned, result)
        for planned, result in closed
        if planned.spec is not None and planned.spec.return_direct and result.ok
    ]
    if not direct:
        return None
    named = ", ".join(f"{p.spec.name if p.spec else '?'} [{p.call_id}]" for p, _ in direct)
    return DirectAnswer(
        stop=Stop(reason="answered", detail=f"return_direct: the result of {named} is the answer"),
        text="\n\n".join(result.content for _, result in direct),
    )
