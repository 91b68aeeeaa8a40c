"""Answering a question in a new thread: retrieval -> composer -> the AI message.

The search runs first, outside any transaction: a refusal or a provider failure
writes nothing, and a slow provider never holds a database lock (on SQLite a
write transaction locks the whole database). Then the thread, the question, the
tool message (recorded by the retrieval service, the only writer of evidence)
and the answer are written together in one short transaction, or not at all.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from knowledgeweb.answers.errors import AnswerError
from knowledgeweb.answers.protocol import AnswerComposer
from knowledgeweb.retrieval import (
    RetrievalError,
    RetrievalInvalidError,
    RetrievalRefusedError,
    retrieval_record,
    retrieval_search,
)
from knowledgeweb.retrieval.service import TOOL_OUTPUT_LIMIT
from knowledgeweb.threads.errors import QuotaExceededError
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.quotas import quota_precheck
from knowledgeweb.threads.services import message_append, thread_create

TOOL = "knowledge_search"
MAX_QUESTION_CHARS = 2000
_MAX_TITLE = 200


def question_answer(
    *,
    user: User,
    question: str,
    binding_name: str,
    composer: AnswerComposer,
    title: str | None = None,
    agent_name: str = "",
    output_limit: int = TOOL_OUTPUT_LIMIT,
) -> Thread:
    """A new thread holding the question, the retrieval's tool message and the composed answer.

    Raises ``AnswerError`` (and writes nothing) for an empty or over-long question,
    a binding the user may not use, a provider failure, or a quota the thread would pass.
    """
    question = question.strip()
    if not question:
        raise AnswerError("Enter a question.", kind="question")
    if len(question) > MAX_QUESTION_CHARS:
        raise AnswerError(f"The question is longer than {MAX_QUESTION_CHARS} characters.", kind="question")
    try:
        # A user at a quota is refused before the provider is asked anything.
        quota_precheck(owner_id=user.pk, new_thread=True)
    except QuotaExceededError as exc:
        raise AnswerError(str(exc), kind="quota") from exc
    try:
        outcome = retrieval_search(
            user=user,
            tool=TOOL,
            query=question,
            agent_name=agent_name,
            binding_name=binding_name,
            output_limit=output_limit,
        )
    except (RetrievalInvalidError, RetrievalRefusedError) as exc:
        raise AnswerError(str(exc), kind="binding") from exc
    except RetrievalError as exc:
        raise AnswerError(str(exc), kind="provider") from exc
    answer = composer.compose(
        question=question, tool_name=TOOL, content=outcome.content, artifact=outcome.artifact
    )
    try:
        with transaction.atomic():
            thread = thread_create(owner=user, title=title or _title(question), agent_name=agent_name)
            message_append(thread=thread, type="human", content=question)
            retrieval_record(thread=thread, outcome=outcome)
            message_append(thread=thread, type="ai", content=answer)
    except QuotaExceededError as exc:
        raise AnswerError(str(exc), kind="quota") from exc
    return thread


def _title(question: str) -> str:
    title = " ".join(question.split())
    if len(title) <= _MAX_TITLE:
        return title
    return title[: _MAX_TITLE - 1].rsplit(" ", 1)[0] + "…"
