"""A refused tool call carries the API's own JSON error body.

The API turns each domain error into JSON in exactly one place, its exception handlers
(``knowledgeweb.api.main``). Rather than keep a second table that could drift, the MCP
server asks those handlers for the response and passes its body on, adding the HTTP
``status`` the API would have answered and, where the API's body has no ``code``, the
code the API gives that status (``knowledgeweb.ops.apierrors``). Retrieval refusals keep their own codes
(``binding_unavailable``, ``forbidden``, ``provider_error``, ...).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from ninja.errors import ValidationError as NinjaValidationError
from pydantic import ValidationError

from knowledgeweb.api.main import api
from knowledgeweb.ops.apierrors import code_for

INTERNAL_ERROR: dict[str, Any] = {"detail": "Internal server error.", "code": "internal_error", "status": 500}


def arguments_invalid(exc: ValidationError) -> NinjaValidationError:
    """pydantic's refusal of tool arguments, located like the API locates body fields."""
    errors = [{**error, "loc": ("arguments", *error["loc"])} for error in exc.errors()]
    return NinjaValidationError(errors)


def error_body(exc: Exception) -> dict[str, Any]:
    """The API's JSON body for ``exc`` with its ``status`` (and a ``code`` when it had none).

    Whatever the API answers with a 4xx JSON body of its own (its domain errors, and any
    handler added later, such as a quota's or a rate limit's) is passed on; anything else
    is a bug, answered with a bare 500 whose details stay in the log.
    """
    try:
        response = api.on_exception(HttpRequest(), exc)
    except Exception:
        # ninja's fallback re-raises what no handler claims (with DEBUG off).
        return dict(INTERNAL_ERROR)
    is_json = response.get("Content-Type", "").startswith("application/json")
    if response.status_code >= 500 or not is_json:
        # With DEBUG on, ninja's fallback answers a traceback as text: never pass that on.
        return dict(INTERNAL_ERROR)
    body: dict[str, Any] = json.loads(response.content)
    body.setdefault("code", code_for(response.status_code))
    body["status"] = response.status_code
    return body


def is_internal(body: dict[str, Any]) -> bool:
    return body["status"] >= 500
