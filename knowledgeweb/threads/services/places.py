"""The stored index of a windowed thread page: each render's window, each source's place,
and where each source is cited.

Written with the renders (``threads.services.renders``), under the thread's lock: a new
message joins the thread's last window or opens the next (``threads.windows``), a tool
message records where each of its sources lives (``ThreadSource``, the first claim wins),
and an answer counts its citations of each source in its window (``ThreadCitation``).
A re-render keeps every window and rebuilds the places and citations from its renders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from django.db.models import Count, Sum

from knowledgeweb.threads.models import MessageRender, MessageType, Thread, ThreadCitation, ThreadSource
from knowledgeweb.threads.windows import Place, WindowTail, citation_counts, sent_size, tool_places


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


def citations_store(
    thread: Thread, answers: Sequence[tuple[MessageRender, int]], *, fresh: bool = False
) -> None:
    """Count where these answers' renders (each with its answer number, in ``seq`` order) cite
    each source, window by window: a window's count grows, its first claim stays the first.
    ``fresh``: the thread has no counts yet (an import, a rebuild), so none is read first."""
    counted = citation_counts((row.citations or [], row.window, row.seq, answer) for row, answer in answers)
    if not counted:
        return
    known = (
        ThreadCitation.objects.none()
        if fresh
        else ThreadCitation.objects.filter(
            thread=thread,
            handle__in={handle for handle, _ in counted},
            window__in={window for _, window in counted},
        )
    )
    grown = []
    for row in known:
        new = counted.pop((row.handle, row.window), None)
        if new is not None:
            row.count += new.count
            grown.append(row)
    if grown:
        ThreadCitation.objects.bulk_update(grown, ["count"], batch_size=500)
    ThreadCitation.objects.bulk_create(
        [
            ThreadCitation(
                thread=thread,
                handle=handle,
                window=window,
                count=cited.count,
                anchor=cited.anchor,
                seq=cited.seq,
                answer=cited.answer,
            )
            for (handle, window), cited in counted.items()
        ],
        batch_size=500,
    )


def citations_rebuild(thread: Thread, answers: Sequence[tuple[MessageRender, int]]) -> None:
    """Count every citation of the thread again from its answers' renders."""
    ThreadCitation.objects.filter(thread=thread).delete()
    citations_store(thread, answers, fresh=True)


def numbered_answers(
    rows: Sequence[MessageRender], types: Sequence[str], *, before: int = 0
) -> list[tuple[MessageRender, int]]:
    """The answers among ``rows`` (whose messages have ``types``, in ``seq`` order) with their
    numbers in the thread, ``before`` answers coming before the first row."""
    numbered: list[tuple[MessageRender, int]] = []
    for row, kind in zip(rows, types, strict=True):
        if kind == MessageType.AI:
            before += 1
            numbered.append((row, before))
    return numbered
