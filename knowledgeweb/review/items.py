"""What reviewers judge in a thread, and the verdicts that count, read in bulk.

An *item* is one citation of an AI message whose source was found (``kind="citation"``,
``position`` counting the message's citations from 1, as stored with its render), or the
AI message as a whole (``kind="answer"``, position 0). A verdict counts for an item when
it names the same message, kind and position and, for a citation, the same href and label
(``review.selectors.ReviewItem.matches``, the page's rule): a
verdict whose citation moved is orphaned and counts for nothing here (issue 26).
Each reviewer's latest verdict on an item is the one that counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from knowledgeweb.review.models import ItemKind, Verdict
from knowledgeweb.threads.models import MessageRender, MessageType

#: Verdict values that say nothing about agreement ("can't tell" is counted as missing).
MISSING_VALUES = frozenset({"cant_tell"})


@dataclass(frozen=True, order=True)
class ItemKey:
    """One item: its message, kind and position (0 for an answer)."""

    message_id: UUID
    kind: str
    position: int


@dataclass
class Item:
    """An item of a thread, with the href it shows (citations) and its place in the thread."""

    key: ItemKey
    thread_id: UUID
    seq: int
    href: str = ""
    label: str = ""
    handle: str | None = None


@dataclass
class Judgement:
    """A reviewer's latest verdict on an item."""

    reviewer_id: int
    value: str
    note: str
    created_at: datetime


@dataclass
class ThreadItems:
    """A thread's items in order, and the latest verdict of each reviewer on each."""

    thread_id: UUID
    items: list[Item] = field(default_factory=list)
    verdicts: dict[ItemKey, dict[int, Judgement]] = field(default_factory=dict)

    def judged_by(self, key: ItemKey) -> dict[int, Judgement]:
        return self.verdicts.get(key, {})

    def reviewers(self) -> set[int]:
        return {reviewer for judgements in self.verdicts.values() for reviewer in judgements}

    def finished_by(self) -> set[int]:
        """Reviewers who judged every item (none when there are no items)."""
        if not self.items:
            return set()
        sets = [set(self.judged_by(item.key)) for item in self.items]
        return set.intersection(*sets)


def items_of_render(
    thread_id: UUID, message_id: UUID, seq: int, citations: Iterable[dict[str, Any]]
) -> list[Item]:
    """An AI message's items: each citation whose source was found, then the answer itself."""
    items = [
        Item(
            ItemKey(message_id, ItemKind.CITATION, number),
            thread_id,
            seq,
            href=str(citation.get("href") or ""),
            label=str(citation.get("label") or ""),
            handle=citation.get("handle"),
        )
        for number, citation in enumerate(citations, start=1)
        if citation.get("state") == "resolved"
    ]
    items.append(Item(ItemKey(message_id, ItemKind.ANSWER, 0), thread_id, seq))
    return items


def threads_items(thread_ids: Collection[UUID]) -> dict[UUID, ThreadItems]:
    """Every item of these threads and the verdicts that count on them (two queries)."""
    found = {thread_id: ThreadItems(thread_id) for thread_id in thread_ids}
    if not found:
        return found
    renders = (
        MessageRender.objects.filter(thread_id__in=list(found), message__type=MessageType.AI)
        .order_by("thread_id", "seq")
        .values_list("thread_id", "message_id", "seq", "citations")
    )
    shown: dict[ItemKey, tuple[str, str]] = {}
    for thread_id, message_id, seq, citations in renders.iterator(chunk_size=500):
        for item in items_of_render(thread_id, message_id, seq, citations or []):
            found[thread_id].items.append(item)
            shown[item.key] = (item.href, item.label)
    latest: dict[UUID, dict[ItemKey, dict[int, Judgement]]] = defaultdict(dict)
    rows = (
        Verdict.objects.filter(thread_id__in=list(found))
        .order_by("created_at", "id")
        .values_list(
            "thread_id",
            "message_id",
            "kind",
            "position",
            "href",
            "label",
            "reviewer_id",
            "value",
            "note",
            "created_at",
        )
    )
    for (
        thread_id,
        message_id,
        kind,
        position,
        href,
        label,
        reviewer_id,
        value,
        note,
        created_at,
    ) in rows.iterator(chunk_size=2000):
        key = ItemKey(message_id, kind, position)
        if key not in shown or (kind == ItemKind.CITATION and shown[key] != (href, label)):
            continue  # orphaned: the item it judged is no longer there as judged
        latest[thread_id].setdefault(key, {})[reviewer_id] = Judgement(reviewer_id, value, note, created_at)
    for thread_id, verdicts in latest.items():
        found[thread_id].verdicts = verdicts
    return found


def counted_values(judgements: dict[int, Judgement]) -> list[str]:
    """The values that speak for or against agreement ("can't tell" left out)."""
    return [j.value for j in judgements.values() if j.value not in MISSING_VALUES]


def is_disputed(judgements: dict[int, Judgement]) -> bool:
    """Two or more reviewers gave different values, "can't tell" not counted."""
    return len(set(counted_values(judgements))) > 1
