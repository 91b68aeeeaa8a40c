"""Read side of the threads app. Selectors only read: nothing here writes to the database.

A read serves each message's render as stored (``thread_renders``); replacing a
render is the renders service's work (``threads.services.renders``), never a read's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.errors import ThreadCursorError, ThreadNotFound
from knowledgeweb.threads.evidence import evidence_from_json, evidence_to_json, messages_sources
from knowledgeweb.threads.evidence import unsigned_handles as _unsigned
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.message import MessageRendering, render_message
from knowledgeweb.threads.reports import MessageCitations, messages_citations
from knowledgeweb.threads.windows import problem_count, tool_brief

__all__ = [
    "message_get_for_owner",
    "message_get_for_reader",
    "render_row",
    "renders_compute",
    "renders_evidence",
    "thread_answer_number",
    "thread_citations",
    "thread_get_for_owner",
    "thread_get_for_reader",
    "thread_list_for_owner",
    "thread_messages",
    "thread_outline",
    "thread_page_for_owner",
    "thread_questions",
    "thread_renders",
    "thread_texts_matching",
]

#: The list's one order. ``id`` breaks ties between threads updated in the same
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


# --- Stored renders -------------------------------------------------------------------------------


def thread_renders(
    *, thread: Thread, messages: Sequence[Message], fields: Sequence[str] | None = None
) -> dict[UUID, MessageRender]:
    """Every message's render, by message id, as stored, whichever renderer version made it.

    ``messages`` are all the thread's messages in order (any column but the id, seq and
    type may be deferred); ``fields`` limits the columns read. A message with no stored
    render, or one below ``MIN_SAFE_RENDERER_VERSION``, is rendered in memory for this
    read (in ``seq`` order, against the evidence before it) and never stored: replacing
    renders is ``thread_rerender``'s work.
    """
    query = MessageRender.objects.filter(thread=thread)
    if fields:
        query = query.only(*dict.fromkeys([*fields, "message_id", "renderer_version"]))
    rows = {row.message_id: row for row in query}
    if not any(_unservable(rows.get(m.id)) for m in messages):
        return rows
    if fields:
        rows = {row.message_id: row for row in MessageRender.objects.filter(thread=thread)}
    return renders_compute(messages=messages, rows=rows, redo=_unservable).rows


def _unservable(row: MessageRender | None) -> bool:
    return row is None or not version.render_is_servable(row.renderer_version)


@dataclass(frozen=True, slots=True)
class ComputedRenders:
    """Every message's render by id, and the ones just computed (unsaved), in ``seq`` order."""

    rows: dict[UUID, MessageRender]
    fresh: list[MessageRender]


def renders_compute(
    *,
    messages: Sequence[Message],
    rows: dict[UUID, MessageRender],
    redo: Callable[[MessageRender | None], bool],
) -> ComputedRenders:
    """Render again, in memory, each of ``messages`` whose stored row ``redo`` refuses.

    ``messages`` are a thread's first messages in order (outlines will do); ``rows`` their
    stored renders (not changed). Each answer resolves against the evidence before it:
    the stored evidence of a kept tool message, the validation (memoized) of a redone one.
    Nothing is written; the renders service stores ``fresh`` when it means to.
    """
    redone = [m.id for m in messages if redo(rows.get(m.id))]
    # The redone messages whole (a page reads only their outline), in one query.
    whole = {m.id: m for m in Message.objects.filter(pk__in=redone).defer("artifact")}
    validated = messages_sources([m for m in whole.values() if m.type == MessageType.TOOL])
    available, unsigned = dict[str, Evidence](), set[str]()
    result = dict(rows)
    fresh: list[MessageRender] = []
    for outline in messages:
        message = whole.get(outline.id, outline)
        row = rows.get(message.id)
        own: dict[str, Evidence] = {}
        if message.id in whole:
            own = validated.get(message.id, {})
            row = render_row(message, render_message(message, available, own, unsigned))
            result[message.id] = row
            fresh.append(row)
        elif row is not None:
            own = {record["handle"]: evidence_from_json(record) for record in row.sources}
        for handle, source in own.items():
            available.setdefault(handle, source)
        unsigned.update(_unsigned(message) if message.type == MessageType.TOOL else ())
    return ComputedRenders(rows=result, fresh=fresh)


def render_row(message: Message, rendering: MessageRendering, *, window: int = 1) -> MessageRender:
    """The (unsaved) stored form of ``message``'s render, by the running renderer, in ``window``."""
    brief = ""
    if message.type == MessageType.TOOL:
        url = reverse("web:message-hits", kwargs={"thread_id": message.thread_id, "message_id": message.id})
        brief = tool_brief(rendering.html, url)
    return MessageRender(
        message=message,
        thread_id=message.thread_id,
        seq=message.seq,
        renderer_version=version.RENDERER_VERSION,
        html=rendering.html,
        citations=rendering.citations,
        sources=[evidence_to_json(source) for source in rendering.sources.values()],
        entries=rendering.entries,
        export=rendering.export,
        uncited=rendering.uncited,
        text=rendering.text,
        rendered_at=timezone.now(),
        window=window,
        brief=brief,
        problems=problem_count(rendering.citations, rendering.uncited),
    )
