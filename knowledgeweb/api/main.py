"""The one ``NinjaAPI`` instance; routers are mounted here and nowhere else.

Every operation authenticates with a session or a bearer token
(``knowledgeweb.api.auth``), and this module is the single place where domain
errors become JSON 4xx responses: ``{"detail": "<clear message>"}``.

Status codes:

- 400 unparseable JSON, or a retrieval request that is wrong for anyone;
- 401 missing or invalid credentials;
- 403 a session request without its CSRF token, or a retrieval the caller may not run;
- 404 no such thread for you (another user's thread too);
- 409 a change to a written message;
- 413 a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2 MiB), or a write past a quota;
- 422 a well-formed request with invalid content, including a malformed thread id;
- 424 a provider failure when no thread was given to record it.

Retrieval errors add a stable ``code`` beside ``detail``.
"""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from knowledgeweb.api import compose, knowledge, threads
from knowledgeweb.api.auth import api_auth
from knowledgeweb.retrieval import RetrievalError
from knowledgeweb.threads.errors import (
    ExportFormatError,
    MessageImmutableError,
    MessageInvalidError,
    QuotaExceededError,
    ThreadInvalidError,
    ThreadNotFound,
    ThreadsError,
)

api = NinjaAPI(
    title="knowledgeweb API",
    version="1",
    description=(
        "Threads, messages, citations and server-side retrieval. Authenticate with "
        "`Authorization: Bearer <token>` (see `manage.py create_token`) or a browser session "
        "(unsafe methods then need the `X-CSRFToken` header). Errors are JSON "
        '`{"detail": "..."}`: 400 unparseable JSON, 401 missing or invalid credentials, '
        "403 a retrieval you may not run (nothing is sent upstream), "
        "404 no such thread of yours (another user's thread too), 413 a body over "
        f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE // (1024 * 1024)} MiB or a write past a thread or user "
        "quota (nothing written), 422 invalid content "
        "(including a malformed thread id), 424 a provider failure with no thread to record it in. "
        "Retrieval errors also carry a stable `code`."
    ),
    docs_url="/docs",
    urls_namespace="api",
    auth=api_auth,
)

api.add_router("/threads", threads.router)
api.add_router("/threads", compose.router)  # POST /threads/{id}/ask (issue 13)
api.add_router("/knowledge", knowledge.router)


def _error(request: HttpRequest, status: int, detail: str, **extra: object) -> HttpResponse:
    return api.create_response(request, {"detail": detail, **extra}, status=status)


@api.exception_handler(ThreadsError)
def threads_error(request: HttpRequest, exc: ThreadsError) -> HttpResponse:
    status = 400
    if isinstance(exc, ThreadNotFound):
        status = 404
    elif isinstance(exc, MessageImmutableError):
        status = 409
    elif isinstance(exc, QuotaExceededError):
        return _error(request, 413, exc.message, code="quota_exceeded", quota=exc.quota)
    elif isinstance(exc, MessageInvalidError | ThreadInvalidError | ExportFormatError):
        status = 422
    return _error(request, status, exc.message)


@api.exception_handler(RetrievalError)
def retrieval_error(request: HttpRequest, exc: RetrievalError) -> HttpResponse:
    # Retrieval errors carry their status (400, 403, 424) and a stable code for agents.
    return _error(request, exc.status, exc.message, code=exc.code)


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


@api.exception_handler(ValidationError)
def invalid_request(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # A value that fails every branch of a union reports once per branch; our own
    # validators' reasons (value_error) are the ones that explain the refusal.
    errors = [e for e in exc.errors if e.get("type") == "value_error"] or exc.errors
    problems = [_problem(error) for error in errors]
    detail = "Invalid request: " + "; ".join(problems[:5])
    if len(problems) > 5:
        detail += f" (and {len(problems) - 5} more)"
    return _error(request, 422, detail, errors=json.loads(json.dumps(exc.errors, default=str)))


# pydantic names union branches in error locations ("function-after[...]", "`list[...]`").
_BRANCH_TAG = re.compile(r"^(`.*`|[a-z][\w-]*\[.*\]|\[key\])$")


def _problem(error: dict[str, object]) -> str:
    loc = [part for part in _as_list(error.get("loc")) if not _BRANCH_TAG.match(str(part))]
    if len(loc) >= 2 and loc[0] == "body":
        # ("body", "payload", "type"): the parameter's name means nothing to the caller.
        del loc[1]
    message = str(error.get("msg", "invalid"))
    return f"{'.'.join(str(part) for part in loc)}: {message}" if loc else message


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []
