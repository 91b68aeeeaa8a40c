"""What a review reads: the items of a thread and the verdicts a user may see on them.

The item set is "everything" the Reader issue's walk visits and more: every citation of every
answer (found, no source, malformed; a label naming another source is flagged), and every
answer as a whole, cited or not. Only a citation whose source was found and an answer take a
verdict (``ReviewItem.judgeable``). Items are read from the renders stored at write
(``threads.selectors.thread_renders``): a review never re-renders into the database.

A verdict records its citation's position *and* its href and label; one whose item no longer
matches all three (a later renderer counted citations differently) is orphaned: shown apart,
never moved onto another item.

Blind by default: a reviewer sees other reviewers' verdicts on an item only once they have
judged it themselves; the lead of a queue containing the thread sees all, and so do readers
who judge nothing (the owner, staff), since they cannot be swayed (decision 0121).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from knowledgeweb.review.access import ThreadAccess
from knowledgeweb.review.models import AnswerVerdict, CitationVerdict, ItemKind, Verdict
from knowledgeweb.threads.models import Message, MessageRender, MessageType, Thread
from knowledgeweb.threads.selectors import thread_messages, thread_renders

#: What the item set reads of each stored render.
ITEM_FIELDS = ("message_id", "renderer_version", "citations", "uncited")

#: Each verdict value's words and icon: a chip never says it by colour alone.
VERDICT_WORDS: dict[str, str] = {value: str(label) for value, label in CitationVerdict.choices} | {
    value: str(label) for value, label in AnswerVerdict.choices
}
VERDICT_ICONS: dict[str, str] = {
    CitationVerdict.SUPPORTS: "✓",
    CitationVerdict.PARTLY_SUPPORTS: "◐",
    CitationVerdict.DOES_NOT_SUPPORT: "✗",
    CitationVerdict.CANT_TELL: "?",
    AnswerVerdict.ACCEPTABLE: "✓",
    AnswerVerdict.NEEDS_CHANGES: "✎",
    AnswerVerdict.UNACCEPTABLE: "✗",
}
CITATION_VALUES: tuple[str, ...] = tuple(CitationVerdict.values)
ANSWER_VALUES: tuple[str, ...] = tuple(AnswerVerdict.values)


def allowed_values(kind: str) -> tuple[str, ...]:
    """The verdict values an item of ``kind`` takes, in key order (1-4 or 1-3)."""
    return CITATION_VALUES if kind == ItemKind.CITATION else ANSWER_VALUES


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One thing to review: a citation of an answer (``position`` from 1) or the answer (0)."""

    kind: str
    message_id: UUID
    position: int
    #: The answer's number among the thread's answers.
    answer: int
    #: ``resolved``, ``unresolved`` or ``malformed`` for a citation; ``answer`` for an answer.
    state: str
    href: str = ""
    label: str = ""
    #: The citation's anchor on the thread page, or the answer's message anchor.
    anchor: str = ""
    label_mismatch: bool = False
    #: The handle of the source a found citation names.
    handle: str = ""
    #: The excerpt sentences closest to the claim (a found citation).
    passage: tuple[int, ...] = ()
    #: An answer that cites nothing.
    uncited: bool = False
    reason: str = ""

    @property
    def key(self) -> str:
        """A stable key: ``citation-<message hex>-<n>`` or ``answer-<message hex>``."""
        if self.kind == ItemKind.CITATION:
            return f"citation-{self.message_id.hex}-{self.position}"
        return f"answer-{self.message_id.hex}"

    @property
    def judgeable(self) -> bool:
        """Only a citation whose source was found, and an answer, take a verdict."""
        return self.kind == ItemKind.ANSWER or self.state == "resolved"

    @property
    def values(self) -> tuple[str, ...]:
        return allowed_values(self.kind) if self.judgeable else ()

    def matches(self, verdict: VerdictView) -> bool:
        """Whether ``verdict`` was recorded on this very item (position, href and label)."""
        return (
            verdict.message_id == self.message_id
            and verdict.kind == self.kind
            and verdict.position == self.position
            and (self.kind == ItemKind.ANSWER or (verdict.href == self.href and verdict.label == self.label))
        )


def thread_items(*, thread: Thread, messages: Sequence[Message] | None = None) -> list[ReviewItem]:
    """Every item of ``thread`` in page order: each answer's citations, then the answer itself."""
    if messages is None:
        messages = thread_messages(thread=thread, with_artifacts=False)
    renders = thread_renders(thread=thread, messages=messages, fields=ITEM_FIELDS)
    items: list[ReviewItem] = []
    answers = 0
    for message in messages:
        if message.type != MessageType.AI:
            continue
        answers += 1
        render = renders.get(message.id)
        citations: list[Mapping[str, Any]] = list(render.citations) if render is not None else []
        for position, citation in enumerate(citations, start=1):
            items.append(_citation_item(message, answers, position, citation))
        items.append(
            ReviewItem(
                kind=ItemKind.ANSWER,
                message_id=message.id,
                position=0,
                answer=answers,
                state="answer",
                anchor=f"message-{message.id}",
                uncited=bool(render is not None and render.uncited),
            )
        )
    return items


def _citation_item(message: Message, answer: int, position: int, citation: Mapping[str, Any]) -> ReviewItem:
    return _citation_fields(message.id, position, citation, answer=answer)


def _citation_fields(
    message_id: UUID, position: int, citation: Mapping[str, Any], *, answer: int = 0
) -> ReviewItem:
    passage = citation.get("passage", [])
    return ReviewItem(
        kind=ItemKind.CITATION,
        message_id=message_id,
        position=position,
        answer=answer,
        state=str(citation.get("state", "")),
        href=str(citation.get("href", "")),
        label=str(citation.get("label", "")),
        anchor=str(citation.get("anchor", "")),
        label_mismatch=citation.get("label_mismatch") is True,
        handle=str(citation.get("handle") or ""),
        passage=tuple(i for i in passage if isinstance(i, int)) if isinstance(passage, list) else (),
        reason=str(citation.get("reason") or ""),
    )


def message_item(
    *, thread: Thread, message_id: UUID, kind: str, position: int
) -> tuple[Message | None, ReviewItem | None]:
    """The answer ``message_id`` of ``thread`` and its item (``None`` when either is missing)."""
    message = (
        Message.objects.filter(pk=message_id, thread=thread, type=MessageType.AI).defer("artifact").first()
    )
    if message is None:
        return None, None
    items = [i for i in thread_items(thread=thread) if i.message_id == message.id]
    for item in items:
        if item.kind == kind and item.position == position:
            return message, item
    return message, None


def message_citation_count(*, thread: Thread, message_id: UUID) -> int:
    """How many citations the answer holds (for an error naming what exists)."""
    return sum(
        1 for i in thread_items(thread=thread) if i.message_id == message_id and i.kind == ItemKind.CITATION
    )


class VerdictView(NamedTuple):
    """A verdict as read for showing it: the fields, and its reviewer's name (no model rows).
    A named tuple: a page builds one per verdict it shows, straight from a database row."""

    pk: int
    message_id: UUID
    kind: str
    position: int
    href: str
    label: str
    value: str
    note: str
    reviewer_id: int
    reviewer_name: str
    #: None when read for chips only (``review.window_verdicts``).
    created_at: datetime | None

    @property
    def word(self) -> str:
        """The verdict in words ("partly supports")."""
        return VERDICT_WORDS.get(self.value, self.value)

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictView:
        """The view of a verdict just written."""
        return cls(
            verdict.pk,
            verdict.message_id,
            verdict.kind,
            verdict.position,
            verdict.href,
            verdict.label,
            verdict.value,
            verdict.note,
            verdict.reviewer_id,
            verdict.reviewer.get_username(),
            verdict.created_at,
        )


_VIEW_FIELDS = (
    "pk",
    "message_id",
    "kind",
    "position",
    "href",
    "label",
    "value",
    "note",
    "reviewer_id",
    "reviewer__username",
    "created_at",
)


def thread_verdicts(*, thread: Thread) -> list[VerdictView]:
    """Every verdict on ``thread``, oldest first, with its reviewer's name, in one query (a
    page window's own: ``review.window_verdicts``)."""
    ordered = Verdict.objects.filter(thread=thread).order_by("created_at", "id")
    return [VerdictView._make(row) for row in ordered.values_list(*_VIEW_FIELDS)]


def thread_verdict_count(*, thread_id: UUID) -> int:
    """How many verdicts go with the thread if it is deleted."""
    return Verdict.objects.filter(thread_id=thread_id).count()


@dataclass(frozen=True, slots=True)
class ItemVerdicts:
    """An item and the verdicts its reader may see: the history oldest first, and each
    reviewer's latest (the one that counts)."""

    item: ReviewItem
    history: tuple[VerdictView, ...] = ()
    mine: VerdictView | None = None
    #: Other reviewers' verdicts hidden from this reader until they judge the item.
    hidden: int = 0

    @property
    def latest(self) -> tuple[VerdictView, ...]:
        """Each reviewer's latest verdict, in the order they were recorded."""
        last: dict[int, VerdictView] = {}
        for verdict in self.history:
            last[verdict.reviewer_id] = verdict
        return tuple(sorted(last.values(), key=lambda v: (v.created_at, v.pk)))


