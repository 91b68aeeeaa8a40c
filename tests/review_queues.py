"""Queues and threads for the queue tests: real threads with recorded searches and answers that cite.

Each thread holds a question, one search and an answer citing its hits, so its items are
``citations`` resolved citations plus the answer itself. Verdicts are written through the
model, as the review service writes them (one row per decision, append-only).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from knowledgeweb.knowledge import RetrievalHit
from knowledgeweb.review.items import Item, threads_items
from knowledgeweb.review.models import ReviewQueue, Verdict
from knowledgeweb.threads.models import Thread
from knowledgeweb.threads.services import message_append, thread_create
from tests.searches import hit_handles, record_search


def cited_thread(
    owner: User, *, title: str = "A cited thread", citations: int = 2, agent: str = "agent"
) -> Thread:
    """A thread whose one answer cites ``citations`` hits of one search (each a sentence)."""
    thread = thread_create(owner=owner, title=title, agent_name=agent)
    message_append(thread=thread, type="human", content=f"What does {title} say?")
    hits = [
        RetrievalHit(
            text=f"Fact number {n} of {title}.",
            title=f"doc-{n}.md",
            dataset_name="Corpus",
            url=f"https://example.org/{n}",
        )
        for n in range(1, citations + 1)
    ]
    _, formatted = record_search(thread, *hits)
    claims = " ".join(f"Claim {n} holds [doc-{n}](#{h})." for n, h in enumerate(hit_handles(formatted), 1))
    message_append(thread=thread, type="ai", content=claims or "Nothing to cite.")
    return thread


def add_answer(thread: Thread, text: str = "A later answer without sources.") -> None:
    message_append(thread=thread, type="human", content="And then?")
    message_append(thread=thread, type="ai", content=text)


def queue_for(
    owners: Sequence[User],
    reviewers: Sequence[User],
    *,
    overlap: int = 1,
    lead: User | None = None,
    name: str = "Q",
) -> ReviewQueue:
    queue = ReviewQueue.objects.create(name=name, overlap=overlap, lead=lead, guidelines="Judge *carefully*.")
    queue.owners.set(owners)
    queue.reviewers.set(reviewers)
    return queue


def items_of(thread: Thread) -> list[Item]:
    return threads_items([thread.id])[thread.id].items


def judge(thread: Thread, reviewer: User, values: Sequence[str] | str, note: str = "") -> list[Verdict]:
    """Record ``reviewer``'s verdict on every item of ``thread``: the citations take the
    citation values in turn (one value: all alike); the answer takes "acceptable"."""
    written = []
    citations = [i for i in items_of(thread) if i.key.kind == "citation"]
    values = [values] * len(citations) if isinstance(values, str) else list(values)
    for item, value in zip(citations, values, strict=True):
        written.append(_verdict(thread, reviewer, item, value, note))
    for item in items_of(thread):
        if item.key.kind == "answer":
            written.append(_verdict(thread, reviewer, item, "acceptable", note))
    return written


def _verdict(thread: Thread, reviewer: User, item: Item, value: str, note: str) -> Verdict:
    verdict = Verdict(
        thread=thread,
        message_id=item.key.message_id,
        kind=item.key.kind,
        position=item.key.position,
        href=item.href,
        label=item.label,
        value=value,
        note=note,
        reviewer=reviewer,
    )
    verdict.save()
    return verdict
