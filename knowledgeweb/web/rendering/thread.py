"""A whole thread page, assembled from the renders stored at write (docs/architecture.md#pages-and-dom-hooks).

Each message's HTML, citation verdicts and (for tool messages) panel entries
were computed when it was written (``threads.services.renders``). A page only
reads them in one query and joins them, as stored (``threads.selectors.thread_renders``):
a read never re-renders into the database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any
from uuid import UUID

from django.utils.safestring import SafeString

from knowledgeweb.knowledge import Evidence
from knowledgeweb.threads.calls import call_answers
from knowledgeweb.threads.models import Message, MessageRender, MessageStatus, MessageType, Thread
from knowledgeweb.threads.rendering.resolution import NUMBER_SLOT
from knowledgeweb.threads.rendering.sources import source_entry
from knowledgeweb.threads.selectors import renders_evidence, thread_renders
from knowledgeweb.web.calls import message_anchor, render_calls_and_parts

_NO_EXTRAS = SafeString("")


@dataclass(frozen=True, slots=True)
class MessageView:
    """A message with its rendered body (safe HTML) and its citation tallies."""

    message: Message
    html: SafeString
    resolved: int = 0
    unresolved: int = 0
    malformed: int = 0
    # Tool calls and parts (knowledgeweb.web.calls): built per page, not cached with the body.
    extras: SafeString = _NO_EXTRAS
    #: The handles this answer's resolved citations name, in order of first citation.
    cites: tuple[str, ...] = ()
    #: The answer's number among the thread's answers (0 for other messages).
    answer: int = 0
    #: An answer with text that cites nothing: it carries the "no citations" badge.
    uncited: bool = False

    @property
    def item(self) -> SafeString:
        """The message's ``<li>`` in the thread, built without the template engine: a long
        thread's warm render is otherwise dominated by the template loop."""
        message = self.message
        classes = f"message message-{message.type}"
        if message.status == MessageStatus.ERROR:
            classes += " message-error"
        inert = self.unresolved + self.malformed
        note = ""
        if inert:
            plural, verb = ("", "has") if inert == 1 else ("s", "have")
            note = (
                f'<p class="message-note">{inert} citation{plural} in this answer {verb} no source in '
                f"this thread's evidence and {'is' if inert == 1 else 'are'} not linked; select one to see why.</p>"
            )
        badge = ""
        if self.uncited:
            badge = (
                f'<p class="answer-badge" id="{uncited_anchor(message)}" data-issue="uncited" tabindex="-1">'
                '<span class="badge badge-warning">no citations</span> '
                "This answer cites no source: nothing in it can be checked against the evidence.</p>"
            )
        # type, status and seq are model choices and an integer: nothing here needs escaping.
        return SafeString(  # html is sanitized or escaped where it is built
            f'<li class="{classes}" id="{message_anchor(message)}" data-message-type="{message.type}" '
            f'data-seq="{message.seq}"><p class="message-role">{_ROLES.get(message.type, "System")}</p>'
            f'{badge}<div class="message-body">{self.html}</div>{self.extras}{note}</li>'
        )


_ROLES: dict[str, str] = {MessageType.AI: "Assistant", MessageType.HUMAN: "You", MessageType.TOOL: "Tool"}


@dataclass(frozen=True, slots=True)
class SourceEntry:
    """A source in the panel (its handle), how often the thread's answers cite it, and its entry's HTML."""

    handle: str
    citations: int
    html: SafeString
    #: The validated source itself, for cited entries (per-answer source lists name it).
    evidence: Evidence | None = None
    #: The source's number in the thread (cited entries), in order of first citation.
    number: int = 0
    #: What tells this source apart from another of the same title ("page 4", "passage 2 of 3").
    note: str = ""


#: The kinds of problem the walk visits, and how each is named in the tally.
ISSUE_KINDS = ("unresolved", "malformed", "label-mismatch", "uncited")


@dataclass(frozen=True, slots=True)
class Issue:
    """One stop of the page's walk: the anchor of what it marks and its kind (``ISSUE_KINDS``)."""

    anchor: str
    kind: str


