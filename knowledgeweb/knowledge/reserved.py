"""The trust boundary (docs/contract.md#trust-boundary): keys only server-side producers may write."""

from __future__ import annotations

from typing import Any

#: Where the server puts its signed receipt for a tool message's evidence (``threads.receipts``).
RECEIPT_KEY = "knowledge_receipt"
#: The keys whose records are evidence (what a receipt's digest covers).
EVIDENCE_KEYS = frozenset({"knowledge_sources", "knowledge_sources_version", "retrieval_sources"})
#: A caller's artifact never keeps these: the evidence, and the receipt, which an import keeps
#: only after checking it (never because a caller wrote it).
RESERVED_KEYS = EVIDENCE_KEYS | {RECEIPT_KEY}


def strip_reserved_keys(artifact: object) -> dict[str, Any] | None:
    """Return a new dict without the reserved evidence keys; every other key is kept.

    The contract defines artifacts as JSON objects, so anything that is not a
    dict (``None``, a list, a string) returns ``None``: such an artifact could
    never carry evidence, and storing it would only invite ambiguity. The input
    is never mutated.
    """
    if not isinstance(artifact, dict):
        return None
    return {key: value for key, value in artifact.items() if key not in RESERVED_KEYS}
