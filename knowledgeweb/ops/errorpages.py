"""The HTML 500 page, naming the request's id so a report can be matched to its log line.

Django's default handler renders ``500.html`` without the request, so the page could
not say which request failed. This one passes the id that ``RequestLogMiddleware``
gave the request (and sends in ``X-Request-ID``). It must not fail itself: the page
stands alone (no base template, no user, no URL lookups), its stylesheet is looked up
defensively (a missing static manifest may be what failed), and if the template
cannot be rendered at all the answer is plain text with the same id. Errors under
``/api/`` are JSON (``ApiJsonErrorsMiddleware``) and never reach this page.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.template.loader import render_to_string
from django.templatetags.static import static

from knowledgeweb.ops.logs import current_request_id

logger = logging.getLogger(__name__)


def server_error(request: HttpRequest) -> HttpResponse:
    request_id = str(getattr(request, "request_id", "") or current_request_id.get())
    try:
        stylesheet = static("knowledgeweb/site.css")
    except Exception:  # a missing manifest entry: the page goes unstyled rather than failing
        stylesheet = ""
    try:
        page = render_to_string("500.html", {"request_id": request_id, "stylesheet": stylesheet})
    except Exception:
        logger.exception("The 500 page could not be rendered")
        return HttpResponseServerError(
            f"Server error. The error has been logged with request id {request_id}.\n",
            content_type="text/plain; charset=utf-8",
        )
    return HttpResponseServerError(page)