@dataclass(frozen=True, slots=True)
class ThreadView:
    messages: tuple[MessageView, ...]
    cited: tuple[SourceEntry, ...]
    uncited: tuple[SourceEntry, ...]
    #: Every problem of the page in page order: citations with no source or malformed, labels
    #: naming another source, answers that cite nothing (the walk's stops).
    issues: tuple[Issue, ...] = field(default=())

    @property
    def resolved_total(self) -> int:
        return sum(view.resolved for view in self.messages)

    @property
    def unresolved_total(self) -> int:
        return sum(view.unresolved for view in self.messages)

    @property
    def malformed_total(self) -> int:
        return sum(view.malformed for view in self.messages)

    @property
    def citation_total(self) -> int:
        return sum(view.resolved + view.unresolved + view.malformed for view in self.messages)

    @property
    def messages_html(self) -> SafeString:
        # Joined here rather than looped in the template, for the same reason as the entries.
        return SafeString("".join(view.item for view in self.messages))

    @property
    def cited_html(self) -> SafeString:
        # Joined here rather than looped in the template: thousands of entries make the
        # template loop the largest cost of a warm render.
        return SafeString("".join(entry.html for entry in self.cited))

    @property
    def uncited_html(self) -> SafeString:
        return SafeString("".join(entry.html for entry in self.uncited))

    @property
    def retrieved_total(self) -> int:
        return len(self.cited) + len(self.uncited)

    @property
    def inert_total(self) -> int:
        return sum(view.unresolved + view.malformed for view in self.messages)


#: What a page reads of each stored render: not the evidence records nor the export text.
PAGE_FIELDS = ("message_id", "renderer_version", "html", "citations", "entries", "uncited")


def uncited_anchor(message: Message) -> str:
    """The id of an answer's "no citations" badge (a stop of the walk)."""
    return f"uncited-{message.id.hex}"


@dataclass(frozen=True, slots=True)
class _Retrieval:
    """Where a tool message of the thread retrieved a source, for the reasons of later answers."""

    seq: int
    anchor: str
    words: str


def render_thread(thread: Thread, messages: Sequence[Message]) -> ThreadView:
    """The page of ``thread``: ``messages`` are all its messages in order (``thread_outline``).

    Sources carry the thread's numbers, fixed when each answer was written
    (``Thread.source_numbers``, read after any re-render has counted the thread again).
    """
    renders = thread_renders(thread=thread, messages=messages, fields=PAGE_FIELDS)
    numbers: Mapping[str, int] = thread.source_numbers or {}
    found, failed = _retrievals(messages, renders)
    views: list[MessageView] = []
    counts: dict[str, int] = {}
    citing: dict[str, list[tuple[str, str]]] = {}  # handle -> (anchor, "answer N")
    marks: dict[str, set[int]] = {}
    issues: list[Issue] = []
    retrieved: dict[str, list[str]] = {}
    holder: dict[str, UUID] = {}  # the tool message whose evidence first carried each handle
    answers = 0
    for message in messages:
        render: MessageRender = renders[message.id]
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
        for handle in _retrieval_order(render):
            if handle not in retrieved:
                retrieved[handle] = render.entries[handle]
                holder[handle] = message.id
        # html was built by our sanitizer and templates at write; the slots are the hooks' own.
        html = _numbered(render.html, order)
        if message.type == MessageType.TOOL:
            html = _hit_numbers(html, numbers)
        elif tally["unresolved"]:
            html = _true_reasons(html, message.seq, found, failed)
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
    notes = _title_notes(retrieved)
    evidence = renders_evidence(message_ids={holder[h] for h in numbers if h in holder})
    cited = tuple(
        SourceEntry(
            h,
            counts[h],
            _document_link(
                source_entry(
                    retrieved[h],
                    counts[h],
                    number=n,
                    marks=marks.get(h, ()),
                    backlinks=_deduplicated(citing.get(h, [])),
                    note=notes.get(h, ""),
                ),
                thread,
                citing.get(h, []),
                marks.get(h, set()),
            ),
            evidence.get(h),
            n,
            notes.get(h, ""),
        )
        for h, n in sorted(numbers.items(), key=lambda item: item[1])
        if h in retrieved and h in counts
    )
    uncited_entries = tuple(
        SourceEntry(h, 0, source_entry(parts, 0, note=notes.get(h, "")), note=notes.get(h, ""))
        for h, parts in retrieved.items()
        if h not in counts
    )
    views = _with_calls_and_parts(views, messages)
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited_entries, issues=tuple(issues))


def _numbered(html: str, numbers: Sequence[int]) -> str:
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


# The tool-message template's slot for a document hit's number, by handle (validated hex).
_HIT_SLOT = re.compile(r'<span class="hit-number" data-hit-slot="([a-z0-9-]+)"></span>')
_UNVERIFIED_HANDLE = re.compile(r'data-unverified-handle="([^"]+)"')
_REASON_SLOT = re.compile(r'(<span class="reason-text" data-reason-handle="([a-z0-9-]+)">)([^<]*)(</span>)')
_ENTRY_TITLE = re.compile(r'data-field="title">([^<]*)</p>')
_ENTRY_PAGE = re.compile(r'data-field="page">([^<]*)</dd>')


