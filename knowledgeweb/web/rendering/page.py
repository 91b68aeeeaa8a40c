"""What the whole thread page and one window of it assemble alike from the stored renders.

``PageCitations`` reads each message's stored citations in page order (the tallies, the
numbers of its resolved hooks, who cites each source and the walk's stops) and builds the
panel's entries from them; the functions below fill what the render left to the page (the
numbers, the true reason of a citation with no source, the notes that tell sources of one
title apart, the link into a document).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from typing import Any

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.calls import call_answers
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.rendering.resolution import NUMBER_SLOT
from knowledgeweb.threads.rendering.sources import source_entry
from knowledgeweb.web.calls import render_calls_and_parts
from knowledgeweb.web.rendering.views import Issue, MessageView, SourceEntry, uncited_anchor


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """One message's stored citations as the page counts them."""

    answer: int
    uncited: bool
    tally: dict[str, int]
    #: The thread's number of each resolved hook, in order (the slots ``numbered`` fills).
    order: list[int]
    cites: tuple[str, ...]

    def view(self, message: Message, html: str) -> MessageView:
        """The message's view with ``html``, its body as the page shows it (built by our
        sanitizer and templates at write, the slots filled by the page)."""
        return MessageView(
            message,
            SafeString(html),
            self.tally["resolved"],
            self.tally["unresolved"],
            self.tally["malformed"],
            cites=self.cites,
            answer=self.answer,
            uncited=self.uncited,
        )


class PageCitations:
    """What a page's messages cite, read from their stored renders in page order.

    ``numbers`` are the thread's (``Thread.source_numbers``); ``answers_before`` counts the
    answers before the page's first message (a window's), so each answer keeps its number.
    """

    def __init__(self, numbers: Mapping[str, int], answers_before: int = 0) -> None:
        self.numbers = numbers
        self.answers = answers_before
        self.counts: dict[str, int] = {}
        self.citing: dict[str, list[tuple[str, str]]] = {}  # handle -> (anchor, "answer N")
        self.marks: dict[str, set[int]] = {}
        self.issues: list[Issue] = []

    def read(self, message: Message, render: MessageRender) -> ReadMessage:
        answer = 0
        uncited = False
        if message.type == MessageType.AI:
            self.answers += 1
            answer = self.answers
            uncited = render.uncited
            if uncited:
                self.issues.append(Issue(uncited_anchor(message), "uncited"))
        tally = {"resolved": 0, "unresolved": 0, "malformed": 0}
        order: list[int] = []
        cites: dict[str, None] = {}
        for citation in render.citations:
            state = citation["state"]
            tally[state] = tally.get(state, 0) + 1
            anchor = str(citation.get("anchor", ""))
            if state == "resolved":
                handle = citation["handle"]
                order.append(self.numbers.get(handle, 0))
                self.counts[handle] = self.counts.get(handle, 0) + 1
                cites[handle] = None
                if anchor:
                    self.citing.setdefault(handle, []).append((anchor, f"answer {answer}"))
                    if citation.get("label_mismatch") is True:
                        self.issues.append(Issue(anchor, "label-mismatch"))
                self.marks.setdefault(handle, set()).update(passage(citation))
            elif anchor:
                self.issues.append(Issue(anchor, state))
        return ReadMessage(answer, uncited, tally, order, tuple(cites))

    def cited_entry(
        self,
        thread: Thread,
        handle: str,
        parts: Sequence[str],
        number: int,
        note: str,
        evidence: Evidence | None,
        elsewhere: Sequence[tuple[str, str, str]] = (),
    ) -> SourceEntry:
        """The panel's entry of a source the page cites, from its stored entry ``parts``;
        ``elsewhere``: the claims of other windows citing it (``source_entry``)."""
        count = self.counts[handle]
        marks = self.marks.get(handle, set())
        citing = self.citing.get(handle, [])
        html = source_entry(
            parts,
            count,
            number=number,
            marks=marks,
            backlinks=deduplicated(citing),
            note=note,
            elsewhere=elsewhere,
        )
        return SourceEntry(handle, count, document_link(html, thread, citing, marks), evidence, number, note)


def uncited_entry(
    handle: str, parts: Sequence[str], note: str, elsewhere: Sequence[tuple[str, str, str]] = ()
) -> SourceEntry:
    """The panel's entry of a source retrieved on the page that no answer of the page cites
    (``elsewhere``: the claims of other windows that do)."""
    return SourceEntry(handle, 0, source_entry(parts, 0, note=note, elsewhere=elsewhere), note=note)


@dataclass(frozen=True, slots=True)
class Retrieval:
    """Where a tool message of the thread retrieved a source, for the reasons of later answers."""

    seq: int
    #: The link to the tool message: its anchor, or its window's URL and anchor (``windows``).
    href: str
    words: str


