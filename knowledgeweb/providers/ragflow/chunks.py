"""Mapping RAGFlow retrieval chunks to contract hits (docs/providers.md, "Retrieval").

Nothing is invented: the title is the chunk's ``document_keyword`` or, failing
that, the ``doc_aggs`` name for the same document id; pages come only from real
``positions``; a RAGFlow source never has a URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from knowledgeweb.knowledge.types import RagflowLocator, RetrievalHit

MAX_PAGE = 1_000_000
MAX_PAGES_PER_HIT = 100
MAX_LOCATOR_CHARS = 256
_BLANK_LINES = re.compile(r"\n{3,}")


def normalized_content(value: object) -> str:
    """Chunk text with line endings unified and surrounding blank space removed."""
    if not isinstance(value, str):
        return ""
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    return _BLANK_LINES.sub("\n\n", text).strip()


def titles_from_doc_aggs(doc_aggs: object) -> dict[str, str]:
    """``doc_id -> doc_name``; ``doc_aggs`` is a dict (``{}``) for an empty question."""
    titles: dict[str, str] = {}
    if not isinstance(doc_aggs, list):
        return titles
    for entry in doc_aggs:
        if not isinstance(entry, dict):
            continue
        doc_id, name = entry.get("doc_id"), entry.get("doc_name")
        if isinstance(doc_id, str) and isinstance(name, str) and name.strip():
            titles.setdefault(doc_id, name.strip())
    return titles


def pages_from_positions(positions: object) -> tuple[int, ...]:
    """Real 1-based pages from ``[[page, x0, x1, top, bottom], ...]``; junk is ignored."""
    pages: list[int] = []
    if not isinstance(positions, list):
        return ()
    for position in positions:
        if not isinstance(position, list) or len(position) != 5:
            continue
        if not all(_is_number(part) for part in position):
            continue
        page = position[0]
        if float(page).is_integer() and 1 <= page <= MAX_PAGE and int(page) not in pages:
            pages.append(int(page))
    return tuple(pages[:MAX_PAGES_PER_HIT])


def chunk_hit(
    chunk: Mapping[str, Any], *, dataset_names: Mapping[str, str], doc_titles: Mapping[str, str]
) -> RetrievalHit | None:
    """One hit for one chunk, or ``None`` when the chunk carries no text."""
    text = normalized_content(chunk.get("content"))
    if not text:
        return None
    document_id = _identifier(chunk.get("document_id"))
    dataset_id = _identifier(chunk.get("dataset_id"))
    chunk_id = _identifier(chunk.get("id"))
    keyword = chunk.get("document_keyword")
    title = keyword.strip() if isinstance(keyword, str) and keyword.strip() else None
    if title is None and document_id is not None:
        title = doc_titles.get(document_id)
    pages = pages_from_positions(chunk.get("positions"))
    locator = None
    if document_id and dataset_id and chunk_id:
        locator = RagflowLocator(
            dataset_id=dataset_id, document_id=document_id, chunk_id=chunk_id, pages=pages
        )
    similarity = chunk.get("similarity")
    score = (
        float(similarity)
        if isinstance(similarity, int | float) and not isinstance(similarity, bool)
        else None
    )
    return RetrievalHit(
        text=text,
        title=title,
        dataset_name=dataset_names.get(dataset_id) if dataset_id else None,
        page=pages[0] if pages else None,
        score=score,
        locator=locator,
    )


def _identifier(value: object) -> str | None:
    if isinstance(value, str) and 1 <= len(value) <= MAX_LOCATOR_CHARS and value.strip() == value:
        return value
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
