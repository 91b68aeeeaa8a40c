"""The follow-up question's schemas (``POST /api/threads/{id}/ask``, ``api/compose.py``)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from ninja import Field, Schema

from knowledgeweb.answers.services import MAX_QUESTION_CHARS
from knowledgeweb.api.schemas.text import NonBlankText, StorableInput, Text
from knowledgeweb.composer.turn import EXTRACTIVE


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
        description="Citations that do not resolve, by reason: no_such_evidence, evidence_only_later, "
        "evidence_unsigned, malformed."
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
