"""One log line per request, with its id, status and duration; the id in ``X-Request-ID``.

An incoming ``X-Request-ID`` made of at most 64 letters, digits, ``-``, ``_`` or
``.`` is kept (a proxy's id ties its log to ours); anything else is replaced by a
fresh one. The line records the path without its query string: queries may carry
what nobody meant to log.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from knowledgeweb.ops.clients import client_address
from knowledgeweb.ops.logs import current_request_id

logger = logging.getLogger("knowledgeweb.request")

HEADER = "X-Request-ID"
_VALID_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id_for(incoming: str | None) -> str:
    """The id a request is known by: the caller's, when it is a safe one, else a fresh one."""
    return incoming if incoming and _VALID_ID.fullmatch(incoming) else uuid.uuid4().hex


def log_refused(method: str, path: str, status: int, request_id: str, client: str) -> None:
    """The request line for a request refused before Django saw it (a chunked body, a
    request line or headers over the server's limits), in the same shape as every other."""
    logger.info(
        "%s %s %s %.1f ms",
        method,
        path,
        status,
        0.0,
        extra={
            "request_id": request_id,
            "method": method,
            "path": path,
            "status": status,
            "duration_ms": 0.0,
            "client": client,
        },
    )


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request.headers.get(HEADER, ""))
        request.request_id = request_id  # type: ignore[attr-defined]
        token = current_request_id.set(request_id)
        started = time.perf_counter()
        status = 500
        try:
            response = self.get_response(request)
            status = response.status_code
            response[HEADER] = request_id
            return response
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 1)
            logger.info(
                "%s %s %s %.1f ms",
                request.method,
                request.path,
                status,
                duration_ms,
                extra={
                    "request_id": request_id,
                    "method": request.method,
                    "path": request.path,
                    "status": status,
                    "duration_ms": duration_ms,
                    "client": client_address(request),
                },
            )
            current_request_id.reset(token)
