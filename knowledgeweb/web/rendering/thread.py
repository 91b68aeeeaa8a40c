"""A whole thread page, assembled from the renders stored at write (docs/architecture.md#pages-and-dom-hooks).

Each message's HTML, citation verdicts and (for tool messages) panel entries
were computed when it was written (``threads.services.renders``). A page only
reads them in one query and joins them, as stored (``threads.selectors.thread_renders``):
a read never re-renders into the database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from uuid import UUID

from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.selectors import renders_evidence, thread_renders
from knowledgeweb.web.calls import message_anchor
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

#: What a page reads of each stored render: not the evidence records nor the export text.
PAGE_FIELDS = ("message_id", "renderer_version", "html", "citations", "entries", "uncited")


def render_thread(thread: Thread, messages: Sequence[Message]) -> ThreadView:
    """The page of ``thread``: ``messages`` are all its messages in order (``thread_outline``).

    Sources carry the thread's numbers, fixed when each answer was written
    (``Thread.source_numbers``, read after any re-render has counted the thread again).
    """
    renders = thread_renders(thread=thread, messages=messages, fields=PAGE_FIELDS)
    numbers: Mapping[str, int] = thread.source_numbers or {}
    found, failed = _retrievals(messages, renders)
    page = PageCitations(numbers)
    views: list[MessageView] = []
    retrieved: dict[str, list[str]] = {}
    holder: dict[str, UUID] = {}  # the tool message whose evidence first carried each handle
    for message in messages:
        render: MessageRender = renders[message.id]
        read = page.read(message, render)
        for handle in _retrieval_order(render):
            if handle not in retrieved:
                retrieved[handle] = render.entries[handle]
                holder[handle] = message.id
        # html was built by our sanitizer and templates at write; the slots are the hooks' own.
        html = numbered(render.html, read.order)
        if message.type == MessageType.TOOL:
            html = hit_numbers(html, numbers)
        elif read.tally["unresolved"]:
            html = true_reasons(html, message.seq, found, failed)
        views.append(read.view(message, html))
    notes = title_notes(retrieved)
    evidence = renders_evidence(message_ids={holder[h] for h in numbers if h in holder})
    cited = tuple(
        page.cited_entry(thread, h, retrieved[h], n, notes.get(h, ""), evidence.get(h))
        for h, n in sorted(numbers.items(), key=lambda item: item[1])
        if h in retrieved and h in page.counts
    )
    uncited_entries = tuple(
        uncited_entry(h, parts, notes.get(h, "")) for h, parts in retrieved.items() if h not in page.counts
    )
    views = with_calls_and_parts(views, messages)
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited_entries, issues=tuple(page.issues))


# The tool-message template's slot for a document hit's number, by handle (validated hex).
_HIT_SLOT = re.compile(r'<span class="hit-number" data-hit-slot="([a-z0-9-]+)"></span>')
_UNVERIFIED_HANDLE = re.compile(r'data-unverified-handle="([^"]+)"')


def _retrieval_order(render: MessageRender) -> list[str]:
    """A tool message's entries in the order its hits were retrieved: PostgreSQL's jsonb keeps no
    key order, so the order is read from the hit list, where every validated hit has its slot."""
    entries = render.entries
    if not entries:
        return []
    shown = [h for h in dict.fromkeys(_HIT_SLOT.findall(render.html)) if h in entries]
    seen = set(shown)
    return shown + [h for h in entries if h not in seen]


def hit_numbers(html: str, numbers: Mapping[str, int]) -> str:
    """A tool message's hits with their sources' numbers in the thread; a hit no answer cites has none."""

    def fill(match: re.Match[str]) -> str:
        number = numbers.get(match.group(1))
        return f'<span class="hit-number citation-number">[{number}]</span> ' if number else ""

    return _HIT_SLOT.sub(fill, html)


def _retrievals(
    messages: Sequence[Message], renders: Mapping[UUID, MessageRender]
) -> tuple[dict[str, Retrieval], dict[str, Retrieval]]:
    """Where each handle was first retrieved with valid evidence, and where a tool message returned
    it with evidence that failed validation."""
    found: dict[str, Retrieval] = {}
    failed: dict[str, Retrieval] = {}
    for message in messages:
        if message.type != MessageType.TOOL:
            continue
        render = renders[message.id]
        place = Retrieval(
            message.seq,
            f"#{message_anchor(message)}",
            f"the {message.name or 'tool'} result, message {message.seq}",
        )
        for handle in render.entries:
            found.setdefault(handle, place)
        for handle in _UNVERIFIED_HANDLE.findall(render.html):
            failed.setdefault(handle, place)
    return found, failed
