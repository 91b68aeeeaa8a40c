"""JSON for every error under ``/api/``, whoever produced it.

The API's own handlers (``knowledgeweb.api.main``) answer JSON with ``detail`` and
``code``. Some errors never reach them: Django's 404 for an unknown route, ninja's
405 for a known path with another method, a 400 for a disallowed host, a 500 (or
DEBUG's HTML traceback page) from a middleware. This middleware, outside all of
them, replaces any non-JSON error response under ``/api/`` with the same JSON
shape, so an agent never has to parse HTML. The docs page and the schema are left
alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse

#: Stable machine-readable reasons by status, for errors without a more precise one.
CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    411: "length_required",
    413: "body_too_large",
    414: "request_line_too_long",
    415: "unsupported_media_type",
    417: "expectation_failed",
    422: "invalid_request",
    424: "provider_error",
    429: "rate_limited",
    431: "headers_too_large",
    500: "server_error",
    501: "not_implemented",
    503: "unavailable",
}

_EXEMPT = ("/api/docs", "/api/openapi.json")
_KEPT_HEADERS = (
    "Allow",
    "Retry-After",
    "WWW-Authenticate",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "Referrer-Policy",
    "Strict-Transport-Security",
    "Cross-Origin-Opener-Policy",
    "Content-Security-Policy",
)


def code_for(status: int) -> str:
    return CODES.get(status, "client_error" if status < 500 else "server_error")


def detail_for(request: HttpRequest, response: HttpResponse) -> str:
    status = response.status_code
    if status == 404:
        return f"No API route matches {request.method} {request.path}."
    if status == 405:
        allowed = response.get("Allow", "")
        return f"{request.method} is not allowed on {request.path}" + (
            f"; allowed: {allowed}." if allowed else "."
        )
    if status == 413:
        return "The request body is larger than the API's limit."
    if status >= 500:
        request_id = getattr(request, "request_id", "")
        suffix = f" (request id {request_id})" if request_id else ""
        return f"Internal server error{suffix}; it has been logged."
    try:
        return HTTPStatus(status).phrase + "."
    except ValueError:
        return "Request failed."


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").split(";")[0].strip() == "application/json"


class ApiJsonErrorsMiddleware:
    """Turn HTML or empty error responses under ``/api/`` into ``{"detail", "code"}``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith("/api/")
            or request.path.startswith(_EXEMPT)
            or (_is_json(response) and not getattr(response, "streaming", False))
        ):
            return response
        body = {"detail": detail_for(request, response), "code": code_for(response.status_code)}
        replacement = HttpResponse(
            json.dumps(body), status=response.status_code, content_type="application/json; charset=utf-8"
        )
        for header in _KEPT_HEADERS:
            if header in response:
                replacement[header] = response[header]
        # Session or CSRF cookies a failed request may have set still apply.
        replacement.cookies = response.cookies
        return replacement
