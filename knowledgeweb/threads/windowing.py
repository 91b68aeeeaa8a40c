"""Read side of a windowed thread page: one window's messages and renders, and the places of
the sources it names. Nothing here writes, and nothing reads a message the window does not send.

A window reads a fixed number of queries whatever the thread's length (the thread's last
window, the window's messages, their renders, what comes before it, where its neighbours'
problems are, and the places of its sources); only the renders it shows are decoded.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Case, F, JSONField, Max, Min, Q, TextField, When

from knowledgeweb.threads.errors import ThreadNotFound
from knowledgeweb.threads.models import (
    Message,
    MessageRender,
    MessageType,
    Thread,
    ThreadCitation,
    ThreadSource,
)
from knowledgeweb.threads.rendering.version import render_is_servable
from knowledgeweb.threads.selectors import thread_outline, thread_renders

__all__ = [
    "CitedElsewhere",
    "SourcePlace",
    "ThreadWindow",
    "citations_elsewhere",
    "message_hits_html",
    "thread_places",
    "thread_window",
    "window_questions",
]

#: What a window reads of each stored render: never the evidence records, the panel entries,
#: the export or the text, and only what the page sends of the HTML (``page``).
WINDOW_FIELDS = ("message_id", "seq", "renderer_version", "citations", "uncited", "window")
_OUTLINE_FIELDS = ("id", "thread_id", "seq", "type", "status", "name", "tool_call_id", "tool_calls", "parts")
#: A tool message's brief (its summary) when it has one, else the whole render.
_PAGE = Case(When(brief="", then=F("html")), default=F("brief"), output_field=TextField())


@dataclass(frozen=True, slots=True)
class ThreadWindow:
    """One window of a thread page and what the page needs to know around it."""

    number: int
    #: The thread's last window (the page opens there).
    last: int
    #: The window's messages in order (outlines: no content, no artifact).
    messages: list[Message]
    #: Their renders by message id; ``page`` holds what the page sends of each.
    renders: dict[UUID, MessageRender]
    #: How many answers and questions come before the window (their numbers go on from there).
    answers_before: int = 0
    turns_before: int = 0
    #: The nearest earlier and later windows holding one of the walk's stops, if any.
    previous_issues: int | None = None
    next_issues: int | None = None


def thread_window(*, thread: Thread, number: int | None = None) -> ThreadWindow:
    """Window ``number`` of ``thread`` (its last window when None); a number past either end
    raises ``ThreadNotFound``."""
    last = MessageRender.objects.filter(thread=thread).aggregate(last=Max("window"))["last"]
    if last is None:
        if number not in (None, 1):
            raise ThreadNotFound("This thread has no such window.")
        return ThreadWindow(1, 1, [], {})
    current = last if number is None else number
    if not 1 <= current <= last:
        raise ThreadNotFound(f"This thread's windows are numbered 1 to {last}.")
    query = (
        MessageRender.objects.filter(thread=thread, window=current)
        .only(*WINDOW_FIELDS)
        .annotate(page=_PAGE)
        .order_by("seq")
    )
    renders: dict[UUID, MessageRender] = {row.message_id: row for row in query}
    # A window is a run of consecutive messages: read as a range of the (thread, seq) key.
    seqs = [row.seq for row in renders.values()] or [0]
    rows = Message.objects.filter(thread=thread, seq__gte=min(seqs), seq__lte=max(seqs))
    messages = [m for m in rows.order_by("seq").only(*_OUTLINE_FIELDS) if m.pk in renders]
    if any(not render_is_servable(row.renderer_version) for row in renders.values()):
        # A render no reader may be served: the whole thread is rendered in memory for this read,
        # in order (never stored), as ``thread_renders`` does for any page.
        whole = thread_renders(thread=thread, messages=thread_outline(thread=thread))
        for message in messages:
            row = whole[message.id]
            row.page = row.brief or row.html  # type: ignore[attr-defined]
            renders[message.id] = row
    first = messages[0].seq if messages else 0
    # Two counts, each over its range of the (thread, type, seq) index.
    earlier = Message.objects.filter(thread=thread, seq__lt=first)
    before = {
        "answers": earlier.filter(type=MessageType.AI).count(),
        "turns": earlier.filter(type=MessageType.HUMAN).count(),
    }
    around = MessageRender.objects.filter(thread=thread, problems__gt=0).aggregate(
        previous=Max("window", filter=Q(window__lt=current)), next=Min("window", filter=Q(window__gt=current))
    )
    return ThreadWindow(
        number=current,
        last=last,
        messages=messages,
        renders=renders,
        answers_before=before["answers"] or 0,
        turns_before=before["turns"] or 0,
        previous_issues=around["previous"],
        next_issues=around["next"],
    )


@dataclass(frozen=True, slots=True)
class SourcePlace:
    """Where a source of the window lives (a ``ThreadSource`` row, read as values)."""

    pk: int
    handle: str
    kind: str
    message_id: UUID
    #: The tool that retrieved it (it names the search in a citation's reason), never its content.
    message_name: str
    seq: int
    position: int
    window: int
    entry: list[str]
    #: The validated source's fields; read only for the handles the window names (null else).
    evidence: dict[str, object] | None


_PLACE_FIELDS = ("pk", "handle", "kind", "message_id", "message__name", "seq", "position", "window", "entry")


def thread_places(*, thread: Thread, handles: Collection[str], window: int) -> list[SourcePlace]:
    """The places of the sources a window names (``handles``) and of those its tool messages
    returned, in retrieval order (two queries, each on an index: an OR of the two would read
    every place of the thread). Only the sources ``handles`` names carry their evidence: the
    rest are panel entries the window's tool messages retrieved, never decoded further."""
    named = sorted(handles)
    evidence = Case(
        When(handle__in=named, then=F("evidence")), default=None, output_field=JSONField(null=True)
    )
    rows = ThreadSource.objects.filter(thread=thread).annotate(named_evidence=evidence)
    fields = (*_PLACE_FIELDS, "named_evidence")
    found = {row[0]: SourcePlace(*row) for row in rows.filter(window=window).values_list(*fields)}
    if named:
        # Those of this window are read above already (each row is read and decoded once).
        for row in rows.filter(handle__in=named).exclude(window=window).values_list(*fields):
            found.setdefault(row[0], SourcePlace(*row))
    return sorted(found.values(), key=lambda place: (place.seq, place.position))


