"""A read-only, offline policy lookup.

:data:`POLICIES` is a fixed, immutable table compiled into the package: no file,
network or database is read, and the topic is only ever used as a key into that
table (never as a path). Each policy has the shape::

    {"topic": str, "title": str, "text": str, "source_id": "offline-policy:<topic>:v1"}

The ``source_id`` is what an answer cites to show where the text came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ...errors import InvalidArgumentsError, NotFoundError
from ...tools import ToolSpec

__all__ = ["POLICIES", "TOPIC_PATTERN", "lookup_policy", "policy_lookup_tool"]

TOPIC_PATTERN: Final = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
"""A valid topic: a lowercase ASCII letter, then up to 31 of ``a-z 0-9 _ -``."""


def _policy(topic: str, title: str, text: str) -> Mapping[str, str]:
    return MappingProxyType(
        {
            "topic": topic,
            "title": title,
            "text": text,
            "source_id": f"offline-policy:{topic}:v1",
        }
    )


POLICIES: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "privacy": _policy(
            "privacy",
            "Privacy policy",
            "We collect only the personal data needed to provide the service and never "
            "sell it. Customers may request a copy or the deletion of their data at any "
            "time, and requests are completed within 30 days.",
        ),
        "refunds": _policy(
            "refunds",
            "Refund policy",
            "Purchases can be refunded in full within 30 days of delivery when the item "
            "is returned unused. Refunds go back to the original payment method within "
            "10 business days of the return being received.",
        ),
        "security": _policy(
            "security",
            "Security policy",
            "All customer data is encrypted in transit and at rest, and staff access is "
            "granted on a least-privilege basis with multi-factor authentication. "
            "Suspected incidents must be reported to the security team within 24 hours.",
        ),
        "retention": _policy(
            "retention",
            "Data retention policy",
            "Account records are kept for as long as the account is active and deleted "
            "within 90 days of closure. Invoices are retained for 7 years to meet legal "
            "accounting obligations.",
        ),
    }
)
"""Every known policy, by topic. Immutable at both levels (read-only mappings)."""


def lookup_policy(topic: str) -> dict[str, str]:
    """Return a copy of the policy for ``topic``.

    Args:
        topic: e.g. ``"privacy"``; surrounding whitespace and case are ignored, and the
            normalized topic must match :data:`TOPIC_PATTERN`.

    Returns:
        A new dict ``{"topic", "title", "text", "source_id"}``, all strings;
        ``source_id`` is ``"offline-policy:<topic>:v1"``.

    Raises:
        InvalidArgumentsError: ``topic`` is not a string or does not match
            :data:`TOPIC_PATTERN` after normalization (the input is not echoed).
        NotFoundError: the topic is well formed but unknown; the message names it and
            lists the known topics.
    """
    if not isinstance(topic, str):
        raise InvalidArgumentsError("topic must be a string")
    normalized = topic.strip().lower()
    if TOPIC_PATTERN.fullmatch(normalized) is None:
        raise InvalidArgumentsError(f"topic must match {TOPIC_PATTERN.pattern}")
    policy = POLICIES.get(normalized)
    if policy is None:
        known = ", ".join(sorted(POLICIES))
        raise NotFoundError(f"unknown policy topic {normalized!r}; known topics: {known}")
    return dict(policy)


def _handle(topic: str) -> dict[str, str]:
    """Tool handler: the policy dict returned by :func:`lookup_policy`."""
    return lookup_policy(topic)


def policy_lookup_tool() -> ToolSpec:
    """The ``policy_lookup`` tool: a read-only spec whose handler calls :func:`lookup_policy`.

    Arguments: ``{"topic": str}`` matching :data:`TOPIC_PATTERN` (no other properties).
    Result: ``{"topic", "title", "text", "source_id"}``. Errors: kind ``not_found`` for
    an unknown topic, ``invalid_arguments`` for a malformed one. Limits: 2 s per call,
    2000 result characters.
    """
    known = ", ".join(sorted(POLICIES))
    return ToolSpec(
        name="policy_lookup",
        description=(
            "Look up an internal policy by topic from a fixed offline table and return "
            f"its title, text and source_id. Known topics: {known}."
        ),
        parameters={
            "type": "object",
            "properties": {
                "topic": {
                    "type": "string",
                    "pattern": TOPIC_PATTERN.pattern,
                    "description": f"The policy topic, lowercase, e.g. 'privacy'. One of: {known}.",
                },
            },
            "required": ["topic"],
        },
        handler=_handle,
        effect="read",
        timeout_seconds=2.0,
        max_result_chars=2000,
    )