@dataclass(frozen=True, slots=True)
class ThreadReview:
    """A thread's items with the verdicts one reader may see, and what no item matches."""

    items: tuple[ItemVerdicts, ...]
    #: Verdicts (visible to this reader) whose item no longer matches: never moved.
    orphaned: tuple[VerdictView, ...] = ()
    #: Whether this reader records verdicts here.
    reviews: bool = False
    sees_all: bool = False
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def judgeable(self) -> int:
        return sum(1 for entry in self.items if entry.item.judgeable)

    @property
    def judged(self) -> int:
        """Items this reader has judged (for a reader who judges nothing: judged by anyone)."""
        if self.reviews:
            return sum(1 for entry in self.items if entry.mine is not None)
        return sum(1 for entry in self.items if entry.history)

    @property
    def progress(self) -> str:
        """ "judged n of m" and the verdict counts, as the header and the export say it."""
        words = f"judged {self.judged} of {self.judgeable}"
        counted = [f"{n} {VERDICT_WORDS.get(v, v)}" for v, n in self.counts.items() if n]
        return words + (" · " + " · ".join(counted) if counted else "")


def thread_review(
    *,
    access: ThreadAccess,
    items: Sequence[ReviewItem] | None = None,
    verdicts: Iterable[VerdictView] | None = None,
    only_judged: bool = False,
) -> ThreadReview:
    """The items of the thread ``access`` names with the verdicts ``access``'s user may see.
    ``only_judged``: leave out the items nobody judged (a page laying chips over itself)."""
    thread = access.thread
    if items is None:
        items = thread_items(thread=thread)
    if verdicts is None:
        verdicts = thread_verdicts(thread=thread)
    user_id = access.user_id
    sees_all = access.sees_all_verdicts
    by_item: dict[tuple[UUID, str, int], list[VerdictView]] = {}
    for verdict in verdicts:
        by_item.setdefault((verdict.message_id, verdict.kind, verdict.position), []).append(verdict)
    matched: set[int] = set()
    entries: list[ItemVerdicts] = []
    for item in items:
        group = by_item.get((item.message_id, item.kind, item.position))
        if not group:
            if not only_judged:
                entries.append(ItemVerdicts(item))
            continue
        found = [v for v in group if item.matches(v)]
        matched.update(v.pk for v in found)
        own = [v for v in found if v.reviewer_id == user_id]
        mine = own[-1] if own else None
        if sees_all or mine is not None:
            entries.append(ItemVerdicts(item, tuple(found), mine))
        else:
            entries.append(ItemVerdicts(item, (), None, hidden=len({v.reviewer_id for v in found})))
    orphaned = tuple(
        v
        for group in by_item.values()
        for v in group
        if v.pk not in matched and (sees_all or v.reviewer_id == user_id)
    )
    counts: Counter[str] = Counter(v.value for entry in entries for v in entry.latest)
    ordered = {value: counts[value] for value in (*CITATION_VALUES, *ANSWER_VALUES) if counts[value]}
    return ThreadReview(
        items=tuple(entries), orphaned=orphaned, reviews=access.reviews, sees_all=sees_all, counts=ordered
    )


def judged_items(
    *,
    verdicts: Sequence[VerdictView],
    citations: Mapping[UUID, Sequence[Mapping[str, Any]] | None] | None = None,
) -> list[ReviewItem]:
    """The items ``verdicts`` are about (and their answers' other citations): what a page needs
    to lay verdicts over itself, the matching and the orphans. The stored citations of those
    answers come from ``citations`` (message id -> stored citations, what a page window already
    read) when given, else from one query of those answers' renders. ``answer`` is left 0 (a
    page numbers its answers)."""
    message_ids = {v.message_id for v in verdicts}
    rows: Iterable[tuple[UUID, Sequence[Mapping[str, Any]] | None]]
    if citations is None:
        rows = MessageRender.objects.filter(message_id__in=message_ids).values_list("message_id", "citations")
    else:
        rows = [(message_id, citations[message_id]) for message_id in message_ids if message_id in citations]
    items: list[ReviewItem] = []
    citation, answer = ItemKind.CITATION, ItemKind.ANSWER
    for message_id, stored in rows:
        for position, fields in enumerate(stored or [], start=1):
            items.append(
                ReviewItem(
                    citation,
                    message_id,
                    position,
                    0,
                    str(fields.get("state", "")),
                    str(fields.get("href", "")),
                    str(fields.get("label", "")),
                )
            )
        items.append(ReviewItem(answer, message_id, 0, 0, "answer"))
    return items
