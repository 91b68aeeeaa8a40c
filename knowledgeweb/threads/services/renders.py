"""Renders stored at write: each message's HTML, citations, evidence and export, kept current.

Every write path goes through here: ``message_append`` (the API, the retrieval
service, Ask) and ``thread_import``. A message is rendered once, against the
evidence of the messages before it, and stored as its ``MessageRender`` with the
renderer's fingerprint; the thread's citation tallies move with it. A read that
meets a render from another renderer (or none) re-renders that thread's stale
messages in ``seq`` order and stores them (``thread_renders``); ``manage.py
rerender`` does the same for every thread ahead of time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from knowledgeweb.knowledge import Evidence, read_sources
from knowledgeweb.memo import memo_set_many
from knowledgeweb.threads.evidence import (
    evidence_cache_key,
    evidence_from_json,
    evidence_to_json,
    messages_sources,
    validation_counter,
)
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.fingerprint import render_fingerprint
from knowledgeweb.threads.rendering.message import MessageRendering, render_message
from knowledgeweb.threads.tallies import tallies_of

_UPDATED_FIELDS = [
    "fingerprint",
    "html",
    "citations",
    "sources",
    "entries",
    "export",
    "uncited",
    "rendered_at",
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
    sources = read_sources(message.name, message.content, message.artifact)
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
    available, upto = _evidence_so_far(thread)
    return PreparedRender(render_message(message, available, {}), upto_seq=upto)


def render_store(thread: Thread, message: Message, prepared: PreparedRender) -> MessageRendering:
    """Store the render of ``message`` (saved, with its seq) under the thread's lock, and its tallies.

    An answer prepared before another writer added evidence is rendered again here.
    """
    rendering = prepared.rendering
    if prepared.upto_seq >= 0 and _evidence_added_after(thread, prepared.upto_seq, message.seq):
        available, _ = _evidence_so_far(thread, before_seq=message.seq)
        rendering = render_message(message, available, {})
    _row(message, rendering, render_fingerprint()).save(force_insert=True)
    if message.type == MessageType.AI:
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
    return rendering


def renders_prepare(messages: Sequence[Message]) -> list[MessageRendering]:
    """Render a whole new thread's messages in order (an import), before anything is written."""
    renderings: list[MessageRendering] = []
    available: dict[str, Evidence] = {}
    for message in messages:
        own = own_sources(message)
        renderings.append(render_message(message, available, own))
        for handle, source in own.items():
            available.setdefault(handle, source)
    return renderings


def renders_store(
    thread: Thread, messages: Sequence[Message], renderings: Sequence[MessageRendering]
) -> None:
    """Store an import's renders (its messages saved, with their seqs) and set the thread's tallies."""
    fingerprint = render_fingerprint()
    MessageRender.objects.bulk_create(
        [_row(m, r, fingerprint) for m, r in zip(messages, renderings, strict=True)], batch_size=500
    )
    _set_tallies(thread, renderings)


def thread_renders(
    *, thread: Thread, messages: Sequence[Message], fields: Sequence[str] | None = None
) -> dict[UUID, MessageRender]:
    """Every message's render, by message id; stale or missing ones are re-rendered in ``seq`` order.

    ``messages`` are all the thread's messages in order (any column but the id, seq and
    type may be deferred); ``fields`` limits the columns read when every render is current.
    """
    query = MessageRender.objects.filter(thread=thread)
    rows = {row.message_id: row for row in (query.only(*fields) if fields else query)}
    fingerprint = render_fingerprint()
    if all(m.id in rows and rows[m.id].fingerprint == fingerprint for m in messages):
        return rows
    if fields:
        rows = {row.message_id: row for row in query}
    return _rerender(thread, messages, rows, fingerprint)


def thread_rerender(*, thread: Thread, force: bool = False) -> int:
    """Bring one thread's renders up to date (all of them with ``force``); returns how many were rendered."""
    messages = list(
        Message.objects.filter(thread=thread).order_by("seq").only("id", "thread_id", "seq", "type")
    )
    rows = {} if force else {row.message_id: row for row in MessageRender.objects.filter(thread=thread)}
    fingerprint = render_fingerprint()
    stale = sum(1 for m in messages if m.id not in rows or rows[m.id].fingerprint != fingerprint)
    if stale:
        _rerender(thread, messages, rows, fingerprint)
    return stale


