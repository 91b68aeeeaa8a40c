"""A queue's threads, their review states and progress, and handing a reviewer the next thread.

States (issue 27): a thread **needs review** while nobody judged or holds it; it is **in
review** while someone holds it or judged part of it without anyone finishing; it **needs
others** when at least one reviewer judged every item but fewer than the queue's overlap
did so for every item; it is **done** when every item has that many reviewers. States are
computed from the verdicts, never stored, so a new message (new items) reopens a thread.

The claim: each thread of a queue has ``overlap`` reservation slots. ``queue_next`` takes
one free slot with ONE conditional UPDATE (free = empty or expired and not finished); the
database decides between concurrent claimers, so two reviewers never get the same slot
and a thread never has more holders than slots left by the reviewers who finished it.
PostgreSQL adds ``FOR UPDATE SKIP LOCKED`` so concurrent claimers pass each other by.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from uuid import UUID, uuid4

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from knowledgeweb.review.items import ThreadItems, is_disputed, threads_items
from knowledgeweb.review.models import QueueThread, Reservation, ReviewQueue
from knowledgeweb.threads.models import Thread

#: Attempts at a claim in one chunk while it still has free slots (each lost race retries).
CLAIM_ATTEMPTS = 5
#: Threads read together when looking for the next one.
CLAIM_CHUNK = 50


class ThreadState(StrEnum):
    NEEDS_REVIEW = "needs review"
    IN_REVIEW = "in review"
    NEEDS_OTHERS = "needs others"
    DONE = "done"


def queues_for_reviewer(*, user: User | AnonymousUser) -> QuerySet[ReviewQueue]:
    """The queues ``user`` reviews in or leads."""
    if not user.is_authenticated:
        return ReviewQueue.objects.none()
    return ReviewQueue.objects.filter(Q(reviewers=user) | Q(lead=user)).distinct().order_by("name")


def queue_threads(queue: ReviewQueue) -> QuerySet[Thread]:
    """The threads in ``queue``: owned by its owners (narrowed by its agent names, if any), or
    added by their owner; oldest first, so every reviewer walks the queue in one order."""
    owners = ReviewQueue.owners.through.objects.filter(reviewqueue_id=queue.pk).values("user_id")
    owned = Q(owner_id__in=owners)
    if queue.agent_names:
        owned &= Q(agent_name__in=list(queue.agent_names))
    added = Q(pk__in=QueueThread.objects.filter(queue=queue).values("thread_id"))
    return Thread.objects.filter(owned | added).order_by("created_at", "id")


@dataclass
class ThreadProgress:
    """Where one thread of a queue stands."""

    thread_id: UUID
    items: int
    items_done: int
    finished_by: set[int]
    holders: set[int]
    judged: ThreadItems
    overlap: int
    disputed: int = 0
    does_not_support: bool = False

    @property
    def done(self) -> bool:
        return self.items_done == self.items

    @property
    def state(self) -> ThreadState:
        if self.done:
            return ThreadState.DONE
        if self.finished_by and not self.holders:
            return ThreadState.NEEDS_OTHERS
        if self.holders or self.judged.verdicts:
            return ThreadState.IN_REVIEW
        return ThreadState.NEEDS_REVIEW

    def needs(self, reviewer_id: int) -> bool:
        """Whether this thread still wants ``reviewer_id``'s verdicts."""
        return (
            not self.done
            and reviewer_id not in self.finished_by
            and len(self.finished_by - {reviewer_id}) < self.overlap
        )


def _holders(queue: ReviewQueue, thread_ids: Sequence[UUID], now: datetime) -> dict[UUID, set[int]]:
    held: dict[UUID, set[int]] = {}
    rows = Reservation.objects.filter(
        queue=queue,
        thread_id__in=list(thread_ids),
        reviewer__isnull=False,
        finished=False,
        expires_at__gt=now,
        slot__lte=queue.overlap,
    ).values_list("thread_id", "reviewer_id")
    for thread_id, reviewer_id in rows:
        held.setdefault(thread_id, set()).add(reviewer_id)
    return held


