"""Thread, message, import, citation-report and export endpoints (docs/architecture.md#http-api).

Handlers are thin: a schema in, one service or selector, a schema out. Domain
errors become JSON 4xx responses in ``knowledgeweb.api.main``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode
from uuid import UUID

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError
from pydantic import AfterValidator, ConfigDict, WithJsonSchema, field_validator
from pydantic import ValidationError as PydanticValidationError

from knowledgeweb.api.auth import rate_limit, request_user
from knowledgeweb.api.import_schema import IMPORT_MESSAGE_SCHEMA, KEYS
from knowledgeweb.api.text import (
    NO_NUL_PATTERN,
    JsonObject,
    StorableInput,
    Text,
    json_path,
    json_text_problem,
    storable,
)
from knowledgeweb.knowledge import Evidence
from knowledgeweb.review.access import thread_access, thread_get_for_review_reader, thread_get_for_writer
from knowledgeweb.review.exports import export_with_review
from knowledgeweb.review.services import thread_delete_counted
from knowledgeweb.threads.errors import MessageInvalidError, ThreadInvalidError
from knowledgeweb.threads.evidence import ResolvedCitation
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import (
    CURSOR_PATTERN,
    MAX_SEARCH_CHARS,
    thread_citations,
    thread_export,
    thread_messages,
    thread_page_for_owner,
)
from knowledgeweb.threads.services import (
    message_append,
    thread_create,
    thread_import_body,
)
from knowledgeweb.threads.shapes import IMPORT_BODIES_DOC, IMPORT_MESSAGES_DOC, content_text
from knowledgeweb.threads.text import MAX_JSON_DEPTH, json_depth

router = Router(tags=["threads"])

MessageTypeName = Literal["human", "ai", "tool", "system"]


class ErrorOut(Schema):
    detail: str


Input = StorableInput


class ThreadIn(Input):
    title: Text = Field(min_length=1, max_length=200)
    agent_name: Text = Field(default="", max_length=100)


class ThreadOut(Schema):
    id: UUID
    title: str
    agent_name: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    citations_resolved: int = Field(
        0,
        description=(
            "Citations whose source was found in the thread's evidence (source found; not a "
            "judgement that the source supports the claim)."
        ),
    )
    citations_unresolved: int = Field(0, description="Well-formed citations without matching evidence.")
    citations_malformed: int = Field(0, description="Citation-like links in no accepted form.")
    citations_mismatched: int = Field(
        0, description="Citations with a source found whose label names another source (`label_mismatch`)."
    )
    answers_uncited: int = Field(0, description="Answers with text that cite nothing.")


class TextPart(Input):
    type: Literal["text"]
    text: Text


class MessageIn(Input):
    """A caller's message. Reserved evidence keys in ``artifact`` are stripped; other keys are kept."""

    type: MessageTypeName
    content: Text | list[Text | TextPart] = Field(
        description="A string, or a list of text parts (or strings) joined in order."
    )
    name: Text = Field(default="", max_length=128, description="The tool name, for tool messages.")
    tool_call_id: Text = Field(default="", max_length=128)
    artifact: JsonObject | None = None
    status: Literal["success", "error"] = "success"

    @field_validator("content", mode="before")
    @classmethod
    def _join_parts(cls, value: Any) -> str:
        # Parts are joined before their schema sees them: their every key and string first.
        found = json_text_problem(value) if isinstance(value, list) else None
        if found is not None:
            path, problem = found
            raise ValueError(f"{json_path(('part', *path))} {problem}")
        try:
            return content_text(value)
        except MessageInvalidError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("artifact", mode="before")
    @classmethod
    def _storable_artifact(cls, value: Any) -> Any:
        # Before the recursive JsonValue check, whose own depth limit would answer a
        # deep artifact with a page of type mismatches instead of the reason.
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"artifact is nested deeper than {MAX_JSON_DEPTH} levels.")
        return value


class ToolCallOut(Schema):
    id: str
    name: str
    args: Any = Field(
        description="Normally an object; a string when the model wrote arguments that are not JSON."
    )


class MessageOut(Schema):
    id: UUID
    seq: int
    type: MessageTypeName
    name: str
    tool_call_id: str
    content: str
    artifact: Any = Field(description="Any JSON; only an object can carry evidence.")
    tool_calls: list[ToolCallOut] = Field(description="The calls an AI message made.")
    parts: list[dict[str, Any]] = Field(
        description="Non-text content beside the text: thinking, refusal, image and file placeholders."
    )
    status: Literal["success", "error"]
    digest: str
    created_at: datetime


class ThreadDetailOut(ThreadOut):
    messages: list[MessageOut]


