"""Read side of the threads app."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from knowledgeweb.threads.citations import MessageCitations, messages_citations
from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import Message, Thread


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
    """Each AI message of the thread with its citations resolved against the evidence before it."""
    return messages_citations(thread_messages(thread=thread))
