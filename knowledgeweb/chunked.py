"""Request bodies sent without a Content-Length (``Transfer-Encoding: chunked``).

Django reads a request body only up to ``CONTENT_LENGTH``; a chunked request has
none, so Django would see an empty body and answer a misleading 422. This WSGI
middleware, which wraps the application in ``knowledgeweb.wsgi``, decides first:

- When the server has already decoded the chunks and says so with
  ``wsgi.input_terminated`` (gunicorn does), the body is read here, at most
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes plus one, and handed to Django with its
  real length; a longer body answers 413 unread past the limit.
- Otherwise (Django's development server, wsgiref: the raw chunks are still on the
  socket) it answers 411 Length Required, saying to send a Content-Length; the
  connection is then closed, so the unread chunks are never taken for a request.
- A request with both headers answers 400 (the classic request-smuggling shape),
  and a transfer coding other than ``chunked`` answers 501.

Nothing is written on any refusal: the application never sees the request. Each
refusal carries an ``X-Request-ID`` and is reported to ``on_refused`` (``knowledgeweb.wsgi``
passes the request log's id rule and line, from ``knowledgeweb.ops.requestlog``: this
module sits beside ops, not above it); under ``/api/`` its body is the API's error JSON
(``detail`` and ``code``).
See docs/decisions/0007-request-bodies-without-a-length.md.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.conf import settings

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
#: The caller's ``X-Request-ID`` (or ``None``) -> the id the refusal is known by.
RequestIds = Callable[[str | None], str]
#: (method, path, status, request id, client address) of a refused request.
RefusalLog = Callable[[str, str, int, str, str], None]

HEADER = "X-Request-ID"


def fresh_request_id(incoming: str | None) -> str:
    return uuid.uuid4().hex


def no_log(method: str, path: str, status: int, request_id: str, client: str) -> None:
    return None


#: Used when ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is ``None``: a decoded body is still bounded.
FALLBACK_LIMIT = 2 * 1024 * 1024
_READ_SIZE = 64 * 1024

_STATUS = {
    400: "400 Bad Request",
    411: "411 Length Required",
    413: "413 Request Entity Too Large",
    501: "501 Not Implemented",
}
#: The API's error codes for each refusal.
CODES = {
    400: "ambiguous_body_length",
    411: "length_required",
    413: "body_too_large",
    501: "transfer_coding_not_supported",
}


class ChunkedBodies:
    """WSGI middleware: read a server-decoded chunked body with its real length, or refuse it."""

    def __init__(
        self, app: WSGIApp, *, request_ids: RequestIds = fresh_request_id, on_refused: RefusalLog = no_log
    ) -> None:
        self.app = app
        self.request_ids = request_ids
        self.on_refused = on_refused

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        coding = environ.get("HTTP_TRANSFER_ENCODING", "")
        if not coding:
            return self.app(environ, start_response)
        codings = [part.strip().lower() for part in coding.split(",") if part.strip()]
        if codings != ["chunked"]:
            return self._refuse(
                environ,
                start_response,
                501,
                "Transfer-Encoding other than 'chunked' is not supported: send the body with a "
                "Content-Length header. Nothing was read or written.",
            )
        if environ.get("CONTENT_LENGTH"):
            return self._refuse(
                environ,
                start_response,
                400,
                "The request has both Content-Length and Transfer-Encoding; send only one "
                "(preferably Content-Length). Nothing was read or written.",
            )
        if not environ.get("wsgi.input_terminated"):
            return self._refuse(
                environ,
                start_response,
                411,
                "A chunked request body (Transfer-Encoding: chunked) cannot be read by this server: "
                "send the body with a Content-Length header. Nothing was read or written.",
                close=True,
            )
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or FALLBACK_LIMIT
        body = _read_at_most(environ["wsgi.input"], limit + 1)
        if len(body) > limit:
            return self._refuse(
                environ,
                start_response,
                413,
                f"The request body is larger than the API's limit of {limit} bytes. Nothing was written.",
            )
        decoded = dict(environ)
        decoded["wsgi.input"] = io.BytesIO(body)
        decoded["CONTENT_LENGTH"] = str(len(body))
        del decoded["HTTP_TRANSFER_ENCODING"]
        return self.app(decoded, start_response)

    def _refuse(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        status: int,
        detail: str,
        *,
        close: bool = False,
    ) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        request_id = self.request_ids(environ.get("HTTP_X_REQUEST_ID"))
        self.on_refused(
            str(environ.get("REQUEST_METHOD", "")),
            path,
            status,
            request_id,
            str(environ.get("REMOTE_ADDR", "")),
        )
        if path.startswith("/api/"):
            body = json.dumps({"detail": detail, "code": CODES[status]}).encode()
            content_type = "application/json"
        else:
            body, content_type = detail.encode(), "text/plain; charset=utf-8"
        headers = [
            ("Content-Type", content_type),
            (HEADER, request_id),
            ("X-Content-Type-Options", "nosniff"),
        ]
        if not close:
            headers.append(("Content-Length", str(len(body))))
            start_response(_STATUS[status], headers)
            return [body]
        # A WSGI application may not send "Connection: close" itself (a hop-by-hop header);
        # without a Content-Length, Django's development server closes the connection, which
        # keeps the unread chunks from being parsed as the next request.
        start_response(_STATUS[status], headers)
        return _unsized(body)


def _read_at_most(stream: Any, count: int) -> bytes:
    """Up to ``count`` bytes: a stream's ``read(n)`` may return less than ``n`` before its end."""
    parts: list[bytes] = []
    total = 0
    while total < count:
        part = stream.read(min(_READ_SIZE, count - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def _unsized(body: bytes) -> Iterator[bytes]:
    yield body
