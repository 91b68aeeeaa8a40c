"""The lead's final verdict on a disputed item of their queue (append-only; the latest counts)."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q

from knowledgeweb.review.items import ItemKey, is_disputed, threads_items
from knowledgeweb.review.models import (
    NOTE_MAX_CHARS,
    AnswerVerdict,
    CitationVerdict,
    FinalVerdict,
    ItemKind,
    ReviewQueue,
)
from knowledgeweb.review.queue_errors import FinalVerdictInvalid, NotQueueLead, QueueNotFound
from knowledgeweb.review.queueing import queue_threads
from knowledgeweb.threads.models import Message


def queue_get_for_reviewer(*, user: User | AnonymousUser, queue_id: int) -> ReviewQueue:
    """The queue, when ``user`` reviews in it or leads it; else ``QueueNotFound`` (404)."""
    if not user.is_authenticated:
        raise QueueNotFound("Review queue not found.")
    queue = ReviewQueue.objects.filter(Q(reviewers=user) | Q(lead=user), pk=queue_id).distinct().first()
    if queue is None:
        raise QueueNotFound("Review queue not found.")
    return queue


def allowed_values(kind: str) -> list[str]:
    return list(CitationVerdict.values if kind == ItemKind.CITATION else AnswerVerdict.values)


def final_verdict_record(
    *,
    queue: ReviewQueue,
    lead: User | AnonymousUser,
    message_id: UUID,
    kind: str,
    position: int,
    value: str,
    note: str = "",
) -> FinalVerdict:
    """Record the lead's final verdict on a disputed item of ``queue``; nothing is written
    unless the user is the lead, the item is in the queue and disputed, and the value fits."""
    if queue.lead_id is None or queue.lead_id != lead.pk:
        raise NotQueueLead("Only the queue's lead records a final verdict.")
    if kind not in ItemKind.values:
        raise FinalVerdictInvalid(f"Unknown item kind {kind!r}; allowed: {', '.join(ItemKind.values)}.")
    if value not in allowed_values(kind):
        raise FinalVerdictInvalid(
            f"Unknown {kind} verdict {value!r}; allowed: {', '.join(allowed_values(kind))}."
        )
    note = note.strip()
    if len(note) > NOTE_MAX_CHARS:
        raise FinalVerdictInvalid(f"The note is longer than {NOTE_MAX_CHARS} characters.")
    message = (
        Message.objects.filter(pk=message_id, thread__in=queue_threads(queue)).only("id", "thread_id").first()
    )
    if message is None:
        raise FinalVerdictInvalid(f"Message {message_id} is not in this queue.")
    key = ItemKey(message.id, kind, position)
    judged = threads_items([message.thread_id])[message.thread_id]
    item = next((i for i in judged.items if i.key == key), None)
    if item is None:
        raise FinalVerdictInvalid(f"No {kind} {position} in message {message_id}.")
    if not is_disputed(judged.judged_by(key)):
        raise FinalVerdictInvalid(f"The {kind} {position} of message {message_id} is not disputed.")
    final = FinalVerdict(
        queue=queue,
        thread_id=message.thread_id,
        message=message,
        kind=kind,
        position=position,
        href=item.href,
        label=item.label,
        value=value,
        note=note,
        lead=lead,
    )
    final.save()
    return final
