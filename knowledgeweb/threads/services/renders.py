"""Renders stored at write: each message's HTML, citations, evidence and export, kept current.

Every write path goes through here: ``message_append`` (the API, the retrieval
service, Ask) and ``thread_import``. A message is rendered once, against the
evidence of the messages before it, and stored as its ``MessageRender`` with the
renderer's version; the thread's citation tallies move with it. Renders made by
another renderer are replaced only here: by ``thread_rerender`` (``manage.py
rerender``, which the deploy runs after start) and before a write builds on
them. Reads never write (``threads.selectors.thread_renders``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction
from django.db.models import F

from knowledgeweb.knowledge import Evidence
from knowledgeweb.memo import memo_set_many
from knowledgeweb.threads.evidence import (
    evidence_cache_key,
    evidence_from_json,
    message_read,
    unsigned_handles,
    validation_counter,
)
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.message import MessageRendering, render_message
from knowledgeweb.threads.rendering.version import render_is_current
from knowledgeweb.threads.selectors import render_row, renders_compute
from knowledgeweb.threads.services.pages import revision_raise
from knowledgeweb.threads.services.places import (
    citations_rebuild,
    citations_store,
    numbered_answers,
    places_rebuild,
    places_store,
    window_tail,
    windows_assign,
)
from knowledgeweb.threads.signals import thread_rendered
from knowledgeweb.threads.tallies import tallies_of

_UPDATED_FIELDS = [
    "renderer_version",
    "html",
    "citations",
    "sources",
    "entries",
    "export",
    "uncited",
    "text",
    "rendered_at",
    "window",
    "size",
    "brief",
    "problems",
]


@dataclass(frozen=True, slots=True)
class PreparedRender:
    """A render computed before the message's seq is known, and the last seq it saw."""

    rendering: MessageRendering
    upto_seq: int


def own_sources(message: Message) -> dict[str, Evidence]:
    """Validate a new tool message (the one validation of its life); nothing for other types."""
    if message.type != MessageType.TOOL:
        return {}
    validation_counter.increment()
    sources = message_read(message)
    # Seed the memo, so that a re-render after a change that leaves the reader alone
    # validates nothing.
    memo_set_many({evidence_cache_key(message): sources})
    return sources


def render_prepare(thread: Thread, message: Message) -> PreparedRender:
    """Render an unsaved ``message`` as the next message of ``thread`` (before taking the lock).

    Only an answer depends on what precedes it; other messages need no read at all.
    """
    if message.type != MessageType.AI:
        return PreparedRender(render_message(message, {}, own_sources(message)), upto_seq=-1)
    available, unsigned, upto = _evidence_so_far(thread)
    return PreparedRender(render_message(message, available, {}, unsigned), upto_seq=upto)


def render_store(thread: Thread, message: Message, prepared: PreparedRender) -> MessageRendering:
    """Store the render of ``message`` (saved, with its seq) under the thread's lock, and its tallies.

    An answer prepared before another writer added evidence is rendered again here.
    """
    rendering = prepared.rendering
    if prepared.upto_seq >= 0 and _evidence_added_after(thread, prepared.upto_seq, message.seq):
        available, unsigned, _ = _evidence_so_far(thread, before_seq=message.seq)
        rendering = render_message(message, available, {}, unsigned)
    row = render_row(message, rendering)
    # Under the thread's lock: the last window read here is the last append's.
    windows_assign([row], {}, window_tail(thread))
    row.save(force_insert=True)
    if message.type == MessageType.TOOL:
        places_store(thread, [row])
    if message.type == MessageType.AI:
        answer = Message.objects.filter(thread=thread, type=MessageType.AI, seq__lte=message.seq).count()
        citations_store(thread, [(row, answer)])
        # Under the thread's lock: the numbers read here are the last answer's.
        known = Thread.objects.filter(pk=thread.pk).values_list("source_numbers", flat=True).first()
        added = tallies_of([rendering], known or {})
        Thread.objects.filter(pk=thread.pk).update(
            citations_resolved=F("citations_resolved") + added["citations_resolved"],
            citations_unresolved=F("citations_unresolved") + added["citations_unresolved"],
            citations_malformed=F("citations_malformed") + added["citations_malformed"],
            citations_mismatched=F("citations_mismatched") + added["citations_mismatched"],
            answers_uncited=F("answers_uncited") + added["answers_uncited"],
            source_numbers=added["source_numbers"],
        )
        thread.source_numbers = added["source_numbers"]
    revision_raise(thread)
    return rendering


def renders_prepare(messages: Sequence[Message]) -> list[MessageRendering]:
    """Render a whole new thread's messages in order (an import), before anything is written."""
    renderings: list[MessageRendering] = []
    available: dict[str, Evidence] = {}
    unsigned: set[str] = set()
    for message in messages:
        own = own_sources(message)
        renderings.append(render_message(message, available, own, frozenset(unsigned)))
        for handle, source in own.items():
            available.setdefault(handle, source)
        unsigned.update(unsigned_handles(message))
    return renderings


