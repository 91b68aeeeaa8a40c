"""Open in document: a cited local passage shown in the extracted text of its document.

The link names the passage by its collection and the digest of its text
(``library.passages.passage_path``), since shared evidence carries no document id.
Every refusal is the same 404 (a malformed digest, an unknown collection or passage,
a collection the reader may not read), so the page tells nobody what exists where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString
from django.views.decorators.http import require_safe

from knowledgeweb.knowledge.fragments import text_fragment_url
from knowledgeweb.knowledge.text import excerpt_segments
from knowledgeweb.library.extraction import public_url
from knowledgeweb.library.models import Chunk
from knowledgeweb.library.selectors import (
    PassageWindow,
    chunk_by_digest,
    collections_for_user,
    passage_window,
)
from knowledgeweb.review.access import thread_get_for_review_reader
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.selectors import thread_answer_number

NOT_FOUND = "No such passage."
#: A citation's anchor on its thread page (``threads.rendering.message.citation_anchor_prefix``).
_CITATION = re.compile(r"cite-([0-9a-f]{32})-[1-9][0-9]{0,4}")
#: At most this many sentence numbers are read from a link (a passage is a few sentences).
MAX_MARKED = 50


@dataclass(frozen=True, slots=True)
class Citing:
    """Where the reader came from: the thread and the answer whose citation opened this page."""

    thread_title: str
    answer: int
    href: str


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
    citing = _citing(request)
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
        "citing": citing,
        "passage_html": _marked_passage(chunk.text, _sentences(request.GET.get("sentences", ""))),
    }
    return render(request, "web/document.html", context)


def _citing(request: HttpRequest) -> Citing | None:
    """The thread and answer named by the link, checked like the thread page itself: a thread the
    reader may not read, or an answer not in it, answers the page's one 404."""
    thread_id = request.GET.get("thread", "")
    anchor = request.GET.get("cite", "")
    if not thread_id and not anchor:
        return None
    match = _CITATION.fullmatch(anchor)
    if match is None:
        raise Http404(NOT_FOUND)
    try:
        thread = thread_get_for_review_reader(reader=request.user, thread_id=thread_id, staff=True)
    except ThreadNotFound as exc:
        raise Http404(NOT_FOUND) from exc
    answer = thread_answer_number(thread=thread, message_hex=match.group(1))
    if answer is None:
        raise Http404(NOT_FOUND)
    href = reverse("web:thread-detail", args=[thread.id]) + "#" + anchor
    return Citing(thread_title=thread.title, answer=answer, href=href)


def _sentences(raw: str) -> set[int]:
    parts = [p for p in raw.split(",") if p.isdigit() and len(p) <= 6][:MAX_MARKED]
    return {int(p) for p in parts}


def _marked_passage(text: str, sentences: set[int]) -> SafeString:
    """The cited chunk: the sentences closest to the claim marked (background), or, when the link
    names none, the whole passage marked. Escaped here: the text is the document's."""
    if not sentences:
        return SafeString(f'<mark class="passage-mark">{escape(text)}</mark>')
    out: list[str] = []
    for segment in excerpt_segments(text):
        piece: str = escape(segment.text)
        if segment.kind == "sentence" and segment.index in sentences:
            piece = f'<mark class="passage-mark">{piece}</mark>'
        out.append(piece)
    return SafeString("".join(out))


def _sections(window: PassageWindow) -> list[PageSection]:
    """The window split where the page changes, each chunk paired with whether it is the cited one."""
    sections: list[PageSection] = []
    for chunk in window.chunks:
        if not sections or sections[-1].page != chunk.page:
            sections.append(PageSection(page=chunk.page, chunks=[]))
        sections[-1].chunks.append((chunk, chunk.pk == window.chunk.pk))
    return sections
