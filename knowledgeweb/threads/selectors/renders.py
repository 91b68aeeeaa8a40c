"""The stored renders a read serves, whichever renderer made them: a render below
``MIN_SAFE_RENDERER_VERSION`` is redone in memory for the read, never stored."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from uuid import UUID

from django.urls import reverse
from django.utils import timezone

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import evidence_from_json, evidence_to_json, messages_sources
from knowledgeweb.threads.evidence import unsigned_handles as _unsigned
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering import version
from knowledgeweb.threads.rendering.message import MessageRendering, render_message
from knowledgeweb.threads.windows import problem_count, tool_brief


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
    # Only servable rows are read: a row below the minimum safe version is replaced whole, so
    # decoding its stored JSON (thousands of records in a long thread) would be wasted work.
    servable = MessageRender.objects.filter(
        thread=thread, renderer_version__gte=version.MIN_SAFE_RENDERER_VERSION
    )
    query = servable.only(*dict.fromkeys([*fields, "message_id", "renderer_version"])) if fields else servable
    rows = {row.message_id: row for row in query}
    if not any(_unservable(rows.get(m.id)) for m in messages):
        return rows
    if fields:
        # The kept rows are read whole: each answer after them resolves against their evidence.
        rows = {row.message_id: row for row in servable}
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
