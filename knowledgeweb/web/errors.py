"""Domain errors on the web pages: the same status and code the API gives them.

A ``DomainError`` (``knowledgeweb.errors``) carries its status and code; a page or a
stream endpoint answers it with ``error_page`` or ``error_json`` and never keeps a
status map of its own, so a refused question is 422 on the Ask page, in the follow-up
form, in the streams and in the API alike. What a page *says* stays its own (plain
words and a next step); only the status and the code are shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from knowledgeweb.errors import DomainError

_Response = TypeVar("_Response", bound=HttpResponse)

#: A form a page refuses before any service runs is invalid content, as the API's
#: validation error is (422): the page never offers a value the service would refuse.
INVALID_FORM_STATUS = 422


def error_status(exc: DomainError) -> int:
    """The HTTP status of ``exc`` on a page: the API's."""
    return exc.status


def error_json(exc: DomainError) -> JsonResponse:
    """A stream endpoint's refusal: ``{"error", "kind", "code"}`` with the error's status and headers.

    ``kind`` is the part of the request that failed (``AnswerError.kind``) where the
    error has one, else its code: the page's script reads it to say what to fix.
    """
    kind = getattr(exc, "kind", None)
    body = {"error": exc.message, "kind": kind if isinstance(kind, str) else exc.code, "code": exc.code}
    return _with_headers(JsonResponse(body, status=error_status(exc)), exc)


def error_page(
    request: HttpRequest, template: str, context: Mapping[str, object], exc: DomainError
) -> HttpResponse:
    """``template`` rendered with ``context`` and the error (``error``, ``error_code``) at its status."""
    full = {"error": exc.message, "error_code": exc.code, **context}
    return _with_headers(render(request, template, full, status=error_status(exc)), exc)


def _with_headers(response: _Response, exc: DomainError) -> _Response:
    for name, value in exc.headers().items():
        response[name] = value
    return response
