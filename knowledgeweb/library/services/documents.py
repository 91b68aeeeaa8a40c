"""Writes for documents and their chunks: create, or update in place on re-ingest."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
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


#: What a document added by hand has for ``source_key``: not a path, so ingest never meets it.
PASTED_KEY_PREFIX = "pasted:"
NO_TEXT = "A document needs text: paste its text here, or ingest its file with manage.py ingest."


def pasted_source_key(text: str) -> str:
    """The source key of a pasted text: the same text is the same document in its collection."""
    return PASTED_KEY_PREFIX + hashlib.sha256(text.strip().encode()).hexdigest()


@transaction.atomic
def document_add_text(
    *, collection: Collection, title: str, source_url: str, text: str
) -> DocumentIngestResult:
    """Store a pasted text as a document of ``collection``, chunked as ingest chunks a text file.

    Raises ``ValidationError`` (keyed by field, nothing written) for a text with nothing
    to search, or a text the collection already holds.
    """
    drafts = [ChunkDraft(text=piece) for piece in chunk_text(text)]
    if not drafts:
        raise ValidationError({"text": NO_TEXT})
    key = pasted_source_key(text)
    existing = Document.objects.filter(collection=collection, source_key=key).first()
    if existing is not None:
        raise ValidationError({"text": f"This collection already holds this text, as '{existing.title}'."})
    return document_ingest(
        collection=collection,
        source_key=key,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        title=title,
        source_url=source_url,
        chunks=drafts,
    )
