"""Reader-facing views: thin, they call selectors and the renderer, then a template."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.selectors import thread_get_for_owner, thread_list_for_owner, thread_outline
from knowledgeweb.web.compose import follow_up_form
from knowledgeweb.web.rendering.thread import render_thread


@require_safe
@login_required
def thread_list(request: HttpRequest) -> HttpResponse:
    threads = thread_list_for_owner(owner=request.user)
    return render(request, "web/thread_list.html", {"threads": threads})


@require_safe
@login_required
def thread_detail(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    try:
        thread = thread_get_for_owner(owner=request.user, thread_id=thread_id)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    view = render_thread(thread, thread_outline(thread=thread))
    context = {"thread": thread, "view": view, "follow_up": follow_up_form(request)}
    return render(request, "web/thread_detail.html", context)
