"""Writes for the local index (re-exported for callers)."""

from knowledgeweb.library.services.collections import collection_get_or_create
from knowledgeweb.library.services.documents import (
    ChunkDraft,
    DocumentIngestResult,
    IngestAction,
    chunk_drafts,
    document_add_text,
    document_ingest,
)
from knowledgeweb.library.services.ingest import (
    FileOutcome,
    FoundFile,
    IngestError,
    IngestReport,
    discover_files,
    file_ingest,
    paths_ingest,
    source_key,
)

__all__ = [
    "ChunkDraft",
    "DocumentIngestResult",
    "FileOutcome",
    "FoundFile",
    "IngestAction",
    "IngestError",
    "IngestReport",
    "chunk_drafts",
    "collection_get_or_create",
    "discover_files",
    "document_add_text",
    "document_ingest",
    "file_ingest",
    "paths_ingest",
    "source_key",
]
