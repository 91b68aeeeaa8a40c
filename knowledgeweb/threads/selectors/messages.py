"""A thread's messages as a page reads them: in order, its outline, its questions and answers, its
sources' numbers and citations (from the stored renders)."""

from __future__ import annotations

from collections.abc import Collection
from uuid import UUID

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import evidence_from_json
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.reports import MessageCitations, messages_citations
from knowledgeweb.threads.selectors.renders import thread_renders

_OUTLINE = ("id", "thread_id", "seq", "type", "status", "name", "tool_call_id", "tool_calls", "parts")


def thread_outline(*, thread: Thread) -> list[Message]:
    """All messages of the thread, in order, with what a page needs around their stored renders (the
    calls and parts beside an answer, what an import found of evidence): never content or artifact."""
    return list(Message.objects.filter(thread=thread).order_by("seq").only(*_OUTLINE, "evidence_check"))


def renders_evidence(*, message_ids: Collection[UUID]) -> dict[str, Evidence]:
    """The validated sources stored with these tool messages' renders, by handle (one query).

    A page reads only the few tool messages its answers cite from; the first record of a
    handle wins, as it does when the thread is read.
    """
    found: dict[str, Evidence] = {}
    if not message_ids:
        return found
    rows = MessageRender.objects.filter(message_id__in=list(message_ids)).order_by("seq")
    for records in rows.values_list("sources", flat=True):
        for record in records:
            found.setdefault(record["handle"], evidence_from_json(record))
    return found


def thread_source_numbers(*, thread: Thread) -> dict[str, int]:
    """The number of each source the thread's answers cite, in order of first citation: the
    numbers its page shows, fixed when each answer was written (``Thread.source_numbers``)."""
    stored = Thread.objects.filter(pk=thread.pk).values_list("source_numbers", flat=True).first()
    return dict(stored or {})


def thread_answer_number(*, thread: Thread, message_hex: str) -> int | None:
    """The position among the thread's answers of the AI message whose id is ``message_hex``
    (its "answer N"), or None when the thread holds no such answer."""
    try:
        key = UUID(hex=message_hex)
    except ValueError:
        return None
    seq = (
        Message.objects.filter(pk=key, thread=thread, type=MessageType.AI)
        .values_list("seq", flat=True)
        .first()
    )
    if seq is None:
        return None
    return Message.objects.filter(thread=thread, type=MessageType.AI, seq__lte=seq).count()


def thread_questions(*, thread: Thread) -> dict[UUID, str]:
    """The text of the thread's human messages by id: what a page heads its turns with.

    One query; questions are prose, bounded like every human message, unlike tool output.
    """
    rows = Message.objects.filter(thread=thread, type=MessageType.HUMAN).values_list("id", "content")
    return dict(rows)


def thread_messages(*, thread: Thread, with_artifacts: bool = True) -> list[Message]:
    """All messages of the thread, in order.

    ``with_artifacts=False`` leaves artifacts, the largest column, unloaded: a page
    whose evidence is already memoized never reads them, and ``messages_sources``
    loads the ones it must validate in a single query.
    """
    messages = Message.objects.filter(thread=thread).order_by("seq")
    if not with_artifacts:
        messages = messages.defer("artifact")
    return list(messages)


def thread_citations(*, thread: Thread) -> list[MessageCitations]:
    """Each AI message of the thread with its citations resolved against the evidence before it,
    as stored (``thread_renders``)."""
    messages = thread_messages(thread=thread, with_artifacts=False)
    # ``thread.source_numbers`` is as read with the thread, or as the last append on this
    # instance left it; a re-render sets it again.
    renders = thread_renders(thread=thread, messages=messages)
    return messages_citations(messages, renders, numbers=thread.source_numbers)
