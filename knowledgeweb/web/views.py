"""Reader-facing views: thin, they call selectors, services and the renderer, then a template."""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_http_methods, require_safe

from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import (
    MAX_SEARCH_CHARS,
    thread_get_for_owner,
    thread_get_for_reader,
    thread_list_for_owner,
    thread_texts_matching,
)
from knowledgeweb.threads.services import thread_delete
from knowledgeweb.threads.windowing import message_hits_html, thread_window, window_questions
from knowledgeweb.web.compose import follow_up_form
from knowledgeweb.web.outline import turn_outline
from knowledgeweb.web.rendering.thread import hit_numbers
from knowledgeweb.web.rendering.window import render_window
from knowledgeweb.web.snippets import snippet

#: Threads per page of the list.
THREADS_PER_PAGE = 50


@require_safe
@login_required
def thread_list(request: HttpRequest) -> HttpResponse:
    search = " ".join(request.GET.get("q", "").split())[:MAX_SEARCH_CHARS]
    threads = thread_list_for_owner(owner=request.user, search=search)
    # get_page: a missing, malformed or out-of-range page number shows the nearest page.
    page = Paginator(threads, THREADS_PER_PAGE).get_page(request.GET.get("page"))
    if search:
        texts = thread_texts_matching(thread_ids=[t.id for t in page.object_list], search=search)
        for thread in page.object_list:
            thread.snippet = snippet(texts.get(thread.id, ""), search)
    return render(
        request,
        "web/thread_list.html",
        {
            "page": page,
            "threads": page.object_list,
            "search": search,
            "page_links": _page_links(page.number, page.paginator.num_pages, search),
        },
    )


def _page_links(current: int, last: int, search: str) -> list[dict[str, object]]:
    """Numbered links around the current page, with the first and last always shown."""
    wanted = sorted({1, last, *range(max(1, current - 2), min(last, current + 2) + 1)})
    links: list[dict[str, object]] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append({"gap": True})
        query = {"page": str(number), **({"q": search} if search else {})}
        links.append({"number": number, "href": "?" + urlencode(query), "current": number == current})
        previous = number
    return links


def _owned(request: HttpRequest, thread_id: UUID) -> Thread:
    try:
        return thread_get_for_owner(owner=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc


@require_safe
@login_required
def thread_detail(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """The thread's page: its owner's to read and write; an admin allowed to read any thread
    (``reads_any_thread``) reads it here without any write control (docs/decisions/0043-admins-read-any-thread-in-the-viewer.md)."""
    try:
        thread = thread_get_for_reader(reader=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    owned = thread.owner_id == request.user.pk
    try:
        window = thread_window(thread=thread, number=_window_number(request.GET.get("window")))
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    view = render_window(thread, window)
    outline = turn_outline(
        view,
        window_questions(messages=window.messages),
        turns_before=window.turns_before,
        answers_before=window.answers_before,
    )
    context = {
        "thread": thread,
        "view": view,
        "outline": outline,
        "window": window,
        "citation_total": thread.citations_resolved
        + thread.citations_unresolved
        + thread.citations_malformed,
        "owned": owned,
        "follow_up": follow_up_form(request) if owned else None,
    }
    return render(request, "web/thread_detail.html", context)


def _window_number(raw: str | None) -> int | None:
    """``?window=k``: a positive integer, or absent (the last window); anything else is a 404."""
    if raw is None:
        return None
    if not raw.isdigit() or len(raw) > 9:
        raise Http404("No such window.")
    return int(raw)


@require_safe
@login_required
def message_hits(request: HttpRequest, thread_id: UUID, message_id: UUID) -> HttpResponse:
    """A tool message's hit list, as stored with its render and numbered with the thread's
    numbers: what its summary loads on expand (and opens, without JavaScript)."""
    try:
        thread = thread_get_for_reader(reader=request.user, thread_id=thread_id)
        message, html = message_hits_html(thread=thread, message_id=message_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    hits = hit_numbers(html, thread.source_numbers or {})
    return render(
        request, "web/tool_hits.html", {"thread": thread, "message": message, "hits": SafeString(hits)}
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def thread_delete_confirm(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """GET asks for confirmation; only the POST (CSRF-checked) deletes."""
    thread = _owned(request, thread_id)
    if request.method != "POST":
        return render(request, "web/thread_delete.html", {"thread": thread})
    title = thread.title
    try:
        thread_delete(owner=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:  # deleted by a concurrent request
        raise Http404(str(exc)) from exc
    messages.success(request, f"Deleted the thread “{title}”.")
    return redirect("web:thread-list")