def threads_progress(
    queue: ReviewQueue, thread_ids: Sequence[UUID], *, now: datetime | None = None
) -> dict[UUID, ThreadProgress]:
    """The progress of these threads in ``queue`` (a fixed number of queries)."""
    now = now or timezone.now()
    judged = threads_items(thread_ids)
    holders = _holders(queue, thread_ids, now)
    progress: dict[UUID, ThreadProgress] = {}
    for thread_id in thread_ids:
        items = judged[thread_id]
        done = sum(1 for item in items.items if len(items.judged_by(item.key)) >= queue.overlap)
        judgements = [items.judged_by(item.key) for item in items.items]
        progress[thread_id] = ThreadProgress(
            thread_id=thread_id,
            items=len(items.items),
            items_done=done,
            finished_by=items.finished_by(),
            holders=holders.get(thread_id, set()),
            judged=items,
            overlap=queue.overlap,
            disputed=sum(1 for j in judgements if is_disputed(j)),
            does_not_support=any(v.value == "does_not_support" for j in judgements for v in j.values()),
        )
    return progress


@dataclass
class QueueProgress:
    """A queue's progress: items done of total, threads done, and what each reviewer judged."""

    queue: ReviewQueue
    items: int = 0
    items_done: int = 0
    threads: int = 0
    threads_done: int = 0
    per_reviewer: dict[int, int] = field(default_factory=dict)
    states: Counter[str] = field(default_factory=Counter)
    disputed: int = 0


def queue_progress(queue: ReviewQueue, *, now: datetime | None = None) -> QueueProgress:
    """The whole queue's progress; ``per_reviewer`` maps reviewer ids to items judged."""
    thread_ids = list(queue_threads(queue).values_list("id", flat=True))
    summary = QueueProgress(queue=queue, threads=len(thread_ids))
    per_reviewer: Counter[int] = Counter()
    for progress in threads_progress(queue, thread_ids, now=now).values():
        summary.items += progress.items
        summary.items_done += progress.items_done
        summary.threads_done += progress.done
        summary.states[progress.state] += 1
        summary.disputed += progress.disputed
        for judgements in progress.judged.verdicts.values():
            per_reviewer.update(judgements.keys())
    summary.per_reviewer = dict(per_reviewer)
    return summary


def _ensure_slots(queue: ReviewQueue, thread_ids: Sequence[UUID], now: datetime) -> None:
    """Create the missing slots of these threads (idempotent under concurrency)."""
    existing = Counter(
        Reservation.objects.filter(
            queue=queue, thread_id__in=list(thread_ids), slot__lte=queue.overlap
        ).values_list("thread_id", flat=True)
    )
    missing = [
        Reservation(queue=queue, thread_id=thread_id, slot=slot, expires_at=now)
        for thread_id in thread_ids
        if existing[thread_id] < queue.overlap
        for slot in range(1, queue.overlap + 1)
    ]
    if missing:
        Reservation.objects.bulk_create(missing, ignore_conflicts=True)


def _settle_finished(queue: ReviewQueue, candidates: dict[UUID, ThreadProgress], now: datetime) -> None:
    """Mark the slots of reviewers who judged every item ``finished``, and unmark those whose
    thread gained items since; a finished reviewer without a slot takes a free one, so the
    slots left for others are the overlap the thread still needs."""
    rows = Reservation.objects.filter(queue=queue, thread_id__in=list(candidates)).values_list(
        "pk", "thread_id", "reviewer_id", "finished"
    )
    finish, reopen = [], []
    holding: dict[UUID, set[int]] = {}
    for pk, thread_id, reviewer_id, finished in rows:
        if reviewer_id is None:
            continue
        holding.setdefault(thread_id, set()).add(reviewer_id)
        is_finished = reviewer_id in candidates[thread_id].finished_by
        if is_finished and not finished:
            finish.append(pk)
        elif finished and not is_finished:
            reopen.append(pk)
    if finish:
        Reservation.objects.filter(pk__in=finish).update(finished=True)
    if reopen:
        Reservation.objects.filter(pk__in=reopen).update(finished=False)
    for thread_id, progress in candidates.items():
        for reviewer_id in sorted(progress.finished_by - holding.get(thread_id, set())):
            free = _free_slots(queue, [thread_id], now).values("pk")[:1]
            try:
                # Still free when the row is locked: a concurrent claim of it wins.
                Reservation.objects.filter(pk__in=free).filter(
                    Q(reviewer__isnull=True) | Q(expires_at__lte=now), finished=False
                ).update(reviewer_id=reviewer_id, finished=True)
            except IntegrityError:  # a concurrent claim recorded the same reviewer first
                continue