class ImportIn(Input):
    """The object form of an import body. Other keys (an OpenAI or Anthropic request's ``model``,
    its ``system`` prompt...) are allowed; see the operation for every accepted shape."""

    model_config = ConfigDict(extra="allow")

    title: (
        Annotated[
            str,
            Field(min_length=1, max_length=200),
            AfterValidator(storable),
            Field(json_schema_extra={"pattern": NO_NUL_PATTERN}),
        ]
        | None
    ) = Field(default=None, description="Default: the first human message's text.")
    agent_name: Text = Field(default="", max_length=100)
    # Described for OpenAPI, read by thread_import (see knowledgeweb.api.import_schema).
    messages: list[Annotated[Any, WithJsonSchema(IMPORT_MESSAGE_SCHEMA)]] = Field(
        description=IMPORT_MESSAGES_DOC
    )


def _import_body_schema() -> dict[str, Any]:
    # Its definitions (JsonValue) are the document's components, where MessageIn puts them too.
    thread = ImportIn.model_json_schema(ref_template="#/components/schemas/{model}")
    thread.pop("$defs", None)
    thread["title"] = "Messages with a title"
    any_object = {"type": "object", "propertyNames": KEYS, "additionalProperties": True}
    return {
        "description": IMPORT_BODIES_DOC,
        "anyOf": [
            thread,
            {
                "title": "A bare list of messages or a LangGraph /history list",
                "type": "array",
                "items": any_object,
            },
            {
                "title": "A LangGraph Platform thread state",
                "type": "object",
                "propertyNames": KEYS,
                "properties": {"values": any_object},
                "required": ["values"],
            },
            {
                "title": "A LangServe response",
                "type": "object",
                "propertyNames": KEYS,
                "required": ["output"],
            },
        ],
    }


class SourceOut(Schema):
    handle: str
    id: str
    form: Literal["shared", "native"]
    provider: str
    title: str
    excerpt: str
    dataset_name: str | None
    url: str | None
    page: int | None
    pages: list[int]
    truncated: bool


class CitationOut(Schema):
    label: str
    href: str
    state: Literal["resolved", "unresolved", "malformed"]
    reason: str
    source: SourceOut | None
    number: int | None = Field(
        None,
        description=(
            "The source's number in the thread (order of first citation; the page, the stream "
            "and the Markdown export show the same). Null for unresolved and malformed citations."
        ),
    )
    label_mismatch: bool = Field(
        False,
        description=(
            "A resolved citation whose label (without `citation:`) is neither a number nor shares "
            "a significant word with its source's title or dataset name: the answer may name "
            "another source than the one it links. Always false for unresolved and malformed ones."
        ),
    )


class MessageCitationsOut(Schema):
    message_id: UUID
    seq: int
    citations: list[CitationOut]


class CitationReportOut(Schema):
    thread_id: UUID
    messages: list[MessageCitationsOut]


class ThreadListQuery(Schema):
    limit: int = Field(50, ge=1, le=200, description="Threads per page (1-200).")
    cursor: str = Field(
        "",
        pattern=f"{CURSOR_PATTERN}|^$",
        description="The `X-Next-Cursor` of the previous page; empty for the first page.",
    )
    q: Text = Field(
        "",
        max_length=MAX_SEARCH_CHARS,
        description="Case-insensitive text to find in the title or in any human, AI or system message.",
    )


class DeleteQuery(Schema):
    confirm_verdicts: int | None = Field(
        None,
        ge=0,
        description="How many reviewers' verdicts the thread holds (409 names it): they go with it.",
    )


class ExportQuery(Schema):
    format: Literal["json", "markdown"] = "json"


_AUTH_ERRORS: dict[int, Any] = {401: ErrorOut, 403: ErrorOut}
_THREAD_ERRORS: dict[int, Any] = {**_AUTH_ERRORS, 404: ErrorOut, 422: ErrorOut}
_BODY_ERRORS: dict[int, Any] = {400: ErrorOut, 413: ErrorOut, 422: ErrorOut}


def _thread_out(thread: Thread, message_count: int) -> ThreadOut:
    return ThreadOut(
        id=thread.id,
        title=thread.title,
        agent_name=thread.agent_name,
        created_at=thread.created_at,
        updated_at=thread.updated_at,
        message_count=message_count,
        citations_resolved=thread.citations_resolved,
        citations_unresolved=thread.citations_unresolved,
        citations_malformed=thread.citations_malformed,
        citations_mismatched=thread.citations_mismatched,
        answers_uncited=thread.answers_uncited,
    )


def _message_out(message: Message) -> MessageOut:
    return MessageOut.model_validate(message, from_attributes=True)


def _source_out(source: Evidence) -> SourceOut:
    return SourceOut(
        handle=source.handle,
        id=source.id,
        form=source.form,
        provider=source.provider,
        title=source.title,
        excerpt=source.excerpt,
        dataset_name=source.dataset_name,
        url=source.url,
        page=source.page,
        pages=list(source.pages),
        truncated=source.truncated,
    )


