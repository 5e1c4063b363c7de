"""agent_contract.streaming: the one rule for cutting a reply into stream pieces."""

from __future__ import annotations

import pytest

from agent_contract.streaming import call_pieces, text_pieces


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100, None])
def test_text_pieces_join_to_the_text(size: int | None) -> None:
    text = 'a "quoted" caf\u00e9 \\ tab\there \U0001f600'
    pieces = text_pieces(text, size)
    assert "".join(pieces) == text
    if size is not None:
        assert all(1 <= len(p) <= size for p in pieces)
    else:
        assert pieces == [text]


def test_an_empty_text_is_one_empty_piece() -> None:
    assert text_pieces("", 3) == [""]
    assert text_pieces("", None) == [""]


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        text_pieces("abc", 0)


def test_call_pieces_go_call_by_call_or_by_turns() -> None:
    texts = ["abcde", "xy"]
    assert call_pieces(texts, 2) == [(0, "ab"), (0, "cd"), (0, "e"), (1, "xy")]
    assert call_pieces(texts, 2, interleave=True) == [(0, "ab"), (1, "xy"), (0, "cd"), (0, "e")]
    assert call_pieces(texts, None, interleave=True) == [(0, "abcde"), (1, "xy")]
    assert call_pieces([], 2, interleave=True) == []
