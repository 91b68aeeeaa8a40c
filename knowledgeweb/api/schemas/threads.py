"""What the thread endpoints answer: the response schemas, and the functions that fill them
from the store (``api/threads.py`` holds the routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from ninja import Field, Schema

from knowledgeweb.api.schemas.text import StorableInput, Text
from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import ReasonCode, ResolvedCitation, reason_code
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.selectors import CURSOR_PATTERN, MAX_SEARCH_CHARS

MessageTypeName = Literal["human", "ai", "tool", "system"]


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
    reason_code: ReasonCode = Field(
        "",
        description="Why the citation has no source, as a stable code (empty when resolved); "
        "evidence_unsigned: its evidence was imported without a valid receipt.",
    )
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


def thread_out(thread: Thread, message_count: int) -> ThreadOut:
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


def message_out(message: Message) -> MessageOut:
    return MessageOut.model_validate(message, from_attributes=True)


def source_out(source: Evidence) -> SourceOut:
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


def citation_out(citation: ResolvedCitation) -> CitationOut:
    return CitationOut(
        label=citation.label,
        href=citation.href,
        state=citation.state,
        reason=citation.reason,
        reason_code=reason_code(citation.state, citation.reason),
        source=source_out(citation.source) if citation.source is not None else None,
        label_mismatch=citation.label_mismatch,
        number=citation.number,
    )


class ThreadIn(StorableInput):
    title: Text = Field(min_length=1, max_length=200)
    agent_name: Text = Field(default="", max_length=100)


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


class ExportQuery(Schema):
    """``GET /{thread_id}/export``'s ``format``, read by the operation itself (not declared)."""

    format: Literal["json", "markdown"] = "json"


class DeleteQuery(Schema):
    """``DELETE /api/threads/{id}``'s confirmation that reviewers' verdicts go with the thread."""

    confirm_verdicts: int | None = Field(
        None,
        ge=0,
        description="How many reviewers' verdicts the thread holds (409 names it): they go with it.",
    )