def _citation_out(citation: ResolvedCitation) -> CitationOut:
    return CitationOut(
        label=citation.label,
        href=citation.href,
        state=citation.state,
        reason=citation.reason,
        source=_source_out(citation.source) if citation.source is not None else None,
        label_mismatch=citation.label_mismatch,
        number=citation.number,
    )


@router.get(
    "",
    response={200: list[ThreadOut], 422: ErrorOut, **_AUTH_ERRORS},
    summary="List your threads",
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
    return [_thread_out(t, t.message_count) for t in page.threads]


@router.post("", response={201: ThreadOut, **_AUTH_ERRORS, **_BODY_ERRORS}, summary="Create a thread")
def create_thread(request: HttpRequest, payload: ThreadIn) -> Status[ThreadOut]:
    """Counts against your write limit (``RATE_LIMIT_WRITE``, 429 with ``Retry-After``)."""
    rate_limit(request, "write")
    thread = thread_create(owner=request_user(request), title=payload.title, agent_name=payload.agent_name)
    return Status(201, _thread_out(thread, 0))


@router.post(
    "/import",
    response={201: ThreadOut, **_AUTH_ERRORS, **_BODY_ERRORS},
    summary="Import a thread from LangChain, LangGraph, LangServe, OpenAI or Anthropic messages",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _import_body_schema()}},
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
    return Status(201, _thread_out(thread, thread.message_count))


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
    """The thread with all its messages, in order. Its owner and its review queues' reviewers
    and lead read it; anyone else's request answers 404."""
    thread = thread_get_for_review_reader(reader=request_user(request), thread_id=thread_id)
    messages = thread_messages(thread=thread)
    out = _thread_out(thread, len(messages))
    return ThreadDetailOut(**out.model_dump(), messages=[_message_out(m) for m in messages])


@router.delete(
    "/{thread_id}",
    response={204: None, **_THREAD_ERRORS, 409: ErrorOut},
    summary="Delete a thread",
)
def delete_thread(request: HttpRequest, thread_id: UUID, query: Query[DeleteQuery]) -> Status[None]:
    """Delete your thread and every message in it. A thread holding reviewers' verdicts is
    deleted only with ``confirm_verdicts`` set to how many it holds (409 ``verdicts_present``
    naming the count otherwise, nothing deleted). Its reviewers get 403; anyone else's
    thread answers 404 and is left as it is."""
    thread_delete_counted(
        owner=request_user(request), thread_id=thread_id, confirm_verdicts=query.confirm_verdicts
    )
    return Status(204, None)


@router.post(
    "/{thread_id}/messages",
    response={201: MessageOut, **_THREAD_ERRORS, **_BODY_ERRORS},
    summary="Append a message",
)
def append_message(request: HttpRequest, thread_id: UUID, payload: MessageIn) -> Status[MessageOut]:
    """Append your own message. Reserved evidence keys in ``artifact`` are stripped.

    A human, AI or system message holds at most 40,000 characters (422 beyond).

    Evidence is only ever written by server-side retrieval (``POST /api/knowledge/search``).
    Appends count against your write limit (``RATE_LIMIT_WRITE``, 429 with ``Retry-After``).
    """
    rate_limit(request, "write")
    thread = thread_get_for_writer(user=request_user(request), thread_id=thread_id)
    message = message_append(
        thread=thread,
        type=payload.type,
        content=str(payload.content),
        name=payload.name,
        tool_call_id=payload.tool_call_id,
        artifact=payload.artifact,
        status=payload.status,
    )
    return Status(201, _message_out(message))


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
    Its owner and its review queues' reviewers and lead read it; anyone else 404.
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
                citations=[_citation_out(c) for c in entry.citations],
            )
            for entry in report
        ],
    )


@router.get(
    "/{thread_id}/export",
    response={**_THREAD_ERRORS},
    summary="Export a thread",
    openapi_extra={
        "responses": {
            "200": {
                "description": "The thread as JSON (messages as stored) or Markdown (numbered references).",
                "content": {
                    "application/json": {"schema": {"type": "object"}},
                    "text/markdown": {"schema": {"type": "string"}},
                },
            }
        }
    },
)
def export_thread(request: HttpRequest, thread_id: UUID, query: Query[ExportQuery]) -> HttpResponse:
    """``format=json`` gives the messages exactly as stored (also a valid import body);
    ``format=markdown`` turns resolved citations into numbered references with their evidence;
    for a reviewer its header also says "judged n of m" and the verdict counts they may see.
    Its owner and its review queues' reviewers and lead read it; anyone else 404."""
    access = thread_access(user=request_user(request), thread_id=thread_id)
    export = thread_export(thread=access.thread, format=query.format)
    content = (
        export_with_review(export.content, access=access) if query.format == "markdown" else export.content
    )
    response = HttpResponse(content, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response
