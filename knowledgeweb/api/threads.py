"""Thread, message, import, citation-report and export endpoints (docs/architecture.md#http-api).

Handlers are thin: a schema in, one service or selector, a schema out. Domain
errors become JSON 4xx responses in ``knowledgeweb.api.main``.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from urllib.parse import urlencode
from uuid import UUID

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status
from ninja.errors import HttpError, ValidationError
from pydantic import ValidationError as PydanticValidationError

from knowledgeweb.api.auth import rate_limit, request_user
from knowledgeweb.api.messages import message_record
from knowledgeweb.api.schemas.errors import ErrorOut
from knowledgeweb.api.schemas.imports import ImportIn, import_body_schema
from knowledgeweb.api.schemas.messages import MessageIn
from knowledgeweb.api.schemas.text import (
    json_path,
    json_text_problem,
)
from knowledgeweb.api.schemas.threads import (
    CitationReportOut,
    DeleteQuery,
    ExportQuery,
    MessageCitationsOut,
    MessageOut,
    ThreadDetailOut,
    ThreadIn,
    ThreadListQuery,
    ThreadOut,
    citation_out,
    message_out,
    thread_out,
)
from knowledgeweb.review.access import thread_access, thread_get_for_review_reader, thread_get_for_writer
from knowledgeweb.review.exports import export_with_review
from knowledgeweb.review.services import thread_delete_counted
from knowledgeweb.threads.errors import MessageInvalidError, ThreadInvalidError
from knowledgeweb.threads.interchange.export import thread_export
from knowledgeweb.threads.interchange.imports import thread_import_body
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.selectors import (
    CURSOR_PATTERN,
    thread_citations,
    thread_messages,
    thread_page_for_owner,
)
from knowledgeweb.threads.services import thread_create

router = Router(tags=["threads"])


_AUTH_ERRORS: dict[int, Any] = {401: ErrorOut, 403: ErrorOut}
_THREAD_ERRORS: dict[int, Any] = {**_AUTH_ERRORS, 404: ErrorOut, 422: ErrorOut}
_BODY_ERRORS: dict[int, Any] = {400: ErrorOut, 413: ErrorOut, 422: ErrorOut}


#: The paging headers of ``GET /api/threads``, declared so that generated clients expose them.
_PAGING_HEADERS: dict[str, Any] = {
    "X-Next-Cursor": {
        "description": "Present when more threads follow: pass it back as `cursor` for the next page.",
        "schema": {"type": "string", "pattern": CURSOR_PATTERN},
    },
    "Link": {
        "description": 'Present when more threads follow: `<...?limit=...&cursor=...>; rel="next"` (RFC 8288).',
        "schema": {"type": "string"},
    },
}


@router.get(
    "",
    response={200: list[ThreadOut], 422: ErrorOut, **_AUTH_ERRORS},
    summary="List your threads",
    # Keyed 200 as ninja keys the generated response, so the headers join its body schema.
    openapi_extra={"responses": {200: {"headers": _PAGING_HEADERS}}},
)
def list_threads(
    request: HttpRequest, response: HttpResponse, query: Query[ThreadListQuery]
) -> list[ThreadOut]:
    """Your threads, most recently updated first (ties broken by id), `limit` per page.

    The body is the page itself, a JSON array. When more threads follow, the
    response carries `X-Next-Cursor` and a `Link: <...>; rel="next"` header: pass
    the cursor back as `cursor` (with the same `q`) for the next page. A cursor not
    of the issued form answers 422. `q` finds threads whose title or message text contains it,
    ignoring case. Each thread carries its stored citation tallies.
    """
    page = thread_page_for_owner(
        owner=request_user(request), limit=query.limit, cursor=query.cursor, search=query.q
    )
    if page.next_cursor is not None:
        params = {"limit": str(query.limit), "cursor": page.next_cursor}
        if query.q:
            params["q"] = query.q
        response["X-Next-Cursor"] = page.next_cursor
        response["Link"] = f'<{request.path}?{urlencode(params)}>; rel="next"'
    return [thread_out(t, t.message_count) for t in page.threads]


@router.post("", response={201: ThreadOut, **_AUTH_ERRORS, **_BODY_ERRORS}, summary="Create a thread")
def create_thread(request: HttpRequest, payload: ThreadIn) -> Status[ThreadOut]:
    """Counts against your write limit (``RATE_LIMIT_WRITE``, 429 with ``Retry-After``)."""
    rate_limit(request, "write")
    thread = thread_create(owner=request_user(request), title=payload.title, agent_name=payload.agent_name)
    return Status(201, thread_out(thread, 0))


@router.post(
    "/import",
    response={201: ThreadOut, **_AUTH_ERRORS, **_BODY_ERRORS},
    summary="Import a thread from LangChain, LangGraph, LangServe, OpenAI or Anthropic messages",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": import_body_schema()}},
        }
    },
)
def import_thread(request: HttpRequest) -> Status[ThreadOut]:
    """Create a thread from an agent framework's messages, in any shape the request body lists.

    An AI message's tool calls are kept (``tool_calls``) and shown in the viewer linked to
    the tool message that answered each one; thinking and image parts are kept in ``parts``.

    The import is untrusted: reserved evidence keys (``knowledge_sources``,
    ``knowledge_sources_version``, ``retrieval_sources``) are stripped from every
    object artifact; an artifact that is not an object (a list of LangChain Documents)
    is kept as written and carries no evidence. It is all or nothing: an invalid
    message answers 422 naming it by its 1-based position and nothing is written.
    Bodies over 2 MiB answer 413; a human, AI or system message holds at most
    40,000 characters. An import past a thread or user quota answers 413 before any
    message is rendered. Each import counts once against your write limit
    (``RATE_LIMIT_WRITE``, 429 with ``Retry-After``, checked before the body is read).
    """
    rate_limit(request, "write")
    # The body is read here rather than by a schema so that an error can name the message it is
    # about ("message 57: ...") and, for a body of no known shape, say what was found.
    body = _json_body(request)
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        try:
            ImportIn.model_validate(body)
        except PydanticValidationError as exc:
            errors = [{**e, "loc": ("body", "payload", *e["loc"])} for e in exc.errors(include_url=False)]
            raise ValidationError(errors) from exc
    _refuse_unstorable_text(body)
    thread = thread_import_body(owner=request_user(request), body=body)
    return Status(201, thread_out(thread, thread.message_count))


def _refuse_unstorable_text(body: Any) -> None:
    # Every string and key of the body, ignored keys too: nothing a database cannot store is
    # read any further (422, nothing written). A message is named by its 1-based position.
    found = json_text_problem(body)
    if found is None:
        return
    path, problem = found
    if isinstance(body, dict) and path[:1] == ("messages",) and len(path) >= 2:
        path = path[1:]
    elif not isinstance(body, list):
        raise ThreadInvalidError(f"{json_path(('body', *path))} {problem}")
    position, rest = path[0], path[1:]
    where = f"{json_path(rest)} " if rest else ""
    raise MessageInvalidError(f"{where}{problem}", position=int(position) + 1)


def _json_body(request: HttpRequest) -> Any:
    try:
        return json.loads(request.body)
    except (ValueError, RecursionError) as exc:
        # The API's handler of unparseable bodies says what was wrong, as for every operation.
        raise HttpError(400, "Cannot parse request body") from exc


@router.get("/{thread_id}", response={200: ThreadDetailOut, **_THREAD_ERRORS}, summary="Get a thread")
def get_thread(request: HttpRequest, thread_id: UUID) -> ThreadDetailOut:
    """The thread with all its messages, in order; to its owner, reviewers and lead (else 404)."""
    thread = thread_get_for_review_reader(reader=request_user(request), thread_id=thread_id)
    messages = thread_messages(thread=thread)
    out = thread_out(thread, len(messages))
    return ThreadDetailOut(**out.model_dump(), messages=[message_out(m) for m in messages])


@router.delete(
    "/{thread_id}",
    response={204: None, **_THREAD_ERRORS, 409: ErrorOut},
    summary="Delete a thread",
)
def delete_thread(request: HttpRequest, thread_id: UUID, query: Query[DeleteQuery]) -> Status[None]:
    """Delete your thread and every message in it; one holding verdicts needs ``confirm_verdicts``
    = their count (409 ``verdicts_present`` otherwise). A reviewer gets 403, anyone else 404."""
    user, confirm = request_user(request), query.confirm_verdicts
    thread_delete_counted(owner=user, thread_id=thread_id, confirm_verdicts=confirm)
    return Status(204, None)


@router.post(
    "/{thread_id}/messages",
    response={201: MessageOut, **_THREAD_ERRORS, **_BODY_ERRORS},
    summary="Append a message",
)
def append_message(request: HttpRequest, thread_id: UUID, payload: MessageIn) -> Status[MessageOut]:
    """Append your own message. Reserved evidence keys in ``artifact`` are stripped.

    A human, AI or system message holds at most 40,000 characters (422 beyond). An AI
    message's ``tool_calls`` and any message's ``parts`` are read as an import reads them;
    a key this operation does not know is refused (422 naming it) and nothing is written.

    Evidence is only ever written by server-side retrieval (``POST /api/knowledge/search``).
    Appends count against your write limit (``RATE_LIMIT_WRITE``, 429 with ``Retry-After``).
    """
    rate_limit(request, "write")
    thread = thread_get_for_writer(user=request_user(request), thread_id=thread_id)
    return Status(201, message_out(message_record(thread=thread, payload=payload)))


@router.get(
    "/{thread_id}/citations",
    response={200: CitationReportOut, **_THREAD_ERRORS},
    summary="Citation report",
)
def thread_citation_report(request: HttpRequest, thread_id: UUID) -> CitationReportOut:
    """For each AI message, each citation: label, href, state and the source it resolved to.

    ``state`` is ``resolved`` (valid evidence in an earlier tool message of the
    thread), ``unresolved`` (a well-formed href without such evidence) or
    ``malformed`` (looks like a knowledge citation but is not an accepted form).
    """
    thread = thread_get_for_review_reader(reader=request_user(request), thread_id=thread_id)
    return citation_report_out(thread=thread)


def citation_report_out(*, thread: Thread) -> CitationReportOut:
    """The citation report of ``thread``, shared with the MCP server so both answer alike."""
    report = thread_citations(thread=thread)
    return CitationReportOut(
        thread_id=thread.id,
        messages=[
            MessageCitationsOut(
                message_id=entry.message.id,
                seq=entry.message.seq,
                citations=[citation_out(c) for c in entry.citations],
            )
            for entry in report
        ],
    )


#: The JSON export (``format=json``): a valid import body. Declared as an open object, so a
#: generated client keeps every key (an artifact's included) rather than a model's fields only.
_JSON_EXPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": True,
    "description": "The thread as stored: {format, title, agent_name, messages: [...]}; also an import body.",
}
#: One media type per operation: a generated client reads the first it finds, so an operation
#: declaring JSON and Markdown could never give it the Markdown (docs/decisions/0182-the-markdown-export-is-its-own-operation.md).
_MARKDOWN_RESPONSE: dict[str, Any] = {
    "description": "The thread as Markdown, resolved citations as numbered references with their evidence.",
    "content": {"text/markdown": {"schema": {"type": "string"}}},
}


@router.get(
    "/{thread_id}/export",
    response={**_THREAD_ERRORS},
    summary="Export a thread as JSON",
    openapi_extra={
        "responses": {
            "200": {
                "description": "The thread as JSON (messages as stored): a valid import body.",
                "content": {"application/json": {"schema": _JSON_EXPORT_SCHEMA}},
            }
        }
    },
)
def export_thread(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """The messages exactly as stored (also a valid import body).

    `?format=markdown`, kept for existing callers, answers what `GET /{thread_id}/export/markdown`
    answers (`text/markdown`); it is read here rather than declared, so that this operation
    declares the one media type it is for (docs/decisions/0182-the-markdown-export-is-its-own-operation.md)."""
    try:
        query = ExportQuery.model_validate({"format": request.GET.get("format", "json")})
    except PydanticValidationError as exc:
        errors = [{**e, "loc": ("query", *e["loc"])} for e in exc.errors(include_url=False)]
        raise ValidationError(errors) from exc
    return _export(request, thread_id, query.format)


@router.get(
    "/{thread_id}/export/markdown",
    response={**_THREAD_ERRORS},
    summary="Export a thread as Markdown",
    openapi_extra={"responses": {"200": _MARKDOWN_RESPONSE}},
)
def export_thread_markdown(request: HttpRequest, thread_id: UUID) -> HttpResponse:
    """Resolved citations become numbered references with their evidence (``text/markdown``);
    for a reviewer, "judged n of m" in its header. Reviewers and the lead read it too."""
    return _export(request, thread_id, "markdown")


def _export(request: HttpRequest, thread_id: UUID, format: Literal["json", "markdown"]) -> HttpResponse:
    access = thread_access(user=request_user(request), thread_id=thread_id)
    export = thread_export(thread=access.thread, format=format)
    response = HttpResponse(export_with_review(export, access=access), content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response
