"""One window of a thread page, assembled from stored renders and the stored source places.

The page sends one window (``threads.windows``): its messages as stored (a tool message as
its summary; the hits load on expand from ``web:message-hits``), and a sources panel holding
every source the window cites, wherever it was retrieved, and the sources its own tool
messages retrieved. Numbers are the thread's (``Thread.source_numbers``); a link to a message
in another window is that window's URL and the message's anchor, so it works without
JavaScript. Each message's ``MessageView`` is built once here; what differs between readers
(verdict chips) is laid over the assembled page per view (``web.rendering.review``), and the
last window's assembly is stored by the write that made it (``web.rendering.stored``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from uuid import UUID

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import evidence_from_json
from knowledgeweb.threads.models import MessageRender, Thread, ThreadSource
from knowledgeweb.threads.windowing import (
    CitedElsewhere,
    SourcePlace,
    ThreadWindow,
    citations_elsewhere,
    thread_places,
)
from knowledgeweb.threads.windows import window_href
from knowledgeweb.web.rendering.page import (
    PageCitations,
    Retrieval,
    numbered,
    title_notes,
    true_reasons,
    uncited_entry,
    with_calls_and_parts,
)
from knowledgeweb.web.rendering.views import MessageView, ThreadView

_REASON_HANDLE = re.compile(r'data-reason-handle="([a-z0-9-]+)"')


def render_window(thread: Thread, window: ThreadWindow) -> ThreadView:
    """The page of one window of ``thread`` (``threads.windowing.thread_window``)."""
    numbers: Mapping[str, int] = thread.source_numbers or {}
    renders = window.renders
    needed: set[str] = set()
    for message in window.messages:
        render = renders[message.id]
        for citation in render.citations:
            if citation.get("state") == "resolved" and isinstance(citation.get("handle"), str):
                needed.add(citation["handle"])
            elif citation.get("state") == "unresolved":
                needed.update(_REASON_HANDLE.findall(_page(render)))
    places = thread_places(thread=thread, handles=needed, window=window.number)
    found: dict[str, SourcePlace] = {}
    failed: dict[str, SourcePlace] = {}
    for place in places:
        (found if place.kind == ThreadSource.FOUND else failed).setdefault(place.handle, place)
    reasons_found = {h: _retrieval(p, window.number) for h, p in found.items()}
    reasons_failed = {h: _retrieval(p, window.number) for h, p in failed.items()}

    page = PageCitations(numbers, answers_before=window.answers_before)
    views: list[MessageView] = []
    for message in window.messages:
        render = renders[message.id]
        read = page.read(message, render)
        # The page HTML was built by our sanitizer and templates at write.
        html = numbered(_page(render), read.order)
        if read.tally["unresolved"]:
            html = true_reasons(html, message.seq, reasons_found, reasons_failed)
        views.append(read.view(message, html))
    # The panel: what this window cites (by number), then what its tool messages retrieved.
    counts = page.counts
    cited_handles = sorted((h for h in counts if h in found), key=lambda h: numbers.get(h, 0))
    retrieved_here = [
        h for h, p in found.items() if p.window == window.number and h not in counts and p.entry
    ]
    shown = {h: list(found[h].entry) for h in [*cited_handles, *retrieved_here] if found[h].entry}
    notes = title_notes(shown)
    # The claims of other windows citing what the panel shows: one link per window.
    other = citations_elsewhere(thread=thread, handles=shown, window=window.number)
    elsewhere = {h: [_cited_in(c) for c in other.get(h, [])] for h in shown}
    cited = tuple(
        page.cited_entry(
            thread, h, shown[h], numbers.get(h, 0), notes.get(h, ""), _evidence(found[h]), elsewhere[h]
        )
        for h in cited_handles
        if h in shown
    )
    uncited_entries = tuple(
        uncited_entry(h, shown[h], notes.get(h, ""), elsewhere[h]) for h in retrieved_here
    )
    views = with_calls_and_parts(views, window.messages)
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited_entries, issues=tuple(page.issues))


def _evidence(place: SourcePlace) -> Evidence | None:
    record = place.evidence
    return evidence_from_json(record) if isinstance(record, dict) else None


def _page(render: MessageRender) -> str:
    # ``page`` is what the window read (``thread_window``); never the deferred ``html``.
    page = getattr(render, "page", None)
    return render.html if page is None else str(page)


def _retrieval(place: SourcePlace, current: int) -> Retrieval:
    anchor = f"message-{_uuid(place.message_id)}"
    href = f"#{anchor}" if place.window == current else window_href(place.window, anchor)
    return Retrieval(place.seq, href, f"the {place.message_name or 'tool'} result, message {place.seq}")


def _cited_in(cited: CitedElsewhere) -> tuple[str, str, str]:
    more = f", {cited.count} claims" if cited.count > 1 else ""
    return (
        window_href(cited.window, cited.anchor),
        cited.anchor,
        f"answer {cited.answer} (window {cited.window}{more})",
    )


def _uuid(value: UUID | str) -> str:
    return str(value if isinstance(value, UUID) else UUID(str(value)))
