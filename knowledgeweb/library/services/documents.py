"""Writes for documents and their chunks: create, or update in place on re-ingest."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from knowledgeweb.library.chunking import CHUNK_LIMIT, chunk_text
from knowledgeweb.library.extraction import ExtractedDocument
from knowledgeweb.library.models import Chunk, Collection, Document
from knowledgeweb.library.passages import text_digest


class IngestAction(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class DocumentIngestResult:
    document: Document
    action: IngestAction
    chunk_count: int


def chunk_drafts(extracted: ExtractedDocument, *, limit: int = CHUNK_LIMIT) -> list[ChunkDraft]:
    """Chunks per section; a chunk never spans two PDF pages, so its page stays real."""
    return [
        ChunkDraft(text=text, page=section.page)
        for section in extracted.sections
        for text in chunk_text(section.text, limit=limit)
    ]


@transaction.atomic
def document_ingest(
    *,
    collection: Collection,
    source_key: str,
    content_hash: str,
    title: str,
    source_url: str,
    chunks: Sequence[ChunkDraft],
) -> DocumentIngestResult:
    """Store a document under ``(collection, source_key)``, replacing its chunks if it changed."""
    if not chunks:
        raise ValueError("A document needs at least one chunk.")
    document = (
        Document.objects.select_for_update().filter(collection=collection, source_key=source_key).first()
    )
    if document is not None and (document.content_hash, document.title, document.source_url) == (
        content_hash,
        title,
        source_url,
    ):
        return DocumentIngestResult(document, IngestAction.UNCHANGED, document.chunks.count())

    action = IngestAction.CREATED if document is None else IngestAction.UPDATED
    if document is None:
        document = Document(collection=collection, source_key=source_key)
    document.title = title
    document.source_url = source_url
    document.content_hash = content_hash
    document.full_clean()
    document.save()

    document.chunks.all().delete()
    rows = [
        Chunk(
            document=document,
            ordinal=ordinal,
            text=draft.text,
            page=draft.page,
            text_digest=text_digest(draft.text),
        )
        for ordinal, draft in enumerate(chunks, start=1)
    ]
    for row in rows:
        # Uniqueness is guaranteed by construction; checking it would cost a query per chunk.
        row.full_clean(validate_unique=False, validate_constraints=False)
    Chunk.objects.bulk_create(rows)
    return DocumentIngestResult(document, action, len(rows))
