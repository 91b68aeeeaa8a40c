"""The one ``NinjaAPI`` instance; routers are mounted here and nowhere else.

Every operation authenticates with a session or a bearer token
(``knowledgeweb.api.auth``), and this module is the single place where errors
become JSON responses: ``{"detail": "<clear message>", "code": "<stable code>"}``.
Domain errors (``knowledgeweb.errors.DomainError`` and every app's subclasses)
have one handler that answers each with its own ``status`` and ``code``; the
others here are the framework's (authentication, validation, unparseable JSON,
a body too large, a rate limit) and the 500 of last resort.

Status codes:

- 400 unparseable JSON, or a retrieval request that is wrong for anyone;
- 401 missing or invalid credentials;
- 403 a session request without its CSRF token, or a retrieval the caller may not run;
- 404 no such thread for you (another user's thread too);
- 409 a change to a written message;
- 413 a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2 MiB), or a write past a quota;
- 422 a well-formed request with invalid content, including a malformed thread id;
- 424 a provider failure when no thread was given to record it;
- 429 a rate limit (``Retry-After`` says when to try again);
- 500 an unexpected error: JSON too, with DEBUG on or off, never a traceback.

Every error carries a stable ``code`` beside ``detail``: a domain error its own,
the rest one per status (``knowledgeweb.ops.apierrors.CODES``); docs/architecture.md#errors
lists them all. Errors that never
reach these handlers (an unknown route, a wrong method) are turned into the same
shape by ``knowledgeweb.ops.apierrors.ApiJsonErrorsMiddleware``.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import Error as DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from knowledgeweb.api import compose, knowledge, review, review_queues, threads
from knowledgeweb.api.auth import api_auth
from knowledgeweb.errors import DomainError
from knowledgeweb.ops.apierrors import code_for
from knowledgeweb.ops.database import log_unavailable, unavailable_kind, unavailable_response
from knowledgeweb.ops.ratelimit import RateLimited
from knowledgeweb.threads.text import text_problem

logger = logging.getLogger(__name__)


class KnowledgewebAPI(NinjaAPI):
    """The API, whose schema also documents the answers every operation may give."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(*args, **kwargs)
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                if isinstance(operation, dict) and "responses" in operation:
                    operation["responses"] = _with_rate_limit(operation["responses"])
        _link_new_threads(schema.get("paths", {}))
        return schema


def _link_new_threads(paths: dict[str, Any]) -> None:
    """OpenAPI links from the operations that create a thread to every operation on one, so a
    client generator (or a stateful test) knows where a new thread's ``id`` goes."""
    users = {
        operation["operationId"]: {
            "operationId": operation["operationId"],
            "parameters": {"thread_id": "$response.body#/id"},
        }
        for route, operations in paths.items()
        if "{thread_id}" in route
        for operation in operations.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    for route in ("/threads", "/threads/import"):
        for prefix in ("", "/api"):
            created = paths.get(prefix + route, {}).get("post", {}).get("responses", {}).get("201")
            if created is not None:
                created["links"] = users


def _with_rate_limit(responses: dict[Any, Any]) -> dict[str, Any]:
    # Status keys as strings, once each: ninja writes an operation's own as numbers, and a
    # number and a string of the same status would be one duplicated key in the JSON text.
    keyed = {str(status): response for status, response in responses.items()}
    own = keyed.get("429")
    if own is None:
        keyed["429"] = _RATE_LIMITED_RESPONSE
    else:
        keyed["429"] = {**own, "headers": _RATE_LIMITED_RESPONSE["headers"]}
    return keyed


_RATE_LIMITED_RESPONSE = {
    "description": (
        "Too many requests: searches, questions or writes per token (or session user), or "
        "failed token checks per client address (a valid token is always accepted). Limits "
        "come from the environment (docs/operations.md, 'Limits')."
    ),
    "headers": {
        "Retry-After": {
            "description": "Seconds until the limit's window ends.",
            "schema": {"type": "integer", "minimum": 1},
        }
    },
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "detail": {"type": "string"},
                    "code": {"type": "string", "enum": ["rate_limited"]},
                },
                "required": ["detail", "code"],
            }
        }
    },
}

api = KnowledgewebAPI(
    title="knowledgeweb API",
    version="1",
    description=(
        "Threads, messages, citations and server-side retrieval. Authenticate with "
        "`Authorization: Bearer <token>` (see `manage.py create_token`) or a browser session "
        "(unsafe methods then need the `X-CSRFToken` header). Errors are JSON "
        '`{"detail": "..."}`: 400 unparseable JSON, 401 missing or invalid credentials, '
        "403 a retrieval you may not run (nothing is sent upstream), "
        "404 no such thread of yours (another user's thread too), 405 a method the route does not "
        f"take, 413 a body over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE // (1024 * 1024)} MiB or a write past a "
        "thread or user quota (nothing written), "
        "422 invalid content (including a malformed thread id), 424 a provider failure with no "
        "thread to record it in, 429 a rate limit (with `Retry-After`), 500 an unexpected error. "
        "Every error also carries a stable `code`."
    ),
    docs_url="/docs",
    urls_namespace="api",
    auth=api_auth,
)

