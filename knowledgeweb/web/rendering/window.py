"""One window of a thread page, assembled from stored renders and the stored source places.

The page sends one window (``threads.windows``): its messages as stored (a tool message as
its summary; the hits load on expand from ``web:message-hits``), and a sources panel holding
every source the window cites, wherever it was retrieved, and the sources its own tool
messages retrieved. Numbers are the thread's (``Thread.source_numbers``); a link to a message
in another window is that window's URL and the message's anchor, so it works without
JavaScript. Each message's ``MessageView`` is built once here; anything laid over a message
later (``MessageView.overlay``) is added per view, without rendering it again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from uuid import UUID

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.evidence import evidence_from_json
from knowledgeweb.threads.models import MessageRender, MessageType, Thread, ThreadSource
from knowledgeweb.threads.rendering.sources import source_entry
from knowledgeweb.threads.windowing import SourcePlace, ThreadWindow, thread_places
from knowledgeweb.threads.windows import window_href
from knowledgeweb.web.rendering.thread import (
    Issue,
    MessageView,
    SourceEntry,
    ThreadView,
    _deduplicated,
    _document_link,
    _numbered,
    _passage,
    _Retrieval,
    _title_notes,
    _true_reasons,
    _with_calls_and_parts,
    uncited_anchor,
)

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

    views: list[MessageView] = []
    counts: dict[str, int] = {}
    citing: dict[str, list[tuple[str, str]]] = {}
    marks: dict[str, set[int]] = {}
    issues: list[Issue] = []
    answers = window.answers_before
    for message in window.messages:
        render = renders[message.id]
        answer = 0
        uncited = False
        if message.type == MessageType.AI:
            answers += 1
            answer = answers
            uncited = render.uncited
            if uncited:
                issues.append(Issue(uncited_anchor(message), "uncited"))
        tally = {"resolved": 0, "unresolved": 0, "malformed": 0}
        order: list[int] = []
        cites: dict[str, None] = {}
        for citation in render.citations:
            state = citation["state"]
            tally[state] = tally.get(state, 0) + 1
            anchor = str(citation.get("anchor", ""))
            if state == "resolved":
                handle = citation["handle"]
                order.append(numbers.get(handle, 0))
                counts[handle] = counts.get(handle, 0) + 1
                cites[handle] = None
                if anchor:
                    citing.setdefault(handle, []).append((anchor, f"answer {answer}"))
                    if citation.get("label_mismatch") is True:
                        issues.append(Issue(anchor, "label-mismatch"))
                marks.setdefault(handle, set()).update(_passage(citation))
            elif anchor:
                issues.append(Issue(anchor, state))
        # The page HTML was built by our sanitizer and templates at write.
        html = _numbered(_page(render), order)
        if tally["unresolved"]:
            html = _true_reasons(html, message.seq, reasons_found, reasons_failed)
        views.append(
            MessageView(
                message,
                SafeString(html),
                tally["resolved"],
                tally["unresolved"],
                tally["malformed"],
                cites=tuple(cites),
                answer=answer,
                uncited=uncited,
            )
        )
    # The panel: what this window cites (by number), then what its tool messages retrieved.
    cited_handles = sorted((h for h in counts if h in found), key=lambda h: numbers.get(h, 0))
    retrieved_here = [
        h for h, p in found.items() if p.window == window.number and h not in counts and p.entry
    ]
    shown = {h: list(found[h].entry) for h in [*cited_handles, *retrieved_here] if found[h].entry}
    notes = _title_notes(shown)
    cited = tuple(
        SourceEntry(
            h,
            counts[h],
            _document_link(
                source_entry(
                    shown[h],
                    counts[h],
                    number=numbers.get(h, 0),
                    marks=marks.get(h, ()),
                    backlinks=_deduplicated(citing.get(h, [])),
                    note=notes.get(h, ""),
                ),
                thread,
                citing.get(h, []),
                marks.get(h, set()),
            ),
            _evidence(found[h]),
            numbers.get(h, 0),
            notes.get(h, ""),
        )
        for h in cited_handles
        if h in shown
    )
    uncited_entries = tuple(
        SourceEntry(h, 0, source_entry(shown[h], 0, note=notes.get(h, "")), note=notes.get(h, ""))
        for h in retrieved_here
    )
    views = _with_calls_and_parts(views, window.messages)
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited_entries, issues=tuple(issues))


def _evidence(place: SourcePlace) -> Evidence | None:
    record = place.evidence
    return evidence_from_json(record) if isinstance(record, dict) else None


def _page(render: MessageRender) -> str:
    # ``page`` is what the window read (``thread_window``); never the deferred ``html``.
    page = getattr(render, "page", None)
    return render.html if page is None else str(page)


def _retrieval(place: SourcePlace, current: int) -> _Retrieval:
    anchor = f"message-{_uuid(place.message_id)}"
    href = f"#{anchor}" if place.window == current else window_href(place.window, anchor)
    return _Retrieval(place.seq, href, f"the {place.message_name or 'tool'} result, message {place.seq}")


def _uuid(value: UUID | str) -> str:
    return str(value if isinstance(value, UUID) else UUID(str(value)))
