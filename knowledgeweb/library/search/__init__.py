"""Ranked full-text search over library chunks, on SQLite (FTS5) or PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from knowledgeweb.library.search import postgres, sqlite
from knowledgeweb.library.search.hits import ChunkHit
from knowledgeweb.library.search.terms import search_terms

__all__ = ["ChunkHit", "SearchUnavailableError", "search_chunks", "search_terms"]


class SearchUnavailableError(Exception):
    """The database has no full-text backend here."""


def search_chunks(query: str, *, limit: int, collection_names: Sequence[str] | None = None) -> list[ChunkHit]:
    """The best ``limit`` chunks for ``query``, best first; no terms means no hits."""
    terms = search_terms(query)
    if not terms or limit < 1 or (collection_names is not None and not collection_names):
        return []
    vendor = connection.vendor
    if vendor == "sqlite":
        return sqlite.search(terms, limit=limit, collection_names=collection_names)
    if vendor == "postgresql":
        return postgres.search(terms, limit=limit, collection_names=collection_names)
    raise SearchUnavailableError(f"The local index supports SQLite and PostgreSQL, not {vendor}.")
