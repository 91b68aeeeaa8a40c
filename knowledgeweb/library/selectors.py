"""Reads for the local index."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, QuerySet

from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.search import ChunkHit, search_chunks


def chunk_search(*, query: str, limit: int, collection_names: Sequence[str] | None = None) -> list[ChunkHit]:
    """Ranked full-text hits for ``query``, best first (SQLite FTS5 or PostgreSQL)."""
    return search_chunks(query, limit=limit, collection_names=collection_names)


def collection_by_name(*, name: str) -> Collection | None:
    return Collection.objects.filter(name=name).first()


def collection_list() -> QuerySet[Collection]:
    """Collections with ``document_count`` annotated."""
    return Collection.objects.annotate(document_count=Count("documents")).order_by("name")


def document_list(*, collection: Collection) -> QuerySet[Document]:
    return Document.objects.filter(collection=collection).order_by("title", "id")


def document_chunks(*, document: Document) -> QuerySet[Chunk]:
    return Chunk.objects.filter(document=document).order_by("ordinal")
