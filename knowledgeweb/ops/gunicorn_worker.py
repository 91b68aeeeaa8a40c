"""gunicorn's threaded worker, answering its own refusals under ``/api/`` with the API's JSON.

gunicorn refuses some requests before the application sees them: a request line
over ``limit_request_line`` (414), headers over ``limit_request_field_size`` or
``limit_request_fields`` (431), a request line or header it cannot parse (400), a
transfer coding it does not know (501). Its answer is a small HTML page. Under
``/api/`` an agent expects the API's error JSON (``detail``, ``code``) and an
``X-Request-ID``; this worker writes that, and the usual request log line, and
leaves every other path's answer as gunicorn writes it.

Knowing the path is the hard part: such a request fails while gunicorn reads it,
so no request object exists. The worker's requests remember the first bytes they
read (the start of the request line), and a parse failure carries them to the
error handler, which reads the request target from them. gunicorn's own
decisions (which status, its warning line) are unchanged: only the writing of
the answer is replaced, for the thread handling an ``/api/`` request.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from typing import Any

from gunicorn import util  # type: ignore[import-untyped]
from gunicorn.http.message import Request  # type: ignore[import-untyped]
from gunicorn.http.parser import RequestParser  # type: ignore[import-untyped]
from gunicorn.workers.gthread import ThreadWorker  # type: ignore[import-untyped]

#: Enough of the request line to read a target's first characters.
HEAD_BYTES = 256
_CODES = {
    400: "bad_request",
    403: "forbidden",
    414: "request_line_too_long",
    417: "expectation_failed",
    431: "headers_too_large",
    500: "server_error",
    501: "not_implemented",
}


class RememberingRequest(Request):
    """gunicorn's request, keeping how its request line starts for the error handler."""

    head: bytes | None = None

    def read_into(self, unreader: Any, buf: bytearray, stop: bool = False) -> None:
        super().read_into(unreader, buf, stop)
        if self.head is None:
            self.head = bytes(buf[:HEAD_BYTES])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # gunicorn reads and checks the whole request head (line, headers, framing) here.
        try:
            super().__init__(*args, **kwargs)
        except Exception as exc:
            exc.request_head = self.head  # type: ignore[attr-defined]
            raise


def request_target(head: bytes | None) -> str:
    """The request target (``/api/…``) at the start of a raw request line, or ""."""
    if not head:
        return ""
    line = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0]
    parts = line.split(b" ", 2)
    if len(parts) < 2:
        return ""
    target = parts[1].decode("latin-1")
    if "://" in target:  # absolute form: http://host/path
        rest = target.split("://", 1)[1]
        target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return target


def path_of(req: Any, exc: BaseException) -> str:
    """The path of the request that failed, from whatever of it gunicorn read."""
    for source in (req, getattr(exc, "req", None)):
        path = getattr(source, "path", None)
        if isinstance(path, str) and path:
            return path
    return request_target(getattr(exc, "request_head", None)).split("?", 1)[0]


def _detail(status: int, mesg: str, cfg: Any, request_id: str) -> str:
    if status == 414:
        return (
            f"The request line is longer than this server's limit of {cfg.limit_request_line} bytes: "
            "send long values in a JSON body, not in the URL. Nothing was read or written."
        )
    if status == 431:
        return (
            f"The request's headers exceed this server's limits ({cfg.limit_request_field_size} bytes "
            f"per header, {cfg.limit_request_fields} headers). Nothing was read or written."
        )
    if status >= 500 and status != 501:
        return f"Internal server error (request id {request_id}); it has been logged."
    reason = mesg or HTTPStatus(status).phrase
    return f"The request could not be read: {reason}. Nothing was written."


class _Answering(threading.local):
    """Set while this thread's error handler answers an ``/api/`` request."""

    path: str | None = None
    method: str = ""
    client: str = ""
    cfg: Any = None


_answering = _Answering()
_write_html_error = util.write_error


def _write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    path = _answering.path
    if path is None:
        _write_html_error(sock, status_int, reason, mesg)
        return
    from knowledgeweb.ops.requestlog import HEADER, log_refused, request_id_for

    request_id = request_id_for(None)
    body = json.dumps(
        {
            "detail": _detail(status_int, mesg, _answering.cfg, request_id),
            "code": _CODES.get(status_int, "bad_request"),
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"{HEADER}: {request_id}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)
    log_refused(_answering.method, path, status_int, request_id, _answering.client)


class ApiJsonThreadWorker(ThreadWorker):
    """``gthread`` with JSON answers for the requests gunicorn refuses under ``/api/``."""

    def init_process(self) -> None:
        # This process's parsers make requests that remember their first bytes, and its
        # error pages go through ``_write_error`` (which writes HTML unless told otherwise).
        RequestParser.mesg_class = RememberingRequest
        util.write_error = _write_error
        super().init_process()

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        path = path_of(req, exc)
        if not path.startswith("/api/"):
            super().handle_error(req, client, addr, exc)
            return
        _answering.path = path
        _answering.method = str(getattr(req, "method", "") or _method_of(getattr(exc, "request_head", None)))
        _answering.client = str(addr[0]) if addr else ""
        _answering.cfg = self.cfg
        try:
            super().handle_error(req, client, addr, exc)
        finally:
            _answering.path = None


def _method_of(head: bytes | None) -> str:
    return head.split(b" ", 1)[0].decode("latin-1")[:16] if head else ""
