"""How a reply is cut into the pieces of a stream: one rule for every streaming double
(the replay server's SSE, :class:`~agent_contract_langchain.chat_model.ContractChatModel`,
the PydanticAI binding's scripted model), so a scenario's stream plan means the same
pieces everywhere.

The split is faithful: the pieces of a text join to exactly that text (a cut or
malformed argument text stays so), and nothing is invented beyond the cut points.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["call_pieces", "text_pieces"]


def text_pieces(text: str, size: int | None) -> list[str]:
    """``text`` in pieces of ``size`` characters (the last may be shorter), in order;
    ``"".join`` of the result is ``text``.

    Args:
        text: the text to cut (a reply's text, a call's argument text).
        size: characters per piece; ``None`` keeps the text whole.

    Returns:
        At least one piece: an empty text is one empty piece.

    Raises:
        ValueError: ``size`` is less than 1.
    """
    if size is None:
        return [text]
    if size < 1:
        raise ValueError(f"a stream piece holds at least 1 character, got size={size}")
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def call_pieces(
    texts: Sequence[str], size: int | None, *, interleave: bool = False
) -> list[tuple[int, str]]:
    """The argument pieces of a reply's tool calls, as ``(call index, piece)`` in the
    order a stream sends them: call by call, or, with ``interleave``, by turns (the first
    piece of every call, then the second of every call that has one, ...), as OpenAI's
    chunks may carry them. The pieces of index ``i`` join to exactly ``texts[i]``, and the
    first piece of each index comes before its others.

    Args:
        texts: each call's argument text, in the order the model issued the calls.
        size: characters per piece (:func:`text_pieces`); ``None`` keeps each whole.
        interleave: send the calls' pieces by turns.

    Raises:
        ValueError: ``size`` is less than 1.
    """
    per_call = [
        [(index, piece) for piece in text_pieces(text, size)] for index, text in enumerate(texts)
    ]
    if not interleave:
        return [item for pieces in per_call for item in pieces]
    turns = max((len(pieces) for pieces in per_call), default=0)
    return [pieces[turn] for turn in range(turns) for pieces in per_call if turn < len(pieces)]
