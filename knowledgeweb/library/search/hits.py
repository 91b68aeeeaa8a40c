"""What a full-text search returns, whichever database ran it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One matching chunk with what a citation needs from its document."""

    chunk_id: int
    document_id: int
    text: str
    page: int | None
    title: str
    collection_name: str
    source_url: str
    # Higher is better on both backends (FTS5's bm25 is negated).
    score: float