def _rerender(
    thread: Thread, messages: Sequence[Message], rows: dict[UUID, MessageRender], fingerprint: str
) -> dict[UUID, MessageRender]:
    stale_ids = [m.id for m in messages if m.id not in rows or rows[m.id].fingerprint != fingerprint]
    # The stale messages whole (a page reads only their outline), in one query.
    whole = {m.id: m for m in Message.objects.filter(pk__in=stale_ids).defer("artifact")}
    # Stale tool messages are validated again (memoized per reader fingerprint); fresh ones
    # give their stored evidence.
    validated = messages_sources([m for m in whole.values() if m.type == MessageType.TOOL])
    available: dict[str, Evidence] = {}
    fresh: list[MessageRender] = []
    for outline in messages:
        message = whole.get(outline.id, outline)
        row = rows.get(message.id)
        if row is not None and row.fingerprint == fingerprint:
            own = {record["handle"]: evidence_from_json(record) for record in row.sources}
        else:
            own = validated.get(message.id, {})
            row = _row(message, render_message(message, available, own), fingerprint)
            rows[message.id] = row
            fresh.append(row)
        for handle, source in own.items():
            available.setdefault(handle, source)
    with transaction.atomic():
        # Another reader may be re-rendering the same thread: the same rows, so the last write wins.
        MessageRender.objects.bulk_create(
            fresh,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["message"],
            update_fields=_UPDATED_FIELDS,
        )
        _set_tallies(thread, [rows[m.id] for m in messages])
    return rows


def _row(message: Message, rendering: MessageRendering, fingerprint: str) -> MessageRender:
    return MessageRender(
        message=message,
        thread_id=message.thread_id,
        seq=message.seq,
        fingerprint=fingerprint,
        html=rendering.html,
        citations=rendering.citations,
        sources=[evidence_to_json(source) for source in rendering.sources.values()],
        entries=rendering.entries,
        export=rendering.export,
        uncited=rendering.uncited,
        text=rendering.text,
        rendered_at=timezone.now(),
    )


def _set_tallies(thread: Thread, renders: Iterable[MessageRendering | MessageRender]) -> None:
    """Count and number the whole thread again (an import, a re-render); the instance follows."""
    values = tallies_of(renders)
    Thread.objects.filter(pk=thread.pk).update(**values)
    for name, value in values.items():
        setattr(thread, name, value)


def _evidence_so_far(thread: Thread, before_seq: int | None = None) -> tuple[dict[str, Evidence], int]:
    """The evidence of the thread's tool messages (before ``before_seq``), first claim wins,
    from their stored renders, and the last seq seen. Stale renders are brought up to date first."""
    messages = list(
        Message.objects.filter(thread=thread).order_by("seq").only("id", "thread_id", "seq", "type")
    )
    if before_seq is not None:
        messages = [m for m in messages if m.seq < before_seq]
    fingerprint = render_fingerprint()
    current = dict(
        MessageRender.objects.filter(thread=thread).values_list("message_id", "fingerprint").iterator()
    )
    if any(current.get(m.id) != fingerprint for m in messages):
        thread_renders(thread=thread, messages=messages)
    wanted = [m.id for m in messages if m.type == MessageType.TOOL]
    records: Mapping[UUID, list[dict[str, object]]] = dict(
        MessageRender.objects.filter(message_id__in=wanted).values_list("message_id", "sources")
    )
    available: dict[str, Evidence] = {}
    for message_id in wanted:
        for record in records.get(message_id, []):
            available.setdefault(str(record["handle"]), evidence_from_json(record))
    return available, (messages[-1].seq if messages else 0)


def _evidence_added_after(thread: Thread, upto_seq: int, seq: int) -> bool:
    return MessageRender.objects.filter(
        thread=thread, seq__gt=upto_seq, seq__lt=seq, message__type=MessageType.TOOL
    ).exists()
