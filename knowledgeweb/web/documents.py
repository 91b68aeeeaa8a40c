"""Open in document: a cited local passage shown in the extracted text of its document.

The link names the passage by its collection and the digest of its text
(``library.passages.passage_path``), since shared evidence carries no document id.
Every refusal is the same 404 (a malformed digest, an unknown collection or passage,
a collection the reader may not read), so the page tells nobody what exists where.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from knowledgeweb.knowledge.fragments import text_fragment_url
from knowledgeweb.library.extraction import public_url
from knowledgeweb.library.models import Chunk
from knowledgeweb.library.selectors import (
    PassageWindow,
    chunk_by_digest,
    collections_for_user,
    passage_window,
)

NOT_FOUND = "No such passage."


@dataclass(frozen=True, slots=True)
class PageSection:
    """The chunks of one PDF page (``page`` set), or the whole window of a text without pages."""

    page: int | None
    chunks: list[tuple[Chunk, bool]]


@require_safe
@login_required
def document_passage(request: HttpRequest) -> HttpResponse:
    name = request.GET.get("collection", "")
    digest = request.GET.get("digest", "")
    chunk = chunk_by_digest(
        collection_name=name, digest=digest, collection_ids=collections_for_user(request.user)
    )
    if chunk is None:
        raise Http404(NOT_FOUND)
    window = passage_window(chunk=chunk)
    document = chunk.document
    source_url = public_url(document.source_url)
    context = {
        "document": document,
        "collection": document.collection,
        "window": window,
        "sections": _sections(window),
        "source_url": source_url,
        "source_passage_url": text_fragment_url(source_url, chunk.text) if source_url else None,
    }
    return render(request, "web/document.html", context)


def _sections(window: PassageWindow) -> list[PageSection]:
    """The window split where the page changes, each chunk paired with whether it is the cited one."""
    sections: list[PageSection] = []
    for chunk in window.chunks:
        if not sections or sections[-1].page != chunk.page:
            sections.append(PageSection(page=chunk.page, chunks=[]))
        sections[-1].chunks.append((chunk, chunk.pk == window.chunk.pk))
    return sections