@dataclass(frozen=True, slots=True)
class CitedElsewhere:
    """The claims of one other window citing a source: how many, and the first of them."""

    handle: str
    window: int
    count: int
    anchor: str
    answer: int


def citations_elsewhere(
    *, thread: Thread, handles: Collection[str], window: int
) -> dict[str, list[CitedElsewhere]]:
    """Where the sources ``handles`` are cited in the thread's windows other than ``window``,
    by handle, in window order (one query on the citations' unique index)."""
    if not handles:
        return {}
    rows = (
        ThreadCitation.objects.filter(thread=thread, handle__in=sorted(handles))
        .exclude(window=window)
        .order_by("handle", "window")
        .values_list("handle", "window", "count", "anchor", "answer")
    )
    found: dict[str, list[CitedElsewhere]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(CitedElsewhere(*row))
    return found


def window_questions(*, messages: Sequence[Message]) -> dict[UUID, str]:
    """The text of these messages' questions (human messages), by id: what the window's turns
    are headed with (one query, or none)."""
    ids = [m.id for m in messages if m.type == MessageType.HUMAN]
    if not ids:
        return {}
    return dict(Message.objects.filter(pk__in=ids).values_list("id", "content"))


def message_hits_html(*, thread: Thread, message_id: UUID) -> tuple[Message, str]:
    """A tool message of ``thread`` and its whole render (its hit list), as stored; a message
    that is not one of the thread's tool messages raises ``ThreadNotFound``."""
    message = (
        Message.objects.filter(thread=thread, pk=message_id, type=MessageType.TOOL)
        .only(*_OUTLINE_FIELDS)
        .first()
    )
    if message is None:
        raise ThreadNotFound("Message not found.")
    row = MessageRender.objects.filter(message_id=message_id).only("html", "renderer_version").first()
    if row is None or not render_is_servable(row.renderer_version):
        row = thread_renders(thread=thread, messages=thread_outline(thread=thread))[message_id]
    return message, row.html
