"""A whole thread page, assembled from the renders stored at write (docs/architecture.md#pages-and-dom-hooks, §10).

Each message's HTML, citation verdicts and (for tool messages) panel entries
were computed when it was written (``threads.services.renders``). A page only
reads them in one query and joins them, as stored (``threads.selectors.thread_renders``):
a read never re-renders into the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
            plural, verb = ("", "is") if inert == 1 else ("s", "are")
            note = (
                f'<p class="message-note">{inert} citation{plural} in this answer could not be '
                f"verified and {verb} not linked; select one to see why.</p>"
            )
        # type, status and seq are model choices and an integer: nothing here needs escaping.
        return SafeString(  # html is sanitized or escaped where it is built
            f'<li class="{classes}" id="{message_anchor(message)}" data-message-type="{message.type}" '
            f'data-seq="{message.seq}"><p class="message-role">{_ROLES.get(message.type, "System")}</p>'
            f'<div class="message-body">{self.html}</div>{self.extras}{note}</li>'
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


@dataclass(frozen=True, slots=True)
class ThreadView:
    messages: tuple[MessageView, ...]
    cited: tuple[SourceEntry, ...]
    uncited: tuple[SourceEntry, ...]
    #: The anchors of the unresolved and malformed citations, in page order.
    unverified: tuple[str, ...] = field(default=())

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
PAGE_FIELDS = ("message_id", "renderer_version", "html", "citations", "entries")


def render_thread(thread: Thread, messages: Sequence[Message]) -> ThreadView:
    """The page of ``thread``: ``messages`` are all its messages in order (``thread_outline``).

    Resolved citations are numbered here, per thread, in order of first citation (the
    export's numbering): a number depends on the answers before, not on the message alone.
    """
    renders = thread_renders(thread=thread, messages=messages, fields=PAGE_FIELDS)
    views: list[MessageView] = []
    numbers: dict[str, int] = {}
    counts: dict[str, int] = {}
    citing: dict[str, list[tuple[str, str]]] = {}  # handle -> (anchor, "answer N")
    marks: dict[str, set[int]] = {}
    unverified: list[str] = []
    retrieved: dict[str, list[str]] = {}
    holder: dict[str, UUID] = {}  # the tool message whose evidence first carried each handle
    answers = 0
    for message in messages:
        render: MessageRender = renders[message.id]
        answer = 0
        if message.type == MessageType.AI:
            answers += 1
            answer = answers
        tally = {"resolved": 0, "unresolved": 0, "malformed": 0}
        order: list[int] = []
        cites: dict[str, None] = {}
        for citation in render.citations:
            state = citation["state"]
            tally[state] = tally.get(state, 0) + 1
            anchor = str(citation.get("anchor", ""))
            if state == "resolved":
                handle = citation["handle"]
                order.append(numbers.setdefault(handle, len(numbers) + 1))
                counts[handle] = counts.get(handle, 0) + 1
                cites[handle] = None
                if anchor:
                    citing.setdefault(handle, []).append((anchor, f"answer {answer}"))
                marks.setdefault(handle, set()).update(_passage(citation))
            elif anchor:
                unverified.append(anchor)
        for handle, parts in render.entries.items():
            if handle not in retrieved:
                retrieved[handle] = parts
                holder[handle] = message.id
        # html was built by our sanitizer and templates at write; the slots are the hooks' own.
        html = _numbered(render.html, order)
        views.append(
            MessageView(
                message,
                SafeString(html),
                tally["resolved"],
                tally["unresolved"],
                tally["malformed"],
                cites=tuple(cites),
                answer=answer,
            )
        )
    evidence = renders_evidence(message_ids={holder[h] for h in numbers if h in holder})
    cited = tuple(
        SourceEntry(
            h,
            counts[h],
            source_entry(
                retrieved[h],
                counts[h],
                number=n,
                marks=marks.get(h, ()),
                backlinks=_deduplicated(citing.get(h, [])),
            ),
            evidence.get(h),
            n,
        )
        for h, n in numbers.items()
        if h in retrieved
    )
    uncited = tuple(
        SourceEntry(h, 0, source_entry(parts, 0)) for h, parts in retrieved.items() if h not in numbers
    )
    views = _with_calls_and_parts(views, messages)
    return ThreadView(messages=tuple(views), cited=cited, uncited=uncited, unverified=tuple(unverified))


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
        out.append(f'<span class="citation-number">[{number}]</span>{piece}')
    return "".join(out)


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