def renders_store(
    thread: Thread, messages: Sequence[Message], renderings: Sequence[MessageRendering]
) -> None:
    """Store an import's renders (its messages saved, with their seqs) and set the thread's tallies."""
    rows = [render_row(m, r) for m, r in zip(messages, renderings, strict=True)]
    windows_assign(rows, {})
    MessageRender.objects.bulk_create(rows, batch_size=500)
    places_store(thread, [row for row, m in zip(rows, messages, strict=True) if m.type == MessageType.TOOL])
    citations_store(thread, numbered_answers(rows, [m.type for m in messages]), fresh=True)
    _set_tallies(thread, renderings)
    revision_raise(thread)


def thread_rerender(*, thread: Thread, force: bool = False) -> int:
    """Bring one thread's renders up to date (all of them with ``force``); returns how many were rendered.

    The one way a stored render is replaced: called by ``manage.py rerender`` (the deploy
    runs it after start) and by writes to the thread, never by a read.
    """
    with transaction.atomic():
        # Under the thread's row lock, as appends are: a message appended meanwhile waits, and
        # the tallies recomputed here cannot overwrite its increment.
        if not Thread.objects.select_for_update().filter(pk=thread.pk).exists():
            return 0
        messages = list(
            Message.objects.filter(thread=thread)
            .order_by("seq")
            .only("id", "thread_id", "seq", "type", "evidence_check")
        )
        rows = {} if force else {row.message_id: row for row in MessageRender.objects.filter(thread=thread)}
        rendered = _rerender(thread, messages, rows)
        if not rendered:
            # Nothing to render again, but a deploy may have changed how a page is put together:
            # the page assembly stores the last window again if its stored page is not its own.
            thread_rendered.send(sender=Thread, thread_id=thread.pk)
        return rendered


def _rerender(thread: Thread, messages: Sequence[Message], rows: dict[UUID, MessageRender]) -> int:
    """Re-render and store the renders of ``messages`` (all the thread's first ones, in order)
    that the running renderer did not make; returns how many."""
    if all(m.id in rows and render_is_current(rows[m.id].renderer_version) for m in messages):
        return 0
    computed = renders_compute(messages=messages, rows=rows, redo=_not_current)
    # Windows are kept: a window's URL names the same messages after a re-render.
    kept = dict(MessageRender.objects.filter(thread=thread).values_list("message_id", "window"))
    ordered = [computed.rows[m.id] for m in messages]
    windows_assign(ordered, kept)
    with transaction.atomic():
        # Another writer may be re-rendering the same thread: the same rows, so the last write wins.
        MessageRender.objects.bulk_create(
            computed.fresh,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["message"],
            update_fields=_UPDATED_FIELDS,
        )
        _set_tallies(thread, ordered)
        places_rebuild(
            thread, [row for row, m in zip(ordered, messages, strict=True) if m.type == MessageType.TOOL]
        )
        citations_rebuild(thread, numbered_answers(ordered, [m.type for m in messages]))
        revision_raise(thread)
    return len(computed.fresh)


def _not_current(row: MessageRender | None) -> bool:
    return row is None or not render_is_current(row.renderer_version)


def _set_tallies(thread: Thread, renders: Iterable[MessageRendering | MessageRender]) -> None:
    """Count and number the whole thread again (an import, a re-render); the instance follows."""
    values = tallies_of(renders)
    Thread.objects.filter(pk=thread.pk).update(**values)
    for name, value in values.items():
        setattr(thread, name, value)


def _evidence_so_far(
    thread: Thread, before_seq: int | None = None
) -> tuple[dict[str, Evidence], frozenset[str], int]:
    """The evidence of the thread's tool messages (before ``before_seq``), first claim wins,
    from their stored renders, the handles whose evidence an import stripped, and the last seq
    seen. Stale renders are re-rendered and stored first."""
    messages = list(
        Message.objects.filter(thread=thread)
        .order_by("seq")
        .only("id", "thread_id", "seq", "type", "evidence_check")
    )
    if before_seq is not None:
        messages = [m for m in messages if m.seq < before_seq]
    current = dict(
        MessageRender.objects.filter(thread=thread).values_list("message_id", "renderer_version").iterator()
    )
    if any(not render_is_current(current.get(m.id, -1)) for m in messages):
        # A write brings what it builds on up to date first (a read never does).
        _rerender(
            thread, messages, {row.message_id: row for row in MessageRender.objects.filter(thread=thread)}
        )
    wanted = [m.id for m in messages if m.type == MessageType.TOOL]
    records: Mapping[UUID, list[dict[str, object]]] = dict(
        MessageRender.objects.filter(message_id__in=wanted).values_list("message_id", "sources")
    )
    available: dict[str, Evidence] = {}
    for message_id in wanted:
        for record in records.get(message_id, []):
            available.setdefault(str(record["handle"]), evidence_from_json(record))
    unsigned = frozenset(handle for m in messages for handle in unsigned_handles(m))
    return available, unsigned, (messages[-1].seq if messages else 0)


def _evidence_added_after(thread: Thread, upto_seq: int, seq: int) -> bool:
    return MessageRender.objects.filter(
        thread=thread, seq__gt=upto_seq, seq__lt=seq, message__type=MessageType.TOOL
    ).exists()
