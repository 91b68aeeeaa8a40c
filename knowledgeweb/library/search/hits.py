"""What a full-text search returns, whichever database ran it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple


class ChunkHit(NamedTuple):
    """One matching chunk with what a citation needs from its document.

    A named tuple rather than a frozen dataclass: it is as immutable, and SQLite's
    rows become hits without a Python ``__init__`` each (a frozen dataclass sets
    every field through ``object.__setattr__``, which cost as much as a tenth of
    the FTS5 query itself on a small index).
    """

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
        return cls(row[0], row[1], row[2], row[3], row[4], row[5], row[6], score)
