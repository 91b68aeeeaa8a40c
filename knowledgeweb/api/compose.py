"""Follow-up questions for agents: ``POST /api/threads/{id}/ask`` (issue 13).

The same turn as the thread page's follow-up form, run to the end: a new search
(a new tool message) and a new answer, composed by the extractive default or an
answer model the caller may use. The answer is stored exactly as written and the
response reports how many of its citations resolve and why the others do not.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.http import HttpRequest
from ninja import Router, Status

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.api.auth import rate_limit_key, request_user
from knowledgeweb.api.schemas.ask import AskIn, AskOut
from knowledgeweb.api.schemas.errors import ErrorOut
from knowledgeweb.composer.services import turn_prepare, turn_run
from knowledgeweb.review.access import thread_get_for_writer

router = Router(tags=["threads"])


@router.post(
    "/{thread_id}/ask",
    response={
        200: AskOut,
        400: ErrorOut,
        401: ErrorOut,
        413: ErrorOut,
        403: ErrorOut,
        404: ErrorOut,
        422: ErrorOut,
        424: ErrorOut,
        429: ErrorOut,
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
