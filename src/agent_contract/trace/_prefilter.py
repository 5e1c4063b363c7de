"""The redaction prefilter's needle scan (:meth:`agent_contract.trace.RedactionPolicy.is_clean`):
needles grouped so that a clean text is scanned once per group, not once per needle."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Groups", "holds_any", "needle_groups"]

Groups = tuple[tuple[str, tuple[str, ...]], ...]
"""Needles grouped for the prefilter: ``(probe, members)``, see :func:`needle_groups`."""


def needle_groups(needles: Iterable[str]) -> Groups:
    """``needles`` as groups for a quicker scan (:func:`holds_any` answers as ``any(n in
    text for n in needles)`` does): a needle that holds another is dropped (the shorter
    one is in every text the longer one is in), and needles with the same first two
    characters share a probe, their common prefix, so a text without the probe is
    scanned once for all of them. ``members`` is empty when the probe is the needle."""
    unique = sorted(set(needles))
    kept = [n for n in unique if not any(o != n and o in n for o in unique)]
    heads: dict[str, list[str]] = {}
    for needle in kept:
        heads.setdefault(needle[:2], []).append(needle)
    groups: list[tuple[str, tuple[str, ...]]] = []
    for members in heads.values():
        if len(members) == 1:
            groups.append((members[0], ()))
        else:
            groups.append((_common_prefix(members), tuple(members)))
    return tuple(groups)


def _common_prefix(texts: list[str]) -> str:
    """The longest prefix every text of ``texts`` (at least one) starts with."""
    first, last = min(texts), max(texts)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def holds_any(text: str, groups: Groups) -> bool:
    """True when ``text`` holds a needle of ``groups`` (see :func:`needle_groups`)."""
    for probe, members in groups:
        if probe in text:
            if not members:
                return True
            for needle in members:
                if needle in text:
                    return True
    return False