api.add_router("/threads", threads.router)
api.add_router("/threads", compose.router)  # POST /threads/{id}/ask (issue 13)
api.add_router("/threads", review.router)  # review items and verdicts (issue 26)
api.add_router("/knowledge", knowledge.router)
api.add_router("/review/queues", review_queues.router)  # issue 27


def _error(request: HttpRequest, status: int, detail: str, **extra: object) -> HttpResponse:
    body: dict[str, object] = {"detail": detail, "code": code_for(status), **extra}
    return api.create_response(request, body, status=status)


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = _error(request, 429, exc.detail)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, "Not found.")


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    # ninja's default answers a plain-text traceback under DEBUG; an agent gets JSON,
    # and the traceback goes to the log (passwords redacted there).
    logger.exception("Unhandled error in %s %s", request.method, request.path)
    request_id = getattr(request, "request_id", "")
    suffix = f" (request id {request_id})" if request_id else ""
    return _error(request, 500, f"Internal server error{suffix}; it has been logged.")


@api.exception_handler(DatabaseError)
def database_error(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    # A connection the database refused is a 503 to try again, logged once per kind per
    # interval (knowledgeweb/ops/database.py); any other database error is a bug.
    kind = unavailable_kind(exc)
    if kind is None:
        return unexpected(request, exc)
    log_unavailable(kind, exc)
    return unavailable_response(request, kind)


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    # Every app's errors derive from DomainError and carry their own status and code
    # (docs/architecture.md#errors): one rule, the same status the web pages give.
    response = _error(request, exc.status, exc.message, code=exc.code, **exc.extra())
    for name, value in exc.headers().items():
        response[name] = value
    return response


@api.exception_handler(RequestDataTooBig)
def body_too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return _error(request, 413, f"The request body is larger than the API's limit of {limit} bytes.")


@api.exception_handler(AuthenticationError)
def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    detail = exc.message
    if detail == "Unauthorized":
        detail = "Authentication required: send 'Authorization: Bearer <token>' or use a logged-in session."
    response = _error(request, 401, detail)
    response["WWW-Authenticate"] = 'Bearer realm="knowledgeweb"'
    return response


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if exc.status_code == 400 and isinstance(exc.__cause__, ValueError | RecursionError):
        # ninja says only "Cannot parse request body"; say what was wrong.
        cause = exc.__cause__
        if isinstance(cause, json.JSONDecodeError):
            reason = cause.msg
        elif isinstance(cause, UnicodeDecodeError):
            reason = "it is not UTF-8 text"
        elif isinstance(cause, RecursionError):
            reason = "it is nested too deeply"
        else:
            # The parser's only other ValueError: Python's limit on integer digits.
            reason = "a number in it has too many digits"
        return _error(request, 400, f"The request body is not valid JSON: {reason}.")
    return _error(request, exc.status_code, str(exc))


_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


@api.exception_handler(ValidationError)
def invalid_request(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # A value that fails every branch of a union reports once per branch; our own
    # validators' reasons (value_error) are the ones that explain the refusal.
    errors = [e for e in exc.errors if e.get("type") == "value_error"] or exc.errors
    problems = [_problem(error) for error in errors]
    detail = "Invalid request: " + "; ".join(problems[:5])
    if len(problems) > 5:
        detail += f" (and {len(problems) - 5} more)"
    # Pydantic quotes what it could not parse ("found `\x00` at 0"): never echo a NUL, a
    # control character or a lone surrogate into a message, as the text of its escape instead.
    detail = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", detail)
    return _error(request, 422, detail, errors=json.loads(json.dumps(exc.errors, default=str)))


# pydantic names union branches in error locations ("function-after[...]", "`list[...]`").
_BRANCH_TAG = re.compile(r"(`.*`|[a-z][\w-]*\[.*\]|\[key\])")


def _problem(error: dict[str, object]) -> str:
    loc = [part for part in _as_list(error.get("loc")) if not _BRANCH_TAG.fullmatch(str(part))]
    if len(loc) >= 2 and loc[0] == "body":
        # ("body", "payload", "type"): the parameter's name means nothing to the caller.
        del loc[1]
    message = str(error.get("msg", "invalid"))
    return f"{'.'.join(_printable(part) for part in loc)}: {message}" if loc else message


def _printable(part: object) -> str:
    # A refused object key is part of the location: never echo its NUL or surrogate.
    text = str(part)
    return json.dumps(text) if text_problem(text) is not None else text


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []
