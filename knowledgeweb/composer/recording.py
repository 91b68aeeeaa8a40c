"""Writing a turn: the question, the tool message and the answer (or the failure) in one
transaction, and the answer's citation counts (``composer.services.turn_events`` calls it)."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from django.db import transaction

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.composer.errors import ModelError, ModelFault
from knowledgeweb.composer.turn import EXTRACTIVE, CitationCounts, PreparedTurn, TurnResult
from knowledgeweb.retrieval import retrieval_record
from knowledgeweb.threads.errors import MessageInvalidError, QuotaExceededError
from knowledgeweb.threads.evidence import reason_code
from knowledgeweb.threads.models import Message, MessageStatus, Thread
from knowledgeweb.threads.selectors import thread_citations
from knowledgeweb.threads.services import message_append, thread_create

logger = logging.getLogger(__name__)


def composer_name(prepared: PreparedTurn) -> str:
    return prepared.model.name if prepared.model is not None else EXTRACTIVE


def composer_label(prepared: PreparedTurn) -> str:
    return prepared.server.label if prepared.server is not None else "The extractive composer"


def turn_record(prepared: PreparedTurn, answer: str, fault: ModelError | None) -> TurnResult:
    """Write the turn; an answer the store or a quota refuses is recorded as a failure instead.

    Only when not even the failure fits (a quota) is nothing written: ``AnswerError``.
    """
    try:
        return _write(prepared, answer, fault)
    except QuotaExceededError as exc:
        if fault is not None:
            raise AnswerError(str(exc), kind="quota") from exc
        fault = ModelError(
            ModelFault.ANSWER_OVER_QUOTA,
            f"The answer ({len(answer):,} characters) was not stored: {exc}",
        )
    except MessageInvalidError as exc:
        if fault is not None:
            raise
        fault = ModelError(ModelFault.BAD_TEXT, f"The answer was not stored: {exc}")
    logger.warning(
        "Answer of %s refused at write (%s): %s", composer_name(prepared), fault.code, fault.message
    )
    try:
        return _write(prepared, answer, fault)
    except QuotaExceededError as exc:
        raise AnswerError(str(exc), kind="quota") from exc


def _write(prepared: PreparedTurn, answer: str, fault: ModelError | None) -> TurnResult:
    model = prepared.model
    meta: dict[str, Any] = {
        "name": composer_name(prepared),
        "outcome": "answered" if fault is None else fault.code,
    }
    context: dict[str, Any] = {}
    if model is not None:
        meta["model"] = model.model
        if prepared.prompt is not None:
            context = prepared.prompt.metadata(model.context_budget)
            meta["context"] = context
    if fault is not None:
        meta["partial_chars"] = len(answer)
    # Admitted under the quota locks at write: past a quota, nothing of this attempt is written.
    with transaction.atomic():
        thread = prepared.thread or thread_create(
            owner=prepared.user, title=prepared.title, agent_name=prepared.agent_name
        )
        message_append(thread=thread, type="human", content=prepared.question)
        retrieval_record(thread=thread, outcome=prepared.outcome)
        message = message_append(
            thread=thread,
            type="ai",
            # The answer exactly as written; a failure is recorded as what it is, never as an answer.
            content=answer if fault is None else fault.message,
            artifact={"composer": meta},
            status=MessageStatus.SUCCESS if fault is None else MessageStatus.ERROR,
        )
    counts = answer_citations(thread=thread, message=message) if fault is None else _NO_CITATIONS
    return TurnResult(
        thread_id=thread.id,
        message_id=message.id,
        status="answered" if fault is None else "failed",
        composer=meta["name"],
        code=meta["outcome"],
        detail="" if fault is None else fault.message,
        citations=counts,
        context=context,
    )


_NO_CITATIONS = CitationCounts(total=0, resolved=0, unresolved=0, malformed=0, by_reason={})


def answer_citations(*, thread: Thread, message: Message) -> CitationCounts:
    """How many of one answer's citations resolve against the thread's evidence, and why the others do not."""
    # The report stored with the message when it was written (render at write): no parse here.
    for entry in thread_citations(thread=thread):
        if entry.message.id == message.id:
            states = Counter(c.state for c in entry.citations)
            # A malformed citation's reason says how it is malformed; its code is the state's.
            reasons = Counter(
                reason_code(c.state, c.reason) for c in entry.citations if c.state != "resolved"
            )
            return CitationCounts(
                total=len(entry.citations),
                resolved=states["resolved"],
                unresolved=states["unresolved"],
                malformed=states["malformed"],
                by_reason=dict(sorted(reasons.items())),
            )
    return _NO_CITATIONS
