"""A message's whole content, on demand: the thread page inlines only a bounded preview of tool output."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from knowledgeweb.review.access import message_get_for_review_reader
from knowledgeweb.threads.errors import ThreadNotFound


@require_safe
@login_required
def message_content(request: HttpRequest, message_id: UUID) -> HttpResponse:
    """The message's content as plain text; another user's message answers 404, like a missing
    one, unless the reader reviews its thread or may read any thread (``reads_any_thread``)."""
    try:
        message = message_get_for_review_reader(reader=request.user, message_id=message_id, staff=True)
    except ThreadNotFound as exc:
        raise Http404(str(exc)) from exc
    response = HttpResponse(message.content, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = f'inline; filename="message-{message.id}.txt"'
    return response
