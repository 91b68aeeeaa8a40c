"""Queue states, progress and the claim of the next thread (issue 27), on SQLite and PostgreSQL.

The concurrent test runs twenty reviewers in twenty threads with their own connections,
which only a server database runs at once; SQLite hands the same twenty out one at a time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from threading import Barrier

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from knowledgeweb.review.models import QueueThread, Reservation
from knowledgeweb.review.queueing import (
    ThreadState,
    queue_next,
    queue_progress,
    queue_threads,
    reservation_release,
    threads_progress,
)
from knowledgeweb.threads.models import Thread
from tests.factories import UserFactory
from tests.review_queues import add_answer, cited_thread, items_of, judge, queue_for


def _state(queue, thread) -> ThreadState:  # type: ignore[no-untyped-def]
    return threads_progress(queue, [thread.id])[thread.id].state


def test_membership_is_the_owners_threads_narrowed_by_agent_and_the_threads_added(db: None) -> None:
    agent, other, reviewer = UserFactory.create(), UserFactory.create(), UserFactory.create()
    kept = cited_thread(agent, agent="bot")
    narrowed_out = cited_thread(agent, agent="someone-else")
    foreign = cited_thread(other)
    added = cited_thread(other, title="Added")
    queue = queue_for([agent], [reviewer])
    queue.agent_names = ["bot"]
    queue.save()
    QueueThread.objects.create(queue=queue, thread=added, added_by=other)
    assert set(queue_threads(queue)) == {kept, added}
    assert narrowed_out not in queue_threads(queue)
    assert foreign not in queue_threads(queue)


def test_states_move_with_verdicts_and_a_new_message_reopens_a_done_thread(db: None) -> None:
    agent, first, second = UserFactory.create(), UserFactory.create(), UserFactory.create()
    thread = cited_thread(agent, citations=2)
    queue = queue_for([agent], [first, second], overlap=2)
    assert len(items_of(thread)) == 3  # two citations and the answer
    assert _state(queue, thread) == ThreadState.NEEDS_REVIEW
    reservation = queue_next(queue=queue, reviewer=first)
    assert reservation is not None
    assert reservation.thread_id == thread.id
    assert _state(queue, thread) == ThreadState.IN_REVIEW
    judge(thread, first, "supports")
    reservation_release(queue=queue, reviewer=first, thread_id=thread.id)
    assert _state(queue, thread) == ThreadState.NEEDS_OTHERS
    judge(thread, second, ["supports", "does_not_support"])
    assert _state(queue, thread) == ThreadState.DONE
    progress = queue_progress(queue)
    assert (progress.items, progress.items_done, progress.threads_done) == (3, 3, 1)
    assert progress.per_reviewer == {first.pk: 3, second.pk: 3}
    assert progress.disputed == 1
    add_answer(thread)  # a new answer: an item nobody judged, so the thread is open again
    assert _state(queue, thread) == ThreadState.IN_REVIEW
    progress = queue_progress(queue)
    assert (progress.items, progress.items_done, progress.threads_done) == (4, 3, 0)


def test_next_hands_out_what_still_needs_me_and_none_when_nothing_does(db: None) -> None:
    agent, me = UserFactory.create(), UserFactory.create()
    first, second = cited_thread(agent, title="First"), cited_thread(agent, title="Second")
    queue = queue_for([agent], [me])
    taken = queue_next(queue=queue, reviewer=me)
    assert taken is not None
    assert taken.thread_id == first.id
    again = queue_next(queue=queue, reviewer=me)  # not finished: the same thread, held again
    assert again is not None
    assert again.thread_id == first.id
    assert again.pk == taken.pk
    judge(first, me, "supports")
    following = queue_next(queue=queue, reviewer=me)
    assert following is not None
    assert following.thread_id == second.id
    judge(second, me, "supports")
    assert queue_next(queue=queue, reviewer=me) is None


def test_holders_never_exceed_the_overlap_still_needed_and_expiry_frees(db: None) -> None:
    agent = UserFactory.create()
    a, b, c = UserFactory.create(), UserFactory.create(), UserFactory.create()
    thread = cited_thread(agent)
    queue = queue_for([agent], [a, b, c], overlap=2)
    assert queue_next(queue=queue, reviewer=a) is not None
    assert queue_next(queue=queue, reviewer=b) is not None
    assert queue_next(queue=queue, reviewer=c) is None  # two hold it: the overlap
    judge(thread, a, "supports")
    # a finished: a keeps a finished slot, so one reviewer more is needed and b holds it.
    assert queue_next(queue=queue, reviewer=c) is None
    later = timezone.now() + timedelta(minutes=queue.reservation_minutes + 1)
    freed = queue_next(queue=queue, reviewer=c, now=later)  # b's hold ran out
    assert freed is not None
    assert freed.thread_id == thread.id
    holders = Reservation.objects.filter(queue=queue, thread=thread, finished=False, expires_at__gt=later)
    assert list(holders.values_list("reviewer_id", flat=True)) == [c.pk]
    assert Reservation.objects.filter(queue=queue, thread=thread, reviewer=a, finished=True).exists()


def test_a_finished_reviewer_who_never_reserved_still_takes_a_slot(db: None) -> None:
    agent, a, b, c = UserFactory.create(), UserFactory.create(), UserFactory.create(), UserFactory.create()
    thread = cited_thread(agent)
    queue = queue_for([agent], [a, b, c], overlap=2)
    judge(thread, a, "supports")  # straight from the thread page, without "Start reviewing"
    assert queue_next(queue=queue, reviewer=b) is not None
    assert queue_next(queue=queue, reviewer=c) is None


def _reviewers(count: int) -> list[User]:
    return [UserFactory.create(username=f"reviewer{n:02d}") for n in range(count)]


@pytest.mark.parametrize("chunk", [50, 3])
def test_on_sqlite_twenty_reviewers_one_at_a_time_get_twenty_threads(
    db: None, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("knowledgeweb.review.queueing.CLAIM_CHUNK", chunk)  # whole queue, or 7 chunks
    agent = UserFactory.create()
    threads = [cited_thread(agent, title=f"T{n}", citations=1) for n in range(20)]
    reviewers = _reviewers(20)
    queue = queue_for([agent], reviewers)
    taken = [queue_next(queue=queue, reviewer=r) for r in reviewers]
    assert all(t is not None for t in taken)
    assert {t.thread_id for t in taken if t} == {t.id for t in threads}
    assert queue_next(queue=queue, reviewer=UserFactory.create()) is None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_reviewers_get_twenty_different_threads_on_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("concurrent claims need a server database: run with DATABASE_URL=postgres://...")
    agent = UserFactory.create()
    threads = [cited_thread(agent, title=f"T{n}", citations=1) for n in range(20)]
    reviewers = _reviewers(20)
    queue = queue_for([agent], reviewers)
    start = Barrier(20)

    def claim(reviewer: User) -> object:
        try:
            start.wait()
            taken = queue_next(queue=queue, reviewer=reviewer)
            return taken.thread_id if taken else None
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=20) as pool:
        got = list(pool.map(claim, reviewers))
    assert None not in got, "a reviewer was handed nothing while threads were free"
    assert len(set(got)) == 20, "two reviewers got the same thread"
    assert set(got) == {t.id for t in threads}, "a thread was lost"
    held = Reservation.objects.filter(queue=queue, reviewer__isnull=False, expires_at__gt=timezone.now())
    assert held.count() == 20


def test_progress_costs_the_same_queries_for_two_threads_or_eight(db: None) -> None:
    agent, a, b = UserFactory.create(), UserFactory.create(), UserFactory.create()
    queue = queue_for([agent], [a, b], overlap=2)
    counts = []
    for total in (2, 8):
        while Thread.objects.filter(owner=agent).count() < total:
            judge(cited_thread(agent, title=f"T{Thread.objects.count()}"), a, "supports")
        with CaptureQueriesContext(connection) as queries:
            progress = queue_progress(queue)
        assert progress.threads == total
        counts.append(len(queries))
    assert counts[0] == counts[1]
