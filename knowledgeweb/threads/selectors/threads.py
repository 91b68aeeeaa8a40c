"""Finding threads and messages: the owner's list and its pages, and who may read which thread."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, Q, QuerySet

from knowledgeweb.threads.errors import ThreadCursorError, ThreadNotFound
from knowledgeweb.threads.models import Message, MessageRender, Thread

#: microsecond, so a page boundary never drops or repeats a thread.
THREAD_ORDER = ("-updated_at", "-id")
#: Longest search accepted; longer text is cut (a search box, not a document).
MAX_SEARCH_CHARS = 200


def thread_list_for_owner(*, owner: User | AnonymousUser, search: str = "") -> QuerySet[Thread]:
    """The owner's threads, most recently updated first, optionally matching ``search``.

    The order is explicit (``THREAD_ORDER``), never left to the model's default,
    which any later ``annotate``/``values`` could silently drop. ``search`` matches
    a case-insensitive substring of the title or of any human, AI or system
    message's text, the same way on SQLite and PostgreSQL (docs/decisions/0036-the-reader-honest-words-one-numbering.md).
    Rows carry their stored tallies (``message_count``, ``citations_*``): nothing
    here aggregates or renders messages.
    """
    if not owner.is_authenticated:
        return Thread.objects.none()
    threads = Thread.objects.filter(owner=owner)
    needle = " ".join(search.split())[:MAX_SEARCH_CHARS]
    if "\x00" in needle:
        # No stored title or message holds NUL (writes refuse it), and PostgreSQL refuses it in
        # a query: nothing can match.
        return Thread.objects.none()
    if needle:
        # The words a reader sees, stored with each render (never link targets or markup;
        # tool output is stored without any).
        said = MessageRender.objects.filter(thread=OuterRef("pk"), text__icontains=needle)
        threads = threads.filter(Q(title__icontains=needle) | Exists(said))
    return threads.order_by(*THREAD_ORDER)


def thread_texts_matching(*, thread_ids: Collection[UUID], search: str) -> dict[UUID, str]:
    """For each of these threads, the first message text (as a reader sees it) holding ``search``
    (case-insensitive, as the list's search): what a snippet of the match is cut from."""
    needle = " ".join(search.split())[:MAX_SEARCH_CHARS]
    if not needle or "\x00" in needle or not thread_ids:
        return {}
    rows = (
        MessageRender.objects.filter(thread_id__in=list(thread_ids), text__icontains=needle)
        .order_by("thread_id", "seq")
        .values_list("thread_id", "text")
    )
    found: dict[UUID, str] = {}
    for thread_id, text in rows.iterator():
        found.setdefault(thread_id, text)
    return found


@dataclass(frozen=True, slots=True)
class ThreadPage:
    """One page of the list and the cursor of the next (None on the last page)."""

    threads: list[Thread]
    next_cursor: str | None


#: A cursor: microseconds since the Unix epoch (UTC), a dash, the thread id in hex. Every
#: string of this form names a position in ``THREAD_ORDER``, so every one is accepted.
CURSOR_PATTERN = r"^[0-9]{1,20}-[0-9a-f]{32}$"
_CURSOR = re.compile(CURSOR_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LAST_MICROSECOND = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)


def thread_cursor(thread: Thread) -> str:
    """The cursor naming the position just after ``thread`` in ``THREAD_ORDER``."""
    micros = (thread.updated_at - _EPOCH) // timedelta(microseconds=1)
    return f"{micros}-{thread.id.hex}"


def _cursor_position(cursor: str) -> tuple[datetime, UUID]:
    if not _CURSOR.fullmatch(cursor):
        raise ThreadCursorError("The cursor is not one this API issued. Start again without a cursor.")
    micros, key = cursor.split("-")
    # Past the last representable instant is still a position: after every thread.
    updated = _EPOCH + timedelta(microseconds=min(int(micros), _LAST_MICROSECOND))
    return updated, UUID(hex=key)


def thread_page_for_owner(
    *, owner: User | AnonymousUser, limit: int, cursor: str = "", search: str = ""
) -> ThreadPage:
    """``limit`` threads in list order, starting after ``cursor`` (keyset pagination).

    A keyset, not an offset: a thread updated while a client pages moves to the
    front instead of shifting every later page by one.
    """
    threads = thread_list_for_owner(owner=owner, search=search)
    if cursor:
        updated, key = _cursor_position(cursor)
        threads = threads.filter(Q(updated_at__lt=updated) | Q(updated_at=updated, id__lt=key))
    rows = list(threads[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return ThreadPage(threads=rows, next_cursor=thread_cursor(rows[-1]) if more and rows else None)


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


#: The permission that lets a staff user read any thread in the viewer (never write to it).
READ_ANY_THREAD = "threads.view_thread"
#: The admin shows a thread's page to whoever holds either (Django's view-or-change rule).
_ADMIN_THREAD_READ = (READ_ANY_THREAD, "threads.change_thread")


def reads_any_thread(user: User | AnonymousUser) -> bool:
    """Whether ``user`` may read every thread in the viewer: staff holding ``threads.view_thread``
    (or ``change_thread``, which lets the admin show the same page; superusers hold every
    permission). The thread admin already shows them every message's content and artifact,
    so the viewer shows them nothing new (docs/decisions/0043-admins-read-any-thread-in-the-viewer.md)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    return any(user.has_perm(permission) for permission in _ADMIN_THREAD_READ)


def thread_get_for_reader(*, reader: User | AnonymousUser, thread_id: UUID | str) -> Thread:
    """The thread, if ``reader`` owns it or ``reads_any_thread``; otherwise ``ThreadNotFound``,
    the same for a missing thread and a malformed id. Only the viewer's read pages use it:
    every write takes ``thread_get_for_owner``."""
    if not reads_any_thread(reader):
        return thread_get_for_owner(owner=reader, thread_id=thread_id)
    try:
        key = thread_id if isinstance(thread_id, UUID) else UUID(str(thread_id))
    except ValueError as exc:
        raise ThreadNotFound("Thread not found.") from exc
    thread = Thread.objects.filter(pk=key).select_related("owner").first()
    if thread is None:
        raise ThreadNotFound("Thread not found.")
    return thread


def message_get_for_reader(*, reader: User | AnonymousUser, message_id: UUID) -> Message:
    """The message, if ``reader`` may read its thread (``thread_get_for_reader``'s rule)."""
    if not reads_any_thread(reader):
        return message_get_for_owner(owner=reader, message_id=message_id)
    message = Message.objects.filter(pk=message_id).first()
    if message is None:
        raise ThreadNotFound("Message not found.")
    return message


def message_get_for_owner(*, owner: User | AnonymousUser, message_id: UUID) -> Message:
    """The message, if ``owner`` owns its thread; otherwise ``ThreadNotFound``, as for a thread."""
    if not owner.is_authenticated:
        raise ThreadNotFound("Message not found.")
    message = Message.objects.filter(pk=message_id, thread__owner=owner).first()
    if message is None:
        raise ThreadNotFound("Message not found.")
    return message
