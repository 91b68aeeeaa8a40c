"""Read side of the threads app.

``thread_renders`` (the stored renders, refreshed when stale) is re-exported here for readers.
"""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from knowledgeweb.threads.citations import MessageCitations, messages_citations
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Message, Thread
from knowledgeweb.threads.services.renders import thread_renders

__all__ = [
    "message_get_for_owner",
    "thread_citations",
    "thread_get_for_owner",
    "thread_list_for_owner",
    "thread_messages",
    "thread_outline",
    "thread_renders",
]


def thread_list_for_owner(*, owner: User | AnonymousUser) -> QuerySet[Thread]:
    """The owner's threads, most recently updated first (``message_count`` is kept by the writers)."""
    if not owner.is_authenticated:
        return Thread.objects.none()
    return Thread.objects.filter(owner=owner)


def thread_get_for_owner(*, owner: User | AnonymousUser, thread_id: UUID | str) -> Thread:
    """The thread, if ``owner`` owns it.

    A missing thread, another user's thread and a malformed id all raise the
    same ``ThreadNotFound``, so ids never leak.
    """
    if not owner.is_authenticated:
        raise ThreadNotFound("Thread not found.")
    try:
        key = thread_id if isinstance(thread_id, UUID) else UUID(str(thread_id))
    except ValueError as exc:
        raise ThreadNotFound("Thread not found.") from exc
    thread = Thread.objects.filter(pk=key, owner=owner).first()
    if thread is None:
        raise ThreadNotFound("Thread not found.")
    return thread


def message_get_for_owner(*, owner: User | AnonymousUser, message_id: UUID) -> Message:
    """The message, if ``owner`` owns its thread; otherwise ``ThreadNotFound``, as for a thread."""
    if not owner.is_authenticated:
        raise ThreadNotFound("Message not found.")
    message = Message.objects.filter(pk=message_id, thread__owner=owner).first()
    if message is None:
        raise ThreadNotFound("Message not found.")
    return message


def thread_outline(*, thread: Thread) -> list[Message]:
    """All messages of the thread, in order, with only what a page needs around their stored renders
    (id, seq, type, status, name): never their content or artifact."""
    return list(
        Message.objects.filter(thread=thread)
        .order_by("seq")
        .only("id", "thread_id", "seq", "type", "status", "name")
    )


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
    as stored at write (stale renders are brought up to date first)."""
    messages = thread_messages(thread=thread, with_artifacts=False)
    return messages_citations(messages, thread_renders(thread=thread, messages=messages))