_DOCUMENT_LINK = re.compile(r'(data-field="document" href="/library/passage/\?[^"#]*)#passage"')


def _document_link(
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


def _retrieval_order(render: MessageRender) -> list[str]:
    """A tool message's entries in the order its hits were retrieved: PostgreSQL's jsonb keeps no
    key order, so the order is read from the hit list, where every validated hit has its slot."""
    entries = render.entries
    if not entries:
        return []
    shown = [h for h in dict.fromkeys(_HIT_SLOT.findall(render.html)) if h in entries]
    seen = set(shown)
    return shown + [h for h in entries if h not in seen]


def _hit_numbers(html: str, numbers: Mapping[str, int]) -> str:
    """A tool message's hits with their sources' numbers in the thread; a hit no answer cites has none."""

    def fill(match: re.Match[str]) -> str:
        number = numbers.get(match.group(1))
        return f'<span class="hit-number citation-number">[{number}]</span> ' if number else ""

    return _HIT_SLOT.sub(fill, html)


def _retrievals(
    messages: Sequence[Message], renders: Mapping[UUID, MessageRender]
) -> tuple[dict[str, _Retrieval], dict[str, _Retrieval]]:
    """Where each handle was first retrieved with valid evidence, and where a tool message returned
    it with evidence that failed validation."""
    found: dict[str, _Retrieval] = {}
    failed: dict[str, _Retrieval] = {}
    for message in messages:
        if message.type != MessageType.TOOL:
            continue
        render = renders[message.id]
        place = _Retrieval(
            message.seq,
            message_anchor(message),
            f"the {message.name or 'tool'} result, message {message.seq}",
        )
        for handle in render.entries:
            found.setdefault(handle, place)
        for handle in _UNVERIFIED_HANDLE.findall(render.html):
            failed.setdefault(handle, place)
    return found, failed


def _true_reasons(
    html: str, seq: int, found: Mapping[str, _Retrieval], failed: Mapping[str, _Retrieval]
) -> str:
    """An answer's reasons for citations with no source, told apart: the evidence came only
    later (naming and linking that search), or an earlier result held it but it failed validation."""

    def reason(match: re.Match[str]) -> str:
        handle = match.group(2)
        later = found.get(handle)
        if later is not None and later.seq > seq:
            words = (
                f'Its evidence was retrieved only later, in <a href="#{later.anchor}" data-reason-later>'
                f"{escape(later.words)}</a>, after this answer; a citation counts only evidence "
                "retrieved before its answer."
            )
            return f"{match.group(1)}{words}{match.group(4)}"
        bad = failed.get(handle)
        if bad is not None and bad.seq < seq:
            words = (
                f'<a href="#{bad.anchor}" data-reason-failed>{escape(bad.words[:1].upper() + bad.words[1:])}</a> returned this '
                "source, but its evidence failed validation, so it cannot be shown as found."
            )
            return f"{match.group(1)}{words}{match.group(4)}"
        return match.group(0)

    return _REASON_SLOT.sub(reason, html)


def _title_notes(retrieved: Mapping[str, list[str]]) -> dict[str, str]:
    """For sources sharing a title with another, what tells each apart: its page when the pages
    differ, else its place among them in retrieval order ("passage 2 of 3")."""
    by_title: dict[str, list[str]] = {}
    for handle, (_, body) in retrieved.items():
        match = _ENTRY_TITLE.search(body)
        by_title.setdefault(match.group(1) if match else "", []).append(handle)
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
    match = _ENTRY_PAGE.search(body)
    return match.group(1) if match else ""


def _passage(citation: Mapping[str, Any]) -> list[int]:
    passage = citation.get("passage", [])
    return [i for i in passage if isinstance(i, int)] if isinstance(passage, list) else []


def _deduplicated(places: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every citing place, its words numbered when one answer cites the source twice."""
    seen: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for anchor, words in places:
        seen[words] = seen.get(words, 0) + 1
        out.append((anchor, words if seen[words] == 1 else f"{words} ({seen[words]})"))
    return out


def _with_calls_and_parts(views: list[MessageView], messages: Sequence[Message]) -> list[MessageView]:
    if not any(m.tool_calls or m.parts for m in messages):
        return views
    answers = call_answers(messages)
    return [
        replace(view, extras=render_calls_and_parts(view.message, answers.get(view.message.id, [])))
        if view.message.tool_calls or view.message.parts
        else view
        for view in views
    ]