def _free_slots(queue: ReviewQueue, thread_ids: Sequence[UUID], now: datetime) -> QuerySet[Reservation]:
    return Reservation.objects.filter(
        Q(reviewer__isnull=True) | Q(expires_at__lte=now),
        queue=queue,
        thread_id__in=list(thread_ids),
        finished=False,
        slot__lte=queue.overlap,
    )


def _claim(
    queue: ReviewQueue, reviewer: User, candidates: Sequence[UUID], now: datetime
) -> Reservation | None:
    """The one conditional UPDATE: a free slot of the first candidate thread becomes mine."""
    token = uuid4()
    expires = now + timedelta(minutes=queue.reservation_minutes)
    free = _free_slots(queue, candidates, now).order_by("thread__created_at", "thread_id", "slot")
    if connection.vendor == "postgresql":
        free = free.select_for_update(skip_locked=True, of=("self",))
    target = free.values("pk")[:1]
    try:
        with transaction.atomic():
            taken = (
                Reservation.objects.filter(pk__in=target)
                .filter(Q(reviewer__isnull=True) | Q(expires_at__lte=now), finished=False)
                .update(reviewer=reviewer, expires_at=expires, claim=token)
            )
    except IntegrityError:  # my own concurrent claim took another slot of that thread
        return None
    return Reservation.objects.select_related("thread").get(claim=token) if taken else None


def _resume(
    queue: ReviewQueue, reviewer: User, candidates: Sequence[UUID], now: datetime
) -> Reservation | None:
    """My own slot on a thread that still needs me: held, expired or reopened, it is mine
    again unless someone took it meanwhile (the UPDATE names me as its holder)."""
    mine = list(
        Reservation.objects.filter(
            queue=queue, reviewer=reviewer, thread_id__in=list(candidates)
        ).values_list("pk", "thread_id")
    )
    order = {thread_id: n for n, thread_id in enumerate(candidates)}
    for pk, _thread_id in sorted(mine, key=lambda row: order[row[1]]):
        token = uuid4()
        taken = Reservation.objects.filter(pk=pk, reviewer=reviewer).update(
            expires_at=now + timedelta(minutes=queue.reservation_minutes), finished=False, claim=token
        )
        if taken:
            return Reservation.objects.select_related("thread").get(claim=token)
    return None


def queue_next(*, queue: ReviewQueue, reviewer: User, now: datetime | None = None) -> Reservation | None:
    """Reserve for ``reviewer`` the next thread of ``queue`` that still needs their verdicts,
    and return the reservation (its ``thread`` and ``expires_at``); None when none is left.

    A thread I hold and have not finished comes back first. Then the queue is read oldest
    first, ``CLAIM_CHUNK`` threads at a time, and the first chunk with a free slot for me
    ends the search: the cost follows the chunk, not the queue.
    """
    moment = now or timezone.now()
    held = Reservation.objects.filter(queue=queue, reviewer=reviewer, finished=False).values("thread_id")
    mine = list(queue_threads(queue).filter(pk__in=held).values_list("id", flat=True))
    if mine:
        progress = threads_progress(queue, mine, now=moment)
        reservation = _resume(queue, reviewer, [t for t in mine if progress[t].needs(reviewer.pk)], moment)
        if reservation is not None:
            return reservation
    thread_ids = list(queue_threads(queue).values_list("id", flat=True))
    for start in range(0, len(thread_ids), CLAIM_CHUNK):
        chunk = thread_ids[start : start + CLAIM_CHUNK]
        progress = threads_progress(queue, chunk, now=moment)
        candidates = [t for t in chunk if progress[t].needs(reviewer.pk)]
        if not candidates:
            continue
        _ensure_slots(queue, candidates, moment)
        _settle_finished(queue, {t: progress[t] for t in candidates}, moment)
        reservation = _resume(queue, reviewer, candidates, moment)
        for _attempt in range(CLAIM_ATTEMPTS):
            if reservation is not None:
                return reservation
            reservation = _claim(queue, reviewer, candidates, moment)
            if reservation is None and not _free_slots(queue, candidates, moment).exists():
                break  # every slot of this chunk is held: on to the next chunk
    return None


def reservation_release(*, queue: ReviewQueue, reviewer: User, thread_id: UUID) -> int:
    """Give up my hold on a thread before it expires (the slot is free again)."""
    return Reservation.objects.filter(
        queue=queue, reviewer=reviewer, thread_id=thread_id, finished=False
    ).update(reviewer=None, expires_at=timezone.now(), claim=None)
