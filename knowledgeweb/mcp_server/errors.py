"""A refused tool call carries the API's own JSON error body.

The API turns each domain error into JSON in exactly one place, its exception handlers
(``knowledgeweb.api.main``). Rather than keep a second table that could drift, the MCP
server asks those handlers for the response and passes its body on, adding the HTTP
``status`` the API would have answered and, where the API's body has no ``code``, a
code named after that status. Retrieval refusals keep their own codes
(``binding_unavailable``, ``forbidden``, ``provider_error``, ...).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from pydantic import ValidationError

from knowledgeweb.api.main import api
from knowledgeweb.retrieval import RetrievalError
from knowledgeweb.threads.errors import ThreadsError

#: The errors the API answers with a 4xx of its own. Anything else is a bug: the
#: caller gets a bare 500 and the traceback goes to the log, never to the client.
DOMAIN_ERRORS: tuple[type[Exception], ...] = (
    ThreadsError,
    RetrievalError,
    RequestDataTooBig,
    AuthenticationError,
    HttpError,
    NinjaValidationError,
)

#: The code of an error whose API body carries none, by the status the API answers.
STATUS_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    413: "too_large",
    422: "invalid_content",
    424: "provider_error",
    429: "rate_limited",
}

INTERNAL_ERROR: dict[str, Any] = {"detail": "Internal server error.", "code": "internal_error", "status": 500}


def arguments_invalid(exc: ValidationError) -> NinjaValidationError:
    """pydantic's refusal of tool arguments, located like the API locates body fields."""
    errors = [{**error, "loc": ("arguments", *error["loc"])} for error in exc.errors()]
    return NinjaValidationError(errors)


def error_body(exc: Exception) -> dict[str, Any]:
    """The API's JSON body for ``exc`` with its ``status`` (and a ``code`` when it had none)."""
    if not isinstance(exc, DOMAIN_ERRORS):
        return dict(INTERNAL_ERROR)
    response = api.on_exception(HttpRequest(), exc)
    body: dict[str, Any] = json.loads(response.content)
    body.setdefault("code", STATUS_CODES.get(response.status_code, "error"))
    body["status"] = response.status_code
    return body
