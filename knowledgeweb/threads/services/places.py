"""The stored index of a windowed thread page: each render's window, each source's place.

Written with the renders (``threads.services.renders``), under the thread's lock: a new
message joins the thread's last window or opens the next (``threads.windows``), and a tool
message records where each of its sources lives (``ThreadSource``, the first claim wins).
A re-render keeps every window and rebuilds the places from the renders it stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from django.db.models import Count, Sum

from knowledgeweb.threads.models import MessageRender, Thread, ThreadSource
from knowledgeweb.threads.windows import Place, WindowTail, sent_size, tool_places


def window_tail(thread: Thread) -> WindowTail:
    """The thread's last window: its number, messages and characters sent (two small queries)."""
    last = (
        MessageRender.objects.filter(thread=thread).order_by("-seq").values_list("window", flat=True).first()
    )
    if last is None:
        return WindowTail()
    totals = MessageRender.objects.filter(thread=thread, window=last).aggregate(
        count=Count("pk"), size=Sum("size")
    )
    return WindowTail(last, totals["count"] or 0, totals["size"] or 0)


def windows_assign(
    rows: Sequence[MessageRender], kept: Mapping[UUID, int], tail: WindowTail | None = None
) -> None:
    """Give each of ``rows`` (a thread's renders in ``seq`` order) its window: the one it already
    had (``kept``), else the next place after the messages before it."""
    current = tail or WindowTail()
    for row in rows:
        size = row.size = sent_size(row.html, row.brief, row.entries)
        window = kept.get(row.message_id)
        if window is None:
            current = current.place(size)
            row.window = current.number
        elif window == current.number:
            row.window = window
            current = WindowTail(window, current.messages + 1, current.size + size)
        else:
            row.window = window
            current = WindowTail(window, 1, size)


def places_store(thread: Thread, rows: Sequence[MessageRender]) -> None:
    """Record where the sources of these tool renders live (in ``seq`` order); a handle already
    placed in the thread keeps its first place."""
    places: dict[tuple[str, str], Place] = {}
    for row in rows:
        for place in tool_places(
            message_id=row.message_id,
            seq=row.seq,
            window=row.window,
            html=row.html,
            entries=row.entries or {},
            evidence=row.sources or [],
        ):
            places.setdefault((place.handle, place.kind), place)
    ThreadSource.objects.bulk_create(
        [
            ThreadSource(
                thread=thread,
                handle=place.handle,
                kind=place.kind,
                message_id=place.message_id,
                seq=place.seq,
                position=place.position,
                window=place.window,
                entry=list(place.entry),
                evidence=dict(place.evidence) if place.evidence is not None else None,
            )
            for place in places.values()
        ],
        batch_size=500,
        ignore_conflicts=True,
    )


def places_rebuild(thread: Thread, rows: Sequence[MessageRender]) -> None:
    """Place every source of the thread again from its tool renders (``rows``, in ``seq`` order)."""
    ThreadSource.objects.filter(thread=thread).delete()
    places_store(thread, rows)
