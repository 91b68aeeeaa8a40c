"""Reader-facing views: thin, they call selectors, services and the renderer, then a template."""

from __future__ import annotations

from urllib.parse import urlencode
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_http_methods, require_safe

from knowledgeweb.review.access import thread_get_for_writer
from knowledgeweb.review.errors import ReviewForbiddenError, VerdictsPresentError
from knowledgeweb.review.listing import FILTERS as REVIEW_FILTERS
from knowledgeweb.review.listing import review_filter_thread_ids, review_states
from knowledgeweb.review.selectors import thread_verdict_count
from knowledgeweb.review.services import thread_delete_counted
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import (
    MAX_SEARCH_CHARS,
    THREAD_ORDER,
    thread_list_for_owner,
    thread_texts_matching,
)
from knowledgeweb.threads.windowing import message_hits_html
from knowledgeweb.web.compose import follow_up_form
from knowledgeweb.web.rendering.review import page_verdicts
from knowledgeweb.web.rendering.stored import served_page
from knowledgeweb.web.rendering.thread import hit_numbers
from knowledgeweb.web.review import read_access
from knowledgeweb.web.snippets import snippet

#: Threads per page of the list.
THREADS_PER_PAGE = 50


@require_safe
@login_required
def thread_list(request: HttpRequest) -> HttpResponse:
    """My threads, or with ``review=<filter>`` the threads of my review queues it keeps
    (``review.listing.FILTERS``); each listed thread shows its state in my queues."""
    search = " ".join(request.GET.get("q", "").split())[:MAX_SEARCH_CHARS]
    review = request.GET.get("review", "")
    if review in REVIEW_FILTERS:
        search = ""
        ids = review_filter_thread_ids(user=request.user, name=review)
        threads = Thread.objects.filter(pk__in=ids).order_by(*THREAD_ORDER)
    else:
        review = ""
        threads = thread_list_for_owner(owner=request.user, search=search)
    # get_page: a missing, malformed or out-of-range page number shows the nearest page.
    page = Paginator(threads, THREADS_PER_PAGE).get_page(request.GET.get("page"))
    if search:
        texts = thread_texts_matching(thread_ids=[t.id for t in page.object_list], search=search)
        for thread in page.object_list:
            thread.snippet = snippet(texts.get(thread.id, ""), search)
    states = review_states(user=request.user, thread_ids=[t.id for t in page.object_list])
    for thread in page.object_list:
        thread.review_states = states.get(thread.id, [])
    extra = {"q": search} if search else {"review": review} if review else {}
    return render(
        request,
        "web/thread_list.html",
        {
            "page": page,
            "threads": page.object_list,
            "search": search,
            "review": review,
            "review_filters": REVIEW_FILTERS,
            "review_words": REVIEW_FILTERS.get(review, ""),
            "extra_query": urlencode(extra),
            "page_links": _page_links(page.number, page.paginator.num_pages, extra),
        },
    )


def _page_links(current: int, last: int, extra: dict[str, str]) -> list[dict[str, object]]:
    """Numbered links around the current page, with the first and last always shown."""
    wanted = sorted({1, last, *range(max(1, current - 2), min(last, current + 2) + 1)})
    links: list[dict[str, object]] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append({"gap": True})
        query = {"page": str(number), **extra}
        links.append({"number": number, "href": "?" + urlencode(query), "current": number == current})
        previous = number
    return links


def _owned(request: HttpRequest, thread_id: UUID) -> Thread:
    """The owner's thread; its reviewers get 403 (they read it, never change it), others 404."""
    try:
        return thread_get_for_writer(user=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    except ReviewForbiddenError as exc:
        raise PermissionDenied(str(exc)) from exc


@require_safe
@login_required
def thread_detail(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """The thread's page: its owner's to read and write; its review queues' reviewers and lead,
    and an admin allowed to read any thread (``reads_any_thread``), read it here without any
    write control (docs/decisions/0043-admins-read-any-thread-in-the-viewer.md, docs/review.md).
    The verdicts the reader may see are laid over the stored render as chips."""
    access = read_access(request, thread_id)
    thread = access.thread
    owned = access.owner
    try:
        page = served_page(thread, _window_number(request.GET.get("window")))
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    page = page_verdicts(page, access)
    context = {
        "thread": thread,
        "page": page,
        "citation_total": thread.citations_resolved
        + thread.citations_unresolved
        + thread.citations_malformed,
        "owned": owned,
        "access": access,
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
    thread = read_access(request, thread_id).thread
    try:
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
    verdicts = thread_verdict_count(thread_id=thread.pk)
    context = {"thread": thread, "verdicts": verdicts}
    if request.method != "POST":
        return render(request, "web/thread_delete.html", context)
    title = thread.title
    confirmed = request.POST.get("verdicts", "0")
    try:
        thread_delete_counted(
            owner=request.user,
            thread_id=thread_id,
            confirm_verdicts=int(confirmed) if confirmed.isdigit() and len(confirmed) <= 9 else None,
        )
    except ThreadNotFound as exc:  # deleted by a concurrent request
        raise Http404(str(exc)) from exc
    except VerdictsPresentError as exc:  # verdicts recorded since the page was shown: ask again
        return render(request, "web/thread_delete.html", {**context, "verdicts": exc.verdicts}, status=409)
    messages.success(request, f"Deleted the thread “{title}”.")
    return redirect("web:thread-list")
