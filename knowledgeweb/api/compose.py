"""Follow-up questions for agents: ``POST /api/threads/{id}/ask`` (issue 13).

The same turn as the thread page's follow-up form, run to the end: a new search
(a new tool message) and a new answer, composed by the extractive default or an
answer model the caller may use. The answer is stored exactly as written and the
response reports how many of its citations resolve and why the others do not.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.services import MAX_QUESTION_CHARS
from knowledgeweb.api.auth import rate_limit_key, request_user
from knowledgeweb.api.text import NonBlankText, StorableInput, Text
from knowledgeweb.composer.services import EXTRACTIVE, turn_prepare, turn_run
from knowledgeweb.review.access import thread_get_for_writer

router = Router(tags=["threads"])


class AskIn(StorableInput):
    question: NonBlankText = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    binding: Text = Field(min_length=1, max_length=100, description="The knowledge binding to search with.")
    answer_model: Text = Field(
        default=EXTRACTIVE,
        min_length=1,
        max_length=100,
        description="'extractive' (quoted sentences, the default) or the name of an answer model you may use.",
    )
    agent_name: Text = Field(default="", max_length=100)


class CitationCountsOut(Schema):
    total: int
    resolved: int
    unresolved: int
    malformed: int
    by_reason: dict[str, int] = Field(
        description="Citations that do not resolve, by reason: no_such_evidence, evidence_only_later, malformed."
    )


class AskOut(Schema):
    thread_id: UUID
    message_id: UUID = Field(description="The assistant message written for this turn.")
    status: Literal["answered", "failed"] = Field(
        description="'failed': the answer model delivered no complete answer; the turn is recorded with an "
        "error message saying why (code, detail) and no partial answer."
    )
    composer: str
    code: str = Field(
        description="'answered', or why not: model_timeout, model_auth, model_not_found, model_rate_limited, "
        "model_server_error, model_rejected, model_unreachable, model_redirect_refused, model_too_large, "
        "model_bad_response, model_stream_truncated, model_length_limit, model_empty_answer, context_over_budget, "
        "model_answer_too_long, model_bad_text, model_answer_over_quota."
    )
    detail: str
    citations: CitationCountsOut
    context: dict[str, Any] = Field(
        description="What was sent: characters of evidence against the budget, sources sent and dropped "
        "(oldest first), conversation turns sent and dropped."
    )


class AskErrorOut(Schema):
    detail: str
    code: str = Field(
        default="",
        description="ask_binding, ask_question, ask_provider or ask_quota when the turn was refused "
        "(absent for authentication and request-validation errors).",
    )


@router.post(
    "/{thread_id}/ask",
    response={
        200: AskOut,
        400: AskErrorOut,
        401: AskErrorOut,
        413: AskErrorOut,
        403: AskErrorOut,
        404: AskErrorOut,
        422: AskErrorOut,
        424: AskErrorOut,
        429: AskErrorOut,
    },
    summary="Ask a follow-up question in a thread",
)
def thread_ask(request: HttpRequest, thread_id: UUID, payload: AskIn) -> Any:
    """A new search and a new answer appended to your thread.

    Refusals (403 binding or answer model unavailable, 413 a thread or user quota,
    422 question, 424 search failed, 429 past ``RATE_LIMIT_ASK``) write nothing. Whatever the
    model does after the search (fails, stalls, writes past 40,000 characters or text that
    cannot be stored) is a recorded outcome: 200 with ``status: "failed"`` and the reason in ``code``.
    """
    user = request_user(request)
    thread = thread_get_for_writer(user=user, thread_id=thread_id)
    try:
        # The turn service counts the question against the caller's limit (RATE_LIMIT_ASK, per
        # token): past it ``RateLimited`` is the API's 429, and nothing runs.
        prepared = turn_prepare(
            user=user,
            question=payload.question,
            binding_name=payload.binding,
            rate_key=rate_limit_key(request),
            composer=payload.answer_model,
            thread=thread,
            agent_name=payload.agent_name,
        )
    except AnswerError as exc:  # its status and code are the same on every surface (knowledgeweb.errors)
        return Status(exc.status, {"detail": exc.message, "code": exc.code})
    try:
        result = turn_run(prepared)
    except AnswerError as exc:  # a quota reached at write: nothing written
        return Status(exc.status, {"detail": exc.message, "code": exc.code})
    return {
        "thread_id": result.thread_id,
        "message_id": result.message_id,
        "status": result.status,
        "composer": result.composer,
        "code": result.code,
        "detail": result.detail,
        "citations": result.citations.as_dict(),
        "context": result.context,
    }
