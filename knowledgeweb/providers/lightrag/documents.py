"""LightRAG document hits: ``data.chunks`` of ``/query/data`` (docs/providers.md, "The data items").

The title is the chunk's ``file_path`` or, when that is absent, the path its
``reference_id`` names in ``data.references``. ``unknown_source`` or an empty path
leaves the hit unattributed. LightRAG gives no pages and no public URLs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgeweb.knowledge.types import RetrievalHit

UNKNOWN_SOURCE = "unknown_source"


def reference_paths(data: Mapping[str, Any]) -> dict[str, str]:
    """``reference_id -> file_path`` from ``data.references``."""
    paths: dict[str, str] = {}
    for reference in data.get("references", []):
        if isinstance(reference, dict):
            reference_id, path = reference.get("reference_id"), reference.get("file_path")
            if isinstance(reference_id, str) and reference_id and _usable_path(path):
                paths.setdefault(reference_id, str(path).strip())
    return paths


def chunk_title(chunk: Mapping[str, Any], references: Mapping[str, str]) -> str | None:
    """The chunk's document title, or ``None`` when LightRAG does not attribute it."""
    path = chunk.get("file_path")
    if _usable_path(path):
        return str(path).strip()
    if path is not None:
        # An empty path or ``unknown_source`` is LightRAG's own verdict (no source);
        # a reference id must not overrule it. Only a missing path is joined.
        return None
    reference_id = chunk.get("reference_id")
    if isinstance(reference_id, str) and reference_id:
        return references.get(reference_id)
    return None


def chunk_text(chunk: Mapping[str, Any]) -> str:
    content = chunk.get("content")
    return content.strip() if isinstance(content, str) else ""


def document_hit(chunk: Mapping[str, Any], references: Mapping[str, str]) -> RetrievalHit | None:
    """One document hit, or ``None`` for a chunk without text."""
    text = chunk_text(chunk)
    if not text:
        return None
    return RetrievalHit(text=text, title=chunk_title(chunk, references))


def document_hits(data: Mapping[str, Any], *, top_k: int) -> list[RetrievalHit]:
    """Document hits for ``knowledge_search``. Entities and relationships never become citations."""
    references = reference_paths(data)
    hits: list[RetrievalHit] = []
    for chunk in data.get("chunks", []):
        if isinstance(chunk, dict):
            hit = document_hit(chunk, references)
            if hit is not None:
                hits.append(hit)
    return hits[:top_k]


def _usable_path(path: object) -> bool:
    return isinstance(path, str) and bool(path.strip()) and path.strip() != UNKNOWN_SOURCE
