"""The embedded local index: collections of documents split into searchable chunks."""

from __future__ import annotations

from django.core.validators import URLValidator
from django.db import models

#: Only real public web addresses become source URLs (docs/contract.md#source-records); never file paths.
http_url_validator = URLValidator(schemes=["http", "https"])
MAX_COLLECTION_NAME = 200


class Collection(models.Model):
    """A named set of documents; its name is the ``dataset_name`` of every hit."""

    name = models.CharField(max_length=MAX_COLLECTION_NAME, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    """One ingested file. ``source_key`` identifies it for idempotent re-ingest."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=1024)
    source_url = models.URLField(max_length=2048, blank=True, validators=[http_url_validator])
    # The file's path as given to ``ingest`` (relative to where it ran, when possible).
    source_key = models.CharField(max_length=1024)
    # SHA-256 of the file's bytes; an unchanged file is not rewritten.
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection__name", "title", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "source_key"], name="library_document_unique_key"),
        ]

    def __str__(self) -> str:
        return self.title


class Chunk(models.Model):
    """A paragraph-bounded slice of a document; the unit the index searches."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    # 1-based position in the document. Never shown as a page.
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    # A real page boundary from the source (PDF pages only); null for everything else.
    page = models.PositiveIntegerField(null=True, blank=True)
    # SHA-256 of ``text`` (library.passages.text_digest): finds the chunk a shared excerpt
    # came from, since evidence carries no document id. Written by ingest with the text.
    text_digest = models.CharField(max_length=64, editable=False)

    class Meta:
        ordering = ["document_id", "ordinal"]
        indexes = [models.Index(fields=["text_digest"], name="library_chunk_text_digest")]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="library_chunk_unique_ordinal"),
            models.CheckConstraint(
                condition=models.Q(page__isnull=True) | models.Q(page__gte=1, page__lte=1_000_000),
                name="library_chunk_page_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"
