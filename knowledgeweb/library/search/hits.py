"""What a full-text search returns, whichever database ran it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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

    @classmethod
    def from_row(cls, row: Sequence[Any], *, score: float) -> ChunkHit:
        """From a backend's row: (chunk id, document id, text, page, title, collection, url, ...)."""
        return cls(
            chunk_id=row[0],
            document_id=row[1],
            text=row[2],
            page=row[3],
            title=row[4],
            collection_name=row[5],
            source_url=row[6],
            score=score,
        )