def numbered(html: str, numbers: Sequence[int]) -> str:
    """``html`` with each resolved hook's number slot filled, in order."""
    if not numbers:
        return html
    pieces = html.split(NUMBER_SLOT)
    if len(pieces) != len(numbers) + 1:
        # Never expected (each resolved hook writes one slot); an unnumbered hook still works.
        return html
    out = [pieces[0]]
    for number, piece in zip(numbers, pieces[1:], strict=True):
        shown = f"[{number}]" if number else ""
        out.append(f'<span class="citation-number">{shown}</span>{piece}')
    return "".join(out)


_REASON_SLOT = re.compile(r'(<span class="reason-text" data-reason-handle="([a-z0-9-]+)">)([^<]*)(</span>)')


_DOCUMENT_LINK = re.compile(r'(data-field="document" href="/library/passage/\?[^"#]*)#passage"')


def document_link(
    html: SafeString, thread: Thread, places: Sequence[tuple[str, str]], sentences: set[int]
) -> SafeString:
    """A cited entry's "Open in document" link, naming the thread and its first citation (for the
    page's way back) and the sentences closest to the claims (the only ones marked there)."""
    if not places or 'data-field="document"' not in html:
        return html
    extra = f"&amp;thread={thread.id}&amp;cite={places[0][0]}"
    if sentences:
        extra += "&amp;sentences=" + ",".join(str(i) for i in sorted(sentences))
    # The anchor is a hook id and the sentence numbers integers: nothing here needs escaping.
    return SafeString(_DOCUMENT_LINK.sub(lambda m: f'{m.group(1)}{extra}#passage"', html, count=1))


def true_reasons(html: str, seq: int, found: Mapping[str, Retrieval], failed: Mapping[str, Retrieval]) -> str:
    """An answer's reasons for citations with no source, told apart: the evidence came only
    later (naming and linking that search), or an earlier result held it but it failed validation."""

    def reason(match: re.Match[str]) -> str:
        handle = match.group(2)
        later = found.get(handle)
        if later is not None and later.seq > seq:
            words = (
                f'Its evidence was retrieved only later, in <a href="{later.href}" data-reason-later>'
                f"{escape(later.words)}</a>, after this answer; a citation counts only evidence "
                "retrieved before its answer."
            )
            return f"{match.group(1)}{words}{match.group(4)}"
        bad = failed.get(handle)
        if bad is not None and bad.seq < seq:
            words = (
                f'<a href="{bad.href}" data-reason-failed>{escape(bad.words[:1].upper() + bad.words[1:])}</a> returned this '
                "source, but its evidence failed validation, so it cannot be shown as found."
            )
            return f"{match.group(1)}{words}{match.group(4)}"
        return match.group(0)

    return _REASON_SLOT.sub(reason, html)


def title_notes(retrieved: Mapping[str, list[str]]) -> dict[str, str]:
    """For sources sharing a title with another, what tells each apart: its page when the pages
    differ, else its place among them in retrieval order ("passage 2 of 3")."""
    by_title: dict[str, list[str]] = {}
    for handle, (_, body) in retrieved.items():
        by_title.setdefault(_field_text(body, 'data-field="title">', "</p>"), []).append(handle)
    notes: dict[str, str] = {}
    for handles in by_title.values():
        if len(handles) < 2:
            continue
        pages = {h: _page_of(retrieved[h][1]) for h in handles}
        distinct = len(set(pages.values())) == len(handles) and all(pages.values())
        for place, handle in enumerate(handles, start=1):
            notes[handle] = f"page {pages[handle]}" if distinct else f"passage {place} of {len(handles)}"
    return notes


def _page_of(body: str) -> str:
    return _field_text(body, 'data-field="page">', "</dd>")


def _field_text(body: str, opening: str, closing: str) -> str:
    """The text after ``opening`` up to ``closing`` when it holds no tag, else "": a plain search,
    as the patterns this replaced read (a regular expression over thousands of entries was a
    window's largest cost)."""
    start = body.find(opening)
    if start < 0:
        return ""
    start += len(opening)
    end = body.find("<", start)
    return body[start:end] if end >= 0 and body.startswith(closing, end) else ""


def passage(citation: Mapping[str, Any]) -> list[int]:
    passage = citation.get("passage", [])
    return [i for i in passage if isinstance(i, int)] if isinstance(passage, list) else []


def deduplicated(places: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every citing place, its words numbered when one answer cites the source twice."""
    seen: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for anchor, words in places:
        seen[words] = seen.get(words, 0) + 1
        out.append((anchor, words if seen[words] == 1 else f"{words} ({seen[words]})"))
    return out


def with_calls_and_parts(views: list[MessageView], messages: Sequence[Message]) -> list[MessageView]:
    if not any(m.tool_calls or m.parts for m in messages):
        return views
    answers = call_answers(messages)
    return [
        replace(view, extras=render_calls_and_parts(view.message, answers.get(view.message.id, [])))
        if view.message.tool_calls or view.message.parts
        else view
        for view in views
    ]
